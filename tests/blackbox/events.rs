//! The event stream.

use crate::harness::Server;
use futures_util::StreamExt;
use reqwest::Method;
use serde_json::json;
use std::time::Duration;

async fn collect(s: &Server, token: &str, n: usize) -> tokio::task::JoinHandle<Vec<String>> {
    let res = s.http.get(format!("{}/v1/events", s.url)).bearer_auth(token).send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["content-type"], "text/event-stream");
    tokio::spawn(async move {
        let mut stream = res.bytes_stream();
        let mut buf = String::new();
        let mut events = Vec::new();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while events.len() < n {
            let chunk = match tokio::time::timeout_at(deadline, stream.next()).await {
                Ok(Some(Ok(c))) => c,
                _ => break,
            };
            buf.push_str(&String::from_utf8_lossy(&chunk));
            while let Some(end) = buf.find("\n\n") {
                let ev: String = buf[..end].to_string();
                buf.drain(..end + 2);
                if let Some(data) = ev.lines().find_map(|l| l.strip_prefix("data: ")) {
                    events.push(data.to_string());
                }
            }
        }
        events
    })
}

#[tokio::test]
async fn changes_stream_as_server_sent_events_scoped_to_the_agent() {
    let s = Server::start().await;
    let (_, other) = s.req(Method::POST, "/agents", Some(&s.owner), Some(json!({"name": "other"}))).await;
    let other = other["token"].as_str().unwrap().to_string();
    let owner_events = collect(&s, &s.owner, 4).await;
    let agent_events = collect(&s, &s.agent, 2).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let id = s.propose_tool("ls").await;
    s.req(
        Method::POST,
        "/proposals",
        Some(&other),
        Some(json!({"kind": "tool.call", "payload": {"tool": "secret-tool"}})),
    )
    .await;
    s.decide(&id, json!({"outcome": "approve"})).await;
    let (_, p) = s.req(Method::GET, "/proposals?agent=other", Some(&s.owner), None).await;
    let other_id = p["items"][0]["id"].as_str().unwrap().to_string();
    s.decide(&other_id, json!({"outcome": "reject"})).await;

    let owner_events = owner_events.await.unwrap();
    assert_eq!(owner_events.len(), 4, "{owner_events:?}");
    let agent_events = agent_events.await.unwrap();
    assert_eq!(agent_events.len(), 2, "{agent_events:?}");
    let first: serde_json::Value = serde_json::from_str(&agent_events[0]).unwrap();
    let second: serde_json::Value = serde_json::from_str(&agent_events[1]).unwrap();
    assert_eq!(first["type"], "proposal.created");
    assert_eq!(first["proposal"]["id"], id.as_str());
    assert_eq!(second["type"], "proposal.updated");
    assert_eq!(second["from"], "pending");
    assert_eq!(second["proposal"]["status"], "approved");
    assert!(agent_events.iter().all(|e| !e.contains(&other_id)), "another agent's events leaked");
}
