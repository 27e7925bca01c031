//! `assent hook claude-code` fed recorded hook events of the real shapes; the exact output is
//! checked for allow, deny with reason, edited input, timeout and Assent not running.

use crate::harness::{Launch, Server, native, program};
use reqwest::Method;
use serde_json::{Value, json};
use std::io::Write;
use std::process::{Child, Stdio};

fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!("{}/tests/fixtures/hooks/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn spawn_hook(home: &std::path::Path, env: &[(String, String)], event: &str, extra: &[&str]) -> Child {
    spawn_for("claude-code", home, env, event, extra)
}

/// `assent hook CLIENT` with `event` on its standard input.
pub fn spawn_for(client: &str, home: &std::path::Path, env: &[(String, String)], event: &str, extra: &[&str]) -> Child {
    spawn_with("assent", client, home, env, event, extra)
}

/// [`spawn_for`] with `name` (`assent`, or `assent-run` beside it).
fn spawn_with(
    name: &str,
    client: &str,
    home: &std::path::Path,
    env: &[(String, String)],
    event: &str,
    extra: &[&str],
) -> Child {
    let mut hook = program(name);
    hook.arg("--home").arg(native(home)).args(["hook", client]).args(extra).stdin(Stdio::piped());
    let mut child = hook.launch(env, Stdio::piped(), Stdio::piped());
    child.stdin.take().unwrap().write_all(event.as_bytes()).unwrap();
    child
}

fn finish(child: Child) -> (Option<i32>, String) {
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    (out.status.code(), String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn parse(out: &str) -> Value {
    serde_json::from_str(out).unwrap_or_else(|e| panic!("not one JSON line: {out:?}: {e}"))
}

/// Decides the call `p` that `hook` filed with `decision`: what the hook answers, once it
/// succeeds.
async fn answer(s: &Server, hook: Child, p: &Value, decision: Value) -> Value {
    s.decide(p["id"].as_str().unwrap(), decision).await;
    parse(&finish(hook).1)
}

/// A hook's answer to a `PermissionRequest` event: `decision`.
fn permission_request(decision: Value) -> Value {
    json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}})
}

#[tokio::test]
async fn pretooluse_allow_keeps_session_and_folder() {
    let s = Server::start().await;
    // The folder as the platform writes it (on Windows, `Z:\\home\\dev\\shop`).
    let shop = native(std::path::Path::new("/home/dev/shop"));
    let event = fixture("claude_pretooluse_bash.json").replace("\"/home/dev/shop\"", &json!(shop).to_string());
    let hook = spawn_hook(s.home(), &s.env, &event, &[]);
    let p = s.first_pending().await;
    assert_eq!(p["kind"], "tool.call");
    assert_eq!(
        p["payload"],
        json!({"tool": "Bash", "input": {"command": "rm -rf dist && npm run build", "description": "Clean and rebuild the bundle"}, "cwd": shop, "client": "claude-code", "permission_mode": "default", "confinable": true})
    );
    assert_eq!(p["session_id"], "8a1c6f7e-3b52-4d0a-9c1e-2f5d7b9e0a41");
    // A hook has no words of the agent: no title, no summary. What it reports is typed, and
    // shown as the client's report.
    assert_eq!((&p["title"], &p["summary"]), (&Value::Null, &Value::Null), "{p}");
    assert_eq!(p["preview"]["cwd"], shop);
    assert_eq!(p["preview"]["client"], "Claude Code's hook");
    assert_eq!(p["preview"]["permission_mode"], "default");
    // Approved, the command runs in the box the proposal names; where none can be built (this
    // test against the Windows build), Assent's note says it runs unconfined.
    let boxes = crate::harness::can_confine(assent_boundary::Confine::Workspace);
    if boxes {
        assert_eq!(p["preview"]["notes"], json!([]));
    } else {
        assert!(p["preview"]["notes"][0].as_str().unwrap().contains("cannot build a box"), "{p}");
    }
    let said = answer(&s, hook, &p, json!({"outcome": "approve"})).await;
    if boxes {
        // The call is rewritten to run it so.
        assert_eq!(p["preview"]["runs_in"], "workspace", "{p}");
        let o = &said["hookSpecificOutput"];
        assert_eq!(o["permissionDecision"], "allow", "{said}");
        let why = format!("Approved in Assent, to run in the workspace box: {}", p["id"].as_str().unwrap());
        assert_eq!(o["permissionDecisionReason"], why.as_str());
        let run = o["updatedInput"]["command"].as_str().unwrap();
        assert!(run.ends_with(&format!(" run {}", p["id"].as_str().unwrap())), "{run}");
        assert_eq!(o["updatedInput"]["description"], "Clean and rebuild the bundle", "the rest of the input stays");
    } else {
        assert!(p["preview"].get("runs_in").is_none(), "{p}");
        assert_eq!(
            said,
            json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", "permissionDecisionReason": "Approved in Assent"}})
        );
    }
    // The same tool use again (a re-run hook) does not file a second proposal.
    let again = spawn_hook(s.home(), &s.env, &event, &[]);
    let (_, out) = finish(again);
    assert_eq!(parse(&out)["hookSpecificOutput"]["permissionDecision"], "allow");
    let (_, all) = s.req(Method::GET, "/proposals", Some(&s.owner), None).await;
    assert_eq!(all["items"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn pretooluse_edited_input_and_deny_with_reason() {
    let s = Server::start().await;
    let hook = spawn_hook(s.home(), &s.env, &fixture("claude_pretooluse_bash.json"), &["--tools", "Bash,Edit"]);
    let p = s.first_pending().await;
    let edits = json!({"input": {"command": "npm run build", "description": "Rebuild without deleting"}});
    // Approved unconfined (the person's choice): the client runs the edited call itself.
    let said = answer(&s, hook, &p, json!({"outcome": "approve", "edits": edits, "run": "unconfined"})).await;
    assert_eq!(
        said,
        json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow",
            "permissionDecisionReason": "Approved in Assent with edits",
            "updatedInput": {"command": "npm run build", "description": "Rebuild without deleting"}}})
    );

    let event = fixture("claude_pretooluse_bash.json").replace("toolu_01HpQ7zR8vW3nK2mX5cY9dTb", "toolu_other");
    let hook = spawn_hook(s.home(), &s.env, &event, &[]);
    let p = s.first_pending().await;
    let said = answer(&s, hook, &p, json!({"outcome": "reject", "reason": "never delete dist on CI boxes"})).await;
    assert_eq!(
        said,
        json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
            "permissionDecisionReason": "Rejected in Assent: never delete dist on CI boxes"}})
    );
}

