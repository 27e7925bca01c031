//! For agents that gather their writes before asking: a batch of proposals in one call (each
//! item on its own, one group, idempotent retries), a session's proposals listed and counted,
//! and a decision batch counted by outcome.

use crate::harness::Server;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

fn tool(command: &str) -> Value {
    json!({"kind": "tool.call", "payload": {"tool": "Bash", "input": {"command": command}}, "session_id": "task-9"})
}

async fn batch(s: &Server, body: Value, key: Option<&str>) -> (StatusCode, Value) {
    let mut req = s.http.post(format!("{}/v1/proposals/batch", s.url)).bearer_auth(&s.agent).json(&body);
    if let Some(k) = key {
        req = req.header("idempotency-key", k);
    }
    let res = req.send().await.unwrap();
    (res.status(), res.json().await.unwrap())
}

#[tokio::test]
async fn a_batch_files_each_item_on_its_own_in_one_group_and_a_retry_files_nothing_twice() {
    let s = Server::start().await;
    let items = json!([tool("make a"), {"kind": "no.such.kind", "payload": {}}, tool("make b"),
        {"kind": "tool.call", "payload": {"tool": "x", "input": {}}, "group_id": "another"}]);
    let (st, r) = batch(&s, json!({"items": items, "group_id": "release-7"}), Some("batch-1")).await;
    assert_eq!(st, StatusCode::OK, "{r}");
    assert_eq!(
        (r["group_id"].as_str(), r["filed"].as_u64(), r["refused"].as_u64()),
        (Some("release-7"), Some(2), Some(2))
    );
    let items = r["items"].as_array().unwrap();
    assert_eq!(items[1]["error"]["code"], "unknown_kind");
    assert_eq!(items[3]["error"]["code"], "invalid_field", "an item cannot leave the batch's group");
    for i in [0, 2] {
        assert_eq!(items[i]["index"], i);
        assert_eq!(items[i]["proposal"]["group_id"], "release-7");
        assert_eq!(items[i]["proposal"]["status"], "pending");
    }
    let ids: Vec<&str> = [0, 2].iter().map(|i| items[*i]["proposal"]["id"].as_str().unwrap()).collect();

    // The same batch again under the same key: the same proposals, nothing filed twice.
    let (_, again) =
        batch(&s, json!({"items": [tool("make a"), {"kind": "no.such.kind", "payload": {}}, tool("make b")], "group_id": "release-7"}), Some("batch-1")).await;
    assert_eq!(again["items"][0]["proposal"]["id"].as_str(), Some(ids[0]));
    assert_eq!(again["items"][2]["proposal"]["id"].as_str(), Some(ids[1]));
    let (_, page) = s.req(Method::GET, "/proposals", Some(&s.owner.clone()), None).await;
    assert_eq!(page["items"].as_array().unwrap().len(), 2);

    // No group given: a new one, the same for every item.
    let (_, fresh) = batch(&s, json!({"items": [tool("x"), tool("y")]}), None).await;
    let g = fresh["group_id"].as_str().unwrap();
    assert!(g.starts_with("g_"));
    assert_eq!(fresh["items"][1]["proposal"]["group_id"], g);

    // Bad batches are refused whole, with nothing filed; the owner does not propose.
    for bad in [
        json!({"items": []}),
        json!({"items": vec![tool("z"); 101]}),
        json!({"items": "x"}),
        json!({"items": [tool("z")], "extra": 1}),
        json!([tool("z")]),
        json!({"items": [tool("z")], "group_id": 7}),
    ] {
        let (st, e) = batch(&s, bad.clone(), None).await;
        assert_eq!(st, StatusCode::UNPROCESSABLE_ENTITY, "{bad}: {e}");
        assert!(e["error"]["code"].is_string());
    }
    let (st, _) =
        s.req(Method::POST, "/proposals/batch", Some(&s.owner.clone()), Some(json!({"items": [tool("z")]}))).await;
    assert_eq!(st, StatusCode::FORBIDDEN);
    let (_, page) = s.req(Method::GET, "/proposals", Some(&s.owner.clone()), None).await;
    assert_eq!(page["items"].as_array().unwrap().len(), 4);

    // Decided as a batch: counted by outcome.
    let (st, d) = s
        .req(
            Method::POST,
            "/decisions",
            Some(&s.owner.clone()),
            Some(json!({"items": [{"id": ids[0], "outcome": "approve"}, {"id": ids[1], "outcome": "reject", "reason": "no"},
                {"id": ids[1], "outcome": "approve"}]})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{d}");
    assert_eq!(
        (
            d["decided"].as_u64(),
            d["approved"].as_u64(),
            d["rejected"].as_u64(),
            d["refined"].as_u64(),
            d["skipped"].as_u64()
        ),
        (Some(2), Some(1), Some(1), Some(0), Some(1)),
        "{d}"
    );
}

/// A batch's Idempotency-Key is checked whole, before anything is filed: one the document's
/// pattern refuses (`^[!-~]{1,190}$`: a space, 191 characters) is a 422 and files nothing, where
/// it used to be refused item by item (answered 200) or cut to 190 characters (two keys alike in
/// their first 190 were one).
#[tokio::test]
async fn a_batch_key_the_document_refuses_is_a_422_and_files_nothing() {
    let s = Server::start().await;
    let long = "k".repeat(191);
    for key in ["a b", long.as_str()] {
        let (st, r) = batch(&s, json!({"items": [tool("make x")]}), Some(key)).await;
        assert_eq!(
            (st, &r["error"]["code"]),
            (StatusCode::UNPROCESSABLE_ENTITY, &json!("invalid_idempotency_key")),
            "{r}"
        );
    }
    let (_, page) = s.req(Method::GET, "/proposals", Some(&s.owner), None).await;
    assert_eq!(page["items"].as_array().map(Vec::len), Some(0), "nothing filed: {page}");
    let (st, r) = batch(&s, json!({"items": [tool("make x")]}), Some(&long[..190])).await;
    assert_eq!((st, &r["filed"]), (StatusCode::OK, &json!(1)), "{r}");
}

#[tokio::test]
async fn a_session_is_listed_and_counted_for_its_agent_and_for_the_owner() {
    let s = Server::start().await;
    let (_, other) = s.req(Method::POST, "/agents", Some(&s.owner.clone()), Some(json!({"name": "other"}))).await;
    let other = other["token"].as_str().unwrap().to_string();
    let mut mine = Vec::new();
    for c in ["a", "b", "c"] {
        mine.push(s.propose(tool(c)).await["id"].as_str().unwrap().to_string());
    }
    s.propose(json!({"kind": "tool.call", "payload": {"tool": "t", "input": {}}, "session_id": "task-10"})).await;
    let (st, theirs) = s.req(Method::POST, "/proposals", Some(&other), Some(tool("theirs"))).await;
    assert_eq!(st, StatusCode::CREATED, "{theirs}");
    s.decide(&mine[0], json!({"outcome": "reject", "reason": "no"})).await;

    let (st, c) = s.req(Method::GET, "/sessions/task-9", Some(&s.agent.clone()), None).await;
    assert_eq!(st, StatusCode::OK, "{c}");
    assert_eq!(
        c,
        json!({"session_id": "task-9", "pending": 2, "total": 3, "by_status": {"pending": 2, "rejected": 1}})
    );
    let (_, all) = s.req(Method::GET, "/sessions/task-9", Some(&s.owner.clone()), None).await;
    assert_eq!((all["pending"].as_u64(), all["total"].as_u64()), (Some(3), Some(4)), "the owner sees every agent's");
    let (_, none) = s.req(Method::GET, "/sessions/never", Some(&s.agent.clone()), None).await;
    assert_eq!(none, json!({"session_id": "never", "pending": 0, "total": 0, "by_status": {}}));

    let (_, page) = s.req(Method::GET, "/proposals?session_id=task-9", Some(&s.agent.clone()), None).await;
    let mut listed: Vec<String> =
        page["items"].as_array().unwrap().iter().map(|p| p["id"].as_str().unwrap().to_string()).collect();
    listed.sort();
    mine.sort();
    assert_eq!(listed, mine, "the agent lists its own session's proposals, no one else's");
    let (_, pending) =
        s.req(Method::GET, "/proposals?session_id=task-9&status=pending", Some(&s.owner.clone()), None).await;
    assert_eq!(pending["items"].as_array().unwrap().len(), 3);
}
