//! What an outside review broke at the boundary, each named after what it protects: special
//! files, what the preview tells an agent, invisible characters in names, protected paths on a
//! case-insensitive disk, late decisions, and groups that belong to one agent.

use crate::harness::{Server, native, scratch_file, stdout, windows_exe};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

async fn propose(s: &Server, body: Value) -> (StatusCode, Value) {
    s.try_propose(body).await
}

fn write(path: &std::path::Path, content: &str) -> Value {
    json!({"kind": "file.write", "payload": {"path": native(path), "content": content}})
}

fn delete(path: &std::path::Path) -> Value {
    json!({"kind": "file.delete", "payload": {"path": native(path)}})
}

fn code(v: &Value) -> &str {
    v["error"]["code"].as_str().unwrap_or("")
}

#[tokio::test]
async fn special_files_are_never_targets_and_never_block_the_server() {
    let s = Server::start().await;
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let started = Instant::now();
    for body in [write(&fifo, "x"), delete(&fifo)] {
        let (st, e) = propose(&s, body).await;
        assert_eq!((st, code(&e)), (StatusCode::UNPROCESSABLE_ENTITY, "not_a_regular_file"), "{e}");
    }
    // A device node outside /dev (made where the test may: as root).
    let dev = dir.path().join("null");
    let made = std::process::Command::new("mknod").arg(&dev).args(["c", "1", "3"]).status().is_ok_and(|s| s.success());
    if made {
        let (st, e) = propose(&s, write(&dev, "x")).await;
        assert_eq!((st, code(&e)), (StatusCode::UNPROCESSABLE_ENTITY, "not_a_regular_file"), "{e}");
    }
    // Devices in /dev, through a link or not, and the kernel's files.
    let link = dir.path().join("zero-link");
    std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
    for (path, want) in [
        (std::path::PathBuf::from("/dev/zero"), "protected_path"),
        (std::path::PathBuf::from("/dev/null"), "protected_path"),
        (std::path::PathBuf::from("/proc/self/environ"), "protected_path"),
        (link.clone(), "path_is_symlink"),
    ] {
        let (st, e) = propose(&s, write(&path, "x")).await;
        assert_eq!((st, code(&e)), (StatusCode::UNPROCESSABLE_ENTITY, want), "{}: {e}", path.display());
    }
    assert!(started.elapsed() < Duration::from_secs(10), "nothing blocked: {:?}", started.elapsed());
    // The server still takes file proposals.
    let (st, p) = propose(&s, write(&dir.path().join("fine.txt"), "ok\n")).await;
    assert_eq!(st, StatusCode::CREATED, "{p}");
    assert!(std::fs::metadata("/dev/null").unwrap().file_type().is_char_device_like());
}

trait CharDevice {
    fn is_char_device_like(&self) -> bool;
}

impl CharDevice for std::fs::FileType {
    fn is_char_device_like(&self) -> bool {
        use std::os::unix::fs::FileTypeExt;
        self.is_char_device()
    }
}

