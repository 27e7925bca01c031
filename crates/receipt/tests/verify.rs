//! What a verifier must refuse, each form an attacker holding the agent's words (or a receipt)
//! would try, and what it must accept.

#![allow(missing_docs, clippy::unwrap_used)]

use assent_receipt::{Claims, Expect, Key, KeySet, Refusal, ReplayCache, SKEW, TYP, ToolCall, payload_sha256, verify};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};

const NOW: i64 = 1_800_000_000;

fn key(n: u8) -> Key {
    Key::from_seed(&[n; 32]).unwrap()
}

fn claims(payload: &Value) -> Claims {
    Claims {
        iss: "assent:desk".into(),
        sub: "default".into(),
        jti: "p_1".into(),
        iat: NOW,
        exp: NOW + 600,
        aud: Some("blog-tools".into()),
        outcome: "approve".into(),
        kind: "tool.call".into(),
        tool: Some("delete_post".into()),
        input_sha256: payload.get("input").map(payload_sha256),
        payload_sha256: payload_sha256(payload),
        proposed_sha256: payload_sha256(payload),
        decided_by: "anna".into(),
        channel: "app".into(),
        confine: None,
        hosts: Vec::new(),
    }
}

fn set(keys: &[&Key]) -> KeySet {
    KeySet(keys.iter().map(|k| k.public().clone()).collect())
}

fn part(token: &str, i: usize) -> Value {
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(token.split('.').nth(i).unwrap()).unwrap()).unwrap()
}

#[test]
fn the_signature_is_the_one_a_jose_library_makes() {
    // Ed25519 is deterministic: jsonwebtoken, given the same key as PKCS#8, signs the same
    // header and claims to the same bytes.
    use ed25519_dalek::pkcs8::EncodePrivateKey as _;
    for n in [1u8, 7, 200] {
        let k = key(n);
        let token = k.sign(&claims(&json!({"tool": "delete_post", "input": {"post_id": n}}))).unwrap();
        let (message, signature) = token.rsplit_once('.').unwrap();
        let der = ed25519_dalek::SigningKey::from_bytes(&[n; 32]).to_pkcs8_der().unwrap();
        let jose = jsonwebtoken::crypto::sign(
            message.as_bytes(),
            &jsonwebtoken::EncodingKey::from_ed_der(der.as_bytes()),
            jsonwebtoken::Algorithm::EdDSA,
        )
        .unwrap();
        assert_eq!(signature, jose, "key {n}");
    }
}

#[test]
fn a_receipt_verifies_and_its_claims_are_canonical() {
    let k = key(1);
    let payload = json!({"tool": "delete_post", "input": {"id": 42}});
    let c = claims(&payload);
    let token = k.sign(&c).unwrap();
    let header = part(&token, 0);
    assert_eq!((header["alg"].as_str(), header["typ"].as_str()), (Some("EdDSA"), Some(TYP)));
    assert_eq!(header["kid"], k.public().kid.as_str());
    let raw = URL_SAFE_NO_PAD.decode(token.split('.').nth(1).unwrap()).unwrap();
    assert_eq!(raw, serde_json_canonicalizer::to_vec(&c).unwrap(), "the claims' bytes are their JCS form");
    let expect = Expect { payload: Some(&payload), audience: Some("blog-tools"), approved: true, tool_call: None };
    assert_eq!(verify(&token, &set(&[&k]), &expect, NOW + 1).unwrap(), c);
    // Keys round-trip through a JWK Set.
    let jwks = set(&[&k, &key(2)]).to_json();
    assert_eq!(KeySet::from_json(&jwks).unwrap(), set(&[&k, &key(2)]));
}

