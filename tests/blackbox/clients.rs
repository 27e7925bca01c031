//! What real agent clients hit: `assent mcp` before Assent ever ran in its home, clients that
//! go away mid-wait (an MCP `notifications/cancelled`, a closed stdin, a hook interrupted by a
//! signal), hook re-runs with other flags, and tool arguments that break the declared schema.
//! The MCP side speaks raw JSON-RPC over the real process's stdio, as any client does.

use crate::harness::{BIN, Launch, Server, stdout_lines};
use reqwest::Method;
use serde_json::{Value, json};
use std::io::Write;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

/// `assent mcp` on its own stdio.
struct Mcp {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl Mcp {
    fn start(home: &std::path::Path, env: &[(String, String)]) -> Mcp {
        let mut mcp = Command::new(BIN);
        mcp.arg("--home").arg(home).arg("mcp").stdin(Stdio::piped());
        let mut child = mcp.launch(env, Stdio::piped(), Stdio::null());
        let lines = stdout_lines(&mut child);
        let mut m = Mcp { stdin: child.stdin.take(), child, lines };
        m.send(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}));
        let init = m.answer(0);
        assert_eq!(init["result"]["serverInfo"]["name"], "assent", "{init}");
        m.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        m
    }

    fn send(&mut self, v: Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{v}").unwrap();
        stdin.flush().unwrap();
    }

    fn call(&mut self, id: u64, tool: &str, args: Value) {
        self.send(
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": args}}),
        );
    }

    /// The response to request `id`.
    fn answer(&mut self, id: u64) -> Value {
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if let Ok(line) = self.lines.recv_timeout(Duration::from_millis(200))
                && let Ok(v) = serde_json::from_str::<Value>(&line)
                && v["id"] == id
            {
                return v;
            }
        }
        panic!("no answer to request {id}");
    }

    /// The JSON object a tool result carries in its text block.
    fn text(v: &Value) -> Value {
        serde_json::from_str(v["result"]["content"][0]["text"].as_str().unwrap_or("null")).unwrap_or(Value::Null)
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn first_pending(s: &Server) -> String {
    s.first_pending().await["id"].as_str().unwrap().to_string()
}

/// How long until the proposal is withdrawn (at most `limit`).
async fn withdrawn_within(s: &Server, id: &str, limit: Duration) -> Option<Duration> {
    let started = Instant::now();
    while started.elapsed() < limit {
        if s.get(id, &s.owner).await.1["status"] == "withdrawn" {
            return Some(started.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    None
}

#[tokio::test]
async fn mcp_starts_in_a_home_where_assent_never_ran_and_says_how_to_start_it() {
    let home = tempfile::tempdir().unwrap();
    let mut m = Mcp::start(home.path(), &[]);
    m.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
    let tools = m.answer(1);
    assert_eq!(tools["result"]["tools"].as_array().map(Vec::len), Some(7), "{tools}");
    m.call(2, "permission_prompt", json!({"tool_name": "Bash", "input": {"command": "rm -rf build"}}));
    let prompt = Mcp::text(&m.answer(2));
    assert_eq!(prompt["behavior"], "deny", "denied for safety: {prompt}");
    assert!(prompt["message"].as_str().unwrap().contains("assent serve"), "{prompt}");
    m.call(3, "request_approval", json!({"tool": "deploy", "input": {}}));
    let r = m.answer(3);
    assert_eq!(r["result"]["isError"], true);
    assert_eq!(Mcp::text(&r)["error"]["code"], "not_running");
    assert!(!home.path().join("agent.token").exists(), "it creates nothing");
}

#[tokio::test]
async fn tool_arguments_that_break_the_schema_get_an_error_naming_the_field() {
    let s = Server::start().await;
    let mut m = Mcp::start(s.home(), &s.env);
    for (id, tool, args, field) in [
        (1, "request_approval", json!({"tool": "deploy"}), "input"),
        (2, "permission_prompt", json!({"tool_name": "Bash", "input": "ls"}), "input"),
        (3, "propose_file_write", json!({"path": "/tmp/x", "content": "y", "mode": "0777"}), "mode"),
        (4, "wait_for_decision", json!({"id": 7}), "id"),
    ] {
        m.call(id, tool, args);
        let r = m.answer(id);
        assert_eq!(r["error"]["code"], -32602, "{tool}: {r}");
        assert!(r["error"]["message"].as_str().unwrap().contains(field), "{tool}: {r}");
    }
    let (_, all) = s.req(Method::GET, "/proposals", Some(&s.owner), None).await;
    assert_eq!(all["items"], json!([]), "nothing was filed");
}

/// A server, and `assent mcp` waiting on the person for its permission prompt (request 5) on
/// `make deploy`: the pending proposal's id.
async fn prompt_waiting() -> (Server, Mcp, String) {
    let s = Server::start().await;
    let mut m = Mcp::start(s.home(), &s.env);
    m.call(5, "permission_prompt", json!({"tool_name": "Bash", "input": {"command": "make deploy"}}));
    let id = first_pending(&s).await;
    (s, m, id)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_permission_prompt_withdraws_its_proposal() {
    let (s, mut m, id) = prompt_waiting().await;
    m.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5, "reason": "user interrupted"}}));
    let took = withdrawn_within(&s, &id, Duration::from_secs(3)).await;
    assert!(took.is_some_and(|d| d < Duration::from_secs(1)), "withdrawn after {took:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_goes_away_mid_prompt_leaves_no_question_behind() {
    let (s, mut m, id) = prompt_waiting().await;
    drop(m.stdin.take()); // the client closes the pipe (or dies)
    let took = withdrawn_within(&s, &id, Duration::from_secs(3)).await;
    assert!(took.is_some_and(|d| d < Duration::from_secs(1)), "withdrawn after {took:?}");
    let status = (0..50).find_map(|_| {
        std::thread::sleep(Duration::from_millis(100));
        m.child.try_wait().ok().flatten()
    });
    assert!(status.is_some(), "assent mcp ends once the client is gone");
}

fn hook(s: &Server, event: &Value, extra: &[&str]) -> Child {
    crate::hooks::spawn_for("claude-code", s.home(), &s.env, &event.to_string(), extra)
}

fn event(tool_use_id: &str) -> Value {
    json!({"session_id": "s-1", "cwd": "/home/dev/shop", "hook_event_name": "PreToolUse", "tool_name": "Bash",
           "tool_input": {"command": "npm publish"}, "tool_use_id": tool_use_id, "permission_mode": "default"})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupted_hook_withdraws_its_proposal() {
    let s = Server::start().await;
    for sig in ["INT", "TERM", "HUP"] {
        let child = hook(&s, &event(&format!("toolu_{sig}")), &["--timeout", "60"]);
        let id = first_pending(&s).await;
        let sent = Command::new("kill").args([&format!("-{sig}"), &child.id().to_string()]).status().unwrap();
        assert!(sent.success());
        let took = withdrawn_within(&s, &id, Duration::from_secs(3)).await;
        assert!(took.is_some_and(|d| d < Duration::from_secs(1)), "SIG{sig}: withdrawn after {took:?}");
        let out = child.wait_with_output().unwrap();
        assert!(String::from_utf8_lossy(&out.stdout).contains("withdrawn"), "SIG{sig}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hook_rerun_with_other_flags_gets_the_settled_answer() {
    let s = Server::start().await;
    let first = hook(&s, &event("toolu_same"), &["--timeout", "30"]);
    let id = first_pending(&s).await;
    s.decide(&id, json!({"outcome": "reject", "reason": "not on a Friday"})).await;
    let out = first.wait_with_output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("not on a Friday"));
    // Claude Code runs the same event again, this time with another timeout.
    let again = hook(&s, &event("toolu_same"), &["--timeout", "55"]).wait_with_output().unwrap();
    let v: Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny", "{v}");
    assert!(v["hookSpecificOutput"]["permissionDecisionReason"].as_str().unwrap().contains("not on a Friday"));
    let (_, all) = s.req(Method::GET, "/proposals", Some(&s.owner), None).await;
    assert_eq!(all["items"].as_array().unwrap().len(), 1, "one proposal, not two");
}
