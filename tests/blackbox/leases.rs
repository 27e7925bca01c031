//! Leases: a question nobody waits for leaves the inbox. Each waiting client (`assent mcp`
//! under a real MCP client, the hook, `propose --wait`) is killed with SIGKILL, so nothing of
//! it runs to withdraw its proposal; Assent must withdraw it within 30 seconds, and say why in
//! the audit trail. A proposal whose agent still waits, or reads it, or that asked for no
//! lease, stays. The tests move the server's clock (`Server::advance`) rather than sleep.

use crate::harness::{Launch, Server, stderr};
use reqwest::{Method, StatusCode};
use serde_json::json;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// The longest a killed client's proposal may stay pending.
const WITHIN: Duration = Duration::from_secs(30);

async fn first_pending(s: &Server) -> String {
    s.first_pending().await["id"].as_str().unwrap().to_string()
}

async fn status(s: &Server, id: &str) -> String {
    let (code, p) = s.get(id, &s.owner).await;
    assert_eq!(code, StatusCode::OK, "{p}");
    p["status"].as_str().unwrap().to_string()
}

/// Moves the server's clock a second at a time until `id` leaves `pending` (at most
/// [`WITHIN`] of its time) and checks it was withdrawn by Assent because its lease lapsed.
async fn withdrawn_for_lapse(s: &Server, id: &str, what: &str) {
    let mut moved = Duration::ZERO;
    while moved < WITHIN && status(s, id).await == "pending" {
        s.advance(Duration::from_secs(1)).await;
        moved += Duration::from_secs(1);
    }
    // The sweeper withdraws on its own task, a write to the store after the clock moved: on a
    // loaded machine with PostgreSQL it may land some real milliseconds after the last move.
    let settled_by = std::time::Instant::now() + Duration::from_secs(10);
    while status(s, id).await == "pending" {
        assert!(
            std::time::Instant::now() < settled_by,
            "{what}: still pending {moved:?} (server time) after its client was killed"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(status(s, id).await, "withdrawn", "{what}");
    let (_, audit) = s.req(Method::GET, &format!("/proposals/{id}/audit"), Some(&s.owner), None).await;
    let last = audit["items"].as_array().and_then(|a| a.last()).cloned().unwrap_or_default();
    assert_eq!(
        (&last["to"], &last["actor"], &last["channel"]),
        (&json!("withdrawn"), &json!("assent"), &json!("system"))
    );
    assert_eq!(last["detail"]["reason"], "lease_lapsed", "{what}: {last}");
    let o = s.cli(&["show", id]);
    let shown = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success() && shown.contains("(the agent's lease lapsed)"), "{what}: {shown}");
}

/// Waits (real time, at most two seconds) for `id` to leave `pending` without the clock moving,
/// and checks it was withdrawn because its waiter's connection was lost: a hook's or a gate's
/// wait says it will not come back (`lost=withdraw`), so its process killed outright withdraws
/// its question at once rather than when the lease lapses.
async fn withdrawn_for_lost_waiter(s: &Server, id: &str, what: &str) {
    let killed = std::time::Instant::now();
    while status(s, id).await == "pending" {
        assert!(
            killed.elapsed() < Duration::from_secs(2),
            "{what}: still pending {:?} after it was killed",
            killed.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(status(s, id).await, "withdrawn", "{what}");
    let (_, audit) = s.req(Method::GET, &format!("/proposals/{id}/audit"), Some(&s.owner), None).await;
    let last = audit["items"].as_array().and_then(|a| a.last()).cloned().unwrap_or_default();
    assert_eq!((&last["to"], &last["channel"]), (&json!("withdrawn"), &json!("agent")), "{what}: {last}");
    assert_eq!(last["detail"]["reason"], "waiter_lost", "{what}: {last}");
    let o = s.cli(&["show", id]);
    let shown = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success() && shown.contains("went away before it came"), "{what}: {shown}");
}

/// The processes whose parent is `parent`.
fn children(parent: u32) -> Vec<(u32, String)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
        // The command name is in parentheses and may hold spaces: the fields after it are fixed.
        let after = stat.rsplit_once(") ").map(|(_, r)| r).unwrap_or_default();
        let ppid: u32 = after.split(' ').nth(1).and_then(|p| p.parse().ok()).unwrap_or(0);
        if ppid == parent {
            let cmd = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            out.push((pid, String::from_utf8_lossy(&cmd).replace('\0', " ")));
        }
    }
    out
}

