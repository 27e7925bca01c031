//! `file.write` and `file.delete`: validated, previewed, applied atomically onto the state the
//! person saw.

use crate::harness::{Server, native, scratch_file, windows_exe};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

async fn write(s: &Server, path: &std::path::Path, content: &str) -> (StatusCode, Value) {
    let body = json!({"kind": "file.write", "payload": {"path": native(path), "content": content}});
    s.try_propose(body).await
}

async fn settle(s: &Server, id: &str) -> Value {
    s.req(Method::GET, &format!("/proposals/{id}?wait=20"), Some(&s.agent), None).await.1
}

#[tokio::test]
async fn write_is_previewed_then_applied_atomically_keeping_permissions() {
    let s = Server::start().await;
    let (dir, target) = scratch_file("notes.txt", "one\ntwo\nthree\n");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o640)).unwrap();
    }
    let (st, p) = write(&s, &target, "one\nTWO\nthree\nfour\u{202E}\n").await;
    assert_eq!(st, StatusCode::CREATED, "{p}");
    // The agent gets the figures; the person gets the diff.
    assert_eq!(p["preview"]["stats"], json!({"added": 2, "removed": 1}));
    assert!(p["preview"]["hunks"].is_null(), "{p}");
    let p = s.get(p["id"].as_str().unwrap(), &s.owner).await.1;
    let pv = &p["preview"];
    assert_eq!(pv["type"], "file.write");
    assert_eq!(pv["exists"], true);
    assert_eq!(pv["stats"], json!({"added": 2, "removed": 1}));
    let lines = pv["hunks"][0]["lines"].as_array().unwrap();
    assert!(lines.iter().any(|l| l["tag"] == "-" && l["text"] == "two" && l["old"] == 2));
    assert!(lines.iter().any(|l| l["tag"] == "+" && l["text"] == "TWO" && l["new"] == 2));
    assert!(lines.iter().any(|l| l["flagged"] == true), "the hidden character is flagged on its line");
    assert_eq!(pv["invisible_characters"][0]["codepoint"], "U+202E");
    assert_eq!(p["base"]["exists"], true);
    assert_eq!(p["settled"], false);
    let id = p["id"].as_str().unwrap();
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "one\ntwo\nthree\n", "nothing written before a decision");

    s.decide(id, json!({"outcome": "approve"})).await;
    let done = settle(&s, id).await;
    assert_eq!(done["status"], "applied", "{done}");
    assert_eq!(done["result"]["replaced"], true);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "one\nTWO\nthree\nfour\u{202E}\n");
    // Windows has no permission bits to keep (only read-only, tested in the applier's units).
    #[cfg(unix)]
    if windows_exe().is_none() {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&target).unwrap().permissions().mode() & 0o777, 0o640);
    }
    let leftovers: Vec<_> =
        std::fs::read_dir(dir.path()).unwrap().filter_map(|e| e.ok()).map(|e| e.file_name()).collect();
    assert_eq!(leftovers.len(), 1, "no temp files left: {leftovers:?}");
    let (_, audit) = s.req(Method::GET, &format!("/proposals/{id}/audit"), Some(&s.owner), None).await;
    let path: Vec<&str> = audit["items"].as_array().unwrap().iter().map(|e| e["to"].as_str().unwrap()).collect();
    assert_eq!(path, ["pending", "approved", "applying", "applied"]);
}

