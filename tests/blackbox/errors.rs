//! Every error status, with its stable code, and nothing stored is changed by bad input.

use crate::harness::Server;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

async fn raw(
    s: &Server,
    method: Method,
    path: &str,
    token: Option<&str>,
    ctype: Option<&str>,
    body: Vec<u8>,
) -> (StatusCode, Value) {
    let mut r = s.http.request(method, format!("{}/v1{path}", s.url)).body(body);
    if let Some(t) = token {
        r = r.bearer_auth(t);
    }
    if let Some(c) = ctype {
        r = r.header("content-type", c);
    }
    let res = r.send().await.unwrap();
    let st = res.status();
    (st, res.json().await.unwrap_or(Value::Null))
}

fn code(v: &Value) -> &str {
    v["error"]["code"].as_str().unwrap_or("<none>")
}

#[tokio::test]
async fn each_error_has_its_status_and_code() {
    let s =
        Server::start_with("max_pending_per_agent = 3\nmax_waits_per_agent = 1\nmax_body_bytes = 65536\n", &[]).await;
    let existing = s.propose_tool("keep me").await;
    from_400_to_415(&s, &existing).await;
    unprocessable_422(&s, &existing).await;
    too_many_429(&s).await;

    // Nothing stored was changed by any of it.
    let (_, p) = s.get(&existing, &s.agent).await;
    assert_eq!(p["status"], "approved");
    assert_eq!(p["payload"]["input"]["command"], "keep me");
}