fn kill9(pid: u32) {
    assert!(Command::new("kill").args(["-KILL", &pid.to_string()]).status().unwrap().success());
}

#[tokio::test]
async fn a_killed_mcp_server_leaves_no_pending_proposal() {
    let s = Server::start().await;
    let script = format!("{}/tests/fixtures/mcp/client.py", env!("CARGO_MANIFEST_DIR"));
    let mut client = Command::new(crate::mcp::python())
        .arg(script)
        .arg("permission")
        .arg(serde_json::json!(crate::harness::assent_argv()).to_string())
        .arg(crate::harness::native(s.home()))
        .args([r#"{"command": "rm -rf build"}"#, "toolu_lease"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let id = first_pending(&s).await;
    let (_, p) = s.get(&id, &s.owner).await;
    assert_eq!(p["lease_secs"], 15, "a waiting client holds a lease: {p}");
    let server = children(client.id()).into_iter().find(|(_, cmd)| cmd.contains(" mcp"));
    let (pid, _) = server.expect("the MCP client runs `assent mcp`");
    kill9(pid);
    withdrawn_for_lost_waiter(&s, &id, "assent mcp").await;
    let _ = client.kill();
    let _ = client.wait();
}

#[tokio::test]
async fn a_killed_hook_leaves_no_pending_proposal() {
    let s = Server::start().await;
    let event = std::fs::read_to_string(format!(
        "{}/tests/fixtures/hooks/claude_pretooluse_bash.json",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let mut hook = crate::hooks::spawn_for("claude-code", s.home(), &s.env, &event, &[]);
    let id = first_pending(&s).await;
    s.until_waiting(1).await;
    hook.kill().unwrap();
    let _ = hook.wait();
    withdrawn_for_lost_waiter(&s, &id, "the hook").await;
}

/// A wait's connection lost before its answer: `lost=withdraw` withdraws the agent's proposal at
/// once; without it (or `keep`) the proposal stays, its lease running; a wait that ends with its
/// answer withdraws nothing; another word is refused.
#[tokio::test]
async fn a_lost_wait_withdraws_only_when_it_says_so() {
    let s = Server::start().await;
    let body = |cmd: &str| json!({"kind": "tool.call", "payload": {"tool": "Bash", "input": {"command": cmd}}, "lease_secs": 60});
    let url = |id: &str, q: &str| format!("{}/v1/proposals/{id}?wait=30{q}", s.url);
    let mut ids = Vec::new();
    for (cmd, q) in [("make a", "&lost=withdraw"), ("make b", ""), ("make c", "&lost=keep")] {
        let id = s.propose(body(cmd)).await["id"].as_str().unwrap().to_string();
        // The request is dropped (its connection closed) once the server holds the wait.
        let wait = reqwest::Client::new().get(url(&id, q)).bearer_auth(&s.agent).send();
        let held = s.until_waiting(1);
        tokio::select! {
            _ = wait => panic!("the wait answered before it was dropped"),
            () = held => {}
        }
        // Until the server has seen it go.
        for _ in 0..400 {
            let (_, v) = s.req(Method::GET, "/testing/waits", Some(&s.owner), None).await;
            if v["agents_waiting"] == 0 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        ids.push(id);
    }
    withdrawn_for_lost_waiter(&s, &ids[0], "lost=withdraw").await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(status(&s, &ids[1]).await, "pending", "a plain wait's loss keeps the proposal");
    assert_eq!(status(&s, &ids[2]).await, "pending", "lost=keep keeps the proposal");
    // Answered by its timeout, then closed: nothing lost.
    let (st, p) =
        s.req(Method::GET, &format!("/proposals/{}?wait=1&lost=withdraw", ids[1]), Some(&s.agent), None).await;
    assert_eq!((st, &p["status"]), (StatusCode::OK, &json!("pending")));
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(status(&s, &ids[1]).await, "pending", "an answered wait withdraws nothing");
    let (st, e) = s.req(Method::GET, &format!("/proposals/{}?wait=1&lost=forget", ids[1]), Some(&s.agent), None).await;
    assert!(st.is_client_error() && e["error"]["code"].is_string(), "{st} {e}");
    assert_eq!(status(&s, &ids[1]).await, "pending");
}

fn spawn_cli(s: &Server, args: &[&str]) -> Child {
    let mut cli = crate::harness::assent();
    cli.arg("--home").arg(crate::harness::native(s.home())).args(args);
    cli.launch(&s.env, Stdio::null(), Stdio::null())
}

#[tokio::test]
async fn a_killed_propose_wait_leaves_no_pending_proposal_and_others_stay() {
    let s = Server::start().await;
    // Filed without waiting, and so without a lease: it waits for the person until it expires.
    let o = s.cli(&["propose", "--tool", "Bash", "--input", r#"{"command": "make deploy"}"#]);
    assert!(o.status.success(), "{}", stderr(&o));
    let unleased = String::from_utf8_lossy(&o.stdout).trim().to_string();
    let mut waiting =
        spawn_cli(&s, &["propose", "--tool", "Bash", "--input", r#"{"command": "make release"}"#, "--wait"]);
    let mut id = first_pending(&s).await;
    while id == unleased {
        tokio::time::sleep(Duration::from_millis(25)).await;
        id = first_pending(&s).await;
    }
    // Its own wait holds the lease past its 15 seconds (once it waits: filing and waiting are
    // two requests, and the clock must not jump between them).
    s.until_waiting(1).await;
    s.advance(Duration::from_secs(17)).await;
    assert_eq!(status(&s, &id).await, "pending", "a client still waiting keeps its proposal");
    waiting.kill().unwrap();
    let _ = waiting.wait();
    withdrawn_for_lapse(&s, &id, "propose --wait").await;
    assert_eq!(status(&s, &unleased).await, "pending", "a proposal with no lease is not withdrawn");
}

#[tokio::test]
async fn reading_renews_the_lease_and_a_restart_grants_it_afresh() {
    let mut s = Server::start().await;
    let body = |cmd: &str| json!({"kind": "tool.call", "payload": {"tool": "Bash", "input": {"command": cmd}}, "lease_secs": 5});
    let read = s.propose(body("make a")).await["id"].as_str().unwrap().to_string();
    let left = s.propose(body("make b")).await["id"].as_str().unwrap().to_string();
    let agent = s.agent.clone();
    // The agent reads one every two seconds for ten; the other it leaves alone.
    for _ in 0..5 {
        let (code, _) = s.get(&read, &agent).await;
        assert_eq!(code, StatusCode::OK);
        s.advance(Duration::from_secs(2)).await;
    }
    assert_eq!(status(&s, &read).await, "pending", "its agent reads it");
    assert_eq!(status(&s, &left).await, "withdrawn", "nobody read it for 10 s on a 5 s lease");
    // The person reading it renews nothing: only its agent speaks for the agent.
    for _ in 0..2 {
        assert_eq!(status(&s, &read).await, "pending");
        s.advance(Duration::from_secs(2)).await;
    }
    assert_eq!(status(&s, &read).await, "withdrawn", "the person's reads held the agent's lease (6 s on 5)");

    // After a restart (here a hard one, and 6 s later on the server's clock) every pending
    // leased proposal gets a whole lease again: 60 s from the restart, not the 54 s it had left.
    // (A minute, so that the real time a slow restart takes never counts against the check.)
    let mut long = body("make c");
    long["lease_secs"] = json!(60);
    let kept = s.propose(long).await["id"].as_str().unwrap().to_string();
    s.kill9();
    s.env.retain(|(k, _)| k != "ASSENT_TEST_CLOCK");
    s.env.push(("ASSENT_TEST_CLOCK".into(), "6000".into()));
    s.spawn();
    assert_eq!(status(&s, &kept).await, "pending", "a restart does not withdraw at once");
    s.advance(Duration::from_secs(55)).await;
    assert_eq!(status(&s, &kept).await, "pending", "a whole lease after the restart");
    withdrawn_for_lapse(&s, &kept, "after a restart").await;
}

#[tokio::test]
async fn a_lease_out_of_bounds_is_a_clear_error_and_files_nothing() {
    let s = Server::start().await;
    for lease in [json!(0), json!(4), json!(3601), json!(-5), json!("15"), json!(1.5)] {
        let body =
            json!({"kind": "tool.call", "payload": {"tool": "Bash", "input": {"command": "ls"}}, "lease_secs": lease});
        let (code, v) = s.try_propose(body).await;
        assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY, "{lease}: {v}");
        assert!(v["error"]["message"].as_str().unwrap().contains("lease_secs"), "{lease}: {v}");
    }
    let (_, page) = s.req(Method::GET, "/proposals", Some(&s.owner), None).await;
    assert_eq!(page["items"], json!([]), "nothing was filed");
    let o = s.cli(&["propose", "--tool", "Bash", "--input", "{}", "--lease", "2"]);
    assert!(!o.status.success() && stderr(&o).contains("lease_secs"), "{}", stderr(&o));
}
