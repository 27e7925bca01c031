//! The payloads of the kinds, typed: what a normalized, stored payload of each kind is. A kind
//! validates and normalizes the agent's JSON at the edge; everything after reads the stored
//! payload through these types, so a missing or mistyped field is an error there, never a
//! default (an HTTP method that becomes GET, a path that becomes "").

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// `tool.call`: a tool the agent runs itself once approved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ToolCall {
    /// The tool's name.
    pub tool: String,
    /// Its input, as the agent gave it.
    #[cfg_attr(feature = "ts", ts(type = "unknown"))]
    pub input: Value,
    /// The folder the agent's session works in (absolute), when the client says: relative
    /// paths in the call resolve against it, and rules may say "inside the working folder".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub cwd: Option<String>,
    /// The client the call came through, when it says: `claude-code` or `codex` (their hooks),
    /// `mcp-permission-prompt` (`assent mcp`'s permission prompt tool). Assent's own notes on
    /// the call follow from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub client: Option<String>,
    /// The client's permission mode at the call, as it reports it (`default`, `auto`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub permission_mode: Option<String>,
}

/// `file.write`: a file's whole new content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FileWrite {
    /// The real, absolute path.
    pub path: String,
    /// The new content.
    pub content: String,
}

/// `file.delete`: a file to remove.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FileDelete {
    /// The real, absolute path.
    pub path: String,
}

/// `http.request`: a call Assent sends, with a credential it injects.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct HttpRequest {
    /// GET, HEAD, POST, PUT, PATCH or DELETE.
    pub method: String,
    /// The full URL.
    pub url: String,
    /// Headers (lower-case names), never a credential.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// A JSON body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(type = "unknown"))]
    pub json: Option<Value>,
    /// A text body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// The credential to inject.
    #[serde(default)]
    pub credential: Option<String>,
}

/// Reads a stored payload as `T`, or says why it is not one (an integrity failure: a stored,
/// approved payload is always of its kind's shape).
pub fn read<T: serde::de::DeserializeOwned>(kind: &str, payload: &Value) -> Result<T, String> {
    crate::strict::from_ref(payload).map_err(|e| format!("the stored {kind} payload is not of its kind's shape: {e}"))
}

/// The kinds an agent may propose, for the API's description.
#[cfg(feature = "openapi")]
pub fn kind_schema() -> utoipa::openapi::Object {
    utoipa::openapi::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::String)
        .enum_values(Some(["tool.call", "file.write", "file.delete", "http.request"]))
        .description(Some("The kind of write; `payload` has that kind's shape."))
        .build()
}

/// A payload of one of the kinds, for the API's description.
#[cfg(feature = "openapi")]
pub fn payload_schema() -> utoipa::openapi::schema::Schema {
    use utoipa::openapi::Ref;
    utoipa::openapi::schema::OneOfBuilder::new()
        .item(Ref::from_schema_name("ToolCall"))
        .item(Ref::from_schema_name("FileWrite"))
        .item(Ref::from_schema_name("FileDelete"))
        .item(Ref::from_schema_name("HttpRequest"))
        .description(Some(
            "`tool.call`: ToolCall; `file.write`: FileWrite; `file.delete`: FileDelete; `http.request`: HttpRequest",
        ))
        .build()
        .into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn stored_payloads_read_back_and_bad_ones_say_why() {
        let w: FileWrite = read("file.write", &json!({"path": "/x", "content": "y"})).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(w.path, "/x");
        let h: HttpRequest =
            read("http.request", &json!({"method": "POST", "url": "https://x.example/", "headers": {}, "credential": null, "json": {"a": 1}}))
                .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((h.method.as_str(), h.json), ("POST", Some(json!({"a": 1}))));
        assert!(read::<FileWrite>("file.write", &json!({"path": "/x"})).is_err(), "no content is no default");
        assert!(
            read::<HttpRequest>("http.request", &json!({"url": "https://x.example/"})).is_err(),
            "no method is not GET"
        );
    }
}
