//! The remote listener under a flood: half-open and slow connections push out only older strangers
//! (the owner, newest, is served), each for a bounded while, and the agent
//! API (another listener in the same process) answers as fast as before throughout.

use crate::remote::paired;
use reqwest::{Method, StatusCode};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The agent API's `GET /v1/health` latencies, sorted: `n` of them.
async fn health(s: &crate::harness::Server, n: usize) -> Vec<Duration> {
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        let (st, _) = s.req(Method::GET, "/health", None, None).await;
        out.push(t.elapsed());
        assert_eq!(st, StatusCode::OK);
    }
    out.sort();
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_at_the_front_door_leaves_the_agent_api_answering() {
    let (s, phone) = paired().await;
    let port: u16 = phone.origin.rsplit(':').next().unwrap().parse().unwrap();
    let before = health(&s, 200).await;
    // Half-open connections that send nothing, and slow ones that send half a head, past the
    // listener's count of strangers' connections.
    let mut flood = Vec::new();
    for i in 0..600 {
        let mut c = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        if i % 10 == 0 {
            c.write_all(b"GET /api/me HTTP/1.1\r\nHost: localhost\r\nX-Slow: ").await.unwrap();
        }
        flood.push(c);
    }
    let during = health(&s, 200).await;
    let (b50, d50, dmax) = (before[100], during[100], during[199]);
    println!("agent API health p50 {b50:?} before the flood, {d50:?} during it (max {dmax:?})");
    assert!(d50 <= b50 * 3 + Duration::from_millis(2), "p50 {d50:?} against {b50:?} before");
    assert!(dmax < Duration::from_millis(100), "max {dmax:?}");
    // Past the strangers' count, the oldest is closed to let the newest in: the first ones read
    // the end straight away, the newest are open, and a stranger's fresh request is answered
    // while the flood holds its connections.
    let mut buf = [0u8; 64];
    let n = tokio::time::timeout(Duration::from_secs(2), flood[0].read(&mut buf)).await;
    assert!(matches!(n, Ok(Ok(0)) | Ok(Err(_))), "the oldest connection stays open: {n:?}");
    let mut stranger = crate::remote::Phone::new(port);
    let (st, v) = stranger.get("/api/me").await;
    assert_eq!(st, StatusCode::UNAUTHORIZED, "answered during the flood: {v}");
    // Those still open are closed once their head is late (the listener's HEAD budget).
    let t = Instant::now();
    let newest = flood.last_mut().unwrap();
    let n = tokio::time::timeout(assent_remote::serve::HEAD * 2, newest.read(&mut buf)).await;
    assert!(matches!(n, Ok(Ok(_)) | Ok(Err(_))), "a silent connection is still open after {:?}", t.elapsed());
    drop(flood);
    // And the front door serves again once they are gone.
    let mut again = crate::remote::Phone::new(port);
    let t = Instant::now();
    loop {
        let (st, _) = again.get("/api/me").await;
        if st == StatusCode::UNAUTHORIZED {
            break;
        }
        assert!(t.elapsed() < Duration::from_secs(5), "the listener does not serve again: {st}");
        tokio::task::yield_now().await;
    }
}

