//! The payloads of the kinds, typed: what a normalized, stored payload of each kind is. A kind
//! validates and normalizes the agent's JSON at the edge; everything after reads the stored
//! payload through these types, so a missing or mistyped field is an error there, never a
//! default (an HTTP method that becomes GET, a path that becomes "").

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// A kind of write: what the proposal asks for, and so the shape of its payload. Parsed once at
/// the edge (`KindRegistry::get`); from there on a kind is this, never a string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum KindName {
    /// `tool.call`: a tool the agent runs itself once approved.
    #[serde(rename = "tool.call")]
    ToolCall,
    /// `file.write`: a file's whole new content, written by Assent.
    #[serde(rename = "file.write")]
    FileWrite,
    /// `file.delete`: a file Assent removes.
    #[serde(rename = "file.delete")]
    FileDelete,
    /// `http.request`: a call Assent sends, with a credential it injects.
    #[serde(rename = "http.request")]
    HttpRequest,
}

impl KindName {
    /// Every kind, in the order the API lists them.
    pub const ALL: [KindName; 4] =
        [KindName::ToolCall, KindName::FileWrite, KindName::FileDelete, KindName::HttpRequest];

    /// Its name on the wire and in storage (`file.write`).
    pub const fn as_str(self) -> &'static str {
        match self {
            KindName::ToolCall => "tool.call",
            KindName::FileWrite => "file.write",
            KindName::FileDelete => "file.delete",
            KindName::HttpRequest => "http.request",
        }
    }

    /// Whether Assent applies it (`file.*`, `http.request`) or only records the decision
    /// (`tool.call`: the agent acts).
    pub const fn class(self) -> crate::status::KindClass {
        match self {
            KindName::ToolCall => crate::status::KindClass::DecisionOnly,
            KindName::FileWrite | KindName::FileDelete | KindName::HttpRequest => crate::status::KindClass::Applied,
        }
    }

    /// Whether preparing one reads the file system (the target's snapshot), so runs off the
    /// async runtime's worker threads: the file kinds.
    pub const fn blocking(self) -> bool {
        matches!(self, KindName::FileWrite | KindName::FileDelete)
    }

    /// The kind called `name`, if there is one.
    pub fn parse(name: &str) -> Option<KindName> {
        KindName::ALL.into_iter().find(|k| k.as_str() == name)
    }
}

impl std::fmt::Display for KindName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<&str> for KindName {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// The longest `cwd` of a tool call, in characters.
pub const MAX_CWD: usize = 4096;

/// Assent's own doors a tool call may say it came through (`assent mcp`'s), each with how the
/// person reads it.
pub const MCP_CLIENTS: [(&str, &str); 2] = [
    ("mcp-permission-prompt", "the permission prompt tool of `assent mcp`"),
    ("mcp-proxy", "the MCP gate `assent mcp proxy`"),
];

/// The agent clients Assent has a hook for (each one module of `assent-agents`), by name.
fn agent_clients() -> Vec<&'static str> {
    let mut names: Vec<&str> = assent_agents::all().iter().map(|a| a.name()).collect();
    names.sort_unstable();
    names
}

/// Every client a tool call may say it came through: each agent client Assent has a hook for,
/// then Assent's own MCP doors.
pub fn clients() -> Vec<&'static str> {
    agent_clients().into_iter().chain(MCP_CLIENTS.iter().map(|(name, _)| *name)).collect()
}

