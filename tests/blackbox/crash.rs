//! Exactly once across crashes: the real server is aborted (as abruptly as `kill -9`) at
//! labelled points while applying, restarted, and the write must have happened exactly once,
//! or, for an HTTP call whose outcome cannot be known, be failed `outcome_unknown` and never
//! sent twice. Needs the `crash-points` feature (the test script enables it).

use crate::harness::{Recorder, Server, ends_within, private_bus_with_keyring, scratch_file};
use reqwest::Method;
use serde_json::{Value, json};
use std::time::Duration;

const RUNS: usize = 4;

/// Restarts the server with crash point `label` armed, proposes, approves (the server dies
/// applying it) and waits until it is dead, disarmed for the next start. Returns the id.
async fn approve_until_crash(s: &mut Server, label: &str, payload: Value, kind: &str) -> String {
    s.kill9();
    s.env.retain(|(k, _)| k != "ASSENT_CRASH_AT");
    s.env.push(("ASSENT_CRASH_AT".into(), label.into()));
    s.spawn();
    let (st, p) = s.try_propose(json!({"kind": kind, "payload": payload})).await;
    assert_eq!(st, 201, "{p}");
    let id = p["id"].as_str().unwrap().to_string();
    // The decision commits; the server may die before or after answering it.
    let _ = s
        .http
        .post(format!("{}/v1/proposals/{id}/decision", s.url))
        .bearer_auth(&s.owner)
        .json(&json!({"outcome": "approve"}))
        .send()
        .await;
    let mut child = s.child.take().unwrap();
    let died = ends_within(&mut child, Duration::from_secs(5)).await;
    let _ = child.kill();
    let _ = child.wait();
    assert!(died, "the server did not reach crash point {label}");
    s.env.retain(|(k, _)| k != "ASSENT_CRASH_AT");
    id
}

/// Proposes with the crash point armed, approves (the server dies applying it), restarts
/// without it, and returns the settled proposal.
async fn crash_and_recover(s: &mut Server, label: &str, payload: Value, kind: &str) -> Value {
    let id = approve_until_crash(s, label, payload, kind).await;
    s.spawn();
    let (_, settled) = s.req(Method::GET, &format!("/proposals/{id}?wait=20"), Some(&s.agent.clone()), None).await;
    settled
}

#[tokio::test]
async fn file_writes_happen_exactly_once_whatever_the_crash_point() {
    let mut s = Server::start().await;
    let dir = tempfile::tempdir().unwrap();
    for label in ["applying-committed", "file-temp-written", "file-renamed", "applied-before-commit"] {
        for run in 0..RUNS {
            let target = dir.path().join(format!("{label}-{run}.txt"));
            std::fs::write(&target, "before\n").unwrap();
            let content = format!("after {label} {run}\n");
            let payload = json!({"path": target.to_str().unwrap(), "content": content});
            let p = crash_and_recover(&mut s, label, payload, "file.write").await;
            assert_eq!(p["status"], "applied", "{label} run {run}: {p}");
            assert_eq!(std::fs::read_to_string(&target).unwrap(), content, "{label} run {run}");
            let id = p["id"].as_str().unwrap();
            let (_, audit) = s.req(Method::GET, &format!("/proposals/{id}/audit"), Some(&s.owner.clone()), None).await;
            let applied = audit["items"].as_array().unwrap().iter().filter(|e| e["to"] == "applied").count();
            assert_eq!(applied, 1, "{label} run {run}: {audit}");
        }
    }
    let stray: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(stray.is_empty(), "temp files left behind: {stray:?}");
}

#[tokio::test]
async fn file_deletes_happen_exactly_once() {
    let mut s = Server::start().await;
    let dir = tempfile::tempdir().unwrap();
    for label in ["applying-committed", "applied-before-commit"] {
        for run in 0..RUNS {
            let target = dir.path().join(format!("{label}-{run}.txt"));
            std::fs::write(&target, "x\n").unwrap();
            let p = crash_and_recover(&mut s, label, json!({"path": target.to_str().unwrap()}), "file.delete").await;
            assert_eq!(p["status"], "applied", "{label} run {run}: {p}");
            assert!(!target.exists());
        }
    }
}

#[tokio::test]
async fn an_http_call_is_never_sent_twice() {
    let rec = Recorder::start().await;
    let bus = private_bus_with_keyring();
    let mut s = Server::start_with("", &[("DBUS_SESSION_BUS_ADDRESS", &bus.address)]).await;
    let out = crate::harness::cli_with_stdin(
        s.home(),
        &s.env,
        &["credential", "add", "api", "--host", &rec.url],
        "tok-123456",
    );
    assert!(out.status.success());
    let mut expected_requests = 0;
    for label in ["applying-committed", "applied-before-commit"] {
        for run in 0..RUNS {
            let path = format!("/{label}/{run}");
            let payload = json!({"method": "POST", "url": format!("{}{path}", rec.url), "json": {"run": run}, "credential": "api"});
            let p = crash_and_recover(&mut s, label, payload, "http.request").await;
            assert_eq!(p["status"], "failed", "{label} run {run}: {p}");
            assert_eq!(p["error"]["code"], "outcome_unknown", "{label} run {run}");
            let sent = rec.seen().iter().filter(|r| r.path == path).count();
            let want = usize::from(label == "applied-before-commit");
            assert_eq!(sent, want, "{label} run {run}: sent {sent} times");
            expected_requests += want;
        }
    }
    assert_eq!(rec.seen().len(), expected_requests);
}

#[tokio::test]
async fn new_content_is_never_readable_by_more_people_than_the_file_it_replaces() {
    use std::os::unix::fs::PermissionsExt;
    let mut s = Server::start().await;
    let (dir, target) = scratch_file("secret.env", "TOKEN=old\n");
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o600)).unwrap();
    let payload = json!({"path": target.to_str().unwrap(), "content": "TOKEN=new\n"});
    let id = approve_until_crash(&mut s, "file-temp-filled", payload, "file.write").await;
    // Stopped with the new content written to the temporary file: look at who could read it.
    let temps: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert_eq!(temps.len(), 1, "the crash point was reached with the temp file written");
    assert_eq!(std::fs::read_to_string(temps[0].path()).unwrap(), "TOKEN=new\n");
    let mode = temps[0].metadata().unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "the temp file holding the new content is {mode:o}");
    s.spawn();
    let (_, done) = s.req(Method::GET, &format!("/proposals/{id}?wait=20"), Some(&s.agent.clone()), None).await;
    assert_eq!(done["status"], "applied", "{done}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "TOKEN=new\n");
    assert_eq!(std::fs::metadata(&target).unwrap().permissions().mode() & 0o777, 0o600);
}