#[tokio::test]
async fn an_agent_never_reads_a_file_through_the_preview() {
    let s = Server::start().await;
    let (_dir, secret) = scratch_file("credentials", "[default]\naws_secret_access_key = TOPSECRET-KEY-42\n");

    for body in [delete(&secret), write(&secret, "[default]\n")] {
        let (st, p) = propose(&s, body).await;
        assert_eq!(st, StatusCode::CREATED, "{p}");
        assert!(!p.to_string().contains("TOPSECRET"), "the 201 carries the file: {p}");
        let pv = &p["preview"];
        assert_eq!(pv["content_withheld"], true);
        assert!(pv["current_size"].as_u64().unwrap() > 0 && pv["current_sha256"].is_string(), "{pv}");
        let id = p["id"].as_str().unwrap();
        for path in [format!("/proposals/{id}"), format!("/proposals/{id}?wait=1"), "/proposals".to_string()] {
            let (_, seen) = s.req(Method::GET, &path, Some(&s.agent), None).await;
            assert!(!seen.to_string().contains("TOPSECRET"), "{path} carries the file");
        }
        // The person sees everything.
        let (_, full) = s.get(id, &s.owner).await;
        assert!(full.to_string().contains("TOPSECRET-KEY-42"), "{full}");
        assert!(stdout(&s.cli(&["show", id])).contains("TOPSECRET-KEY-42"));
    }
    // Nothing about a protected place is told, whatever is there.
    // The user's home as the server sees it: under Wine, the profile Wine made for this user.
    let (home, sep) = match windows_exe() {
        Some(_) => (format!("C:\\users\\{}", std::env::var("USER").unwrap_or_else(|_| "root".into())), "\\"),
        None => (std::env::var("HOME").unwrap_or_else(|_| "/root".into()), "/"),
    };
    let ssh = format!("{home}{sep}.ssh");
    for p in [ssh.clone(), format!("{ssh}{sep}no-such-file"), format!("{ssh}{sep}..{sep}.ssh{sep}x")] {
        let (st, e) = propose(&s, json!({"kind": "file.delete", "payload": {"path": p}})).await;
        assert_eq!((st, code(&e)), (StatusCode::UNPROCESSABLE_ENTITY, "protected_path"), "{p}: {e}");
    }
}

#[tokio::test]
async fn protected_paths_are_compared_as_a_case_insensitive_disk_would() {
    let s = Server::start().await;
    let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    for p in [".SSH/authorized_keys", ".Ssh/config", ".GnuPG/pubring.kbx"] {
        let path = std::path::Path::new(&home).join(p);
        let (st, e) = propose(&s, write(&path, "ssh-ed25519 AAAA attacker\n")).await;
        assert_eq!((st, code(&e)), (StatusCode::UNPROCESSABLE_ENTITY, "protected_path"), "{p}: {e}");
        assert!(!path.exists());
    }
    let shouted = std::path::PathBuf::from(s.home().to_str().unwrap().to_uppercase()).join("assent.db");
    let (st, e) = propose(&s, write(&shouted, "x")).await;
    assert_eq!((st, code(&e)), (StatusCode::UNPROCESSABLE_ENTITY, "protected_path"), "{e}");
}

#[tokio::test]
async fn invisible_characters_in_names_are_flagged_and_shown() {
    let s = Server::start().await;
    let dir = tempfile::tempdir().unwrap();
    let sneaky = dir.path().join("invoice\u{202E}fdp.sh");
    let (st, p) = propose(&s, write(&sneaky, "echo hi\n")).await;
    assert_eq!(st, StatusCode::CREATED, "{p}");
    assert_eq!(p["preview"]["invisible_characters"][0]["codepoint"], "U+202E", "{p}");
    let shown = stdout(&s.cli(&["show", p["id"].as_str().unwrap()]));
    assert!(shown.contains("invoice\u{27E6}U+202E\u{27E7}fdp.sh"), "{shown}");
    assert!(!shown.contains('\u{202E}'), "the raw character never reaches the terminal");
    let listed = stdout(&s.cli(&["list"]));
    assert!(!listed.contains('\u{202E}'), "{listed}");

    // The characters the review found unflagged, hidden in what looks like `ls`.
    for c in ['\u{2060}', '\u{00AD}', '\u{180E}', '\u{3164}', '\u{2062}', '\u{E0041}', '\u{FE01}'] {
        let (st, p) = propose(
            &s,
            json!({"kind": "tool.call", "payload": {"tool": "Bash", "input": {"command": format!("l{c}s")}}}),
        )
        .await;
        assert_eq!(st, StatusCode::CREATED, "{p}");
        let found = p["preview"]["invisible_characters"].to_string();
        assert!(found.contains(&format!("U+{:04X}", c as u32)), "U+{:04X}: {found}", c as u32);
    }
    // A tool name with one is refused outright.
    let (st, e) = propose(&s, json!({"kind": "tool.call", "payload": {"tool": "Ba\u{2060}sh"}})).await;
    assert_eq!((st, code(&e)), (StatusCode::UNPROCESSABLE_ENTITY, "invalid_payload"), "{e}");
}

