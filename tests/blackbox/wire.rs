//! HTTP/1.1 as written on the socket: several requests on one connection, pipelined requests,
//! `Connection: close`, chunked and large bodies, heads that do not parse, and a client that hangs up on its long-poll.
//! Small whole requests are read by the server itself and the rest by hyper: each kind here
//! must be answered alike.

use crate::harness::Server;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

async fn connect(s: &Server) -> TcpStream {
    TcpStream::connect(s.url.trim_start_matches("http://")).await.unwrap()
}

fn host(s: &Server) -> String {
    s.url.trim_start_matches("http://").to_string()
}

/// Reads one response: its status, headers (lowercased names) and body (by content-length).
async fn response(sock: &mut TcpStream, buf: &mut Vec<u8>) -> (u16, Vec<(String, String)>, Value) {
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let mut chunk = [0u8; 4096];
        let n = tokio::time::timeout(Duration::from_secs(10), sock.read(&mut chunk)).await.unwrap().unwrap();
        assert!(n > 0, "closed before a whole head: {}", String::from_utf8_lossy(buf));
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8(buf[..head_end].to_vec()).unwrap();
    let mut lines = head.split("\r\n");
    let status: u16 = lines.next().unwrap().split(' ').nth(1).unwrap().parse().unwrap();
    let headers: Vec<(String, String)> = lines
        .filter(|l| !l.is_empty())
        .map(|l| {
            let (k, v) = l.split_once(':').unwrap();
            (k.trim().to_ascii_lowercase(), v.trim().to_string())
        })
        .collect();
    let len: usize = headers.iter().find(|(k, _)| k == "content-length").map(|(_, v)| v.parse().unwrap()).unwrap_or(0);
    while buf.len() < head_end + len {
        let mut chunk = [0u8; 65536];
        let n = tokio::time::timeout(Duration::from_secs(10), sock.read(&mut chunk)).await.unwrap().unwrap();
        assert!(n > 0, "closed inside a body");
        buf.extend_from_slice(&chunk[..n]);
    }
    let body = serde_json::from_slice(&buf[head_end..head_end + len]).unwrap_or(Value::Null);
    buf.drain(..head_end + len);
    (status, headers, body)
}

/// Writes `request` on `sock` and reads the response to it.
async fn exchange(sock: &mut TcpStream, buf: &mut Vec<u8>, request: &str) -> (u16, Vec<(String, String)>, Value) {
    sock.write_all(request.as_bytes()).await.unwrap();
    response(sock, buf).await
}

fn has(headers: &[(String, String)], name: &str, value: &str) -> bool {
    headers.iter().any(|(k, v)| k == name && v.eq_ignore_ascii_case(value))
}

fn get(s: &Server, path: &str, token: &str) -> String {
    format!("GET /v1{path} HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {token}\r\n\r\n", host(s))
}

fn post(s: &Server, path: &str, token: &str, body: &str) -> String {
    format!(
        "POST /v1{path} HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        host(s),
        body.len()
    )
}

