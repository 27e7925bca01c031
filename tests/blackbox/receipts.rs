//! Receipts on the real server: every settled decision carries one, signed with this Assent's
//! key, which anyone checks offline with the JWK Set at `GET /v1/keys` (here with
//! `assent_receipt::verify`, the library a Rust tool server would use).

use crate::harness::{Server, native, scratch_file};
use assent_receipt::{Claims, Expect, KeySet, Refusal, ToolCall, payload_sha256, verify};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

pub(crate) async fn key_set(s: &Server) -> KeySet {
    let (st, v) = s.req(Method::GET, "/keys", None, None).await;
    assert_eq!(st, StatusCode::OK, "anyone may read the keys: {v}");
    KeySet::from_json(&v).unwrap()
}

pub(crate) fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64
}

/// What a tool server expects of a receipt for running its tool `name` with `input`: for it
/// (`audience`), approved.
pub(crate) fn approved_call<'a>(audience: &'a str, name: &'a str, input: &'a Value) -> Expect<'a> {
    Expect { audience: Some(audience), tool_call: Some(ToolCall { name, input }), approved: true, ..Default::default() }
}

/// The receipt in the decision of proposal `p`, checked against the keys the server publishes
/// (`GET /keys`), expecting nothing more of it.
pub(crate) async fn decision_receipt(s: &Server, p: &Value) -> Claims {
    let (_, jwks) = s.req(Method::GET, "/keys", None, None).await;
    let keys = KeySet::from_json(&jwks).unwrap();
    verify(p["decision"]["receipt"].as_str().unwrap(), &keys, &Default::default(), now()).unwrap()
}