/// 400 to 415: a body that is no JSON, a bad query, no or a wrong credential, an agent deciding,
/// what does not exist, a wrong method, a second decision (`existing` is approved here), a body
/// too large or not JSON.
async fn from_400_to_415(s: &Server, existing: &str) {
    let json_ct = Some("application/json");
    let ok_body = serde_json::to_vec(&json!({"kind": "tool.call", "payload": {"tool": "x"}})).unwrap();

    // 400 malformed JSON
    let (st, v) = raw(s, Method::POST, "/proposals", Some(&s.agent), json_ct, b"{\"kind\": ".to_vec()).await;
    assert_eq!((st, code(&v)), (StatusCode::BAD_REQUEST, "malformed_json"));
    // 400 bad query
    let (st, v) = s.req(Method::GET, &format!("/proposals/{existing}?wait=soon"), Some(&s.agent), None).await;
    assert_eq!((st, code(&v)), (StatusCode::BAD_REQUEST, "invalid_query"));
    // 401 no token, bad token, wrong scheme
    let (st, v) = raw(s, Method::POST, "/proposals", None, json_ct, ok_body.clone()).await;
    assert_eq!((st, code(&v)), (StatusCode::UNAUTHORIZED, "unauthorized"));
    let (st, v) = raw(s, Method::POST, "/proposals", Some("asnt_wrong"), json_ct, ok_body.clone()).await;
    assert_eq!((st, code(&v)), (StatusCode::UNAUTHORIZED, "unauthorized"));
    let res = s
        .http
        .get(format!("{}/v1/proposals", s.url))
        .header("authorization", format!("Basic {}", s.agent))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
    // 403 agent deciding
    let (st, v) = s
        .req(
            Method::POST,
            &format!("/proposals/{existing}/decision"),
            Some(&s.agent),
            Some(json!({"outcome": "approve"})),
        )
        .await;
    assert_eq!((st, code(&v)), (StatusCode::FORBIDDEN, "forbidden"));
    // 404 unknown proposal, unknown route
    let (st, v) = s.get("p_doesnotexist", &s.agent).await;
    assert_eq!((st, code(&v)), (StatusCode::NOT_FOUND, "not_found"));
    let (st, v) = s.req(Method::GET, "/nothing/here", Some(&s.agent), None).await;
    assert_eq!((st, code(&v)), (StatusCode::NOT_FOUND, "not_found"));
    // 405 as JSON too
    let (st, v) = s.req(Method::PUT, "/proposals", Some(&s.agent), None).await;
    assert_eq!((st, code(&v)), (StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed"));
    // 409 second decision
    s.decide(existing, json!({"outcome": "approve"})).await;
    let (st, v) = s.decide(existing, json!({"outcome": "approve"})).await;
    assert_eq!((st, code(&v)), (StatusCode::CONFLICT, "invalid_state"));
    // 413 too large
    let big = format!("{{\"kind\":\"tool.call\",\"payload\":{{\"tool\":\"x\",\"input\":\"{}\"}}}}", "a".repeat(70_000));
    let (st, v) = raw(s, Method::POST, "/proposals", Some(&s.agent), json_ct, big.into_bytes()).await;
    assert_eq!((st, code(&v)), (StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large"));
    // 415 not JSON
    let (st, v) = raw(s, Method::POST, "/proposals", Some(&s.agent), Some("text/plain"), ok_body.clone()).await;
    assert_eq!((st, code(&v)), (StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type"));
    let (st, v) = raw(s, Method::POST, "/proposals", Some(&s.agent), None, ok_body.clone()).await;
    assert_eq!((st, code(&v)), (StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type"));
}

/// 422: bodies that are JSON but not what is documented, for proposals, decisions (of
/// `existing`), batches and rule tests.
async fn unprocessable_422(s: &Server, existing: &str) {
    // 422 unknown kind, invalid payload, unknown field, agent in the body, bad expiry
    for (body, want) in [
        (json!({"kind": "shell.exec", "payload": {}}), "unknown_kind"),
        (json!({"kind": "tool.call", "payload": {"tool": ""}}), "invalid_payload"),
        (json!({"kind": "tool.call", "payload": ["x"]}), "invalid_payload"),
        (json!({"kind": "tool.call", "payload": {"tool": "x"}, "agent": "owner"}), "invalid_request"),
        (json!({"kind": "tool.call"}), "invalid_request"),
        (json!({"kind": "tool.call", "payload": {"tool": "x"}, "expires_in": 0}), "invalid_field"),
        (json!({"kind": "tool.call", "payload": {"tool": "x"}, "title": "a\u{0007}b"}), "invalid_field"),
        (json!([1, 2]), "invalid_request"),
    ] {
        let (st, v) = s.try_propose(body.clone()).await;
        assert_eq!((st, code(&v)), (StatusCode::UNPROCESSABLE_ENTITY, want), "{body}");
    }
    let (st, v) = s.decide("p_x", json!({"outcome": "maybe"})).await;
    assert_eq!((st, code(&v)), (StatusCode::UNPROCESSABLE_ENTITY, "invalid_request"));
    // An array where an object is documented is refused too, at any depth (serde alone would
    // take `[]` for an object whose fields are all optional).
    let (st, v) = s.decide("p_x", json!({"outcome": "approve", "allow_similar": []})).await;
    assert_eq!((st, code(&v)), (StatusCode::UNPROCESSABLE_ENTITY, "invalid_request"), "{v}");
    assert!(v["error"]["message"].as_str().unwrap_or_default().contains("allow_similar"), "{v}");
    let batch = json!({"items": [{"id": existing, "outcome": "approve", "allow_similar": []}]});
    let (st, v) = s.req(Method::POST, "/decisions", Some(&s.owner), Some(batch)).await;
    assert_eq!((st, code(&v)), (StatusCode::UNPROCESSABLE_ENTITY, "invalid_request"), "{v}");
    let (st, v) =
        s.req(Method::POST, "/decisions", Some(&s.owner), Some(json!({"items": [[existing, "approve"]]}))).await;
    assert_eq!((st, code(&v)), (StatusCode::UNPROCESSABLE_ENTITY, "invalid_request"), "{v}");
    let (st, v) = s.req(Method::POST, "/decisions", Some(&s.owner), Some(json!(["g", "approve"]))).await;
    assert_eq!((st, code(&v)), (StatusCode::UNPROCESSABLE_ENTITY, "invalid_request"), "{v}");
    // A `seen` that is not a SHA-256 is the request's fault, in a batch too: nothing is decided.
    let (st, v) = s.decide(existing, json!({"outcome": "approve", "seen": ""})).await;
    assert_eq!((st, code(&v)), (StatusCode::UNPROCESSABLE_ENTITY, "invalid_field"), "{v}");
    let batch = json!({"items": [{"id": existing, "outcome": "approve", "seen": "XYZ"}]});
    let (st, v) = s.req(Method::POST, "/decisions", Some(&s.owner), Some(batch)).await;
    assert_eq!((st, code(&v)), (StatusCode::UNPROCESSABLE_ENTITY, "invalid_field"), "{v}");
    let (st, v) = s.req(Method::POST, "/rules/test", Some(&s.owner), Some(json!(["tool.call", {"tool": "x"}]))).await;
    assert_eq!((st, code(&v)), (StatusCode::UNPROCESSABLE_ENTITY, "invalid_request"), "{v}");
}

/// 429: too many pending proposals (3) and too many waits (1) for an agent; deciding frees a
/// pending slot.
async fn too_many_429(s: &Server) {
    // 429 too many pending (limit 3; one is decided already)
    for i in 0..3 {
        s.propose_tool(&format!("n{i}")).await;
    }
    let (st, v) = s.try_propose(json!({"kind": "tool.call", "payload": {"tool": "x"}})).await;
    assert_eq!((st, code(&v)), (StatusCode::TOO_MANY_REQUESTS, "too_many_pending"));
    // 429 too many waits (limit 1)
    let (_, page) = s.req(Method::GET, "/proposals?status=pending", Some(&s.agent), None).await;
    let pid = page["items"][0]["id"].as_str().unwrap().to_string();
    let first = {
        let (http, url, tok, pid) = (s.http.clone(), s.url.clone(), s.agent.clone(), pid.clone());
        tokio::spawn(async move {
            http.get(format!("{url}/v1/proposals/{pid}?wait=5")).bearer_auth(tok).send().await.unwrap().status()
        })
    };
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let (st, v) = s.req(Method::GET, &format!("/proposals/{pid}?wait=5"), Some(&s.agent), None).await;
    assert_eq!((st, code(&v)), (StatusCode::TOO_MANY_REQUESTS, "too_many_waits"));
    assert_eq!(first.await.unwrap(), StatusCode::OK);
    // Deciding frees a pending slot.
    s.decide(&pid, json!({"outcome": "reject"})).await;
    s.propose_tool("room again").await;
}

#[tokio::test]
async fn hostile_input_never_panics_the_server() {
    let s = Server::start().await;
    let json_ct = Some("application/json");
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let mut bodies: Vec<Vec<u8>> = vec![
        deep.into_bytes(),
        vec![0xff, 0xfe, 0x00, 0x01],
        b"\"\\ud800\"".to_vec(),
        b"{\"kind\":\"tool.call\",\"payload\":{\"tool\":\"\\u0000\"}}".to_vec(),
        b"{\"kind\":\"tool.call\",\"payload\":{\"tool\":\"x\",\"input\":1e999999}}".to_vec(),
        format!("{{\"kind\":\"tool.call\",\"payload\":{{\"tool\":\"{}\"}}}}", "\u{202E}".repeat(1000)).into_bytes(),
        b"{\"kind\":\"tool.call\",\"payload\":{\"tool\":\"x\"},\"group_id\":12}".to_vec(),
    ];
    // Pseudo-random garbage, deterministic.
    let mut x: u64 = 0x9e3779b97f4a7c15;
    for n in [1usize, 7, 64, 1000, 4096] {
        let mut b = Vec::with_capacity(n);
        for _ in 0..n {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            b.push((x & 0xff) as u8);
        }
        bodies.push(b);
    }
    for b in bodies {
        let (st, v) = raw(&s, Method::POST, "/proposals", Some(&s.agent), json_ct, b).await;
        assert!(st.is_client_error(), "{st} {v}");
        assert!(v["error"]["code"].is_string(), "{v}");
    }
    for path in [
        "/proposals/%00",
        "/proposals/..%2F..%2Fetc",
        "/proposals/\u{202E}",
        "/proposals?limit=-1",
        "/proposals?limit=99999999999",
    ] {
        let res = s.http.get(format!("{}/v1{path}", s.url)).bearer_auth(&s.owner).send().await.unwrap();
        assert!(res.status().is_client_error() || res.status() == StatusCode::OK, "{path} {}", res.status());
    }
    let long_token = "a".repeat(100_000);
    let res = s.http.get(format!("{}/v1/proposals", s.url)).bearer_auth(long_token).send().await.unwrap();
    assert!(res.status().is_client_error());
    let (st, _) = s.req(Method::GET, "/health", None, None).await;
    assert_eq!(st, StatusCode::OK, "still alive");
    assert!(!s.stderr().contains("panicked"), "{}", s.stderr());
}