#[tokio::test]
async fn a_decision_after_expiry_is_refused_and_the_proposal_is_expired() {
    let s = Server::start().await;
    let (_, p) = propose(&s, json!({"kind": "tool.call", "payload": {"tool": "deploy"}, "expires_in": 1})).await;
    let id = p["id"].as_str().unwrap();
    s.advance(Duration::from_millis(1050)).await;
    let (st, e) = s.decide(id, json!({"outcome": "approve"})).await;
    assert_eq!((st, code(&e)), (StatusCode::CONFLICT, "invalid_state"), "{e}");
    let (_, now) = s.get(id, &s.owner).await;
    assert_eq!(now["status"], "expired");
    assert!(now["decision"].is_null());
}

#[tokio::test]
async fn one_agent_cannot_slip_a_proposal_into_another_agents_batch() {
    let s = Server::start().await;
    let (_, other) = s.req(Method::POST, "/agents", Some(&s.owner), Some(json!({"name": "mallory"}))).await;
    let mallory = other["token"].as_str().unwrap().to_string();
    let mine = |tool: &str| json!({"kind": "tool.call", "payload": {"tool": tool}, "group_id": "release-7"});
    let (_, a) = propose(&s, mine("tag")).await;
    let (_, b) = propose(&s, mine("publish")).await;
    let (_, m) = s.req(Method::POST, "/proposals", Some(&mallory), Some(mine("exfiltrate"))).await;

    let group = json!({"group_id": "release-7", "outcome": "approve"});
    let (st, e) = s.req(Method::POST, "/decisions", Some(&s.owner), Some(group)).await;
    assert_eq!((st, code(&e)), (StatusCode::UNPROCESSABLE_ENTITY, "ambiguous_group"), "{e}");
    let group = json!({"group_id": "release-7", "agent": "default", "outcome": "approve"});
    let (st, r) = s.req(Method::POST, "/decisions", Some(&s.owner), Some(group)).await;
    assert_eq!((st, r["decided"].as_u64()), (StatusCode::OK, Some(2)), "{r}");
    for (p, want) in [(&a, "approved"), (&b, "approved"), (&m, "pending")] {
        let (_, now) = s.get(p["id"].as_str().unwrap(), &s.owner).await;
        assert_eq!(now["status"], want, "{}", now["payload"]);
    }
    // An agent listing its group sees only its own.
    let (_, listed) = s.req(Method::GET, "/proposals?group_id=release-7", Some(&mallory), None).await;
    assert_eq!(listed["items"].as_array().unwrap().len(), 1);
}

/// A listener that took the port of a server that died: records every request it gets and
/// answers like a server would, with a made-up proof.
async fn impostor_on(addr: &str) -> std::sync::Arc<std::sync::Mutex<Vec<String>>> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let listener = tokio::net::TcpListener::bind(addr).await.unwrap();
    let s2 = seen.clone();
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let seen = s2.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 16 * 1024];
                let n = sock.read(&mut buf).await.unwrap_or(0);
                seen.lock().unwrap().push(String::from_utf8_lossy(&buf[..n]).to_string());
                let body = r#"{"server":"assent","proof":"00112233","items":[],"status":"ok"}"#;
                let res = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = sock.write_all(res.as_bytes()).await;
            });
        }
    });
    seen
}

// Multi-threaded: the impostor answers while the test waits on the CLI.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_owner_credential_never_goes_to_whoever_holds_a_stale_port() {
    let mut s = Server::start().await;
    let addr = s.url.trim_start_matches("http://").to_string();
    s.kill9();
    assert!(s.home().join("server.json").exists(), "a crash leaves server.json behind");
    let seen = impostor_on(&addr).await;
    for args in [vec!["list"], vec!["propose", "--tool", "x"], vec!["approve", "p_x"]] {
        let out = s.cli(&args);
        assert!(!out.status.success(), "{args:?} trusted the impostor");
        assert!(crate::harness::stderr(&out).contains("did not prove"), "{args:?}: {}", crate::harness::stderr(&out));
    }
    let requests = seen.lock().unwrap().clone();
    assert!(!requests.is_empty(), "the impostor was asked");
    for r in &requests {
        assert!(!r.to_ascii_lowercase().contains("authorization"), "a credential was sent: {r}");
        assert!(!r.contains(&s.owner) && !r.contains(&s.agent), "a token was sent: {r}");
    }
}

