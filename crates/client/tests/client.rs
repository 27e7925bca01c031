//! The client against a small server on loopback that answers like Assent's API: proving the
//! server before a token is sent, one wait loop, and the gate's withdraw on every way out.

#![allow(missing_docs, clippy::unwrap_used)]

use assent_client::{Client, Endpoint, Error, Gate, Gated, Waited, gate};
use assent_core::verdict::Verdict;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::routing::{get, post};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const KEY: [u8; 32] = [9; 32];

#[derive(Default)]
struct Seen {
    /// Every Authorization header received, with what it came with.
    tokens: Vec<(String, String)>,
    withdrawn: Vec<String>,
    /// The status a read answers with (pending until set).
    decide_as: Option<&'static str>,
    /// Whether the hello answers with a wrong proof.
    impostor: bool,
}

type S = Arc<Mutex<Seen>>;

fn proposal(id: &str, status: &str) -> Value {
    let at = "2026-01-01T00:00:00.000Z";
    let settled = status != "pending";
    let mut p = json!({"id": id, "kind": "tool.call", "agent": "a", "title": null, "summary": null,
        "payload": {"tool": "Bash", "input": {"command": "ls"}},
        "preview": {"type": "tool.call", "tool": "Bash", "input": {"command": "ls"}, "input_text": "{}", "invisible_characters": []},
        "base": null, "session_id": null, "group_id": null, "supersedes": null, "status": status, "settled": settled,
        "created_at": at, "updated_at": at, "expires_at": at, "decision": null, "approved_payload": null,
        "result": null, "error": null, "pruned_at": null});
    if status == "approved" {
        p["decision"] = json!({"outcome": "approve", "by": "owner", "channel": "app", "at": at});
        p["approved_payload"] = p["payload"].clone();
    }
    p
}

fn note(s: &S, what: &str, h: &HeaderMap) {
    if let Some(t) = h.get("authorization") {
        s.lock().unwrap().tokens.push((what.to_string(), t.to_str().unwrap_or("").to_string()));
    }
}

async fn hello(State(s): State<S>, Query(q): Query<HashMap<String, String>>) -> axum::Json<Value> {
    let challenge = q.get("challenge").cloned().unwrap_or_default();
    let key: Vec<u8> = if s.lock().unwrap().impostor { b"not the key".to_vec() } else { KEY.to_vec() };
    axum::Json(json!({"proof": assent_core::secret::server_proof(&key, &challenge)}))
}

async fn create(State(s): State<S>, h: HeaderMap) -> (axum::http::StatusCode, axum::Json<Value>) {
    note(&s, "propose", &h);
    (axum::http::StatusCode::CREATED, axum::Json(proposal("p_1", "pending")))
}