#[tokio::test]
async fn permission_request_deny_allow_and_codex() {
    let s = Server::start().await;
    let hook = spawn_hook(s.home(), &s.env, &fixture("claude_permissionrequest_write.json"), &[]);
    let p = s.first_pending().await;
    assert_eq!(p["payload"]["tool"], "Write");
    let said = answer(&s, hook, &p, json!({"outcome": "reject", "reason": "not the production env file"})).await;
    assert_eq!(
        said,
        permission_request(json!({"behavior": "deny", "message": "Rejected in Assent: not the production env file"}))
    );

    // Codex: no tool_use_id, an argument-list command, and no way to take an edited call.
    let hook = spawn_for("codex", s.home(), &s.env, &fixture("codex_permissionrequest_shell.json"), &[]);
    let p = s.first_pending().await;
    assert_eq!(p["payload"]["tool"], "shell");
    assert_eq!((&p["title"], &p["summary"]), (&Value::Null, &Value::Null), "{p}");
    assert_eq!(p["payload"]["client"], "codex");
    // Said before the edit, as Assent's own note, never as the agent's words.
    let notes = p["preview"]["notes"].as_array().unwrap();
    assert!(notes.len() == 1 && notes[0].as_str().unwrap().contains("Codex cannot run an edited call"), "{p}");
    let edits = json!({"input": {"command": ["bash", "-lc", "git push origin main"]}});
    let said = answer(&s, hook, &p, json!({"outcome": "approve", "edits": edits})).await;
    assert_eq!(
        said,
        permission_request(json!({"behavior": "deny",
            "message": "The person approved this only as edited in Assent. Run this instead: git push origin main"}))
    );
    // Approved as it was: a plain allow, with no updatedInput for Codex to refuse.
    let hook = spawn_for("codex", s.home(), &s.env, &fixture("codex_permissionrequest_shell.json"), &[]);
    let p = s.first_pending().await;
    let said = answer(&s, hook, &p, json!({"outcome": "approve"})).await;
    assert_eq!(said, permission_request(json!({"behavior": "allow"})));
    // Claude Code's PermissionRequest does take the edited input.
    let hook = spawn_hook(s.home(), &s.env, &fixture("claude_permissionrequest_write.json"), &[]);
    let p = s.first_pending().await;
    let edits = json!({"input": {"file_path": "/home/dev/shop/.env.staging", "content": "X=1\n"}});
    let said = answer(&s, hook, &p, json!({"outcome": "approve", "edits": edits})).await;
    assert_eq!(said["hookSpecificOutput"]["decision"]["updatedInput"]["file_path"], "/home/dev/shop/.env.staging");

    let hook = spawn_hook(s.home(), &s.env, &fixture("claude_permissionrequest_write.json"), &[]);
    let p = s.first_pending().await;
    let said = answer(&s, hook, &p, json!({"outcome": "refine", "feedback": "write .env.staging instead"})).await;
    assert_eq!(
        said["hookSpecificOutput"]["decision"],
        json!({"behavior": "deny", "message": "The person asks for changes in Assent: write .env.staging instead"})
    );
}

