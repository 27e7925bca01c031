//! `assent mcp` driven end to end by a real MCP client: the `mcp` package from PyPI, in a
//! virtual environment the test creates on first use (`.ci/venv`, or `ASSENT_TEST_PYTHON`).

use crate::harness::{Launch, Server, assent, assent_argv, native, scratch_file, stderr, stdout, stdout_lines};
use reqwest::Method;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::Duration;

/// The version of the MCP Python SDK the tests use.
const MCP_PACKAGE: &str = "mcp==2.3.0";

/// A Python interpreter that can `import mcp`, set up once.
pub(crate) fn python() -> PathBuf {
    if let Ok(p) = std::env::var("ASSENT_TEST_PYTHON") {
        return PathBuf::from(p);
    }
    crate::harness::venv_python("venv", &[MCP_PACKAGE], "mcp")
}

/// A client script of tests/fixtures/mcp, run with `python()`, printing its steps.
pub(crate) struct Client {
    child: Child,
    lines: Receiver<String>,
}

impl Client {
    fn start(s: &Server, scenario: &str, args: &[&str]) -> Client {
        Client::run("client.py", s, scenario, args)
    }

    /// Runs tests/fixtures/mcp/`script` with its scenario, the command that runs assent (a JSON
    /// list), `s`'s home and `args`.
    pub(crate) fn run(script: &str, s: &Server, scenario: &str, args: &[&str]) -> Client {
        let script = format!("{}/tests/fixtures/mcp/{script}", env!("CARGO_MANIFEST_DIR"));
        let mut child = Command::new(python())
            .arg(script)
            .arg(scenario)
            .arg(json!(assent_argv()).to_string())
            .arg(native(s.home()))
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let lines = stdout_lines(&mut child);
        Client { child, lines }
    }

    /// The next step the client printed; it must be `tag`.
    pub(crate) fn next(&mut self, tag: &str) -> Value {
        match self.lines.recv_timeout(Duration::from_secs(60)) {
            Ok(line) => {
                let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{line:?}: {e}"));
                assert_eq!(v["step"], tag, "{v}");
                v["value"].clone()
            }
            Err(_) => {
                let _ = self.child.kill();
                let out = std::mem::replace(&mut self.child, Command::new("true").spawn().unwrap());
                let o = out.wait_with_output().unwrap();
                panic!("the MCP client printed no {tag:?}; its stderr:\n{}", String::from_utf8_lossy(&o.stderr));
            }
        }
    }

    pub(crate) fn finish(self) {
        let o = self.child.wait_with_output().unwrap();
        assert!(o.status.success(), "MCP client failed:\n{}", String::from_utf8_lossy(&o.stderr));
    }
}

#[tokio::test]
async fn a_real_mcp_client_proposes_a_file_and_learns_it_was_applied() {
    let s = Server::start().await;
    let (_dir, target) = scratch_file("greeting.txt", "hello\n");
    let mut c = Client::start(&s, "file", &[&native(&target), "hello, world\n"]);

    let init = c.next("initialized");
    assert_eq!(init["server"], "assent");
    assert!(init["instructions"].as_str().unwrap().contains("wait_for_decision"));
    let tools = c.next("tools");
    let names: Vec<&str> = tools.as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "propose_file_write",
            "propose_file_delete",
            "propose_http_request",
            "request_approval",
            "get_proposal",
            "wait_for_decision",
            "permission_prompt"
        ]
    );
    let write = &tools[0];
    assert_eq!(write["schema"]["required"], json!(["path", "content"]));

    let proposed = c.next("proposed");
    assert_eq!(proposed["is_error"], false);
    let id = proposed["json"]["id"].as_str().unwrap().to_string();
    assert_eq!(proposed["json"]["status"], "pending");
    // The model is told what to do next, and its content is not echoed back.
    assert!(!proposed["json"].to_string().contains("hello, world"));
    assert!(proposed["json"]["message"].as_str().unwrap().contains("wait_for_decision"));
    // What was stored is the agent's own proposal, with Assent's diff.
    let (_, p) = s.get(&id, &s.owner).await;
    assert_eq!(p["agent"], "default");
    assert_eq!(p["payload"]["content"], "hello, world\n");
    assert_eq!(p["preview"]["stats"], json!({"added": 1, "removed": 1}));

    // A bounded wait answers pending while nobody has decided.
    let waited = c.next("waited");
    assert_eq!(waited["json"]["status"], "pending");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "hello\n");

    let o = s.cli(&["approve", &id]);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut last = c.next("waited");
    while last["json"]["status"] == "pending" {
        last = c.next("waited");
    }
    assert_eq!(last["json"]["status"], "applied", "{last}");
    assert!(last["json"]["message"].as_str().unwrap().contains("applied"));
    let fin = c.next("final");
    assert_eq!(fin["json"]["result"]["sha256"], p["preview"]["new_sha256"]);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "hello, world\n");
    c.finish();
}