#[tokio::test]
async fn a_target_changed_since_the_proposal_fails_stale_and_is_not_touched() {
    let s = Server::start().await;
    let (dir, target) = scratch_file("config.ini", "a=1\n");
    let (_, p) = write(&s, &target, "a=2\n").await;
    std::fs::write(&target, "a=1\nb=someone else\n").unwrap();
    let id = p["id"].as_str().unwrap();
    s.decide(id, json!({"outcome": "approve"})).await;
    let done = settle(&s, id).await;
    assert_eq!(done["status"], "failed");
    assert_eq!(done["error"]["code"], "stale");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "a=1\nb=someone else\n");

    // The person retries: a new proposal against the file as it is now.
    let (st, e) = s.req(Method::POST, &format!("/proposals/{id}/retry"), Some(&s.agent), None).await;
    assert_eq!(st, StatusCode::FORBIDDEN, "{e}");
    let (st, again) = s.req(Method::POST, &format!("/proposals/{id}/retry"), Some(&s.owner), None).await;
    assert_eq!(st, StatusCode::CREATED, "{again}");
    assert_eq!(again["supersedes"], id);
    assert_eq!(again["status"], "pending");
    assert_eq!(again["preview"]["stats"], json!({"added": 1, "removed": 2}));
    let again_id = again["id"].as_str().unwrap();
    s.decide(again_id, json!({"outcome": "approve"})).await;
    assert_eq!(settle(&s, again_id).await["status"], "applied");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "a=2\n");
    let (st, _) = s.req(Method::POST, &format!("/proposals/{again_id}/retry"), Some(&s.owner), None).await;
    assert_eq!(st, StatusCode::CONFLICT, "only failed proposals are retried");

    // A file created after a proposal to create it is stale too.
    let fresh = dir.path().join("new.txt");
    let (_, p) = write(&s, &fresh, "mine\n").await;
    assert_eq!(p["preview"]["exists"], false);
    std::fs::write(&fresh, "theirs\n").unwrap();
    let id = p["id"].as_str().unwrap();
    s.decide(id, json!({"outcome": "approve"})).await;
    assert_eq!(settle(&s, id).await["error"]["code"], "stale");
    assert_eq!(std::fs::read_to_string(&fresh).unwrap(), "theirs\n");
}