#[test]
fn the_payload_hash_is_jcs_whatever_the_key_order_or_number_form() {
    let a = json!({"b": 1, "a": [1.0, "é", {"z": null, "y": true}]});
    let b: Value = serde_json::from_str(r#"{"a":[1,"é",{"y":true,"z":null}],"b":1}"#).unwrap();
    assert_eq!(payload_sha256(&a), payload_sha256(&b));
    assert_ne!(payload_sha256(&a), payload_sha256(&json!({"b": 2, "a": [1, "é", {"z": null, "y": true}]})));
}

fn forged(header: Value, claims: &Claims, sig: &str) -> String {
    format!(
        "{}.{}.{sig}",
        URL_SAFE_NO_PAD.encode(header.to_string()),
        URL_SAFE_NO_PAD.encode(serde_json::to_string(claims).unwrap())
    )
}

/// A key, the key set that trusts it, claims over a `delete_post` call, and their token.
fn signed() -> (Key, KeySet, Claims, String) {
    let k = key(1);
    let keys = set(&[&k]);
    let c = claims(&json!({"tool": "delete_post", "input": {"id": 42}}));
    let token = k.sign(&c).unwrap();
    (k, keys, c, token)
}

#[test]
fn what_a_verifier_refuses_of_a_token() {
    let (k, keys, c, token) = signed();
    let none = Expect::default();
    let kid = k.public().kid.clone();

    // alg none, and an HMAC keyed with the public key (the classic confusion).
    let unsigned = forged(json!({"alg": "none", "typ": TYP, "kid": kid}), &c, "");
    assert!(matches!(verify(&unsigned, &keys, &none, NOW), Err(Refusal::Algorithm(_) | Refusal::Malformed(_))));
    let mut h = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256);
    h.typ = Some(TYP.into());
    h.kid = Some(kid.clone());
    let hmac = jsonwebtoken::encode(&h, &c, &jsonwebtoken::EncodingKey::from_secret(&k.public().x)).unwrap();
    assert!(matches!(verify(&hmac, &keys, &none, NOW), Err(Refusal::Algorithm(_))), "HS256 with the public key");
    // A token that does not say it is a receipt.
    let untyped = forged(json!({"alg": "EdDSA", "typ": "JWT", "kid": kid}), &c, token.split('.').nth(2).unwrap());
    assert!(matches!(verify(&untyped, &keys, &none, NOW), Err(Refusal::Algorithm(_))));
    // An unknown key, and a trusted key's id on another key's signature.
    assert_eq!(verify(&token, &set(&[&key(2)]), &none, NOW), Err(Refusal::UnknownKey(kid.clone())));
    let impostor = key(3);
    let theirs = impostor.sign(&c).unwrap();
    let parts: Vec<&str> = theirs.split('.').collect();
    let mut header = part(&theirs, 0);
    header["kid"] = Value::String(kid.clone());
    let relabelled = format!("{}.{}.{}", URL_SAFE_NO_PAD.encode(header.to_string()), parts[1], parts[2]);
    assert_eq!(verify(&relabelled, &keys, &none, NOW), Err(Refusal::Signature));

    // Any changed byte of header, claims or signature.
    for i in 0..token.len() {
        if token.as_bytes()[i] == b'.' {
            continue;
        }
        let mut bytes = token.clone().into_bytes();
        bytes[i] = if bytes[i] == b'A' { b'B' } else { b'A' };
        let changed = String::from_utf8(bytes).unwrap();
        if changed == token {
            continue;
        }
        assert!(verify(&changed, &keys, &none, NOW).is_err(), "byte {i} changed");
    }
    // Claims changed and re-encoded (a payload hash swapped in): the signature no longer holds.
    let mut other = c.clone();
    other.payload_sha256 = payload_sha256(&json!({"tool": "delete_post", "input": {"id": 7}}));
    let swapped = format!(
        "{}.{}.{}",
        token.split('.').next().unwrap(),
        URL_SAFE_NO_PAD.encode(serde_json_canonicalizer::to_vec(&other).unwrap()),
        token.split('.').nth(2).unwrap()
    );
    assert_eq!(verify(&swapped, &keys, &none, NOW), Err(Refusal::Signature));
}

