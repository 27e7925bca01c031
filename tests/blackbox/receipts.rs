//! Receipts on the real server: every settled decision carries one, signed with this Assent's
//! key, which anyone checks offline with the JWK Set at `GET /v1/keys` (here with
//! `assent_receipt::verify`, the library a Rust tool server would use).

use crate::harness::Server;
use assent_receipt::{Expect, KeySet, Refusal, payload_sha256, verify};
use reqwest::{Method, StatusCode};
use serde_json::json;

async fn key_set(s: &Server) -> KeySet {
    let (st, v) = s.req(Method::GET, "/keys", None, None).await;
    assert_eq!(st, StatusCode::OK, "anyone may read the keys: {v}");
    KeySet::from_json(&v).unwrap()
}

fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64
}

async fn receipt(s: &Server, id: &str) -> String {
    // The agent reads it in the proposal it proposed.
    let (_, p) = s.get(id, &s.agent.clone()).await;
    p["decision"]["receipt"].as_str().unwrap_or_else(|| panic!("no receipt: {p}")).to_string()
}

#[tokio::test]
async fn every_decision_carries_a_receipt_that_binds_what_was_approved() {
    let mut s = Server::start().await;
    let keys = key_set(&s).await;
    assert_eq!(keys.0.len(), 1);

    // Approved with edits: the receipt binds the edited payload, and names the one proposed.
    let id = s.propose_tool("git push --force").await;
    let proposed = json!({"tool": "Bash", "input": {"command": "git push --force"}});
    let approved = json!({"tool": "Bash", "input": {"command": "git push"}});
    let (st, _) = s.decide(&id, json!({"outcome": "approve", "edits": {"input": {"command": "git push"}}})).await;
    assert_eq!(st, StatusCode::OK);
    let token = receipt(&s, &id).await;
    let expect = Expect { payload: Some(&approved), audience: None, approved: true };
    let c = verify(&token, &keys, &expect, now()).unwrap();
    assert_eq!(
        (c.jti.as_str(), c.sub.as_str(), c.outcome.as_str(), c.kind.as_str()),
        (id.as_str(), "default", "approve", "tool.call")
    );
    assert_eq!((c.tool.as_deref(), c.channel.as_str(), c.decided_by.as_str()), (Some("Bash"), "api", "owner"));
    assert_eq!(c.proposed_sha256, payload_sha256(&proposed));
    assert!(c.exp - c.iat == 600 && (c.iat - now()).abs() < 60, "{c:?}");
    let as_proposed = Expect { payload: Some(&proposed), ..Default::default() };
    assert_eq!(
        verify(&token, &keys, &as_proposed, now()),
        Err(Refusal::Payload),
        "what the agent first asked is not what was approved"
    );

    // A rejection has a receipt too, which is not an approval.
    let no = s.propose_tool("rm -rf /srv").await;
    s.decide(&no, json!({"outcome": "reject", "reason": "no"})).await;
    let token = receipt(&s, &no).await;
    let only_approvals = Expect { approved: true, ..Default::default() };
    assert_eq!(verify(&token, &keys, &only_approvals, now()), Err(Refusal::NotApproved("reject".into())));

    // A rule's decision names the rule.
    let (st, rule) = s
        .req(
            Method::POST,
            "/rules",
            Some(&s.owner.clone()),
            Some(json!({"effect": "allow", "match": {"tool": "Bash", "input": "echo hi"}})),
        )
        .await;
    assert_eq!(st, StatusCode::CREATED, "{rule}");
    let echo = s.propose_tool("echo hi").await;
    let c = verify(&receipt(&s, &echo).await, &keys, &Expect::default(), now()).unwrap();
    assert_eq!((c.channel.as_str(), c.decided_by.clone()), ("rule", format!("rule:{}", rule["id"].as_str().unwrap())));

    // The key is kept: after a restart the same key signs, and earlier receipts still verify.
    let before = receipt(&s, &id).await;
    s.stop();
    s.spawn();
    assert_eq!(key_set(&s).await, keys, "the same key after a restart");
    assert!(verify(&before, &key_set(&s).await, &Expect::default(), now()).is_ok());
    // No secret in the database: the receipt key is in the keychain (here its 0600 file).
    let stored = s.stored_bytes();
    let seed = std::fs::read_to_string(s.home().join("receipt.key")).unwrap();
    assert!(!String::from_utf8_lossy(&stored).contains(seed.trim()), "the key is not in the database");
}
