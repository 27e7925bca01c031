//! The remote listener's doors against strangers and a stolen cookie: no door locks on failures,
//! and what one client can fill (sessions, nonces, decision bodies) is its own.

use crate::harness::stdout;
use crate::remote::{Phone, paired, pairing, signed_garbage, status_of};
use reqwest::StatusCode;
use serde_json::json;

/// Strangers cannot shut the owner out: failed logins by someone with no session (a made-up
/// assertion, over and over) close nothing and are logged; the owner's phone logs in again
/// among them and decides; begun logins hold nothing (a flood of them leaves the owner's own
/// login working); and a pairing whose passkey sheet was cancelled can be tried again with the
/// same code, which is used up once the pairing is done.
#[tokio::test]
async fn strangers_cannot_shut_the_owner_out() {
    let (s, mut phone) = paired().await;
    let port: u16 = phone.origin.rsplit(':').next().unwrap().parse().unwrap();
    let mut stranger = Phone::new(port);
    for i in 0..40 {
        let (st, v) = stranger.post("/api/login/options", json!({})).await;
        assert_eq!(st, StatusCode::OK, "{i}: {v}");
        let (st, v) =
            stranger.post("/api/login", json!({ "ceremony": v["ceremony"], "credential": signed_garbage() })).await;
        assert!(st.is_client_error() && st != StatusCode::TOO_MANY_REQUESTS, "failure {i}: {st} {v}");
    }
    // The owner's phone, its session put away, logs in among them with its passkey.
    phone.cookie = None;
    let (st, v) = phone.login().await;
    assert_eq!(st, StatusCode::OK, "the owner logs in after 40 strangers' failures: {v}");
    let id = s.propose_tool("terraform destroy").await;
    assert_eq!(phone.get("/api/proposals").await.0, StatusCode::OK);
    let item = phone.item(&id).await;
    let (st, v) = phone.decide(json!({"items": [item], "outcome": "approve"})).await;
    assert_eq!(st, StatusCode::OK, "{v}");
    assert_eq!(status_of(&s, &id).await["status"], "approved");
    let log = stdout(&s.cli(&["remote", "log", "--json"]));
    assert!(log.contains("login_refused") && !log.contains("locked_out"), "{log}");

    // A stolen cookie (no passkey) asks for decision nonces over and over, and holds two slow
    // decision bodies open: another session of the owner's asks and decides throughout, and
    // the cookie's third body is refused before it is read.
    let mut thief = Phone::new(port);
    thief.cookie = phone.cookie.clone();
    phone.cookie = None;
    assert_eq!(phone.login().await.0, StatusCode::OK);
    let id = s.propose_tool("kubectl delete ns staging").await;
    let item = phone.item(&id).await;
    for _ in 0..100 {
        assert_eq!(thief.ask(&json!({"items": [item], "outcome": "approve"})).await.0, StatusCode::OK);
    }
    let before = s.rss_kb();
    let head = format!(
        "POST /api/decisions HTTP/1.1\r\nHost: localhost:{port}\r\nOrigin: {}\r\nCookie: __Host-assent={}\r\nContent-Type: application/json\r\nContent-Length: 10000000\r\n\r\n{{\"pad\": \"",
        thief.origin,
        thief.cookie.as_deref().unwrap()
    );
    let mut slow = Vec::new();
    let open = async || {
        let mut c = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        tokio::io::AsyncWriteExt::write_all(&mut c, head.as_bytes()).await.unwrap();
        c
    };
    // Two slow bodies are being read; a third is refused before a byte of it is.
    for _ in 0..2 {
        slow.push(open().await);
    }
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let (st, v) = thief.post("/api/decisions", json!({"pad": "x"})).await;
    assert_eq!((st, v["error"]["code"].as_str()), (StatusCode::TOO_MANY_REQUESTS, Some("session_busy")), "{v}");
    // 254 more: the session holds 16 connections at most (its oldest closed), two bodies read.
    for _ in 0..254 {
        slow.push(open().await);
    }
    // Each sends up to 4 MiB more of its 10 MiB body, slowly, for at most 8 seconds: the refused
    // and the closed ones hold nothing.
    let chunk = vec![b'x'; 64 * 1024];
    let started = std::time::Instant::now();
    'rounds: for _ in 0..64 {
        for c in slow.iter_mut() {
            if started.elapsed() > std::time::Duration::from_secs(8) {
                break 'rounds;
            }
            let _ = tokio::time::timeout(
                std::time::Duration::from_millis(5),
                tokio::io::AsyncWriteExt::write_all(c, &chunk),
            )
            .await;
        }
    }
    let during = s.rss_kb();
    println!("server memory: {} MiB before 256 slow 10 MiB bodies, {} MiB during", before / 1024, during / 1024);
    assert!(during < before + 64 * 1024, "{during} kB during against {before} kB before");
    let (st, v) = phone.decide(json!({"items": [item], "outcome": "reject", "reason": "no"})).await;
    assert_eq!(st, StatusCode::OK, "the owner decides beside a stolen cookie's flood: {v}");
    drop(slow);

    // Begun logins hold nothing: 500 of them, and the owner's own login still works (on a
    // fresh listener, where the login door is open).
    let (s, mut phone) = paired().await;
    let port: u16 = phone.origin.rsplit(':').next().unwrap().parse().unwrap();
    let mut stranger = Phone::new(port);
    for _ in 0..500 {
        assert_eq!(stranger.post("/api/login/options", json!({})).await.0, StatusCode::OK);
    }
    phone.cookie = None;
    let (st, v) = phone.login().await;
    assert_eq!(st, StatusCode::OK, "{v}");
    // A sealed ceremony logs in once; one made up or altered logs in nobody.
    let (_, v) = stranger.post("/api/login/options", json!({})).await;
    let mut forged = v["ceremony"].as_str().unwrap().to_string();
    forged.replace_range(20..21, if &forged[20..21] == "A" { "B" } else { "A" });
    let credential = phone.sign(&v["options"]).await;
    let (st, w) = phone.post("/api/login", json!({ "ceremony": forged, "credential": credential })).await;
    assert_eq!((st, w["error"]["code"].as_str()), (StatusCode::FORBIDDEN, Some("ceremony_invalid")), "{w}");
    let credential = phone.sign(&v["options"]).await;
    let (st, _) =
        phone.post("/api/login", json!({ "ceremony": v["ceremony"], "credential": credential.clone() })).await;
    assert_eq!(st, StatusCode::OK);
    let (st, w) = phone.post("/api/login", json!({ "ceremony": v["ceremony"], "credential": credential })).await;
    assert_eq!((st, w["error"]["code"].as_str()), (StatusCode::FORBIDDEN, Some("ceremony_invalid")), "replayed: {w}");

    // A cancelled passkey sheet: the same code is asked again and pairs.
    let link = pairing(&s);
    let code = link.split("#pair=").nth(1).unwrap().split('&').next().unwrap().to_string();
    let mut tablet = Phone::new(port);
    let (st, _) = tablet.post("/api/pair/options", json!({ "code": code, "name": "tablet" })).await;
    assert_eq!(st, StatusCode::OK);
    assert_eq!(tablet.pair(&link, "tablet").await.0, StatusCode::OK, "tried again after a cancelled sheet");
    let (st, v) = Phone::new(port).pair(&link, "tablet2").await;
    assert_eq!((st, v["error"]["code"].as_str()), (StatusCode::FORBIDDEN, Some("pairing_code_invalid")), "used");
}