#[tokio::test]
async fn the_permission_prompt_denies_with_the_persons_reason() {
    let s = Server::start().await;
    let mut c = Client::start(&s, "permission", &[r#"{"command": "rm -rf build"}"#, "toolu_01"]);
    c.next("initialized");
    c.next("tools");
    let p = s.first_pending().await;
    assert_eq!(
        p["payload"],
        json!({"tool": "Bash", "input": {"command": "rm -rf build"}, "client": "mcp-permission-prompt"})
    );
    assert_eq!((&p["title"], &p["summary"]), (&Value::Null, &Value::Null), "no words of the agent: {p}");
    let o = s.cli(&["reject", p["id"].as_str().unwrap(), "--reason", "keep the build cache"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let answer = c.next("answer");
    assert_eq!(answer["texts"], 1);
    assert_eq!(answer["json"], json!({"behavior": "deny", "message": "Rejected in Assent: keep the build cache"}));
    c.finish();
}

#[tokio::test]
async fn the_permission_prompt_allows_with_the_persons_edit() {
    let s = Server::start().await;
    let mut c = Client::start(&s, "permission", &[r#"{"command": "git push --force"}"#, "toolu_02"]);
    c.next("initialized");
    c.next("tools");
    let p = s.first_pending().await;
    let id = p["id"].as_str().unwrap();
    let o = s.cli(&["approve", id, "--edits", r#"{"input": {"command": "git push --force-with-lease"}}"#]);
    assert!(o.status.success(), "{} {}", stdout(&o), stderr(&o));
    let answer = c.next("answer");
    assert_eq!(
        answer["json"],
        json!({"behavior": "allow", "updatedInput": {"command": "git push --force-with-lease"}})
    );
    c.finish();
}

#[tokio::test]
async fn bad_tool_input_gets_a_clear_error_and_stores_nothing() {
    let s = Server::start().await;
    let mut c = Client::start(&s, "bad", &[]);
    c.next("initialized");
    c.next("tools");
    // Arguments that break the tool's schema are a protocol error naming the field.
    let missing = c.next("missing");
    assert_eq!(missing["mcp_error"]["code"], -32602, "{missing}");
    assert!(missing["mcp_error"]["message"].as_str().unwrap().contains("content"));
    let relative = c.next("relative");
    assert_eq!(relative["is_error"], true);
    assert!(relative["json"]["error"]["code"].as_str().unwrap().contains("path"), "{relative}");
    let unknown = c.next("unknown_id");
    assert_eq!(unknown["json"]["error"]["code"], "not_found");
    c.finish();
    let (_, page) = s.req(Method::GET, "/proposals", Some(&s.owner), None).await;
    assert_eq!(page["items"], json!([]));
}

#[tokio::test]
async fn without_assent_running_the_client_is_told_so() {
    let mut s = Server::start().await;
    s.stop();
    let mut c = Client::start(&s, "bad", &[]);
    c.next("initialized");
    c.next("tools");
    let missing = c.next("missing");
    assert_eq!(missing["mcp_error"]["code"], -32602, "checked before Assent is asked: {missing}");
    let relative = c.next("relative");
    assert_eq!(relative["json"]["error"]["code"], "not_running");
    assert!(relative["json"]["error"]["message"].as_str().unwrap().contains("assent serve"));
    c.finish();
}

#[tokio::test]
async fn its_log_on_a_pipe_carries_no_escape_codes() {
    // MCP clients pass a server's stderr on to their own terminal or log file: plain text there.
    let s = Server::start().await;
    let mut out = assent()
        .arg("--home")
        .arg(native(s.home()))
        .arg("mcp")
        .env("ASSENT_LOG", "debug")
        .stdin(Stdio::piped())
        .launch(&s.env, Stdio::null(), Stdio::piped());
    let hello = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    ];
    let mut stdin = out.stdin.take().unwrap();
    for m in hello {
        std::io::Write::write_all(&mut stdin, format!("{m}\n").as_bytes()).unwrap();
    }
    std::thread::sleep(Duration::from_millis(500));
    drop(stdin);
    let out = out.wait_with_output().unwrap();
    let err = stderr(&out);
    assert!(err.contains("initialized"), "a debug log says something: {err:?}");
    assert!(!err.contains('\u{1b}'), "escape codes on a pipe: {err:?}");
}