async fn read(
    State(s): State<S>,
    Path(id): Path<String>,
    Query(q): Query<HashMap<String, String>>,
    h: HeaderMap,
) -> axum::Json<Value> {
    note(&s, "get", &h);
    let status = s.lock().unwrap().decide_as.unwrap_or("pending");
    if status == "pending" && q.contains_key("wait") {
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    axum::Json(proposal(&id, status))
}

async fn withdraw(State(s): State<S>, Path(id): Path<String>, h: HeaderMap) -> axum::Json<Value> {
    note(&s, "withdraw", &h);
    s.lock().unwrap().withdrawn.push(id.clone());
    axum::Json(proposal(&id, "withdrawn"))
}

async fn server(seen: S) -> String {
    let app = Router::new()
        .route("/v1/hello", get(hello))
        .route("/v1/proposals", post(create))
        .route("/v1/proposals/{id}", get(read).delete(withdraw))
        .with_state(seen);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    url
}

fn client(url: &str, key: Option<Vec<u8>>) -> Client {
    let ep = Endpoint { url: url.to_string(), proof_key: key };
    Client::new(Arc::new(move || Some(ep.clone())), Arc::new(|| Some("agent-token".into())), "test").unwrap()
}

fn call() -> Gate {
    Gate {
        tool: "Bash".into(),
        input: json!({"command": "ls"}),
        cwd: None,
        client: None,
        permission_mode: None,
        session_id: None,
        idempotency_key: Some("k1".into()),
        expires_in: 600,
        wait: Duration::from_secs(1),
        carry_receipt: false,
        confinable: false,
    }
}

#[tokio::test]
async fn a_listener_that_cannot_prove_it_is_assent_never_sees_a_token() {
    let seen = S::default();
    seen.lock().unwrap().impostor = true;
    let url = server(seen.clone()).await;
    let e = client(&url, Some(KEY.to_vec())).propose(&json!({}), None).await.unwrap_err();
    assert!(matches!(e, Error::Impostor { .. }), "{e:?}");
    // No key to check against is no proof either.
    let e = client(&url, None).get("p_1").await.unwrap_err();
    assert!(matches!(e, Error::Impostor { .. }), "{e:?}");
    assert!(seen.lock().unwrap().tokens.is_empty(), "a token was sent: {:?}", seen.lock().unwrap().tokens);
    // The real server is proven and then hears the token.
    seen.lock().unwrap().impostor = false;
    let p = client(&url, Some(KEY.to_vec())).propose(&json!({}), None).await.unwrap();
    assert_eq!(p.id, "p_1");
    assert_eq!(seen.lock().unwrap().tokens, vec![("propose".to_string(), "Bearer agent-token".to_string())]);
}

#[tokio::test]
async fn nothing_listening_is_not_running() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let e = client(&url, Some(KEY.to_vec())).get("p_1").await.unwrap_err();
    assert!(e.is_not_running(), "{e:?}");
}

#[tokio::test]
async fn a_wait_ends_at_its_deadline_with_the_proposal_as_last_seen() {
    let url = server(S::default()).await;
    let c = client(&url, Some(KEY.to_vec()));
    let p = c.get("p_1").await.unwrap();
    let t = Instant::now();
    match c.wait_settled(p, Some(Instant::now() + Duration::from_millis(1500)), std::future::pending()).await.unwrap() {
        Waited::TimedOut(p) => assert!(!p.settled),
        other => panic!("{other:?}"),
    }
    assert!(t.elapsed() >= Duration::from_millis(1500), "{:?}", t.elapsed());
}

#[tokio::test]
async fn the_gate_answers_with_the_decision() {
    let seen = S::default();
    seen.lock().unwrap().decide_as = Some("approved");
    let url = server(seen.clone()).await;
    match gate(&client(&url, Some(KEY.to_vec())), call(), std::future::pending()).await {
        Gated::Decided { id, verdict, .. } => assert_eq!((id.as_str(), verdict), ("p_1", Verdict::Allow(None))),
        other => panic!("{other:?}"),
    }
    assert!(seen.lock().unwrap().withdrawn.is_empty());
}

#[tokio::test]
async fn the_gate_withdraws_what_nobody_waits_for_any_more() {
    let seen = S::default();
    let url = server(seen.clone()).await;
    let c = client(&url, Some(KEY.to_vec()));
    assert!(matches!(gate(&c, call(), std::future::pending()).await, Gated::TimedOut { .. }));
    let stop = tokio::time::sleep(Duration::from_millis(100));
    let mut long = call();
    long.wait = Duration::from_secs(60);
    assert!(matches!(gate(&c, long, stop).await, Gated::Stopped { .. }));
    assert_eq!(seen.lock().unwrap().withdrawn, vec!["p_1".to_string(), "p_1".to_string()]);
}

#[tokio::test]
async fn the_gate_files_nothing_when_assent_is_not_running() {
    let c = Client::new(Arc::new(|| None), Arc::new(|| Some("t".into())), "test").unwrap();
    assert!(matches!(gate(&c, call(), std::future::pending()).await, Gated::NotRunning(_)));
}
