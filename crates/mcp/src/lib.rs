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

pub mod proxy;
mod tools;

use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, ContentBlock, CreateTaskResult,
    GetTaskParams, GetTaskResult, Implementation, ListToolsResult, PaginatedRequestParams, ServerCapabilities,
    ServerConfig, TaskStatus, UpdateTaskParams,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::task_manager::{TaskExit, TaskManager, TaskOptions};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

pub use tools::Outcome;

pub use assent_client::{Endpoint, Resolve};

/// How long `wait_for_decision` waits by default: under the 60 s tool timeout many clients use.
pub const DEFAULT_WAIT: u64 = 50;
/// The longest single `wait_for_decision`.
pub const MAX_WAIT: u64 = 120;
/// How long `permission_prompt` waits for a person before it denies and withdraws.
pub const PERMISSION_WAIT: Duration = Duration::from_secs(15 * 60);
/// The tools that wait for a person: a client that takes tasks (MCP's tasks extension) gets a
/// task for each call of them at once and polls `tasks/get` for the decision, however long the
/// person takes, where other clients call `wait_for_decision` again while it says pending.
pub const TASK_TOOLS: [&str; 2] = ["wait_for_decision", "permission_prompt"];
/// A task's lifetime (the extension fails one still running then): a day, longer than a
/// proposal waits by default.
pub const TASK_TTL: Duration = Duration::from_secs(24 * 3600);

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
    api: assent_client::Client,
    /// Cancelled when the client goes away (standard input closed).
    closing: CancellationToken,
    /// Tool calls still running, so the process ends only once they have cleaned up.
    running: TaskTracker,
    /// The calls run as tasks, for `tasks/get`, `tasks/cancel`.
    tasks: TaskManager,
}

impl AssentMcp {
    /// A handler that finds Assent with `endpoint` (looked up on every tool call, so Assent
    /// may start after the MCP client) and speaks as the agent whose token `token` finds
    /// (none yet: Assent never started in this home).
    pub fn new(endpoint: Resolve<Endpoint>, token: Resolve<String>) -> anyhow::Result<Self> {
        Ok(AssentMcp {
            api: assent_client::Client::new(endpoint, token, "mcp")?,
            closing: CancellationToken::new(),
            running: TaskTracker::new(),
            tasks: TaskManager::new(),
        })
    }

    /// Runs one tool by name (also used by the tests without a transport).
    pub async fn call(&self, name: &str, args: Map<String, Value>) -> CallToolResult {
        self.call_until(name, args, CancellationToken::new()).await
    }

    /// Runs one tool; `cancel` (the client's `notifications/cancelled`) or the client going
    /// away ends a wait early, and a permission prompt then withdraws its proposal.
    pub async fn call_until(&self, name: &str, args: Map<String, Value>, cancel: CancellationToken) -> CallToolResult {
        self.run(name, args, cancel, false).await
    }

    /// Runs one tool; `as_task`: a wait for a decision goes on until there is one.
    async fn run(
        &self,
        name: &str,
        args: Map<String, Value>,
        cancel: CancellationToken,
        as_task: bool,
    ) -> CallToolResult {
        let stop = tools::Stop { request: cancel, client_gone: self.closing.clone() };
        let out = self.running.track_future(tools::call(&self.api, name, args, &stop, as_task)).await;
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

    /// Starts tool `name` as a task: it runs until decided (or cancelled with `tasks/cancel`,
    /// which ends the wait as the call's own cancellation does), and the client reads its result
    /// with `tasks/get`.
    fn start_task(&self, name: String, args: Map<String, Value>) -> CreateTaskResult {
        let me = self.clone();
        let options = TaskOptions::new()
            .with_ttl_ms(TASK_TTL.as_millis() as u64)
            .with_poll_interval_ms(1000)
            .with_status_message("waiting for a person's decision in Assent");
        let task = self.tasks.spawn(options, move |cx| {
            Box::pin(async move {
                // `tasks/cancel` cancels the call as the client's own cancellation would, and the
                // call then ends as it does (a permission prompt withdraws its proposal).
                let cancel = CancellationToken::new();
                let run = me.run(&name, args, cancel.clone(), true);
                tokio::pin!(run);
                let r = tokio::select! {
                    r = &mut run => r,
                    () = cx.cancelled() => {
                        cancel.cancel();
                        run.await
                    }
                };
                if cx.is_cancel_requested() { Err(TaskExit::Cancelled) } else { Ok(r) }
            })
        });
        CreateTaskResult::new(task)
    }
}

/// What a task's status says in words: waiting only while it works (a finished one kept saying
/// "waiting for a person's decision").
fn task_words(status: TaskStatus) -> &'static str {
    match status {
        TaskStatus::Working | TaskStatus::InputRequired => "waiting for a person's decision in Assent",
        TaskStatus::Completed => "decided: the result says how",
        TaskStatus::Failed => "ended with an error",
        TaskStatus::Cancelled => "cancelled: the proposal was withdrawn",
        _ => "see the task's status",
    }
}

