//! Durability: what was acknowledged survives `kill -9`, and state carries across restarts.

use crate::harness::Server;
use reqwest::{Method, StatusCode};
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

#[tokio::test]
async fn acknowledged_proposals_survive_kill_9() {
    let mut s = Server::start().await;
    let stop = Arc::new(AtomicBool::new(false));
    let count = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for w in 0..8 {
        let (http, url, tok, stop, count) =
            (s.http.clone(), s.url.clone(), s.agent.clone(), stop.clone(), count.clone());
        tasks.push(tokio::spawn(async move {
            let mut acked = Vec::new();
            let mut i = 0;
            while !stop.load(Ordering::Relaxed) {
                let body = json!({"kind": "tool.call", "payload": {"tool": "Bash", "input": {"w": w, "i": i}}});
                match http.post(format!("{url}/v1/proposals")).bearer_auth(&tok).json(&body).send().await {
                    Ok(r) if r.status() == StatusCode::CREATED => {
                        if let Ok(v) = r.json::<serde_json::Value>().await {
                            acked.push(v["id"].as_str().unwrap_or_default().to_string());
                            count.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    _ => break,
                }
                i += 1;
            }
            acked
        }));
    }
    // Killed in full flow: once 100 were acknowledged, with the eight writers still writing.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while count.load(Ordering::Relaxed) < 100 {
        assert!(std::time::Instant::now() < deadline, "the writers stalled: {}", s.stderr());
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    s.kill9();
    stop.store(true, Ordering::Relaxed);
    let mut acked = Vec::new();
    for t in tasks {
        acked.extend(t.await.unwrap());
    }
    assert!(acked.len() > 20, "the load ran: {}", acked.len());
    s.spawn();
    for id in &acked {
        let (st, p) = s.get(id, &s.agent).await;
        assert_eq!(st, StatusCode::OK, "acknowledged {id} was lost");
        assert_eq!(p["status"], "pending");
    }
}

#[tokio::test]
async fn decisions_audit_tokens_and_agents_carry_across_restarts() {
    let mut s = Server::start().await;
    let a = s.propose_tool("a").await;
    let b = s.propose_tool("b").await;
    s.decide(&a, json!({"outcome": "reject", "reason": "no"})).await;
    let (_, added) = s.req(Method::POST, "/agents", Some(&s.owner), Some(json!({"name": "kept"}))).await;
    let kept = added["token"].as_str().unwrap().to_string();
    let agent_before = s.agent.clone();
    s.stop();
    assert!(!s.home().join("server.json").exists(), "a clean exit removes server.json");
    s.spawn();
    assert_eq!(s.agent, agent_before, "the default agent keeps its token");
    assert_eq!(s.get(&a, &s.agent).await.1["decision"]["reason"], "no");
    assert_eq!(s.get(&b, &s.agent).await.1["status"], "pending");
    let (st, _) = s.req(Method::GET, "/proposals", Some(&kept), None).await;
    assert_eq!(st, StatusCode::OK);
    let (_, audit) = s.req(Method::GET, "/audit", Some(&s.owner), None).await;
    assert_eq!(audit["items"].as_array().unwrap().len(), 3);
    // The decision still works on the pending one after the restart.
    let (st, _) = s.decide(&b, json!({"outcome": "approve"})).await;
    assert_eq!(st, StatusCode::OK);
}

#[tokio::test]
async fn proposals_that_expired_while_the_server_was_down_expire_at_start() {
    let mut s = Server::start().await;
    let p = s.propose(json!({"kind": "tool.call", "payload": {"tool": "x"}, "expires_in": 1})).await;
    s.kill9();
    // Back 1.5 s later on the server's clock.
    s.env.retain(|(k, _)| k != "ASSENT_TEST_CLOCK");
    s.env.push(("ASSENT_TEST_CLOCK".into(), "1500".into()));
    s.spawn();
    let id = p["id"].as_str().unwrap();
    let (_, w) = s.req(Method::GET, &format!("/proposals/{id}?wait=5"), Some(&s.agent), None).await;
    assert_eq!(w["status"], "expired");
}
