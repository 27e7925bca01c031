//! The `assent` command against a running server.

use crate::harness::{BIN, Launch, Server, cli, native, scratch_file, stderr, stdout};
use reqwest::Method;
use serde_json::{Value, json};
use std::process::{Command, Output, Stdio};
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
        .launch(&s.env, Stdio::piped(), Stdio::piped());
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
    // `show` names the payload's hash; a decision with another `--seen` decides nothing.
    let seen = shown.lines().find_map(|l| l.strip_prefix("sha256")).and_then(|l| l.split_whitespace().next());
    let seen = seen.unwrap_or_else(|| panic!("no sha256 line: {shown}")).to_string();
    let out = s.cli(&["approve", &id, "--seen", &"0".repeat(64)]);
    assert!(!out.status.success() && stderr(&out).contains("not_what_was_shown"), "{}", stderr(&out));
    assert!(s.cli(&["approve", &id, "other", "--seen", &seen]).status.code() != Some(0), "--seen with two");
    let out = s.cli(&[
        "approve",
        &id,
        "--reason",
        "go",
        "--seen",
        &seen,
        "--edits",
        r#"{"input":{"command":"make deploy-staging"}}"#,
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    // What was decided, in Assent's words.
    assert!(stdout(&out).contains("what        Bash: make deploy-staging"), "{}", stdout(&out));
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

/// Adds the agent `name` with the CLI: its token, and what the CLI said.
fn add_agent(s: &Server, name: &str) -> (String, Output) {
    let out = s.cli(&["agent", "add", name]);
    assert!(out.status.success(), "{}", stderr(&out));
    (stdout(&out).trim().to_string(), out)
}

#[tokio::test]
async fn payload_from_stdin_and_agent_management() {
    let s = Server::start().await;
    let (token, out) = add_agent(&s, "builder");
    assert!(token.starts_with("asnt_"));
    assert!(stderr(&out).contains("shown once"));
    let tf = s.home().join("builder.token");
    std::fs::write(&tf, &token).unwrap();

    let mut child = Command::new(BIN)
        .arg("--home")
        .arg(s.home())
        .args(["propose", "--payload-file", "-", "--token-file"])
        .arg(&tf)
        .stdin(Stdio::piped())
        .launch(&s.env, Stdio::piped(), Stdio::piped());
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
    let all: Vec<Value> = stdout(&out).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    // The audit log, then the rule log (which starts with the built-in read-only rule).
    assert_eq!(all.len(), 7);
    assert_eq!((all[6]["rule_id"].as_str(), all[6]["event"].as_str()), (Some("r_builtin_read_only"), Some("added")));
    let lines = &all[..6];
    assert_eq!(lines[0]["to"], "pending");
    assert_eq!(lines[1]["to"], "approved");
    assert_eq!(lines[1]["channel"], "api", "decided through the owner API by a client that is not the CLI");
    assert!(lines.windows(2).all(|w| w[0]["seq"].as_i64() < w[1]["seq"].as_i64()));
    let (_, audit) = s.req(Method::GET, "/audit", Some(&s.owner), None).await;
    assert_eq!(audit["items"].as_array().unwrap().len(), 6);

    // Rule changes follow the audit log.
    let added = s.cli(&["rule", "add", "deny", "--input", "rm", "--json"]);
    assert!(added.status.success(), "{}", stderr(&added));
    let rule: Value = serde_json::from_str(&stdout(&added)).unwrap();
    let rule_id = rule["id"].as_str().unwrap();
    assert!(s.cli(&["rule", "remove", rule_id]).status.success());
    let out = s.cli(&["export"]);
    let lines: Vec<Value> = stdout(&out).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 9);
    assert_eq!((lines[7]["rule_id"].as_str(), lines[7]["event"].as_str()), (Some(rule_id), Some("added")));
    assert_eq!((lines[8]["event"].as_str(), lines[8]["channel"].as_str()), (Some("removed"), Some("cli")));
    assert_eq!(lines[8]["rule"]["description"], "refuse to let any agent run `rm …`");
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

async fn tool(s: &Server, command: &str, extra: Value) -> String {
    let mut body = json!({"kind": "tool.call", "payload": {"tool": "Bash", "input": {"command": command}}});
    if let (Value::Object(b), Value::Object(e)) = (&mut body, extra) {
        b.extend(e);
    }
    let (_, p) = s.try_propose(body).await;
    p["id"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn list_pages_keep_their_filters_and_untitled_proposals_say_what_they_do() {
    let s = Server::start().await;
    for i in 0..3 {
        tool(&s, &format!("ls -la /srv/{i}"), json!({})).await;
    }
    let out = s.cli(&["list", "--status", "pending", "--search", "ls -la", "--limit", "1"]);
    let hint = stderr(&out);
    assert!(hint.contains("assent list --status pending --search 'ls -la' --limit 1 --cursor "), "{hint}");
    // Following the hint gives the next page of the same list.
    let next: Vec<&str> = hint.trim().trim_start_matches("more: assent ").split(' ').collect();
    let cursor = next.last().unwrap().to_string();
    let out =
        s.cli(&["list", "--status", "pending", "--search", "ls -la", "--limit", "1", "--cursor", &cursor, "--json"]);
    let page: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(page["items"].as_array().unwrap().len(), 1);
    let table = stdout(&s.cli(&["list"]));
    assert!(table.contains("[Bash: ls -la /srv/2]"), "what Assent computed, marked as such: {table}");
}

#[tokio::test]
async fn batch_group_withdraw_and_search_from_the_command_line() {
    let s = Server::start().await;
    let (a, b) = (tool(&s, "make a", json!({})).await, tool(&s, "make b", json!({})).await);
    let out = s.cli(&["approve", &a, &b, "--reason", "both fine"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("2 decided"), "{}", stdout(&out));
    for id in [&a, &b] {
        assert_eq!(s.get(id, &s.owner).await.1["status"], "approved");
    }
    let g1 = tool(&s, "release 1", json!({"group_id": "rel"})).await;
    let g2 = tool(&s, "release 2", json!({"group_id": "rel"})).await;
    let out = s.cli(&["reject", "--group", "rel", "--reason", "not today"]);
    assert!(out.status.success(), "{}", stderr(&out));
    for id in [&g1, &g2] {
        let p = s.get(id, &s.owner).await.1;
        assert_eq!((p["status"].as_str(), p["decision"]["reason"].as_str()), (Some("rejected"), Some("not today")));
    }
    let mine = tool(&s, "oops", json!({})).await;
    let out = s.cli(&["withdraw", &mine]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(s.get(&mine, &s.owner).await.1["status"], "withdrawn");
    let found = stdout(&s.cli(&["list", "--search", "release 2", "--json"]));
    let v: Value = serde_json::from_str(&found).unwrap();
    let ids: Vec<&str> = v["items"].as_array().unwrap().iter().filter_map(|p| p["id"].as_str()).collect();
    assert_eq!(ids, vec![g2.as_str()]);
}

#[tokio::test]
async fn export_into_a_closed_pipe_stops_quietly() {
    let s = Server::start().await;
    for i in 0..400 {
        tool(&s, &format!("echo {i}"), json!({})).await;
    }
    let mut cmd = Command::new("sh");
    cmd.arg("-c").arg(format!("'{BIN}' --home '{}' export | head -n 1", s.home().display()));
    for (k, v) in &s.env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 1);
    let err = stderr(&out);
    assert!(!err.contains("Broken pipe") && !err.contains("assent:"), "no error for a reader that had enough: {err}");
}

#[tokio::test]
async fn usage_does_not_make_the_home_look_required() {
    let home = tempfile::tempdir().unwrap();
    let env = vec![("ASSENT_HOME".to_string(), home.path().to_string_lossy().to_string())];
    let out = Command::new(BIN).arg("approve").envs(env).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("Usage: assent approve"), "{err}");
    assert!(!err.contains("--home <DIR>"), "{err}");
}

#[tokio::test]
async fn show_links_a_revision_and_retries_and_decisions_credit_their_real_channel() {
    let s = Server::start().await;
    let old = tool(&s, "make deploy", json!({})).await;
    s.decide(&old, json!({"outcome": "refine", "feedback": "staging first"})).await;
    let new = tool(&s, "make deploy-staging", json!({"supersedes": old})).await;
    let shown = stdout(&s.cli(&["show", &old]));
    assert!(shown.contains(&format!("superseded by {new} (pending)")), "{shown}");
    // A decision through the owner API that is not the CLI is recorded as `api`; the CLI's as `cli`.
    let other = tool(&s, "make other", json!({})).await;
    s.decide(&other, json!({"outcome": "approve"})).await;
    let out = s.cli(&["reject", &new, "--reason", "no"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let channel = |p: &Value| p["decision"]["channel"].as_str().map(str::to_string);
    assert_eq!(channel(&s.get(&other, &s.owner).await.1).as_deref(), Some("api"));
    assert_eq!(channel(&s.get(&new, &s.owner).await.1).as_deref(), Some("cli"));
    // A retry of a failed write is filed by the person, not by the agent.
    let (_dir, target) = scratch_file("f.txt", "one\n");
    let body = json!({"kind": "file.write", "payload": {"path": native(&target), "content": "two\n"}});
    let (_, p) = s.try_propose(body).await;
    let id = p["id"].as_str().unwrap().to_string();
    std::fs::write(&target, "changed meanwhile\n").unwrap();
    s.decide(&id, json!({"outcome": "approve"})).await;
    let done = s.req(Method::GET, &format!("/proposals/{id}?wait=20"), Some(&s.agent), None).await.1;
    assert_eq!(done["status"], "failed");
    let out = s.cli(&["retry", &id, "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let retried: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let rid = retried["id"].as_str().unwrap();
    let (_, audit) = s.req(Method::GET, &format!("/proposals/{rid}/audit"), Some(&s.owner), None).await;
    let first = &audit["items"][0];
    assert_eq!((first["actor"].as_str(), first["channel"].as_str()), (Some("owner"), Some("cli")), "{audit}");
}

#[tokio::test]
async fn a_revoked_agent_name_is_not_reused_by_accident() {
    let s = Server::start().await;
    let (token, _) = add_agent(&s, "ci-bot");
    let (_, p) = s
        .req(Method::POST, "/proposals", Some(&token), Some(json!({"kind": "tool.call", "payload": {"tool": "x"}})))
        .await;
    let id = p["id"].as_str().unwrap().to_string();
    assert!(s.cli(&["agent", "revoke", "ci-bot"]).status.success());
    let again = s.cli(&["agent", "add", "ci-bot"]);
    assert!(!again.status.success(), "a revoked name is refused");
    assert!(stderr(&again).contains("--reuse"), "{}", stderr(&again));
    let reused = s.cli(&["agent", "add", "ci-bot", "--reuse"]);
    assert!(reused.status.success(), "{}", stderr(&reused));
    assert_eq!(s.get(&id, &s.owner).await.1["agent"], "ci-bot", "its proposals stay under the name");
    let mut server = s;
    server.stop();
    let log = server.sql("SELECT event FROM agent_log WHERE name = 'ci-bot' ORDER BY seq").unwrap();
    assert_eq!(log, "added\nrevoked\nreused", "the revocation stays");
}
