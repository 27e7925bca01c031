//! The remote listener's front door over real HTTP on loopback: it answers its configured
//! origin only. Each attack is written as a raw request, so that nothing a client library adds
//! or fixes hides what is sent: another Host (DNS rebinding), a change without or with another
//! Origin (a page on another site), an agent's or the owner's token, an oversized body, a path
//! the page does not serve.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use assent_remote::front::{Front, MAX_BODY};
use axum::Router;
use axum::routing::{get, post};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A listener behind the door, its origin `http://localhost:PORT`; the port.
async fn serve() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let pages = Router::new()
        .route("/", get(|| async { "the page" }))
        .route("/decide", post(|body: axum::Json<serde_json::Value>| async move { body.0.to_string() }));
    let app = Front::new(&format!("http://localhost:{port}")).unwrap().guard(pages);
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    port
}

/// Sends `head` (request line and headers, without the blank line) and `body`; the status and
/// the body of the answer.
async fn send(port: u16, head: &str, body: &[u8]) -> (u16, String) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let head = format!("{head}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", body.len());
    s.write_all(head.as_bytes()).await.unwrap();
    let _ = s.write_all(body).await;
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out).await;
    let text = String::from_utf8_lossy(&out).to_string();
    let status = text.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    (status, text.split_once("\r\n\r\n").map(|(_, b)| b.to_string()).unwrap_or_default())
}

fn code(body: &str) -> String {
    let v: serde_json::Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"));
    v["error"]["code"].as_str().unwrap_or_default().to_string()
}

#[tokio::test]
async fn only_the_configured_origin_is_answered() {
    let port = serve().await;
    let me = format!("Host: localhost:{port}");
    let origin = format!("Origin: http://localhost:{port}");
    assert_eq!(send(port, &format!("GET / HTTP/1.1\r\n{me}"), b"").await, (200, "the page".into()));
    let json = "Content-Type: application/json";
    let (status, body) =
        send(port, &format!("POST /decide HTTP/1.1\r\n{me}\r\n{origin}\r\n{json}"), b"{\"a\":1}").await;
    assert_eq!((status, body.as_str()), (200, "{\"a\":1}"));

    // Another name pointed at this port, or the bare address, or none.
    for host in [
        "Host: evil.example",
        &format!("Host: evil.example:{port}"),
        &format!("Host: 127.0.0.1:{port}"),
        "Host: localhost",
    ] {
        let (status, body) = send(port, &format!("GET / HTTP/1.1\r\n{host}"), b"").await;
        assert_eq!((status, code(&body).as_str()), (421, "wrong_host"), "{host}");
    }
    let (status, body) = send(port, &format!("GET / HTTP/1.1\r\n{me}\r\nHost: evil.example"), b"").await;
    assert_eq!((status, code(&body).as_str()), (421, "wrong_host"), "two Host headers");

    // A change from another site, or from nowhere said.
    for (extra, want) in [
        ("Origin: http://evil.example".to_string(), "wrong_origin"),
        (format!("Origin: http://localhost:{}", port + 1), "wrong_origin"),
        ("Origin: null".to_string(), "wrong_origin"),
        ("X-Nothing: 1".to_string(), "origin_required"),
    ] {
        let (status, body) = send(port, &format!("POST /decide HTTP/1.1\r\n{me}\r\n{extra}\r\n{json}"), b"{}").await;
        assert_eq!((status, code(&body).as_str()), (403, want), "{extra}");
    }

    // Tokens open nothing here, on a read or a change.
    for auth in ["Authorization: Bearer ast_agent_token", "Authorization: Basic b3duZXI6eA=="] {
        let (status, body) = send(port, &format!("GET / HTTP/1.1\r\n{me}\r\n{auth}"), b"").await;
        assert_eq!((status, code(&body).as_str()), (401, "remote_takes_no_tokens"), "{auth}");
        let (status, body) =
            send(port, &format!("POST /decide HTTP/1.1\r\n{me}\r\n{origin}\r\n{auth}\r\n{json}"), b"{}").await;
        assert_eq!((status, code(&body).as_str()), (401, "remote_takes_no_tokens"), "{auth}");
    }

    // What the page does not serve, and a body larger than it ever sends.
    for path in ["/v1/proposals", "/v1/rules", "/../etc/passwd", "/decide/x"] {
        let (status, body) = send(port, &format!("GET {path} HTTP/1.1\r\n{me}"), b"").await;
        assert!(status == 404 || status == 405, "{path}: {status}");
        if status == 404 {
            assert_eq!(code(&body), "not_found", "{path}");
        }
    }
    let big = vec![b' '; MAX_BODY + 1];
    let (status, body) = send(port, &format!("POST /decide HTTP/1.1\r\n{me}\r\n{origin}\r\n{json}"), &big).await;
    assert_eq!((status, code(&body).as_str()), (413, "body_too_large"));
}

#[test]
fn a_host_names_the_origin_with_its_port_or_its_scheme_s_own() {
    assert!(Front::new("https://phone.example.com").is_ok());
    assert!(Front::new("https://phone.example.com/x").is_err());
    assert!(Front::new("http://phone.example.com").is_err(), "plain HTTP only on localhost");
}