#[tokio::test]
async fn edited_content_is_what_gets_written() {
    let s = Server::start().await;
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("sub/dir/out.txt");
    let (st, p) = write(&s, &target, "agent's version\n").await;
    assert_eq!(st, StatusCode::CREATED, "{p}");
    let id = p["id"].as_str().unwrap();
    let (st, e) = s.decide(id, json!({"outcome": "approve", "edits": {"path": "/etc/passwd", "content": "x"}})).await;
    assert_eq!((st, e["error"]["code"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("invalid_edits")));
    let (st, _) = s.decide(id, json!({"outcome": "approve", "edits": {"content": "person's version\n"}})).await;
    assert_eq!(st, StatusCode::OK);
    let done = settle(&s, id).await;
    assert_eq!(done["status"], "applied", "{done}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "person's version\n");
    assert_eq!(done["payload"]["content"], "agent's version\n", "the stored payload never changes");
}

#[tokio::test]
async fn paths_are_checked_at_proposal_time() {
    let project = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let denied = tempfile::tempdir().unwrap();
    let config = format!(
        "protected_paths = [{:?}]\n[allowed_roots]\ndefault = [{:?}]\n",
        native(denied.path()),
        native(project.path())
    );
    let s = Server::start_with(&config, &[]).await;
    let p = |x: &str| project.path().join(x);
    let mut cases: Vec<(String, &str)> = vec![
        ("relative/path.txt".into(), "path_not_absolute"),
        (native(&project.path().join("a\u{0}b")), "invalid_path"),
        (native(&s.home().join("assent.db")), "protected_path"),
        (native(&denied.path().join("x")), "protected_path"),
        (native(&outside.path().join("x")), "outside_allowed_roots"),
        (
            native(&project.path().join("..").join(outside.path().file_name().unwrap()).join("x")),
            "outside_allowed_roots",
        ),
        (native(project.path()), "path_is_directory"),
    ];
    // On Windows, names the system reads as something else than a file in the folder: refused
    // before anything is opened (an alternate data stream, a device, a name Windows trims, the
    // verbatim and device forms that skip its reading of names).
    if windows_exe().is_some() {
        let dir = native(project.path());
        for (name, code) in [
            ("notes.txt:hidden", "invalid_path"),
            ("notes.txt::$DATA", "invalid_path"),
            ("CON", "invalid_path"),
            ("nul.txt", "invalid_path"),
            ("COM1\\x.txt", "invalid_path"),
            ("trailing.", "invalid_path"),
            ("trailing ", "invalid_path"),
        ] {
            cases.push((format!("{dir}\\{name}"), code));
        }
        cases.push((format!("\\\\?\\{dir}\\x.txt"), "invalid_path"));
        cases.push(("\\\\.\\PhysicalDrive0\\x".into(), "invalid_path"));
        cases.push(("\\no-drive\\x.txt".into(), "path_not_absolute"));
    }
    for (path, code) in &cases {
        let (st, e) = s.try_propose(json!({"kind": "file.write", "payload": {"path": path, "content": "x"}})).await;
        assert_eq!((st, e["error"]["code"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some(*code)), "{path}");
    }
    // Under Wine a Unix link is no Windows link (Wine follows it as the folder it names).
    #[cfg(unix)]
    if windows_exe().is_none() {
        std::os::unix::fs::symlink(outside.path(), p("escape")).unwrap();
        let (st, e) = write(&s, &p("escape/x"), "x").await;
        assert_eq!(
            (st, e["error"]["code"].as_str()),
            (StatusCode::UNPROCESSABLE_ENTITY, Some("outside_allowed_roots"))
        );
        std::fs::write(outside.path().join("target"), "t").unwrap();
        std::os::unix::fs::symlink(outside.path().join("target"), p("link")).unwrap();
        let (st, e) = write(&s, &p("link"), "x").await;
        assert_eq!((st, e["error"]["code"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("path_is_symlink")));
    }
    // `..` is resolved and the real path stored.
    let (st, ok) = write(&s, &p("a/../b.txt"), "x").await;
    assert_eq!(st, StatusCode::CREATED, "{ok}");
    assert_eq!(ok["payload"]["path"], native(&std::fs::canonicalize(project.path()).unwrap().join("b.txt")));
    let inside = native(&p("x.txt"));
    for bad in [
        json!({"path": inside}),
        json!({"path": 1, "content": "x"}),
        json!({"path": inside, "content": "x", "mode": 7}),
    ] {
        let (st, e) = s.try_propose(json!({"kind": "file.write", "payload": bad})).await;
        assert_eq!((st, e["error"]["code"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("invalid_payload")));
    }
}

#[tokio::test]
async fn a_symlink_swapped_in_after_the_proposal_is_not_followed() {
    let s = Server::start().await;
    let dir = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    let (_, p) = write(&s, &sub.join("f.txt"), "x\n").await;
    // Replace the folder with a link to somewhere else before approval.
    std::fs::remove_dir(&sub).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(elsewhere.path(), &sub).unwrap();
    let id = p["id"].as_str().unwrap();
    s.decide(id, json!({"outcome": "approve"})).await;
    let done = settle(&s, id).await;
    assert_eq!(done["status"], "failed", "{done}");
    assert!(!elsewhere.path().join("f.txt").exists(), "nothing written through the link");
}

#[tokio::test]
async fn delete_is_destructive_previewed_and_stale_checked() {
    let s = Server::start().await;
    let (dir, target) = scratch_file("old.log", "a\nb\n");
    let body = |p: &std::path::Path| json!({"kind": "file.delete", "payload": {"path": native(p)}});
    let (st, p) = s.try_propose(body(&target)).await;
    assert_eq!(st, StatusCode::CREATED, "{p}");
    assert_eq!(p["preview"]["type"], "file.delete");
    assert_eq!(p["preview"]["stats"]["removed"], 2);
    let id = p["id"].as_str().unwrap();
    let (st, e) = s.decide(id, json!({"outcome": "approve", "edits": {}})).await;
    assert_eq!((st, e["error"]["code"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("invalid_edits")));
    s.decide(id, json!({"outcome": "approve"})).await;
    assert_eq!(settle(&s, id).await["status"], "applied");
    assert!(!target.exists());
    let (st, e) = s.try_propose(body(&target)).await;
    assert_eq!((st, e["error"]["code"].as_str()), (StatusCode::NOT_FOUND, Some("target_not_found")));
    // Binary content is summarized, not diffed.
    let bin = dir.path().join("blob.bin");
    std::fs::write(&bin, [0u8, 159, 146, 150, 0, 1]).unwrap();
    let (_, p) = write(&s, &bin, "text now\n").await;
    assert_eq!(p["preview"]["binary_current"], true);
    let p = s.get(p["id"].as_str().unwrap(), &s.owner).await.1;
    assert!(p["preview"]["summary"].as_str().unwrap().contains("binary"));
}