/// `tool.call`: a tool the agent runs itself once approved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ToolCall {
    /// The tool's name: printable ASCII, 1 to 200 characters (spaces around it are dropped).
    #[cfg_attr(feature = "openapi", schema(pattern = "^ *[!-~](?:[ -~]{0,198}[!-~])? *$"))]
    pub tool: String,
    /// Its input, as the agent gave it (an empty object when left out).
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(type = "unknown"))]
    pub input: Value,
    /// The folder the agent's session works in (absolute), when the client says: relative
    /// paths in the call resolve against it, and rules may say "inside the working folder".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    #[cfg_attr(feature = "openapi", schema(schema_with = cwd_schema))]
    pub cwd: Option<String>,
    /// The client the call came through, when it says: `claude-code`, `cline`, `codex`,
    /// `copilot-cli`, `gemini-cli` or `opencode` (their hooks),
    /// `mcp-permission-prompt` (`assent mcp`'s permission prompt tool), `mcp-proxy` (`assent mcp
    /// proxy`, in front of an MCP server). Assent's own notes on the call follow from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    #[cfg_attr(feature = "openapi", schema(schema_with = client_schema))]
    pub client: Option<String>,
    /// The client's permission mode at the call, as it reports it (`default`, `auto`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    #[cfg_attr(feature = "openapi", schema(pattern = "^[A-Za-z0-9_-]{1,40}$"))]
    pub permission_mode: Option<String>,
    /// The client runs the command confined when a rule allows it so (`assent run`, which
    /// Assent's Claude Code hook rewrites the call to): only then can a rule that confines
    /// (the built-in read-only rule) allow it. Left out: such rules ask.
    /// (`null` is taken as left out.)
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[cfg_attr(feature = "ts", ts(optional, as = "Option<bool>"))]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<bool>))]
    pub confinable: bool,
}

/// `file.write`: a file's whole new content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FileWrite {
    /// The real, absolute path.
    #[cfg_attr(feature = "openapi", schema(schema_with = write_path_schema))]
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
    #[cfg_attr(feature = "openapi", schema(schema_with = delete_path_schema))]
    pub path: String,
}

/// `http.request`: a call Assent sends, with a credential it injects.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct HttpRequest {
    /// GET, HEAD, POST, PUT, PATCH or DELETE (in any case).
    #[cfg_attr(
        feature = "openapi",
        schema(
            pattern = "^(?:[Gg][Ee][Tt]|[Hh][Ee][Aa][Dd]|[Pp][Oo][Ss][Tt]|[Pp][Uu][Tt]|[Pp][Aa][Tt][Cc][Hh]|[Dd][Ee][Ll][Ee][Tt][Ee])$"
        )
    )]
    pub method: String,
    /// The full URL.
    #[cfg_attr(feature = "openapi", schema(schema_with = url_schema))]
    pub url: String,
    /// Headers (lower-case names), never a credential.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(schema_with = headers_schema))]
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
    #[cfg_attr(feature = "openapi", schema(schema_with = credential_ref_schema))]
    pub credential: Option<String>,
}

/// Reads a stored payload as `T`, or says why it is not one (an integrity failure: a stored,
/// approved payload is always of its kind's shape).
pub fn read<T: serde::de::DeserializeOwned>(kind: KindName, payload: &Value) -> Result<T, String> {
    crate::strict::from_ref(payload).map_err(|e| format!("the stored {kind} payload is not of its kind's shape: {e}"))
}

/// A stored payload, typed by its kind. The engine reads an approved payload once (after
/// checking it against the hash recorded with the approval) and hands this to the kind that
/// carries it out, so no applier reads raw JSON.
#[derive(Debug, Clone, PartialEq)]
pub enum Payload {
    /// `tool.call`.
    ToolCall(ToolCall),
    /// `file.write`.
    FileWrite(FileWrite),
    /// `file.delete`.
    FileDelete(FileDelete),
    /// `http.request`.
    HttpRequest(HttpRequest),
}

impl Payload {
    /// Reads a stored payload of `kind`, or says why it is not one.
    pub fn read(kind: KindName, payload: &Value) -> Result<Payload, String> {
        Ok(match kind {
            KindName::ToolCall => Payload::ToolCall(read(kind, payload)?),
            KindName::FileWrite => Payload::FileWrite(read(kind, payload)?),
            KindName::FileDelete => Payload::FileDelete(read(kind, payload)?),
            KindName::HttpRequest => Payload::HttpRequest(read(kind, payload)?),
        })
    }