#[tokio::test]
async fn a_stale_server_json_is_cleaned_up_at_start() {
    let mut s = Server::start().await;
    let old = std::fs::read_to_string(s.home().join("server.json")).unwrap();
    s.kill9();
    s.spawn();
    let new = std::fs::read_to_string(s.home().join("server.json")).unwrap();
    assert_ne!(old, new, "a new proof key and address");
    let out = s.cli(&["list"]);
    assert!(out.status.success(), "{}", crate::harness::stderr(&out));
}

async fn raw(url: &str, request: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut sock = tokio::net::TcpStream::connect(url.trim_start_matches("http://")).await.unwrap();
    sock.write_all(request.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), sock.read_to_end(&mut out)).await;
    String::from_utf8_lossy(&out).to_string()
}

/// Reads until the server closes the connection; how long that took.
async fn closed_after(mut sock: tokio::net::TcpStream, limit: Duration) -> Option<Duration> {
    use tokio::io::AsyncReadExt;
    let started = Instant::now();
    let mut buf = [0u8; 1024];
    loop {
        match tokio::time::timeout(limit.saturating_sub(started.elapsed()), sock.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return Some(started.elapsed()),
            Ok(Ok(_)) => continue,
            Err(_) => return None,
        }
    }
}

#[tokio::test]
async fn slow_and_idle_connections_are_closed_but_long_polls_are_not() {
    use tokio::io::AsyncWriteExt;
    let s = Server::start_with("header_read_timeout = 1\n", &[]).await;
    let addr = s.url.trim_start_matches("http://").to_string();
    let idle = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let mut slow = tokio::net::TcpStream::connect(&addr).await.unwrap();
    slow.write_all(format!("GET /v1/health HTTP/1.1\r\nHost: {addr}\r\n").as_bytes()).await.unwrap();
    let (a, b) = tokio::join!(closed_after(idle, Duration::from_secs(8)), closed_after(slow, Duration::from_secs(8)));
    assert!(a.is_some_and(|d| d < Duration::from_secs(4)), "an idle socket is closed: {a:?}");
    assert!(b.is_some_and(|d| d < Duration::from_secs(4)), "a slow header is cut: {b:?}");
    // A long-poll longer than the timeout is a request in progress: it is answered.
    let id = s.propose_tool("ls").await;
    let started = Instant::now();
    let (st, p) = s.req(Method::GET, &format!("/proposals/{id}?wait=3"), Some(&s.agent), None).await;
    assert_eq!((st, p["status"].as_str()), (StatusCode::OK, Some("pending")));
    assert!(started.elapsed() >= Duration::from_millis(2900));
}

