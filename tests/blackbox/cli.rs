//! The `assent` command against a running server.

use crate::harness::{BIN, Server, cli, stderr, stdout};
use reqwest::Method;
use serde_json::{Value, json};
use std::process::{Command, Stdio};
use std::time::Duration;

#[tokio::test]
async fn propose_wait_and_decide_from_two_processes() {
    let s = Server::start().await;
    let waiter = Command::new(BIN)
        .arg("--home")
        .arg(s.home())
        .args([
            "propose",
            "--tool",
            "Bash",
            "--input",
            r#"{"command":"make deploy"}"#,
            "--title",
            "deploy",
            "--wait",
            "60",
            "--json",
        ])
        .envs(s.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Find it in the inbox and approve it from another process.
    let mut id = String::new();
    for _ in 0..100 {
        let out = s.cli(&["list", "--status", "pending", "--json"]);
        let v: Value = serde_json::from_str(&stdout(&out)).unwrap_or(Value::Null);
        if let Some(i) = v["items"][0]["id"].as_str() {
            id = i.to_string();
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!id.is_empty(), "the proposal appeared");
    let table = stdout(&s.cli(&["list"]));
    assert!(table.contains("STATUS") && table.contains(&id) && table.contains("deploy"), "{table}");
    let shown = stdout(&s.cli(&["show", &id]));
    assert!(shown.contains("make deploy") && shown.contains("the agent's words"), "{shown}");
    let out = s.cli(&["approve", &id, "--reason", "go", "--edits", r#"{"input":{"command":"make deploy-staging"}}"#]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = waiter.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let p: Value = serde_json::from_str(&String::from_utf8_lossy(&out.stdout)).unwrap();
    assert_eq!(p["status"], "approved");
    assert_eq!(p["approved_payload"]["input"]["command"], "make deploy-staging");
    assert_eq!(p["decision"]["channel"], "cli");
}

#[tokio::test]
async fn exit_codes_tell_the_outcome() {
    let s = Server::start().await;
    let id = s.propose_tool("a").await;
    s.decide(&id, json!({"outcome": "reject", "reason": "nope"})).await;
    let out = s.cli(&["wait", &id]);
    assert_eq!(out.status.code(), Some(4));
    assert!(stdout(&out).contains("rejected: nope"), "{}", stdout(&out));

    let id = s.propose_tool("b").await;
    let out = s.cli(&["refine", &id, "--feedback", "smaller"]);
    assert!(out.status.success());
    assert_eq!(s.cli(&["wait", &id]).status.code(), Some(5));

    let id = s.propose_tool("c").await;
    let out = s.cli(&["wait", &id, "--timeout", "1"]);
    assert_eq!(out.status.code(), Some(8), "still pending");

    let out = s.cli(&["approve", "p_nonexistent"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("not_found"), "{}", stderr(&out));

    // Second decision from the CLI is refused plainly.
    s.cli(&["approve", &id]);
    let out = s.cli(&["reject", &id, "--reason", "late"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("invalid_state"), "{}", stderr(&out));

    // Usage errors are exit code 2.
    assert_eq!(s.cli(&["reject", &id]).status.code(), Some(2));
}

#[tokio::test]
async fn payload_from_stdin_and_agent_management() {
    let s = Server::start().await;
    let out = s.cli(&["agent", "add", "builder"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let token = stdout(&out).trim().to_string();
    assert!(token.starts_with("asnt_"));
    assert!(stderr(&out).contains("shown once"));
    let tf = s.home().join("builder.token");
    std::fs::write(&tf, &token).unwrap();

    let mut child = Command::new(BIN)
        .arg("--home")
        .arg(s.home())
        .args(["propose", "--payload-file", "-", "--token-file"])
        .arg(&tf)
        .envs(s.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(br#"{"tool": "Write", "input": {"file_path": "/tmp/x"}}"#).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let id = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let (_, p) = s.get(&id, &s.owner).await;
    assert_eq!(p["agent"], "builder");
    assert_eq!(p["payload"]["tool"], "Write");

    let listed = stdout(&s.cli(&["agent", "list"]));
    assert!(listed.contains("builder") && listed.contains("default") && listed.contains("active"), "{listed}");
    assert!(!listed.contains(&token));
    assert!(s.cli(&["agent", "revoke", "builder"]).status.success());
    let out = cli(s.home(), &s.env, &["list", "--token-file", tf.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("unauthorized"), "{}", stderr(&out));
}

#[tokio::test]
async fn export_writes_the_audit_log_as_json_lines() {
    let s = Server::start().await;
    for i in 0..3 {
        let id = s.propose_tool(&format!("{i}")).await;
        s.decide(&id, json!({"outcome": "approve"})).await;
    }
    let out = s.cli(&["export"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let lines: Vec<Value> = stdout(&out).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 6);
    assert_eq!(lines[0]["to"], "pending");
    assert_eq!(lines[1]["to"], "approved");
    assert_eq!(lines[1]["channel"], "cli");
    assert!(lines.windows(2).all(|w| w[0]["seq"].as_i64() < w[1]["seq"].as_i64()));
    let (_, audit) = s.req(Method::GET, "/audit", Some(&s.owner), None).await;
    assert_eq!(audit["items"].as_array().unwrap().len(), 6);
}

#[tokio::test]
async fn without_a_server_the_cli_says_so_and_a_second_server_is_refused() {
    let home = tempfile::tempdir().unwrap();
    let env = vec![("ASSENT_OWNER_CREDENTIAL".to_string(), "file".to_string())];
    for args in [&["list"][..], &["approve", "p_x"], &["propose", "--tool", "x"], &["wait", "p_x"]] {
        let out = cli(home.path(), &env, args);
        assert_eq!(out.status.code(), Some(3), "{args:?}");
        assert!(stderr(&out).contains("not running"), "{}", stderr(&out));
    }
    let s = Server::start().await;
    let out = cli(s.home(), &s.env, &["serve", "--port", "0"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("already running"), "{}", stderr(&out));
    assert_eq!(s.req(Method::GET, "/health", None, None).await.0, 200, "the first one is unharmed");
    // A server that died leaves a stale server.json: the CLI still says it is not running.
    let mut s = s;
    s.kill9();
    let out = s.cli(&["list"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
}