impl ServerHandler for AssentMcp {
    fn get_info(&self) -> ServerConfig {
        let mut me = Implementation::new("assent", env!("CARGO_PKG_VERSION"));
        me.title = Some("Assent: approval inbox for agent writes".into());
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_tasks().build())
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
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if !tools::NAMES.contains(&request.name.as_ref()) {
            return Err(ErrorData::invalid_params(
                format!("no tool named {:?}; see tools/list", tools::clip(&request.name, 64)),
                None,
            ));
        }
        let args = request.arguments.unwrap_or_default();
        tools::check_arguments(&request.name, &args).map_err(|m| ErrorData::invalid_params(m, None))?;
        let takes_tasks = context.client_capabilities().is_some_and(|c| c.supports_tasks());
        if takes_tasks && TASK_TOOLS.contains(&request.name.as_ref()) {
            return Ok(CallToolResponse::Task(self.start_task(request.name.to_string(), args)));
        }
        Ok(self.call_until(&request.name, args, context.ct.clone()).await.into())
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        let mut task = self.tasks.get_task(&request.task_id)?;
        task.task.status_message = Some(task_words(task.task.status).to_string());
        Ok(GetTaskResult::new(task))
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        // No task of Assent's asks the client for input: responses name nothing outstanding.
        self.tasks.update_task(&request.task_id, request.input_responses)
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.tasks.cancel_task(&request.task_id)
    }
}

/// Standard input that says when it reaches its end: the client closed it (or died), and
/// waits in progress must not go on for a client that is gone.
struct WatchEof<R> {
    inner: R,
    eof: CancellationToken,
}

impl<R: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for WatchEof<R> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let r = std::pin::Pin::new(&mut self.inner).poll_read(cx, buf);
        if matches!(r, std::task::Poll::Ready(Ok(()))) && buf.filled().len() == before && buf.remaining() > 0 {
            self.eof.cancel();
        }
        r
    }
}

/// Serves MCP on standard input and output until the client closes it; then lets running
/// tool calls clean up (withdraw what nobody waits for any more) before returning.
pub async fn run(endpoint: Resolve<Endpoint>, token: Resolve<String>) -> anyhow::Result<()> {
    let server = AssentMcp::new(endpoint, token)?;
    let (closing, running) = (server.closing.clone(), server.running.clone());
    let stdin = WatchEof { inner: tokio::io::stdin(), eof: closing.clone() };
    let service = server.serve((stdin, tokio::io::stdout())).await?;
    service.waiting().await?;
    closing.cancel();
    running.close();
    let _ = tokio::time::timeout(Duration::from_secs(5), running.wait()).await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The process installs its TLS provider at start (the `assent` binary does); so do the tests.
    fn server_without_assent() -> AssentMcp {
        let _ = rustls::crypto::ring::default_provider().install_default();
        AssentMcp::new(std::sync::Arc::new(|| None), std::sync::Arc::new(|| Some("t".into()))).expect("client")
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

    /// A tool call's arguments, as a client sends them.
    fn object(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn arguments_are_checked_against_the_declared_schema() {
        let args = object;
        let bad = |name: &str, v: Value| tools::check_arguments(name, &args(v)).err().unwrap_or_default();
        assert!(bad("request_approval", json!({"tool": "deploy"})).contains("input"), "a missing field is named");
        assert!(bad("permission_prompt", json!({"tool_name": "Bash", "input": "ls"})).contains("`input`"));
        assert!(bad("propose_file_write", json!({"path": "/x", "content": "y", "stray": 1})).contains("stray"));
        assert!(bad("wait_for_decision", json!({"id": "p_1", "timeout_seconds": 9999})).contains("timeout_seconds"));
        assert!(tools::check_arguments("request_approval", &args(json!({"tool": "deploy", "input": {}}))).is_ok());
        assert!(
            tools::check_arguments("propose_file_write", &args(json!({"path": "/x", "content": "", "title": "t"})))
                .is_ok()
        );
    }

    #[tokio::test]
    async fn a_tool_call_without_assent_says_it_is_not_running() {
        let args = json!({"tool": "Bash", "input": {"command": "ls"}});
        let r = server_without_assent().call("request_approval", object(args)).await;
        assert_eq!(r.is_error, Some(true));
        let body = r.structured_content.expect("structured");
        assert_eq!(body["error"]["code"], "not_running");
    }

    #[tokio::test]
    async fn the_permission_prompt_denies_when_assent_is_not_running() {
        let args = json!({"tool_name": "Bash", "input": {"command": "rm -rf /"}});
        let r = server_without_assent().call("permission_prompt", object(args)).await;
        assert_eq!(r.content.len(), 1);
        assert!(r.structured_content.is_none());
        let ContentBlock::Text(t) = &r.content[0] else { panic!("not text") };
        let v: Value = serde_json::from_str(&t.text).expect("json");
        assert_eq!(v["behavior"], "deny");
        assert!(v["message"].as_str().is_some_and(|m| m.contains("not running")));
    }
}
