//! # assent-mcp
//!
//! `assent mcp`: a stdio MCP server through which any MCP client (Claude Code, Claude Desktop,
//! Cursor, the MCP SDKs) proposes writes to the running Assent and learns the person's decision.
//!
//! It holds no state and no secret beyond the agent token it was started with: every tool call
//! is one or a few requests to Assent's loopback API, so the rules of that API (an agent sees only
//! its own proposals, can never decide, previews come from the stored payload) hold here too.
//! Tool results tell the model the id, the status and what to do next; they never echo the
//! payload back, so the model cannot mistake its own words for what was stored.

mod tools;

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use serde_json::{Map, Value};

pub use tools::Outcome;

/// Finds the running server's API base (`http://127.0.0.1:PORT/v1`), or `None` when Assent is
/// not running. Called on every tool call, so Assent may start after the MCP client.
pub type ResolveBase = Arc<dyn Fn() -> Option<String> + Send + Sync>;

/// How long `wait_for_decision` waits by default: under the 60 s tool timeout many clients use.
pub const DEFAULT_WAIT: u64 = 50;
/// The longest single `wait_for_decision`.
pub const MAX_WAIT: u64 = 120;
/// How long `permission_prompt` waits for a person before it denies and withdraws.
pub const PERMISSION_WAIT: Duration = Duration::from_secs(15 * 60);

const INSTRUCTIONS: &str = "Assent puts a person between you and real writes. To change a file, \
call an HTTP API or run a consequential tool, propose it here instead of doing it yourself: \
propose_file_write, propose_file_delete, propose_http_request, or request_approval for any other \
tool call. Each returns a proposal id at once. Then call wait_for_decision with that id (again while \
it answers pending) to learn the outcome: files and HTTP requests are applied by Assent itself once \
approved, with credentials you never see; for request_approval you run the tool yourself, with the \
approved input, only after it is approved. If the person asks for changes (refined), propose again \
with `supersedes` set to the old id.";

/// The MCP handler: forwards tool calls to Assent's API.
#[derive(Clone)]
pub struct AssentMcp {
    api: tools::Api,
}

impl AssentMcp {
    /// A handler that finds Assent with `resolve_base` and speaks as the agent of `token`.
    pub fn new(resolve_base: ResolveBase, token: String) -> anyhow::Result<Self> {
        Ok(AssentMcp { api: tools::Api::new(resolve_base, token)? })
    }

    /// Runs one tool by name (also used by the tests without a transport).
    pub async fn call(&self, name: &str, args: Map<String, Value>) -> CallToolResult {
        let out = tools::call(&self.api, name, args).await;
        let text = serde_json::to_string_pretty(&out.body).unwrap_or_else(|_| out.body.to_string());
        let mut r = if out.is_error {
            CallToolResult::error(vec![ContentBlock::text(text)])
        } else {
            CallToolResult::success(vec![ContentBlock::text(text)])
        };
        // The permission prompt's contract is exactly one text block; the others also carry the
        // same object as structured content for clients that read it.
        if name != "permission_prompt" {
            r.structured_content = Some(out.body);
        }
        r
    }
}

impl ServerHandler for AssentMcp {
    fn get_info(&self) -> ServerConfig {
        let mut me = Implementation::new("assent", env!("CARGO_PKG_VERSION"));
        me.title = Some("Assent: approval inbox for agent writes".into());
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(me)
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools::list()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if !tools::NAMES.contains(&request.name.as_ref()) {
            return Err(ErrorData::invalid_params(
                format!("no tool named {:?}; see tools/list", tools::clip(&request.name, 64)),
                None,
            ));
        }
        let args = request.arguments.unwrap_or_default();
        Ok(self.call(&request.name, args).await.into())
    }
}

/// Serves MCP on standard input and output until the client closes it.
pub async fn run(resolve_base: ResolveBase, token: String) -> anyhow::Result<()> {
    let server = AssentMcp::new(resolve_base, token)?;
    let running = server.serve(rmcp::transport::stdio()).await?;
    running.waiting().await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The process installs its TLS provider at start (the `assent` binary does); so do the tests.
    fn server_without_assent() -> AssentMcp {
        let _ = rustls::crypto::ring::default_provider().install_default();
        AssentMcp::new(Arc::new(|| None), "t".into()).expect("client")
    }

    #[test]
    fn every_tool_has_an_object_schema_and_a_description() {
        let list = tools::list();
        let names: Vec<_> = list.iter().map(|t| t.name.to_string()).collect();
        assert_eq!(names, tools::NAMES);
        for t in list {
            assert_eq!(t.input_schema.get("type"), Some(&json!("object")), "{}", t.name);
            assert!(t.description.as_deref().is_some_and(|d| d.len() > 40), "{}", t.name);
        }
    }

    #[tokio::test]
    async fn a_tool_call_without_assent_says_it_is_not_running() {
        let s = server_without_assent();
        let mut args = Map::new();
        args.insert("tool".into(), json!("Bash"));
        args.insert("input".into(), json!({"command": "ls"}));
        let r = s.call("request_approval", args).await;
        assert_eq!(r.is_error, Some(true));
        let body = r.structured_content.expect("structured");
        assert_eq!(body["error"]["code"], "not_running");
    }

    #[tokio::test]
    async fn the_permission_prompt_denies_when_assent_is_not_running() {
        let s = server_without_assent();
        let mut args = Map::new();
        args.insert("tool_name".into(), json!("Bash"));
        args.insert("input".into(), json!({"command": "rm -rf /"}));
        let r = s.call("permission_prompt", args).await;
        assert_eq!(r.content.len(), 1);
        assert!(r.structured_content.is_none());
        let ContentBlock::Text(t) = &r.content[0] else { panic!("not text") };
        let v: Value = serde_json::from_str(&t.text).expect("json");
        assert_eq!(v["behavior"], "deny");
        assert!(v["message"].as_str().is_some_and(|m| m.contains("not running")));
    }
}