#[test]
fn what_a_verifier_refuses_of_the_claims() {
    let (k, keys, c, token) = signed();
    let none = Expect::default();

    // Time, with a small skew.
    assert!(verify(&token, &keys, &none, c.exp + SKEW).is_ok());
    assert_eq!(verify(&token, &keys, &none, c.exp + SKEW + 1), Err(Refusal::Expired(c.exp)));
    let mut later = c.clone();
    later.iat = NOW + 3600;
    later.exp = NOW + 4200;
    let early = k.sign(&later).unwrap();
    assert_eq!(verify(&early, &keys, &none, NOW), Err(Refusal::NotYetValid(later.iat)));

    // Another audience, or none where one is required.
    let other_aud = Expect { audience: Some("mail-tools"), ..Default::default() };
    assert_eq!(verify(&token, &keys, &other_aud, NOW), Err(Refusal::Audience(Some("blog-tools".into()))));
    let mut open = c.clone();
    open.aud = None;
    let for_anyone = k.sign(&open).unwrap();
    let mine = Expect { audience: Some("blog-tools"), ..Default::default() };
    assert_eq!(verify(&for_anyone, &keys, &mine, NOW), Err(Refusal::Audience(None)));

    // Another payload: the tool is about to act on other arguments than were approved.
    let other_args = json!({"tool": "delete_post", "input": {"id": 7}});
    let expect = Expect { payload: Some(&other_args), ..Default::default() };
    assert_eq!(verify(&token, &keys, &expect, NOW), Err(Refusal::Payload));

    // A tool checks its own name and the arguments it was called with.
    let args = json!({"id": 42});
    fn call<'a>(name: &'a str, input: &'a Value) -> Expect<'a> {
        Expect { tool_call: Some(ToolCall { name, input }), ..Default::default() }
    }
    assert!(verify(&token, &keys, &call("delete_post", &args), NOW).is_ok());
    for other in [json!({"id": 7}), json!({"id": "42"}), json!({"id": 42, "force": true}), json!({})] {
        assert_eq!(verify(&token, &keys, &call("delete_post", &other), NOW), Err(Refusal::Payload), "{other}");
    }
    assert_eq!(verify(&token, &keys, &call("delete_page", &args), NOW), Err(Refusal::Tool(Some("delete_post".into()))));
    let mut prefixed = c.clone();
    prefixed.tool = Some("mcp__blog__delete_post".into());
    let as_mcp = k.sign(&prefixed).unwrap();
    assert!(verify(&as_mcp, &keys, &call("delete_post", &args), NOW).is_ok(), "as an MCP client names it");
    for claimed in ["xdelete_post", "mcp__delete_post", "mcp____delete_post", "mcp__a__b__delete_post", "delete_posts"]
    {
        let mut other = c.clone();
        other.tool = Some(claimed.into());
        let t = k.sign(&other).unwrap();
        assert_eq!(verify(&t, &keys, &call("delete_post", &args), NOW), Err(Refusal::Tool(Some(claimed.into()))));
    }
    let mut write = c.clone();
    write.kind = "file.write".into();
    let t = k.sign(&write).unwrap();
    assert!(matches!(verify(&t, &keys, &call("delete_post", &args), NOW), Err(Refusal::Tool(_))), "not a tool call");
    let mut no_input = c.clone();
    no_input.input_sha256 = None;
    let t = k.sign(&no_input).unwrap();
    assert_eq!(verify(&t, &keys, &call("delete_post", &args), NOW), Err(Refusal::Payload));

    // A rejection is a valid receipt, but not an approval.
    let mut rejected = c.clone();
    rejected.outcome = "reject".into();
    let no = k.sign(&rejected).unwrap();
    assert!(verify(&no, &keys, &none, NOW).is_ok());
    let approval = Expect { approved: true, ..Default::default() };
    assert_eq!(verify(&no, &keys, &approval, NOW), Err(Refusal::NotApproved("reject".into())));

    // Used twice.
    let mut cache = ReplayCache::default();
    let ok = verify(&token, &keys, &none, NOW).unwrap();
    assert!(cache.use_once(&ok, NOW).is_ok());
    assert_eq!(cache.use_once(&ok, NOW + 1), Err(Refusal::Replayed("p_1".into())));
}

#[test]
fn a_key_set_names_each_key_by_its_thumbprint() {
    let k = key(1);
    let mut jwks = set(&[&k]).to_json();
    jwks["keys"][0]["kid"] = json!("someone-else");
    assert!(KeySet::from_json(&jwks).is_err());
    let mixed = json!({"keys": [{"kty": "RSA", "n": "AQAB", "e": "AQAB"}, k.public().jwk()]});
    assert_eq!(KeySet::from_json(&mixed).unwrap(), set(&[&k]), "other key types are left out");
    // RFC 8037's example key: the thumbprint RFC 7638 computes for it.
    let x = URL_SAFE_NO_PAD.decode("11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo").unwrap();
    let rfc = assent_receipt::PublicKey::from_bytes(x.try_into().unwrap());
    assert_eq!(rfc.kid, "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k");
}
