//! The remote listener under a flood: half-open and slow connections hold a bounded number of
//! its slots for a bounded while, connections past its cap are closed at once, and the agent
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
    // listener's cap.
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
    // Past the cap, a connection is closed at once: the last ones read the end straight away.
    let mut last = flood.pop().unwrap();
    let mut buf = [0u8; 64];
    let n = tokio::time::timeout(Duration::from_secs(2), last.read(&mut buf)).await;
    assert!(matches!(n, Ok(Ok(0)) | Ok(Err(_))), "a connection past the cap stays open: {n:?}");
    // Those within it are closed once their head is late (the listener's HEAD budget).
    let t = Instant::now();
    let first = &mut flood[1];
    let n = tokio::time::timeout(assent_remote::serve::HEAD * 2, first.read(&mut buf)).await;
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