#[tokio::test]
async fn connections_past_the_limit_get_a_clear_refusal() {
    let s = Server::start_with("max_connections = 4\n", &[]).await;
    let addr = s.url.trim_start_matches("http://").to_string();
    let mut held = Vec::new();
    for _ in 0..4 {
        held.push(tokio::net::TcpStream::connect(&addr).await.unwrap());
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let answer = raw(&s.url, &format!("GET /v1/health HTTP/1.1\r\nHost: {addr}\r\n\r\n")).await;
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(answer.contains("\"too_many_connections\""), "{answer}");
    drop(held);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (st, _) = s.req(Method::GET, "/health", None, None).await;
    assert_eq!(st, StatusCode::OK, "room again once they close");
}

#[tokio::test]
async fn a_request_with_two_host_headers_is_refused() {
    let s = Server::start().await;
    let addr = s.url.trim_start_matches("http://").to_string();
    let answer = raw(
        &s.url,
        &format!("GET /v1/health HTTP/1.1\r\nHost: {addr}\r\nHost: evil.example\r\nConnection: close\r\n\r\n"),
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(answer.contains("invalid_host"), "{answer}");
}

/// A small file system of its own (tmpfs), unmounted when dropped.
struct SmallDisk {
    dir: tempfile::TempDir,
}

impl SmallDisk {
    fn mount(bytes: u64) -> Option<SmallDisk> {
        let dir = tempfile::tempdir().unwrap();
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={bytes}"), "tmpfs"])
            .arg(dir.path())
            .status()
            .is_ok_and(|s| s.success());
        ok.then_some(SmallDisk { dir })
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg("-l").arg(self.dir.path()).status();
    }
}

#[tokio::test]
async fn a_full_disk_is_a_clear_507_and_loses_nothing() {
    // Mounting needs root, which the test machines have; where it is refused, say so loudly.
    let Some(disk) = SmallDisk::mount(3 * 1024 * 1024) else {
        eprintln!("NOT RUN: a_full_disk_is_a_clear_507_and_loses_nothing needs to mount a tmpfs (root)");
        return;
    };
    let home = tempfile::tempdir_in(disk.dir.path()).unwrap();
    let s = Server::start_in(home, "", &[], &[]).await;
    let kept = s.propose_tool("kept").await;
    let filler = "x".repeat(256 * 1024);
    let mut full = None;
    for i in 0..64 {
        let (st, e) =
            propose(&s, json!({"kind": "tool.call", "payload": {"tool": "fill", "input": {"i": i, "pad": filler}}}))
                .await;
        if st != StatusCode::CREATED {
            full = Some((st, e));
            break;
        }
    }
    let (st, e) = full.expect("the disk filled up");
    assert_eq!((st, code(&e)), (StatusCode::INSUFFICIENT_STORAGE, "storage_full"), "{e}");
    // The server is up, answers, and what it stored is intact.
    let (st, p) = s.get(&kept, &s.owner).await;
    assert_eq!((st, p["status"].as_str()), (StatusCode::OK, Some("pending")), "{p}");
    let (st, _) = s.req(Method::GET, "/health", None, None).await;
    assert_eq!(st, StatusCode::OK);
    let (st, d) = s.decide(&kept, json!({"outcome": "reject", "reason": "no room"})).await;
    assert!(st == StatusCode::OK || st == StatusCode::INSUFFICIENT_STORAGE, "{st} {d}");
    drop(s);
}

#[tokio::test]
async fn what_an_agent_may_store_is_capped_per_day_and_survives_a_restart() {
    let mut s = Server::start_with("max_bytes_per_agent_per_day = 1000000\n", &[]).await;
    let big = |i: u32| json!({"kind": "tool.call", "payload": {"tool": "note", "input": {"i": i, "text": "y".repeat(100_000)}}});
    let mut ids = Vec::new();
    let refused = loop {
        let (st, p) = propose(&s, big(ids.len() as u32)).await;
        if st != StatusCode::CREATED {
            break (st, p);
        }
        ids.push(p["id"].as_str().unwrap().to_string());
        assert!(ids.len() < 20, "never refused");
    };
    assert_eq!((refused.0, code(&refused.1)), (StatusCode::TOO_MANY_REQUESTS, "storage_quota"), "{}", refused.1);
    assert!((2..=5).contains(&ids.len()), "about 300 KB each: {}", ids.len());
    // Withdrawing does not give the room back: propose-and-withdraw cannot fill the disk.
    let (st, _) = s.req(Method::DELETE, &format!("/proposals/{}", ids[0]), Some(&s.agent), None).await;
    assert_eq!(st, StatusCode::OK);
    assert_eq!(propose(&s, big(99)).await.0, StatusCode::TOO_MANY_REQUESTS);
    // Small proposals and other agents go on.
    let (_, other) = s.req(Method::POST, "/agents", Some(&s.owner), Some(json!({"name": "other"}))).await;
    let other = other["token"].as_str().unwrap().to_string();
    let (st, _) = s.req(Method::POST, "/proposals", Some(&other), Some(big(1))).await;
    assert_eq!(st, StatusCode::CREATED);
    // The day is counted from the database, so a restart forgives nothing.
    s.stop();
    s.spawn();
    assert_eq!(propose(&s, big(100)).await.0, StatusCode::TOO_MANY_REQUESTS);
}

#[tokio::test]
async fn a_large_file_write_is_stored_once() {
    let mut s = Server::start().await;
    let dir = tempfile::tempdir().unwrap();
    let content: String = (0..20_000).map(|i| format!("line {i} of a new file, with some words\n")).collect();
    let (st, p) = propose(&s, write(&dir.path().join("new.txt"), &content)).await;
    assert_eq!(st, StatusCode::CREATED);
    let id = p["id"].as_str().unwrap().to_string();
    // The person's preview reads back whole...
    let (_, full) = s.get(&id, &s.owner).await;
    let lines = full["preview"]["hunks"][0]["lines"].as_array().unwrap();
    assert_eq!(lines.len(), 20_000);
    assert_eq!(lines[123]["text"], "line 123 of a new file, with some words");
    assert_eq!(lines[123]["new"], 124);
    // ...but the content is on disk once: the preview holds line numbers, not the lines.
    s.stop();
    let sizes = s.sql(&format!("SELECT length(payload), length(preview) FROM proposals WHERE id = '{id}'")).unwrap();
    let nums: Vec<u64> = sizes.split('|').filter_map(|n| n.parse().ok()).collect();
    assert_eq!(nums.len(), 2, "{sizes}");
    assert!(nums[0] as usize >= content.len(), "{sizes}");
    assert!(nums[1] < nums[0] / 2, "the preview does not repeat the content: {sizes}");
}

#[tokio::test]
async fn settled_content_is_kept_only_for_the_retention() {
    let s = Server::start_with("content_retention_secs = 1\n", &[]).await;
    let secretish = "z".repeat(5000);
    let (_, p) =
        propose(&s, json!({"kind": "tool.call", "payload": {"tool": "note", "input": {"text": secretish}}})).await;
    let id = p["id"].as_str().unwrap().to_string();
    let pending = s.propose_tool("still pending").await;
    s.decide(&id, json!({"outcome": "approve"})).await;
    let deadline = Instant::now() + Duration::from_secs(15);
    let pruned = loop {
        let (_, now) = s.get(&id, &s.owner).await;
        if !now["pruned_at"].is_null() {
            break now;
        }
        assert!(Instant::now() < deadline, "never pruned: {now}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    assert_eq!(pruned["status"], "approved");
    assert!(!pruned.to_string().contains(&secretish), "the content is gone");
    assert!(pruned["payload"]["input"]["text"].as_str().unwrap().contains("5000 bytes, sha256"), "{pruned}");
    assert_eq!(pruned["preview"]["content_pruned"], true);
    assert!(pruned["decision"]["approved_sha256"].is_string(), "the hash of what was approved stays");
    let (_, audit) = s.req(Method::GET, &format!("/proposals/{id}/audit"), Some(&s.owner), None).await;
    assert_eq!(audit["items"].as_array().unwrap().len(), 2, "the history stays");
    // A pending proposal is never pruned, and the database refuses any other change.
    let (_, p2) = s.get(&pending, &s.owner).await;
    assert!(p2["pruned_at"].is_null());
    for sql in [
        format!("UPDATE proposals SET payload = '{{}}', pruned_at = 1 WHERE id = '{pending}'"),
        format!("UPDATE proposals SET payload = '{{}}' WHERE id = '{id}'"),
        format!("UPDATE proposals SET payload = '{{}}', pruned_at = 2 WHERE id = '{id}'"),
    ] {
        assert!(s.sql(&sql).is_err(), "{sql} was allowed");
    }
}