    /// The payload as it is stored, shown and hashed: its kind's fields as JSON.
    pub fn to_value(&self) -> Value {
        // Structs of strings, maps with string keys and JSON values always serialize.
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// Its kind.
    pub fn kind(&self) -> KindName {
        match self {
            Payload::ToolCall(_) => KindName::ToolCall,
            Payload::FileWrite(_) => KindName::FileWrite,
            Payload::FileDelete(_) => KindName::FileDelete,
            Payload::HttpRequest(_) => KindName::HttpRequest,
        }
    }

    /// Why a kind handed this payload cannot carry it out: it is of another kind.
    pub fn not_of(&self, kind: KindName) -> String {
        format!("a {} payload was handed to {kind}", self.kind())
    }
}

/// Serialized as its kind's fields alone (the kind is the proposal's own field).
impl Serialize for Payload {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Payload::ToolCall(p) => p.serialize(s),
            Payload::FileWrite(p) => p.serialize(s),
            Payload::FileDelete(p) => p.serialize(s),
            Payload::HttpRequest(p) => p.serialize(s),
        }
    }
}

/// The kinds an agent may propose, for the API's description.
#[cfg(feature = "openapi")]
pub fn kind_schema() -> utoipa::openapi::Object {
    utoipa::openapi::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::String)
        .enum_values(Some(KindName::ALL.map(KindName::as_str)))
        .description(Some("The kind of write; `payload` has that kind's shape."))
        .build()
}

/// `cwd` of a tool call, for the API's description: absolute, at most 4,096 characters, no
/// control or invisible characters.
#[cfg(feature = "openapi")]
fn cwd_schema() -> utoipa::openapi::Object {
    use utoipa::openapi::schema::{SchemaType, Type};
    utoipa::openapi::ObjectBuilder::new()
        .schema_type(SchemaType::from_iter([Type::String, Type::Null]))
        .pattern(Some(format!("^/[^{}]*$", crate::invisible::refused_class(&[]))))
        .max_length(Some(MAX_CWD))
        .description(Some(
            "The folder the agent's session works in (absolute, with no control or invisible characters), when the client says: relative paths in the call resolve against it, and rules may say \"inside the working folder\".",
        ))
        .build()
}

/// A string of a format Assent defines (what the format means is in the description).
#[cfg(feature = "openapi")]
fn formatted(format: &str, nullable: bool, description: &str) -> utoipa::openapi::Object {
    use utoipa::openapi::schema::{SchemaFormat, SchemaType, Type};
    let ty = if nullable { SchemaType::from_iter([Type::String, Type::Null]) } else { SchemaType::new(Type::String) };
    utoipa::openapi::ObjectBuilder::new()
        .schema_type(ty)
        .format(Some(SchemaFormat::Custom(format.to_string())))
        // Never empty: the server refuses an empty one (422), so the document does too.
        .min_length(Some(1))
        .description(Some(description))
        .build()
}

#[cfg(feature = "openapi")]
fn write_path_schema() -> utoipa::openapi::Object {
    formatted(
        "file-path",
        false,
        "The real, absolute path of the file to write: its folder exists, it is not a folder, a link or a special file, and it is outside Assent's home, ~/.ssh, ~/.gnupg, keychain files, /proc, /sys, /dev and the configured protected paths (and inside the allowed roots, when configured).",
    )
}

#[cfg(feature = "openapi")]
fn delete_path_schema() -> utoipa::openapi::Object {
    formatted(
        "existing-file-path",
        false,
        "The real, absolute path of an existing regular file to delete, where a file.write may write.",
    )
}

#[cfg(feature = "openapi")]
fn url_schema() -> utoipa::openapi::Object {
    formatted(
        "https-url",
        false,
        "The full URL: https, with a host and no user name or password in it (plain http only to a loopback origin the named credential allows).",
    )
}