#[tokio::test]
async fn timeout_hands_back_to_the_client_and_withdraws() {
    let s = Server::start().await;
    let (_, out) = finish(spawn_hook(s.home(), &s.env, &fixture("claude_pretooluse_bash.json"), &["--timeout", "1"]));
    let v = parse(&out);
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "ask");
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "PreToolUse");
    let why = v["hookSpecificOutput"]["permissionDecisionReason"].as_str().unwrap();
    assert!(why.contains("No decision in Assent within 1 s"), "{why}");
    let (_, page) = s.req(Method::GET, "/proposals", Some(&s.owner), None).await;
    assert_eq!(page["items"][0]["status"], "withdrawn", "nobody waits for it any more");

    let (_, out) = finish(spawn_for(
        "codex",
        s.home(),
        &s.env,
        &fixture("codex_permissionrequest_shell.json"),
        &["--timeout", "1"],
    ));
    let v = parse(&out);
    assert!(v.get("hookSpecificOutput").is_none(), "no decision: the client's own dialog decides: {v}");
    assert!(v["systemMessage"].as_str().unwrap().contains("No decision in Assent"));
}

#[tokio::test]
async fn not_running_and_read_only_tools() {
    let home = tempfile::tempdir().unwrap();
    let env = vec![("ASSENT_OWNER_CREDENTIAL".to_string(), "file".to_string())];
    let (_, out) = finish(spawn_hook(home.path(), &env, &fixture("claude_pretooluse_bash.json"), &[]));
    let v = parse(&out);
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "ask");
    assert!(v["hookSpecificOutput"]["permissionDecisionReason"].as_str().unwrap().contains("Assent is not running"));

    let s = Server::start().await;
    let (_, out) = finish(spawn_hook(s.home(), &s.env, &fixture("claude_pretooluse_read.json"), &[]));
    assert_eq!(out, "", "read-only tools are not gated");
    let (_, out) = finish(spawn_hook(s.home(), &s.env, &fixture("claude_pretooluse_bash.json"), &["--skip", "Bash"]));
    assert_eq!(out, "");
    let (_, page) = s.req(Method::GET, "/proposals", Some(&s.owner), None).await;
    assert_eq!(page["items"], json!([]));

    let bad = spawn_hook(s.home(), &s.env, "not json", &[]);
    let out = bad.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(2), "an event the hook cannot read blocks the call");
    assert!(String::from_utf8_lossy(&out.stderr).contains("not JSON"));
}

/// `assent-run hook claude-code`, the small binary the README's settings name: a call a rule
/// decides at once is answered by it alone, as the whole `assent` answers it; one that waits
/// for the person is handed to the whole `assent` with the same event, which finds the call
/// already filed (one proposal) and waits; a tool it does not gate gets no output; with Assent
/// stopped, the call goes back to the client's own settings.
#[tokio::test]
async fn the_small_hook_answers_as_the_whole_one() {
    let runner = "assent-run";
    let mut s = Server::start().await;
    let spawn = |program: &str, s: &Server, event: &Value| {
        spawn_with(program, "claude-code", s.home(), &s.env, &event.to_string(), &["--timeout", "20"])
    };
    let call = |id: &str, tool: &str, command: &str| {
        json!({"session_id": "s-small", "cwd": "/home/dev/shop", "hook_event_name": "PreToolUse", "tool_name": tool,
               "tool_input": {"command": command}, "tool_use_id": id, "permission_mode": "default"})
    };
    // A call that waits: handed over, decided by the person, answered.
    let waiting = spawn(runner, &s, &call("toolu_small_1", "Bash", "npm publish"));
    let p = s.first_pending().await;
    let id = p["id"].as_str().unwrap().to_string();
    s.decide(&id, json!({"outcome": "reject", "reason": "not from this branch"})).await;
    let (_, out) = finish(waiting);
    let v = parse(&out);
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny", "{v}");
    assert!(v["hookSpecificOutput"]["permissionDecisionReason"].as_str().unwrap().contains("not from this branch"));
    let (_, all) = s.req(Method::GET, "/proposals", Some(&s.owner), None).await;
    assert_eq!(all["items"].as_array().unwrap().len(), 1, "filed once: {all}");
    // The same settled call again, answered by the small binary alone: as the whole one does.
    let small = finish(spawn(runner, &s, &call("toolu_small_1", "Bash", "npm publish"))).1;
    let whole = finish(spawn("assent", &s, &call("toolu_small_1", "Bash", "npm publish"))).1;
    assert_eq!(parse(&small), parse(&whole));
    // Not gated: nothing said.
    assert_eq!(finish(spawn(runner, &s, &call("toolu_small_2", "Read", "x"))).1, "");
    // Assent stopped: back to the client's own settings.
    s.stop();
    let v = parse(&finish(spawn(runner, &s, &call("toolu_small_3", "Bash", "npm publish"))).1);
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "ask", "{v}");
    assert!(v["hookSpecificOutput"]["permissionDecisionReason"].as_str().unwrap().contains("not running"), "{v}");
}

