use super::*;

/// A proposal as the API returns it: `fields` over a pending one.
fn proposal(fields: Value) -> Proposal {
    let at = "1970-01-01T00:00:00.000Z";
    let mut v = json!({"id": "p_0", "kind": "tool.call", "agent": "a", "payload": {}, "preview": null,
        "status": "pending", "settled": false, "created_at": at, "updated_at": at, "expires_at": at});
    if let (Some(m), Value::Object(f)) = (v.as_object_mut(), fields) {
        m.extend(f);
    }
    if let Some(d) = v.get_mut("decision").and_then(Value::as_object_mut) {
        for (k, x) in [("by", json!("owner")), ("channel", json!("app")), ("at", json!(at))] {
            d.entry(k).or_insert(x);
        }
    }
    serde_json::from_value(v).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn the_view_never_echoes_the_payload() {
    let p = json!({"id": "p_1", "kind": "file.write", "status": "pending", "settled": false,
        "payload": {"path": "/x", "content": "secret plan"}, "decision": null, "result": null, "error": null});
    let v = view(&proposal(p));
    assert!(!v.to_string().contains("secret plan"));
    assert!(v["message"].as_str().is_some_and(|m| m.contains("wait_for_decision")));
}

#[test]
fn the_view_tells_what_to_do_next() {
    let refined = json!({"id": "p_2", "kind": "file.write", "status": "refined", "settled": true,
        "decision": {"outcome": "refine", "feedback": "keep the header", "edited_payload": null}});
    let v = view(&proposal(refined));
    assert_eq!(v["feedback"], "keep the header");
    assert!(v["message"].as_str().is_some_and(|m| m.contains("supersedes set to p_2")));
    let approved = json!({"id": "p_3", "kind": "tool.call", "status": "approved", "settled": true,
        "decision": {"outcome": "approve", "edited_payload": {"tool": "Bash", "input": {"command": "ls"}},
            "receipt": "eyJ.a.b"},
        "approved_payload": {"tool": "Bash", "input": {"command": "ls"}}});
    let v = view(&proposal(approved));
    assert_eq!(v["approved_input"], json!({"command": "ls"}));
    assert_eq!(v["edited_by_person"], true);
    assert_eq!(v["receipt"], "eyJ.a.b", "the receipt reaches the model, to hand to a tool that asks for it");
    assert!(view(&proposal(json!({"status": "pending"}))).get("receipt").is_none());
}

#[test]
fn proposal_bodies_take_only_the_payload_fields() {
    let mut args = Map::new();
    args.insert("path".into(), json!("/tmp/a"));
    args.insert("content".into(), json!("x"));
    args.insert("title".into(), json!("t"));
    args.insert("stray".into(), json!(1));
    args.insert("audience".into(), json!("blog"));
    let b = proposal_body("file.write", &args, &["path", "content"]).unwrap_or_else(|_| panic!("body"));
    assert_eq!(
        b,
        json!({"kind": "file.write", "payload": {"path": "/tmp/a", "content": "x"}, "title": "t", "audience": "blog"})
    );
    args.insert("expires_in".into(), json!(-3));
    assert!(proposal_body("file.write", &args, &["path", "content"]).is_err());
}

#[test]
fn permission_answers_have_the_contract_shape() {
    assert_eq!(
        permission(Verdict::Allow(Some(json!({"a": 1}))), &json!({"a": 0})),
        json!({"behavior": "allow", "updatedInput": {"a": 1}})
    );
    assert_eq!(
        permission(Verdict::Allow(None), &json!({"a": 0})),
        json!({"behavior": "allow", "updatedInput": {"a": 0}})
    );
    assert_eq!(permission(Verdict::Ask("x".into()), &Value::Null), json!({"behavior": "deny", "message": "x"}));
}
