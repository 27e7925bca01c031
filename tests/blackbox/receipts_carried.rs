//! Where a receipt goes and what names it: a proposal's audience, the `Assent-Receipt` header on
//! an approved HTTP call Assent makes, `assent propose --wait --receipt`, the Claude Code hook
//! handing it to a tool that asks for it, key rotation, and a team's key set.

use crate::harness::{Launch, Recorder, Server, cli_with_stdin, private_bus_with_keyring, stderr, stdout};
use crate::pg::shared;
use crate::receipts::{approved_call, key_set, now, receipt};
use assent_receipt::{Expect, KeySet, Refusal, ToolCall, verify};
use base64::Engine as _;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use std::time::Duration;

/// The `kid` a receipt names.
fn kid(token: &str) -> String {
    let header = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(token.split('.').next().unwrap()).unwrap();
    serde_json::from_slice::<Value>(&header).unwrap()["kid"].as_str().unwrap().to_string()
}

/// The proposal waiting in `s`'s inbox, once one is.
async fn pending(s: &Server) -> Value {
    for _ in 0..200 {
        let (_, page) = s.req(Method::GET, "/proposals?status=pending", Some(&s.owner.clone()), None).await;
        if let Some(p) = page["items"].as_array().and_then(|i| i.first()) {
            return p.clone();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("nothing became pending")
}

#[tokio::test]
async fn the_audience_is_the_receipts_and_is_checked_like_any_field() {
    let s = Server::start().await;
    let keys = key_set(&s).await;
    let body =
        |aud: Value| json!({"kind": "tool.call", "payload": {"tool": "publish", "input": {"id": 3}}, "audience": aud});
    let p = s.propose(body(json!("blog-tools"))).await;
    assert_eq!(p["audience"], "blog-tools", "the proposal says who its receipt is for");
    let id = p["id"].as_str().unwrap();
    s.decide(id, json!({"outcome": "approve"})).await;
    let token = receipt(&s, id).await;
    let mine = Expect { audience: Some("blog-tools"), approved: true, ..Default::default() };
    assert_eq!(verify(&token, &keys, &mine, now()).unwrap().aud.as_deref(), Some("blog-tools"));
    let theirs = Expect { audience: Some("mail-tools"), ..Default::default() };
    assert_eq!(verify(&token, &keys, &theirs, now()), Err(Refusal::Audience(Some("blog-tools".into()))));
    // Bad audiences are refused with a clear error, and nothing is filed.
    for (bad, status) in [
        (json!("a\u{7}b"), StatusCode::UNPROCESSABLE_ENTITY),
        (json!("x".repeat(201)), StatusCode::UNPROCESSABLE_ENTITY),
        (json!(7), StatusCode::UNPROCESSABLE_ENTITY),
        (json!(["blog"]), StatusCode::UNPROCESSABLE_ENTITY),
    ] {
        let (st, e) = s.try_propose(body(bad.clone())).await;
        assert_eq!(st, status, "{bad}: {e}");
        assert!(e["error"]["message"].as_str().unwrap().contains("audience"), "{e}");
    }
    let (_, page) = s.req(Method::GET, "/proposals", Some(&s.owner.clone()), None).await;
    assert_eq!(page["items"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn an_approved_http_call_carries_its_receipt_and_the_agent_cannot_send_one() {
    let rec = Recorder::start().await;
    let bus = private_bus_with_keyring();
    let s = Server::start_with("", &[("DBUS_SESSION_BUS_ADDRESS", &bus.address)]).await;
    let out = cli_with_stdin(s.home(), &s.env, &["credential", "add", "api", "--host", &rec.url], "tok-1");
    assert!(out.status.success(), "{}", stderr(&out));
    let call =
        json!({"method": "POST", "url": format!("{}/items", rec.url), "json": {"name": "x"}, "credential": "api"});
    // The agent cannot put a receipt of its own on the request.
    let mut forged = call.clone();
    forged["headers"] = json!({"Assent-Receipt": "eyJhbGciOiJub25lIn0.e30."});
    let (st, e) = s.try_propose(json!({"kind": "http.request", "payload": forged})).await;
    assert_eq!((st, e["error"]["code"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("forbidden_header")), "{e}");
    assert!(e["error"]["message"].as_str().unwrap().contains("receipt"), "{e}");

    let p = s.propose(json!({"kind": "http.request", "payload": call, "audience": "items-api"})).await;
    let id = p["id"].as_str().unwrap();
    s.decide(id, json!({"outcome": "approve"})).await;
    let (_, done) = s.req(Method::GET, &format!("/proposals/{id}?wait=20"), Some(&s.agent.clone()), None).await;
    assert_eq!(done["status"], "applied", "{done}");
    let seen = rec.seen();
    assert_eq!(seen.len(), 1);
    let header = seen[0].header("assent-receipt").expect("the API receives the receipt").to_string();
    assert_eq!(header, receipt(&s, id).await);
    // What the API checks: this very request (the payload as Assent stored it), for it, approved.
    let expect =
        Expect { payload: Some(&done["payload"]), audience: Some("items-api"), approved: true, ..Default::default() };
    let c = verify(&header, &key_set(&s).await, &expect, now()).unwrap();
    assert_eq!((c.kind.as_str(), c.jti.as_str()), ("http.request", id));
    assert!(!header.contains("tok-1"), "no secret in a receipt");
}

#[tokio::test]
async fn propose_wait_receipt_and_the_hook_hand_the_receipt_over() {
    let s = Server::start().await;
    let keys = key_set(&s).await;

    // `assent propose --wait --receipt`: the receipt alone on standard output.
    let child = std::process::Command::new(crate::harness::BIN)
        .arg("--home")
        .arg(s.home())
        .args(["propose", "--tool", "Deploy", "--input", r#"{"env": "prod"}"#, "--audience", "deployer", "--wait"])
        .arg("--receipt")
        .launch(&s.env, std::process::Stdio::piped(), std::process::Stdio::piped());
    let p = pending(&s).await;
    s.decide(p["id"].as_str().unwrap(), json!({"outcome": "approve"})).await;
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let token = stdout(&out).trim().to_string();
    assert!(stderr(&out).contains("approved"), "the outcome goes to standard error: {}", stderr(&out));
    let input = json!({"env": "prod"});
    let deploy = approved_call("deployer", "Deploy", &input);
    assert!(verify(&token, &keys, &deploy, now()).is_ok());
    let staging = json!({"env": "staging"});
    let other = Expect { tool_call: Some(ToolCall { name: "Deploy", input: &staging }), ..Default::default() };
    assert_eq!(verify(&token, &keys, &other, now()), Err(Refusal::Payload));

    // The Claude Code hook: an MCP tool that declares `assent_receipt` gets it on approval. What
    // the model put there never reaches the person or the receipt.
    let event = json!({"session_id": "s-1", "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp",
        "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "mcp__blog__delete_post",
        "tool_input": {"post_id": 7, "assent_receipt": "confirmed: true"}, "tool_use_id": "toolu_01"});
    let hook = crate::hooks::spawn_for("claude-code", s.home(), &s.env, &event.to_string(), &[]);
    let p = pending(&s).await;
    assert_eq!(p["payload"]["input"], json!({"post_id": 7}));
    assert_eq!(p["audience"], "blog", "the MCP server's name");
    s.decide(p["id"].as_str().unwrap(), json!({"outcome": "approve"})).await;
    let out = hook.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let answer: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    let o = &answer["hookSpecificOutput"];
    assert_eq!(o["permissionDecision"], "allow", "{answer}");
    let given = o["updatedInput"]["assent_receipt"].as_str().expect("the tool is handed the receipt");
    assert_eq!(o["updatedInput"]["post_id"], 7);
    let args = json!({"post_id": 7});
    let blog = approved_call("blog", "delete_post", &args);
    let c = verify(given, &keys, &blog, now()).unwrap();
    assert_eq!(c.tool.as_deref(), Some("mcp__blog__delete_post"));
}

#[tokio::test]
async fn a_rotated_key_signs_from_then_on_and_the_old_one_stays_published_until_its_receipts_expire() {
    let mut s = Server::start_with("[receipts]\nttl_secs = 300\n", &[]).await;
    let before = key_set(&s).await;
    let id = s.propose_tool("make release").await;
    s.decide(&id, json!({"outcome": "approve"})).await;
    let old = receipt(&s, &id).await;
    assert_eq!(kid(&old), before.0[0].kid);

    // Only the owner rotates.
    let (st, _) = s.req(Method::POST, "/keys/rotate", Some(&s.agent.clone()), None).await;
    assert_eq!(st, StatusCode::FORBIDDEN);
    let (st, _) = s.req(Method::POST, "/keys/rotate", None, None).await;
    assert_eq!(st, StatusCode::UNAUTHORIZED);
    let out = s.cli(&["receipt", "rotate", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let r: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let new_kid = r["kid"].as_str().unwrap().to_string();
    assert_ne!(new_kid, before.0[0].kid);
    assert_eq!(r["retired"][0]["kid"], before.0[0].kid.as_str());
    let until = chrono_secs(r["retired"][0]["published_until"].as_str().unwrap());
    assert!((until - (now() + 300 + 60)).abs() < 30, "published until its last receipt expires: {r}");

    let after = key_set(&s).await;
    assert_eq!(after.0.len(), 2, "the old key is still published");
    // The copy `assent run` reads (keys.json) follows the rotation, so a ticket the new key
    // signed is checked there, without a request.
    let file = s.home().join("keys.json");
    let kept = || std::fs::read_to_string(&file).unwrap_or_default();
    let until = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while !kept().contains(&new_kid) {
        assert!(std::time::Instant::now() < until, "keys.json never named the new key: {}", kept());
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(kept().contains(before.0[0].kid.as_str()), "and the old one: {}", kept());
    assert!(verify(&old, &after, &Expect::default(), now()).is_ok(), "an earlier receipt still verifies");
    let id2 = s.propose_tool("make release again").await;
    s.decide(&id2, json!({"outcome": "approve"})).await;
    let new = receipt(&s, &id2).await;
    assert_eq!(kid(&new), new_kid, "the new key signs");
    assert_eq!(verify(&new, &before, &Expect::default(), now()), Err(Refusal::UnknownKey(new_kid.clone())));

    // A restart keeps the new key, and the old one published.
    s.stop();
    s.spawn();
    assert_eq!(key_set(&s).await, after);
    let id3 = s.propose_tool("make release once more").await;
    s.decide(&id3, json!({"outcome": "approve"})).await;
    assert_eq!(kid(&receipt(&s, &id3).await), new_kid);
}

/// Unix seconds of an RFC 3339 time as the API writes it (`2026-11-26T12:00:00.000Z`).
fn chrono_secs(t: &str) -> i64 {
    let out = std::process::Command::new("date").args(["-u", "-d", t, "+%s"]).output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

#[tokio::test]
async fn in_a_team_each_nodes_key_set_lists_every_nodes_keys() {
    let pg = shared();
    let url = pg.new_db();
    let node = |name: &'static str, person: &'static str| {
        let env = pg.env(&url, name, person);
        async move {
            let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            Server::start_with("", &env).await
        }
    };
    let a = node("alpha", "ana").await;
    let b = node("beta", "ben").await;
    let id = a.propose_tool("make deploy").await;
    b.decide(&id, json!({"outcome": "approve"})).await;
    let token = receipt(&a, &id).await;
    let (on_a, on_b) = (key_set(&a).await, key_set(&b).await);
    assert_eq!(on_a.0.len(), 2, "both nodes' keys");
    let sorted = |k: &KeySet| {
        let mut ids: Vec<String> = k.0.iter().map(|k| k.kid.clone()).collect();
        ids.sort();
        ids
    };
    assert_eq!(sorted(&on_a), sorted(&on_b), "the same set from either node");
    // Decided on beta: beta's key signed it, named by beta; alpha's key set verifies it.
    let c = verify(&token, &on_a, &Expect { approved: true, ..Default::default() }, now()).unwrap();
    assert_eq!((c.iss.as_str(), c.decided_by.as_str()), ("assent:beta", "ben"));
    // Rotating on one node leaves the other's key alone.
    let out = a.cli(&["receipt", "rotate", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(key_set(&b).await.0.len(), 3);
    assert!(verify(&token, &key_set(&b).await, &Expect::default(), now()).is_ok());
}