/// The phone's list is rows, small whatever was proposed: 100 pending proposals, three of them
/// 3.8 MB and the rest 256 KB, list in under 100 KB; a row says the payload's size and names
/// the hash of the whole of it, the proposal opened is whole, and a decision from the row's
/// hash decides it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_phones_list_stays_small_whatever_was_proposed() {
    let (s, mut phone) = paired().await;
    let mut ids = Vec::new();
    for i in 0..100 {
        let size = if i < 3 { 3_800_000 } else { 256 * 1024 };
        let command = format!("echo {i} && cat <<'EOF'\n{}\nEOF", "y".repeat(size));
        ids.push(s.propose_tool(&command).await);
    }
    let t = Instant::now();
    let (st, list) = phone.get("/api/proposals?status=pending&limit=100").await;
    let took = t.elapsed();
    assert_eq!(st, StatusCode::OK);
    let bytes = list.to_string().len();
    // Made from the gists stored with each (no payload read): 36 MB of payloads listed at once.
    println!("the phone's list of 100 pending proposals: {bytes} bytes in {took:.2?}");
    assert!(bytes < 100_000, "{bytes} bytes");
    let items = list["items"].as_array().unwrap();
    assert_eq!(items.len(), 100);
    let big = items.iter().find(|r| r["id"] == ids[0].as_str()).unwrap();
    assert!(big["payload_bytes"].as_u64().unwrap() > 3_800_000, "{big}");
    assert_eq!(big["light"], true);
    let command = big["payload"]["input"]["command"].as_str().unwrap();
    assert!(command.starts_with("echo 0 && cat") && command.ends_with("more bytes]"), "{command}");
    // Asked for alone as a row (the page does, when it hears of a change): as light, the same.
    let (st, one) = phone.get(&format!("/api/proposals/{}?view=row", ids[0])).await;
    assert_eq!(st, StatusCode::OK);
    assert_eq!(one["proposal"], *big);
    assert!(one.to_string().len() < 10_000, "{one}");
    let (st, bad) = phone.get(&format!("/api/proposals/{}?view=all", ids[0])).await;
    assert_eq!((st, bad["error"]["code"].as_str()), (StatusCode::BAD_REQUEST, Some("invalid_query")));
    // Opened, it is whole, with the same hash.
    let (st, whole) = phone.get(&format!("/api/proposals/{}", ids[0])).await;
    assert_eq!(st, StatusCode::OK);
    assert!(whole["proposal"]["payload"]["input"]["command"].as_str().unwrap().len() > 3_800_000);
    assert_eq!(whole["proposal"]["payload_sha256"], big["payload_sha256"]);
    // A decision names the row's hash: the whole payload's.
    let item = serde_json::json!({"id": ids[0], "payload_sha256": big["payload_sha256"]});
    let (st, v) =
        phone.decide(serde_json::json!({"items": [item], "outcome": "reject", "reason": "too big to read"})).await;
    assert_eq!(st, StatusCode::OK, "{v}");
}

/// A slowloris that keeps 600 slow heads open (each reopened when it is closed) keeps nobody
/// out: throughout, the owner's paired phone logs in again, reads and decides, each within
/// seconds, and a stranger's fresh request is answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slowloris_keeps_the_owner_in() {
    let (s, mut phone) = paired().await;
    let port: u16 = phone.origin.rsplit(':').next().unwrap().parse().unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut loris = Vec::new();
    for _ in 0..6 {
        let stop = stop.clone();
        loris.push(tokio::spawn(async move {
            let mut open: Vec<TcpStream> = Vec::new();
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                // Keeps 100 open: the closed ones are found and reopened.
                let mut alive = Vec::new();
                for mut c in open.drain(..) {
                    let mut b = [0u8; 1];
                    match tokio::time::timeout(Duration::from_millis(1), c.read(&mut b)).await {
                        Ok(_) => {}
                        Err(_) => alive.push(c),
                    }
                }
                open = alive;
                while open.len() < 100 {
                    let Ok(mut c) = TcpStream::connect(("127.0.0.1", port)).await else { break };
                    let _ = c.write_all(b"GET /api/me HTTP/1.1\r\nHost: localhost\r\nX-Slow: ").await;
                    open.push(c);
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }));
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    for round in 0..5 {
        let t = Instant::now();
        phone.cookie = None;
        let (st, v) = phone.login().await;
        assert_eq!(st, StatusCode::OK, "round {round}: the owner logs in during the slowloris: {v}");
        let id = s.propose_tool(&format!("terraform destroy -target={round}")).await;
        let item = phone.item(&id).await;
        let (st, v) = phone.decide(serde_json::json!({"items": [item], "outcome": "reject", "reason": "no"})).await;
        assert_eq!(st, StatusCode::OK, "round {round}: {v}");
        println!("round {round}: logged in and decided in {:?} during the slowloris", t.elapsed());
        assert!(t.elapsed() < Duration::from_secs(5), "round {round} took {:?}", t.elapsed());
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for l in loris {
        let _ = l.await;
    }
}
