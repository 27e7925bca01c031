//! # assent-mcp
//!
//! `assent mcp`: a stdio MCP server. (Being built.)

use std::sync::Arc;

/// Finds the running server's API base (`http://127.0.0.1:PORT/v1`), or `None` when Assent is
/// not running. Called on every tool call, so Assent may start after the MCP client.
pub type ResolveBase = Arc<dyn Fn() -> Option<String> + Send + Sync>;

/// Serves MCP on standard input and output until the client closes it.
pub async fn run(resolve_base: ResolveBase, token: String) -> anyhow::Result<()> {
    let _ = (resolve_base, token);
    anyhow::bail!("assent mcp is not available yet")
}
