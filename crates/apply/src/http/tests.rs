use super::*;
use assent_core::time::Timestamp;

fn creds() -> BTreeMap<String, CredentialMeta> {
    let mut m = BTreeMap::new();
    m.insert(
        "gh".into(),
        CredentialMeta {
            name: "gh".into(),
            scheme: Scheme::Bearer,
            origins: vec!["https://api.github.com:443".into(), "http://127.0.0.1:9000".into()],
            created_at: Timestamp(0),
        },
    );
    m
}

fn code(v: Value) -> &'static str {
    match normalize(v, Some(&creds())) {
        Ok(_) => "ok",
        Err(e) => e.code(),
    }
}

#[test]
fn validation() {
    assert_eq!(
        code(json!({"method": "post", "url": "https://api.github.com/repos", "json": {"a": 1}, "credential": "gh"})),
        "ok"
    );
    assert_eq!(code(json!({"method": "GET", "url": "https://evil.example/", "credential": "gh"})), "host_not_allowed");
    assert_eq!(code(json!({"method": "GET", "url": "http://api.github.com/"})), "insecure_url");
    assert_eq!(code(json!({"method": "GET", "url": "http://127.0.0.1:9000/x", "credential": "gh"})), "ok");
    assert_eq!(code(json!({"method": "GET", "url": "http://127.0.0.1:9000/x"})), "insecure_url");
    assert_eq!(code(json!({"method": "GET", "url": "https://x.example/", "credential": "nope"})), "unknown_credential");
    assert_eq!(
        code(json!({"method": "GET", "url": "https://x.example/", "headers": {"Authorization": "Bearer mine"}})),
        "forbidden_header"
    );
    assert_eq!(code(json!({"method": "GET", "url": "https://u:p@x.example/"})), "invalid_url");
    assert_eq!(code(json!({"method": "TRACE", "url": "https://x.example/"})), "invalid_payload");
    assert_eq!(
        code(json!({"method": "GET", "url": "https://x.example/", "headers": {"x-a": "1\r\nx-b: 2"}})),
        "invalid_header"
    );
    assert_eq!(code(json!({"method": "GET", "url": "https://x.example/", "json": 1, "body": "x"})), "invalid_payload");
}

/// The preview of a normalized payload, as the wire carries it.
fn preview(p: &Value, creds: &BTreeMap<String, CredentialMeta>) -> Value {
    let req = payloads::read::<payloads::HttpRequest>(KindName::HttpRequest, p).unwrap_or_else(|e| panic!("{e}"));
    super::preview(&req, creds).to_value()
}

#[test]
fn preview_shows_punycode_header_values_and_the_credentials_origins() {
    let p = normalize(
        json!({"method": "PUT", "url": "https://bücher.example/a?b=1#frag", "headers": {"X-Token-Id": "value-123"}, "body": "x"}),
        Some(&creds()),
    );
    let p = p.unwrap_or_default();
    let pv = preview(&p, &creds());
    assert_eq!(pv["host"], "xn--bcher-kva.example");
    assert_eq!(pv["header_names"], json!(["x-token-id"]));
    assert_eq!(pv["headers"], json!([{"name": "x-token-id", "value": "value-123"}]));
    assert_eq!(pv["url"], "https://xn--bcher-kva.example/a?b=1");
    let with_cred =
        normalize(json!({"method": "GET", "url": "https://api.github.com/x", "credential": "gh"}), Some(&creds()))
            .unwrap_or_default();
    assert_eq!(
        preview(&with_cred, &creds())["credential_origins"],
        json!(["https://api.github.com:443", "http://127.0.0.1:9000"])
    );
}

#[test]
fn headers_that_change_the_meaning_are_flagged() {
    let p = normalize(
        json!({"method": "POST", "url": "https://x.example/items/1", "headers": {"X-HTTP-Method-Override": "delete", "X-Forwarded-Host": "admin.internal", "Accept": "application/json"}}),
        Some(&creds()),
    )
    .unwrap_or_default();
    let pv = preview(&p, &creds());
    let flagged: Vec<&str> = pv["headers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|h| h["changes_meaning"] == true)
        .filter_map(|h| h["name"].as_str())
        .collect();
    assert_eq!(flagged, vec!["x-forwarded-host", "x-http-method-override"]);
    assert_eq!(pv["effective_method"], "DELETE");
    assert_eq!(pv["destructive"], true);
    let kind = HttpRequest { secrets: Arc::new(NoSecrets), timeout: Duration::from_secs(1) };
    let typed = Payload::read(KindName::HttpRequest, &p).unwrap_or_else(|e| panic!("{e}"));
    assert!(kind.destructive(&typed), "a DELETE in disguise is offered Open only");
    assert_eq!(kind.facts(&typed).method.as_deref(), Some("DELETE"), "rules see the method it means");
}

struct NoSecrets;
impl SecretSource for NoSecrets {
    fn get(&self, _: &str) -> Result<String, assent_core::credentials::SecretError> {
        Err(assent_core::credentials::SecretError("none".into()))
    }
    fn set(&self, _: &str, _: &str) -> Result<(), assent_core::credentials::SecretError> {
        Ok(())
    }
    fn delete(&self, _: &str) -> Result<(), assent_core::credentials::SecretError> {
        Ok(())
    }
}

#[tokio::test]
async fn a_credential_is_checked_as_it_is_when_the_request_is_sent() {
    let payload =
        normalize(json!({"method": "GET", "url": "https://api.github.com/x", "credential": "gh"}), Some(&creds()))
            .unwrap_or_default();
    let payload = Payload::read(KindName::HttpRequest, &payload).unwrap_or_else(|e| panic!("{e}"));
    let p = dummy();
    let kind = HttpRequest { secrets: Arc::new(NoSecrets), timeout: Duration::from_secs(1) };
    // Removed since: nothing is sent.
    let gone = kind.apply(&p, &payload, &ApplyCtx::default()).await;
    assert_eq!(gone.error.map(|e| e.code).as_deref(), Some("credential_unavailable"));
    // Re-added under the same name for another origin only: not sent to the old one.
    let mut now = creds();
    if let Some(m) = now.get_mut("gh") {
        m.origins = vec!["https://other.example:443".into()];
    }
    let moved = kind.apply(&p, &payload, &ApplyCtx { credentials: Arc::new(now) }).await;
    assert_eq!(moved.error.map(|e| e.code).as_deref(), Some("host_not_allowed"));
}

fn dummy() -> Proposal {
    Proposal::applying("p_x", assent_core::payloads::KindName::HttpRequest, "a", Value::Null, None)
}