pub(crate) async fn receipt(s: &Server, id: &str) -> String {
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
    let expect = Expect { payload: Some(&approved), approved: true, ..Default::default() };
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

/// Checks `token` against the JWK Set in `jwks` with Node's `jose` and Python's `joserfc`,
/// implementations nobody here wrote: the claims each read, or none if it refused.
fn independent(token: &str, jwks: &std::path::Path) -> (Option<serde_json::Value>, Option<serde_json::Value>) {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let node = std::process::Command::new("node")
        .arg(root.join("ui/scripts/verify-receipt.mjs"))
        .arg(token)
        .arg(jwks)
        .current_dir(root.join("ui"))
        .output()
        .unwrap();
    let node = node
        .status
        .success()
        .then(|| serde_json::from_slice::<serde_json::Value>(&node.stdout).unwrap()["claims"].clone());
    let bin = crate::harness::python_venv("venv-receipts", &["joserfc==1.8.0"], |b| {
        b.join("python").exists()
            && std::process::Command::new(b.join("python"))
                .args(["-c", "import joserfc"])
                .status()
                .is_ok_and(|s| s.success())
    });
    let script = r#"
import json, sys
from joserfc import jws
from joserfc.jwk import KeySet
token, jwks = sys.argv[1], json.load(open(sys.argv[2]))
try:
    obj = jws.deserialize_compact(token, KeySet.import_key_set(jwks), algorithms=["EdDSA"])
except Exception as e:
    print("refused:", type(e).__name__)
    sys.exit(1)
assert obj.headers()["typ"] == "assent-receipt+jwt"
print(json.dumps(json.loads(obj.payload)))
"#;
    let py =
        std::process::Command::new(bin.join("python")).arg("-c").arg(script).arg(token).arg(jwks).output().unwrap();
    let py = py.status.success().then(|| serde_json::from_slice::<serde_json::Value>(&py.stdout).unwrap());
    (node, py)
}

#[tokio::test]
async fn receipts_are_standard_jws_that_other_verifiers_and_the_cli_check() {
    let s = Server::start_with("[receipts]\nttl_secs = 120\n", &[]).await;
    let id = s.propose_tool("make deploy").await;
    s.decide(&id, json!({"outcome": "approve"})).await;
    let token = receipt(&s, &id).await;
    let (_, jwks) = s.req(Method::GET, "/keys", None, None).await;
    let (dir, file) = scratch_file("keys.json", jwks.to_string());

    // jose (Node) and joserfc (Python) read the same claims Assent signed.
    let (node, py) = independent(&token, &file);
    let node = node.expect("jose verifies it");
    assert_eq!(node["jti"], id.as_str());
    assert_eq!(node["exp"].as_i64().unwrap() - node["iat"].as_i64().unwrap(), 120, "receipts.ttl_secs");
    assert_eq!(py.expect("joserfc verifies it"), node);
    // And both refuse it with one byte of the claims changed.
    let mut parts: Vec<String> = token.split('.').map(str::to_string).collect();
    let mut claims = parts[1].clone().into_bytes();
    claims[10] = if claims[10] == b'A' { b'B' } else { b'A' };
    parts[1] = String::from_utf8(claims).unwrap();
    let changed = parts.join(".");
    assert_eq!(independent(&changed, &file), (None, None), "a changed byte is refused by both");

    // The command line: the claims and exit 0 when valid (offline with --keys); a distinct exit
    // code and a one-line reason for each refusal.
    let ok = s.cli(&["receipt", "verify", &token, "--keys", file.to_str().unwrap(), "--approved"]);
    assert!(ok.status.success(), "{}", crate::harness::stderr(&ok));
    assert!(crate::harness::stdout(&ok).contains(&id));
    let online = s.cli(&["receipt", "verify", &token]);
    assert!(online.status.success(), "with the running server's keys: {}", crate::harness::stderr(&online));
    let bad = s.cli(&["receipt", "verify", &changed, "--keys", file.to_str().unwrap()]);
    assert_eq!(bad.status.code(), Some(13), "{}", crate::harness::stderr(&bad));
    assert!(crate::harness::stderr(&bad).contains("bad_signature"));
    let other = dir.path().join("other.json");
    std::fs::write(&other, json!({"tool": "Bash", "input": {"command": "make destroy"}}).to_string()).unwrap();
    let wrong =
        s.cli(&["receipt", "verify", &token, "--keys", file.to_str().unwrap(), "--payload", other.to_str().unwrap()]);
    assert_eq!(wrong.status.code(), Some(17), "{}", crate::harness::stderr(&wrong));
    let aud = s.cli(&["receipt", "verify", &token, "--keys", file.to_str().unwrap(), "--audience", "blog-tools"]);
    assert_eq!(aud.status.code(), Some(16), "{}", crate::harness::stderr(&aud));
    let keys = s.cli(&["receipt", "keys"]);
    assert_eq!(serde_json::from_str::<serde_json::Value>(&crate::harness::stdout(&keys)).unwrap(), jwks);
    // A rejection's receipt is valid only when asked for any outcome.
    let r = s.propose_tool("make destroy").await;
    s.decide(&r, json!({"outcome": "reject", "reason": "no"})).await;
    let rejected = receipt(&s, &r).await;
    let keys = file.to_str().unwrap();
    let no = s.cli(&["receipt", "verify", &rejected, "--keys", keys]);
    assert_eq!(no.status.code(), Some(19), "{}", crate::harness::stderr(&no));
    let audit = s.cli(&["receipt", "verify", &rejected, "--keys", keys, "--any-outcome"]);
    assert!(audit.status.success(), "{}", crate::harness::stderr(&audit));
    assert!(crate::harness::stdout(&audit).contains("\"reject\""), "{}", crate::harness::stdout(&audit));
}

/// Numbers a double cannot hold exactly are refused at every door, so a receipt can never bind
/// two values: over the API (a payload and an edit), and through the hook; the edge values
/// that are allowed get receipts that bind them exactly.
#[tokio::test]
async fn a_number_a_double_cannot_hold_is_refused_and_the_edges_bind_exactly() {
    let s = Server::start().await;
    let keys = key_set(&s).await;
    let call = |raw: &str| {
        format!(r#"{{"kind": "tool.call", "payload": {{"tool": "publish", "input": {{"post_id": {raw}}}}}}}"#)
    };
    for raw in ["1152921504606846977", "-9007199254740993", "9007199254740992", "1e300", "9007199254740993.0", "0.1"] {
        let r = s
            .http
            .post(format!("{}/v1/proposals", s.url))
            .bearer_auth(&s.agent)
            .header("content-type", "application/json")
            .body(call(raw))
            .send()
            .await
            .unwrap();
        let (st, v) = (r.status(), r.json::<serde_json::Value>().await.unwrap());
        if raw == "0.1" {
            assert_eq!(st, reqwest::StatusCode::CREATED, "a fraction is a double, as every JSON reader takes it: {v}");
            continue;
        }
        assert_eq!(st, reqwest::StatusCode::UNPROCESSABLE_ENTITY, "{raw}: {v}");
        assert_eq!(v["error"]["code"], "invalid_number", "{v}");
        assert!(v["error"]["message"].as_str().unwrap().contains("/input/post_id"), "{v}");
    }
    // The largest safe integer and its negative are allowed, and bound exactly.
    for n in [9_007_199_254_740_991_i64, -9_007_199_254_740_991] {
        let p = s.propose(json!({"kind": "tool.call", "payload": {"tool": "publish", "input": {"post_id": n}}})).await;
        let id = p["id"].as_str().unwrap();
        s.decide(id, json!({"outcome": "approve"})).await;
        let c = verify(&receipt(&s, id).await, &keys, &Expect { approved: true, ..Default::default() }, now()).unwrap();
        assert_eq!(c.payload_sha256, payload_sha256(&json!({"tool": "publish", "input": {"post_id": n}})));
        assert_ne!(c.payload_sha256, payload_sha256(&json!({"tool": "publish", "input": {"post_id": n - n.signum()}})));
    }
    // An edit carrying one is refused, and nothing is decided.
    let p = s.propose(json!({"kind": "tool.call", "payload": {"tool": "publish", "input": {"post_id": 1}}})).await;
    let id = p["id"].as_str().unwrap();
    let edit: serde_json::Value =
        serde_json::from_str(r#"{"outcome": "approve", "edits": {"input": {"post_id": 1152921504606846977}}}"#)
            .unwrap();
    let (st, v) = s.decide(id, edit).await;
    assert_eq!(
        (st, v["error"]["code"].as_str()),
        (reqwest::StatusCode::UNPROCESSABLE_ENTITY, Some("invalid_number")),
        "{v}"
    );
    assert_eq!(s.get(id, &s.owner.clone()).await.1["status"], "pending");
}

#[tokio::test]
async fn each_kind_and_outcome_has_its_receipt_over_the_payload_assent_checks_before_it_applies() {
    let s = Server::start().await;
    let keys = key_set(&s).await;
    let (_dir, target) = scratch_file("notes.txt", "old\n");
    let path = &native(&target);

    // A file write approved with edits, from the command line: the receipt binds the content
    // written, and its hash is the one Assent checked before writing (both RFC 8785).
    let p = s.propose(json!({"kind": "file.write", "payload": {"path": path, "content": "draft\n"}})).await;
    let id = p["id"].as_str().unwrap();
    let out = s.cli(&["approve", id, "--edits", r#"{"content": "final\n"}"#]);
    assert!(out.status.success(), "{}", crate::harness::stderr(&out));
    let (_, done) = s.req(Method::GET, &format!("/proposals/{id}?wait=20"), Some(&s.agent.clone()), None).await;
    assert_eq!(done["status"], "applied", "{done}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "final\n");
    let c = verify(&receipt(&s, id).await, &keys, &Expect { approved: true, ..Default::default() }, now()).unwrap();
    assert_eq!((c.kind.as_str(), c.channel.as_str(), c.tool.as_deref()), ("file.write", "cli", None));
    assert_eq!(c.payload_sha256, payload_sha256(&done["approved_payload"]));
    assert_eq!(c.proposed_sha256, payload_sha256(&done["payload"]));
    assert_ne!(c.payload_sha256, c.proposed_sha256, "edits change what is bound");
    assert_eq!(done["decision"]["approved_sha256"].as_str(), Some(c.payload_sha256.as_str()));

    // Numbers written two ways are one value to the hash: 1.0 and 1.
    let p = s
        .propose(json!({"kind": "tool.call", "payload": {"tool": "scale", "input": {"ratio": 1.0, "max": 2.50}}}))
        .await;
    let id = p["id"].as_str().unwrap();
    s.decide(id, json!({"outcome": "approve"})).await;
    let (_, got) = s.get(id, &s.agent.clone()).await;
    let as_agent_wrote: serde_json::Value =
        serde_json::from_str(r#"{"tool": "scale", "input": {"max": 2.5, "ratio": 1}}"#).unwrap();
    let input = as_agent_wrote["input"].clone();
    let expect = Expect {
        payload: Some(&as_agent_wrote),
        tool_call: Some(assent_receipt::ToolCall { name: "scale", input: &input }),
        ..Default::default()
    };
    let c = verify(&receipt(&s, id).await, &keys, &expect, now()).unwrap();
    assert_eq!(got["decision"]["approved_sha256"].as_str(), Some(c.payload_sha256.as_str()));

    // A file delete refined: a receipt of a refinement, never an approval.
    let p = s.propose(json!({"kind": "file.delete", "payload": {"path": path}})).await;
    let id = p["id"].as_str().unwrap();
    s.decide(id, json!({"outcome": "refine", "feedback": "archive it instead"})).await;
    let token = receipt(&s, id).await;
    let c = verify(&token, &keys, &Expect::default(), now()).unwrap();
    assert_eq!((c.kind.as_str(), c.outcome.as_str()), ("file.delete", "refine"));
    let approval = Expect { approved: true, ..Default::default() };
    assert_eq!(verify(&token, &keys, &approval, now()), Err(Refusal::NotApproved("refine".into())));
    assert!(target.exists());
}