#[tokio::test]
async fn one_connection_carries_requests_of_every_shape_in_turn() {
    let s = Server::start().await;
    let mut sock = connect(&s).await;
    let mut buf = Vec::new();
    let agent = s.agent.clone();
    let proposal = json!({"kind": "tool.call", "payload": {"tool": "Bash", "input": {"command": "ls"}}}).to_string();

    // A small POST, then a GET on the same connection.
    let (st, h, p) = exchange(&mut sock, &mut buf, &post(&s, "/proposals", &agent, &proposal)).await;
    assert_eq!(st, 201, "{p}");
    assert!(has(&h, "content-type", "application/json") && has(&h, "cache-control", "no-store"), "{h:?}");
    assert!(h.iter().any(|(k, _)| k == "date"), "{h:?}");
    let id = p["id"].as_str().unwrap().to_string();
    let (st, _, p) = exchange(&mut sock, &mut buf, &get(&s, &format!("/proposals/{id}"), &agent)).await;
    assert_eq!((st, p["id"].as_str()), (200, Some(id.as_str())));

    // The body sent apart from its head, in two writes.
    let whole = post(&s, "/proposals", &agent, &proposal);
    let (a, b) = whole.split_at(whole.len() - 10);
    sock.write_all(a.as_bytes()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    sock.write_all(b.as_bytes()).await.unwrap();
    assert_eq!(response(&mut sock, &mut buf).await.0, 201);

    // Two requests in one write (pipelined): both answered, in order.
    let two = format!("{}{}", get(&s, "/health", &agent), get(&s, &format!("/proposals/{id}"), &agent));
    sock.write_all(two.as_bytes()).await.unwrap();
    assert_eq!(response(&mut sock, &mut buf).await.0, 200);
    let (st, _, p) = response(&mut sock, &mut buf).await;
    assert_eq!((st, p["id"].as_str()), (200, Some(id.as_str())));

    // A chunked body, then a request after it.
    let chunked = format!(
        "POST /v1/proposals HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {agent}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{proposal}\r\n0\r\n\r\n",
        host(&s),
        proposal.len()
    );
    assert_eq!(exchange(&mut sock, &mut buf, &chunked).await.0, 201);
    assert_eq!(exchange(&mut sock, &mut buf, &get(&s, "/health", &agent)).await.0, 200);
}

#[tokio::test]
async fn close_large_bodies_and_bad_heads_are_answered_as_before() {
    let s = Server::start().await;
    let agent = s.agent.clone();

    // `Connection: close`: answered, said so, and closed.
    let mut sock = connect(&s).await;
    let req = format!("GET /v1/health HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n", host(&s));
    sock.write_all(req.as_bytes()).await.unwrap();
    let mut buf = Vec::new();
    let (st, h, _) = response(&mut sock, &mut buf).await;
    assert!(st == 200 && has(&h, "connection", "close"), "{st} {h:?}");
    let mut rest = Vec::new();
    let n = tokio::time::timeout(Duration::from_secs(5), sock.read_to_end(&mut rest)).await.unwrap().unwrap();
    assert_eq!(n, 0);

    // A body larger than what is read here is read by hyper (the refusal of one over the
    // limit is in errors.rs).
    let large = json!({"kind": "tool.call", "payload": {"tool": "Bash", "input": {"command": "y".repeat(200_000)}}});
    let (st, v) = s.req(Method::POST, "/proposals", Some(&agent), Some(large)).await;
    assert_eq!(st, StatusCode::CREATED, "{}", v["error"]);

    // A request line that is not HTTP gets hyper's 400, and a bad Content-Length too.
    for bad in [
        "GARBAGE\r\n\r\n".to_string(),
        format!("POST /v1/proposals HTTP/1.1\r\nHost: {}\r\nContent-Length: 5, 6\r\n\r\nhello", host(&s)),
    ] {
        let mut sock = connect(&s).await;
        sock.write_all(bad.as_bytes()).await.unwrap();
        let mut out = Vec::new();
        let _ = tokio::time::timeout(Duration::from_secs(5), sock.read_to_end(&mut out)).await;
        let out = String::from_utf8_lossy(&out);
        assert!(out.starts_with("HTTP/1.1 400"), "{bad:?} -> {out}");
    }
}

#[tokio::test]
async fn a_client_that_hangs_up_ends_its_wait() {
    // One open wait per agent: the second is refused while the first is open.
    let s = Server::start_with("max_waits_per_agent = 1\n", &[]).await;
    let agent = s.agent.clone();
    let id = s.propose_tool("ls").await;
    let mut first = connect(&s).await;
    first.write_all(get(&s, &format!("/proposals/{id}?wait=60"), &agent).as_bytes()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (st, v) = s.req(Method::GET, &format!("/proposals/{id}?wait=1"), Some(&agent), None).await;
    assert_eq!((st, v["error"]["code"].as_str()), (StatusCode::TOO_MANY_REQUESTS, Some("too_many_waits")), "{v}");
    // It hangs up: its wait ends with it, and the agent may wait again.
    drop(first);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (st, v) = s.req(Method::GET, &format!("/proposals/{id}?wait=1"), Some(&agent), None).await;
    assert_eq!((st, v["status"].as_str()), (StatusCode::OK, Some("pending")), "{v}");
    // A wait that is answered leaves its connection ready for the next request.
    let mut sock = connect(&s).await;
    sock.write_all(get(&s, &format!("/proposals/{id}?wait=30"), &agent).as_bytes()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let (st, _) = s.decide(&id, json!({"outcome": "approve"})).await;
    assert_eq!(st, StatusCode::OK);
    let mut buf = Vec::new();
    let (st, _, p) = response(&mut sock, &mut buf).await;
    assert_eq!((st, p["status"].as_str()), (200, Some("approved")));
    assert_eq!(exchange(&mut sock, &mut buf, &get(&s, "/health", &agent)).await.0, 200);
}

#[tokio::test]
async fn a_request_target_that_is_a_full_url_is_refused() {
    let s = Server::start().await;
    let agent = s.agent.clone();
    let body =
        json!({"kind": "tool.call", "payload": {"tool": "t", "input": {"pad": "x".repeat(100_000)}}}).to_string();
    for target in ["http://evil.example/v1/health", "http://127.0.0.1/v1/proposals", "*"] {
        let mut sock = connect(&s).await;
        let mut buf = Vec::new();
        // A small request (read by the server itself), then a large one (read by hyper).
        let small = format!("GET {target} HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {agent}\r\n\r\n", host(&s));
        let large = format!(
            "POST {target} HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {agent}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            host(&s),
            body.len()
        );
        for req in [small, large] {
            let (st, _, v) = exchange(&mut sock, &mut buf, &req).await;
            assert_eq!(st, 400, "{target}: {v}");
            assert_eq!(v["error"]["code"], "invalid_target", "{target}: {v}");
        }
    }
    let (_, page) = s.req(Method::GET, "/proposals", Some(&s.owner), None).await;
    assert_eq!(page["items"], json!([]), "nothing was filed");
}