#[cfg(feature = "openapi")]
fn credential_ref_schema() -> utoipa::openapi::Object {
    formatted(
        "credential-name",
        true,
        "The name of a credential Assent holds (404 `unknown_credential` if none has it), allowed for the URL's origin; Assent injects its secret.",
    )
}

/// A pattern group matching any of `words`, spelled in any case.
#[cfg(feature = "openapi")]
fn any_case(words: &[&str]) -> String {
    let one =
        |w: &str| {
            w.chars()
                .map(|c| {
                    if c.is_ascii_alphabetic() { format!("[{}{}]", c.to_ascii_uppercase(), c) } else { regex_escape(c) }
                })
                .collect::<String>()
        };
    format!("(?:{})", words.iter().map(|w| one(w)).collect::<Vec<_>>().join("|"))
}

#[cfg(feature = "openapi")]
fn regex_escape(c: char) -> String {
    if "\\.^$|?*+()[]{}-".contains(c) { format!("\\{c}") } else { c.to_string() }
}

#[cfg(feature = "openapi")]
fn headers_schema() -> utoipa::openapi::Object {
    use utoipa::openapi::schema::Type;
    let forbidden = any_case(&crate::credentials::ASSENT_SETS);
    let name = utoipa::openapi::ObjectBuilder::new()
        .schema_type(Type::String)
        .pattern(Some(format!("^(?!{forbidden}$)[!#$%&'*+.^_`|~0-9A-Za-z-]{{1,128}}$")))
        .description(Some("A header name, not one Assent sets itself"))
        .build();
    let value = utoipa::openapi::ObjectBuilder::new()
        .schema_type(Type::String)
        .max_length(Some(8192))
        .pattern(Some("^[^\\r\\n\\u0000]*$"))
        .build();
    utoipa::openapi::ObjectBuilder::new()
        .schema_type(Type::Object)
        .property_names(Some(name))
        .additional_properties(Some(utoipa::openapi::schema::Schema::Object(value)))
        .description(Some("Headers (names in any case, stored lower case; values of at most 8,192 characters without line breaks), never a credential: names Assent sets itself are refused."))
        .build()
}

/// `client` of a tool call, for the API's description.
#[cfg(feature = "openapi")]
fn client_schema() -> utoipa::openapi::Object {
    use utoipa::openapi::schema::{SchemaType, Type};
    utoipa::openapi::ObjectBuilder::new()
        .schema_type(SchemaType::from_iter([Type::String, Type::Null]))
        .enum_values(Some(clients().into_iter().map(Some).chain([None])))
        .description(Some(format!(
            "The client the call came through, when it says: {} (their hooks), `mcp-permission-prompt` (`assent mcp`'s permission prompt tool), `mcp-proxy` (`assent mcp proxy`, in front of an MCP server). Assent's own notes on the call follow from it.",
            {
                let named: Vec<String> = agent_clients().iter().map(|n| format!("`{n}`")).collect();
                match named.split_last() {
                    Some((last, [])) => last.clone(),
                    Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
                    None => String::new(),
                }
            }
        )))
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
        let w: FileWrite = read(crate::payloads::KindName::FileWrite, &json!({"path": "/x", "content": "y"}))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(w.path, "/x");
        let h: HttpRequest =
            read(crate::payloads::KindName::HttpRequest, &json!({"method": "POST", "url": "https://x.example/", "headers": {}, "credential": null, "json": {"a": 1}}))
                .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((h.method.as_str(), h.json), ("POST", Some(json!({"a": 1}))));
        assert!(
            read::<FileWrite>(crate::payloads::KindName::FileWrite, &json!({"path": "/x"})).is_err(),
            "no content is no default"
        );
        assert!(
            read::<HttpRequest>(crate::payloads::KindName::HttpRequest, &json!({"url": "https://x.example/"})).is_err(),
            "no method is not GET"
        );
    }
}