/// The client that started a hook killed outright while the hook waits (no signal reaches the
/// hook): the hook sees it gone in the process table and withdraws its question within a few
/// seconds, long before its lease would (60 s). The client is a shell the hook runs under: `sh`
/// here, `cmd.exe` under Wine (where the Windows build finds it through a snapshot of the
/// processes and its handle); the control, the same hook whose client stays, is still waiting.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hook_whose_client_is_killed_withdraws_its_question() {
    let s = Server::start().await;
    // Each client's call its own (the tool-use id keys the proposal).
    let client = |home: &std::path::Path, call: &str| -> Child {
        let mut ev: Value = serde_json::from_str(&fixture("claude_pretooluse_bash.json")).unwrap();
        ev["tool_use_id"] = json!(call);
        let event = home.join(format!("{call}.json"));
        std::fs::write(&event, ev.to_string()).unwrap();
        let hook = format!("--home {} hook claude-code --timeout 60", native(home));
        let mut c = match crate::harness::windows_exe() {
            Some(exe) => {
                let mut c = std::process::Command::new("wine");
                let line = format!("{} {hook} < {}", native(std::path::Path::new(&exe)), native(&event));
                c.args(["cmd", "/c", &line]).env("WINEDEBUG", "-all");
                c
            }
            None => {
                let mut c = std::process::Command::new("sh");
                let line = format!("'{}' {hook} < '{}'; sleep 300", crate::harness::BIN, event.display());
                c.args(["-c", &line]);
                c
            }
        };
        c.launch(&s.env, Stdio::null(), Stdio::null())
    };
    let mut killed = client(s.home(), "toolu_killed");
    s.until_waiting(1).await;
    let (_, page) = s.req(Method::GET, "/proposals", Some(&s.owner), None).await;
    let id = page["items"][0]["id"].as_str().unwrap().to_string();
    killed.kill().unwrap();
    let _ = killed.wait();
    let since = std::time::Instant::now();
    while s.get(&id, &s.owner).await.1["status"] == "pending" {
        assert!(since.elapsed() < std::time::Duration::from_secs(5), "still pending 5 s after its client was killed");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(s.get(&id, &s.owner).await.1["status"], "withdrawn");
    // The control: a client that stays keeps its question.
    let mut kept = client(s.home(), "toolu_kept");
    s.until_waiting(1).await;
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    let (_, page) = s.req(Method::GET, "/proposals?status=pending", Some(&s.owner), None).await;
    assert_eq!(page["items"].as_array().map(Vec::len), Some(1), "the waiting hook's question stays: {page}");
    kept.kill().unwrap();
    let _ = kept.wait();
}

/// A client that gives up while its call is being handed from `assent-run` (which filed it) to
/// the whole `assent` (which listens for the signal) still withdraws it: `assent-run` holds the
/// signals back and `assent` lets them through once it listens. The hand-over is paused 1.5 s
/// (a test build's pause) so the signal lands in it; before the hold, SIGINT there ended the hook
/// by its default action and the question stayed in the inbox.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg(unix)]
async fn a_hook_interrupted_while_it_is_handed_over_withdraws_its_question() {
    let s = Server::start().await;
    let mut env = s.env.clone();
    env.push(("ASSENT_TEST_PAUSE".into(), "hook-handover:1500".into()));
    let event = json!({"session_id": "s-1", "cwd": "/home/dev/shop", "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": {"command": "npm publish"}, "tool_use_id": "toolu_handover",
        "permission_mode": "default"});
    let started = std::time::Instant::now();
    let child = spawn_with("assent-run", "claude-code", s.home(), &env, &event.to_string(), &["--timeout", "60"]);
    let id = s.first_pending().await["id"].as_str().unwrap().to_string();
    assert!(started.elapsed() < std::time::Duration::from_millis(1500), "the signal lands in the pause");
    let sent = std::process::Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(sent.success());
    let out = child.wait_with_output().unwrap();
    let p = s.get(&id, &s.owner).await.1;
    assert_eq!(p["status"], "withdrawn", "the question left the inbox: {p}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("withdrawn"), "{}", String::from_utf8_lossy(&out.stdout));
}
