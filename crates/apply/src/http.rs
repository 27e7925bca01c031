//! `http.request` `{"method", "url", "headers"?, "json"? | "body"?, "credential"?}`: a call to an
//! API, with the named credential's secret injected by Assent at apply time.
//!
//! At proposal time: HTTPS only (plain http only to a loopback origin a credential allows), a
//! credential only to the origins on its allow-list, and no header that would carry a secret
//! of the agent's own. At apply time: the secret is read from the keychain (trouble fails the
//! proposal `credential_unavailable`; no call is made without it), the credential is taken as
//! it is then (its scheme, and its allowed origins, checked again: `host_not_allowed` and
//! nothing sent when the origin is no longer on the list), `Idempotency-Key` is the proposal
//! id, redirects are never followed (the redirect is the result), and anything in the response
//! that echoes the secret, in any common encoding, is redacted before it is stored.

use assent_core::CoreError;
use assent_core::credentials::ASSENT_SETS as FORBIDDEN;
use assent_core::credentials::{CredentialMeta, Scheme, SecretSource, is_loopback_origin, valid_header_name};
use assent_core::invisible;
use assent_core::kinds::{ApplyCtx, ApplyOutcome, Kind, PrepareCtx, Prepared, clip_pub};
use assent_core::payloads::{self, KindName, Payload};
use assent_core::preview::{HeaderLine, HttpPreview, Preview};
use assent_core::proposal::Proposal;
use base64::Engine as _;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

const METHODS: [&str; 6] = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"];
/// Request headers that change what a request means to many servers and proxies (its method,
/// its target, who it claims to come from): the preview flags them for the person.
const MEANING_CHANGING: [&str; 12] = [
    "x-http-method-override",
    "x-http-method",
    "x-method-override",
    "x-original-method",
    "x-original-url",
    "x-rewrite-url",
    "x-forwarded-host",
    "x-forwarded-for",
    "x-forwarded-proto",
    "x-forwarded-prefix",
    "x-host",
    "forwarded",
];
/// Response headers kept in the result.
const KEPT_HEADERS: [&str; 7] =
    ["content-type", "content-length", "location", "etag", "retry-after", "x-request-id", "last-modified"];
/// Bytes of a response body kept in the result.
pub const MAX_RESULT_BODY: usize = 64 * 1024;

fn invalid(code: &'static str, message: impl Into<String>) -> CoreError {
    CoreError::invalid(code, message)
}

/// The `http.request` kind.
pub struct HttpRequest {
    /// Where credentials' secrets are read at apply time.
    pub secrets: Arc<dyn SecretSource>,
    /// Test hook and safety net: the longest a call may take.
    pub timeout: Duration,
}

fn origin_of(u: &url::Url) -> String {
    format!("{}://{}:{}", u.scheme(), u.host_str().unwrap_or(""), u.port_or_known_default().unwrap_or(0))
}

/// Validates and normalizes; `creds` is `None` when editing (the url and credential are fixed).
fn normalize(payload: Value, creds: Option<&BTreeMap<String, CredentialMeta>>) -> Result<Value, CoreError> {
    let Value::Object(map) = payload else {
        return Err(invalid("invalid_payload", "an http.request payload is an object: {\"method\", \"url\", ...}"));
    };
    let allowed = ["method", "url", "headers", "json", "body", "credential"];
    if let Some(k) = map.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(invalid(
            "invalid_payload",
            format!("unknown field `{}` in an http.request payload", clip_pub(k, 64)),
        ));
    }
    let method = map.get("method").and_then(Value::as_str).unwrap_or("").to_ascii_uppercase();
    if !METHODS.contains(&method.as_str()) {
        return Err(invalid("invalid_payload", format!("`method` must be one of {}", METHODS.join(", "))));
    }
    let raw_url =
        map.get("url").and_then(Value::as_str).ok_or_else(|| invalid("invalid_payload", "`url` is required"))?;
    let mut u = url::Url::parse(raw_url).map_err(|e| invalid("invalid_url", format!("`url` is not a URL: {e}")))?;
    if !u.username().is_empty() || u.password().is_some() {
        return Err(invalid("invalid_url", "credentials in the URL are not allowed; name a credential instead"));
    }
    if u.host_str().is_none_or(str::is_empty) {
        return Err(invalid("invalid_url", "the URL has no host"));
    }
    u.set_fragment(None);
    let credential = match map.get("credential") {
        None | Some(Value::Null) => None,
        Some(Value::String(c)) => Some(c.clone()),
        Some(_) => return Err(invalid("invalid_payload", "`credential` is a credential's name")),
    };
    let origin = origin_of(&u);
    match u.scheme() {
        "https" => {}
        "http" if credential.is_some() && is_loopback_origin(&origin) => {}
        "http" => {
            return Err(invalid(
                "insecure_url",
                "only https URLs are allowed (plain http only to a loopback origin a credential allows)",
            ));
        }
        s => return Err(invalid("invalid_url", format!("scheme {s} is not supported"))),
    }
    if let (Some(name), Some(creds)) = (&credential, creds) {
        let meta = creds
            .get(name)
            .ok_or_else(|| invalid("unknown_credential", format!("no credential `{}`", clip_pub(name, 64))))?;
        if !meta.origins.contains(&origin) {
            return Err(invalid(
                "host_not_allowed",
                format!("credential `{name}` may be sent only to {}; not to {origin}", meta.origins.join(", ")),
            ));
        }
        if let Scheme::Header(h) = &meta.scheme
            && headers_of(&map)?.contains_key(h)
        {
            return Err(invalid("forbidden_header", format!("header `{h}` carries the credential; Assent sets it")));
        }
    }
    let headers = headers_of(&map)?;
    let body = match (map.get("json"), map.get("body")) {
        (Some(_), Some(_)) => return Err(invalid("invalid_payload", "give `json` or `body`, not both")),
        (Some(j), None) => json!({ "json": j }),
        (None, Some(Value::String(b))) => json!({ "body": b }),
        (None, Some(Value::Null)) => json!({}),
        (None, Some(_)) => return Err(invalid("invalid_payload", "`body` is a string (use `json` for JSON)")),
        (None, None) => json!({}),
    };
    let mut out = json!({ "method": method, "url": u.as_str(), "headers": headers, "credential": credential });
    if let (Value::Object(o), Value::Object(b)) = (&mut out, body) {
        o.extend(b);
    }
    Ok(out)
}

fn headers_of(map: &Map<String, Value>) -> Result<BTreeMap<String, String>, CoreError> {
    let mut out = BTreeMap::new();
    let Some(h) = map.get("headers") else { return Ok(out) };
    let Value::Object(h) = h else {
        return Err(invalid("invalid_payload", "`headers` is an object of names to string values"));
    };
    for (k, v) in h {
        let name = k.to_ascii_lowercase();
        if !valid_header_name(&name) {
            return Err(invalid("invalid_header", format!("`{}` is not a header name", clip_pub(k, 64))));
        }
        if FORBIDDEN.contains(&name.as_str()) {
            let why = if name == "assent-receipt" { "the decision's receipt" } else { "name a credential for secrets" };
            return Err(invalid("forbidden_header", format!("header `{name}` is set by Assent ({why})")));
        }
        let v = v.as_str().ok_or_else(|| invalid("invalid_header", format!("header `{name}` must be a string")))?;
        if v.chars().count() > 8192 || v.chars().any(|c| c == '\r' || c == '\n' || c == '\0') {
            return Err(invalid("invalid_header", format!("header `{name}` has a line break or is too long")));
        }
        out.insert(name, v.to_string());
    }
    Ok(out)
}

/// Headers that override the request line's method (stored names are lower case).
const METHOD_OVERRIDES: [&str; 3] = ["x-http-method-override", "x-http-method", "x-method-override"];

/// The method a server may act on: an override header wins over the request line.
fn effective_method(req: &payloads::HttpRequest) -> String {
    METHOD_OVERRIDES
        .iter()
        .find_map(|h| req.headers.get(*h))
        .map(|m| m.trim().to_ascii_uppercase())
        .unwrap_or_else(|| req.method.clone())
}

/// The preview: exactly what will be sent (header values included: the agent's headers never
/// carry a credential, which Assent adds itself and never shows), with the headers that
/// change the request's meaning flagged, and the credential's allowed origins.
fn preview(req: &payloads::HttpRequest, creds: &BTreeMap<String, CredentialMeta>) -> Preview {
    let u = url::Url::parse(&req.url).ok();
    let mut found = BTreeMap::new();
    for text in [&req.method, &req.url].into_iter().chain(req.body.as_ref()).chain(req.credential.as_ref()) {
        invisible::scan_str(text, &mut found);
    }
    for (k, v) in &req.headers {
        invisible::scan_str(k, &mut found);
        invisible::scan_str(v, &mut found);
    }
    if let Some(j) = &req.json {
        invisible::scan_json(j, &mut found);
    }
    let (body_kind, body_text) = match (&req.json, &req.body) {
        (Some(j), _) => ("json", serde_json::to_string_pretty(j).unwrap_or_default()),
        (None, Some(b)) => ("text", b.clone()),
        (None, None) => ("none", String::new()),
    };
    let headers = req
        .headers
        .iter()
        .map(|(k, v)| HeaderLine {
            name: invisible::make_visible(k),
            value: invisible::make_visible(v),
            changes_meaning: MEANING_CHANGING.contains(&k.as_str()),
        })
        .collect();
    let effective = effective_method(req);
    let meta = req.credential.as_ref().and_then(|c| creds.get(c));
    Preview::HttpRequest(HttpPreview {
        method: req.method.clone(),
        url: req.url.clone(),
        scheme: u.as_ref().map(|u| u.scheme().to_string()),
        host: u.as_ref().and_then(|u| u.host_str().map(str::to_string)),
        port: u.as_ref().and_then(|u| u.port_or_known_default()),
        path: u.as_ref().map(|u| u.path().to_string()),
        query: u.as_ref().and_then(|u| u.query().map(str::to_string)),
        header_names: req.headers.keys().cloned().collect(),
        headers,
        destructive: req.method == "DELETE" || effective == "DELETE",
        effective_method: effective,
        body_kind: body_kind.to_string(),
        body: invisible::make_visible(&body_text),
        credential: req.credential.clone(),
        credential_scheme: meta.map(|m| m.scheme.label()),
        credential_origins: meta.map(|m| m.origins.clone()),
        invisible_characters: invisible::report(&found),
        content_pruned: false,
    })
}

/// A normalized request, typed; `code` when it is not one (it always is: normalizing makes it).
fn typed(normalized: Value, code: &'static str) -> Result<payloads::HttpRequest, CoreError> {
    payloads::read::<payloads::HttpRequest>(KindName::HttpRequest, &normalized).map_err(|e| invalid(code, e))
}

#[async_trait::async_trait]
impl Kind for HttpRequest {
    fn name(&self) -> KindName {
        KindName::HttpRequest
    }
    fn destructive(&self, payload: &Payload) -> bool {
        // What is not a request is treated as the dangerous case.
        match payload {
            Payload::HttpRequest(r) => r.method == "DELETE" || effective_method(r) == "DELETE",
            _ => true,
        }
    }

    fn facts(&self, payload: &Payload) -> assent_core::rules::Facts {
        let Payload::HttpRequest(r) = payload else { return assent_core::rules::Facts::default() };
        let overridden = METHOD_OVERRIDES.iter().find_map(|h| r.headers.get(*h).cloned());
        let u = url::Url::parse(&r.url).ok();
        assent_core::rules::Facts {
            method: Some(overridden.unwrap_or_else(|| r.method.clone()).trim().to_ascii_uppercase()),
            host: u.as_ref().and_then(assent_commands::host::of_url),
            origin: u.as_ref().and_then(assent_core::rules::origin_of),
            path: u.as_ref().map(|u| u.path().to_string()),
            credential: r.credential.clone(),
            ..Default::default()
        }
    }

    fn prepare(&self, payload: Value, ctx: &PrepareCtx) -> Result<Prepared, CoreError> {
        let req = typed(normalize(payload, Some(&ctx.credentials))?, "invalid_payload")?;
        let preview = preview(&req, &ctx.credentials);
        Ok(Prepared { payload: Payload::HttpRequest(req), base: None, preview })
    }

    fn edit(&self, payload: &Payload, edits: &Value) -> Result<Payload, CoreError> {
        let Payload::HttpRequest(r) = payload else {
            return Err(invalid("invalid_edits", payload.not_of(KindName::HttpRequest)));
        };
        let Value::Object(e) = edits else {
            return Err(invalid("invalid_edits", "edits to an http.request are {\"json\"?, \"body\"?, \"headers\"?}"));
        };
        if let Some(k) = e.keys().find(|k| !["json", "body", "headers"].contains(&k.as_str())) {
            return Err(invalid("invalid_edits", format!("`{}` of an http.request cannot be edited", clip_pub(k, 64))));
        }
        let mut merged = Payload::HttpRequest(r.clone()).to_value();
        if let Value::Object(m) = &mut merged {
            if e.contains_key("json") {
                m.remove("body");
            }
            if e.contains_key("body") {
                m.remove("json");
            }
            for (k, v) in e {
                m.insert(k.clone(), v.clone());
            }
        }
        let merged = normalize(merged, None).map_err(|err| invalid("invalid_edits", err.to_string()))?;
        typed(merged, "invalid_edits").map(Payload::HttpRequest)
    }

    async fn apply(&self, p: &Proposal, payload: &Payload, ctx: &ApplyCtx) -> ApplyOutcome {
        let Payload::HttpRequest(call) = payload else {
            return ApplyOutcome::failed(
                "integrity",
                format!("{}; no request was sent", payload.not_of(KindName::HttpRequest)),
            );
        };
        let secret = match call.credential.as_deref() {
            None => None,
            Some(name) => {
                // The credential as it is now: removed, or re-added for other origins since the
                // proposal was made, it is not sent where it is no longer allowed.
                let Some(meta) = ctx.credentials.get(name) else {
                    return ApplyOutcome::failed(
                        "credential_unavailable",
                        format!("credential `{name}` no longer exists; no request was sent"),
                    );
                };
                let origin = url::Url::parse(&call.url).map(|u| origin_of(&u));
                match origin {
                    Ok(o) if meta.origins.contains(&o) => {}
                    Ok(o) => {
                        return ApplyOutcome::failed(
                            "host_not_allowed",
                            format!(
                                "credential `{name}` may now be sent only to {}; not to {o}. No request was sent",
                                meta.origins.join(", ")
                            ),
                        );
                    }
                    Err(e) => return ApplyOutcome::failed("request_failed", format!("the URL is invalid: {e}")),
                }
                let (src, n) = (self.secrets.clone(), name.to_string());
                match tokio::task::spawn_blocking(move || src.get(&n)).await {
                    Ok(Ok(s)) => Some((name.to_string(), meta.scheme.clone(), s)),
                    Ok(Err(e)) => {
                        return ApplyOutcome::failed(
                            "credential_unavailable",
                            format!("credential `{name}`: {e}; no request was sent"),
                        );
                    }
                    Err(e) => {
                        return ApplyOutcome::failed(
                            "credential_unavailable",
                            format!("credential `{name}`: {e}; no request was sent"),
                        );
                    }
                }
            }
        };
        send(p, call, secret, self.timeout).await
    }
}

async fn send(
    p: &Proposal,
    call: &payloads::HttpRequest,
    secret: Option<(String, Scheme, String)>,
    timeout: Duration,
) -> ApplyOutcome {
    let client = match reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).timeout(timeout).build() {
        Ok(c) => c,
        Err(e) => return ApplyOutcome::failed("request_failed", format!("cannot build an HTTP client: {e}")),
    };
    let Ok(method) = reqwest::Method::from_bytes(call.method.as_bytes()) else {
        return ApplyOutcome::failed(
            "integrity",
            format!("`{}` is not an HTTP method; no request was sent", call.method),
        );
    };
    let mut req = client.request(method, &call.url).header("idempotency-key", &p.id);
    for (k, v) in &call.headers {
        req = req.header(k.as_str(), v.as_str());
    }
    // The decision's receipt, so the API can check offline that a person approved this very
    // request (the agent cannot send this header: it is one Assent sets).
    if let Some(r) = p.decision.as_ref().and_then(|d| d.receipt.as_deref()) {
        req = req.header("assent-receipt", r);
    }
    if let Some(j) = &call.json {
        req = req.json(j);
    } else if let Some(b) = &call.body {
        req = req.body(b.clone());
    }
    // Anything stored from the response that echoes the secret is redacted (see `redact`).
    let mut redactor = None;
    if let Some((_, scheme, s)) = &secret {
        let (name, value) = credential_header(scheme, s);
        req = match reqwest::header::HeaderValue::try_from(value.as_str()) {
            Ok(mut v) => {
                v.set_sensitive(true);
                req.header(name, v)
            }
            // Not a header's value: the request fails as the builder says.
            Err(_) => req.header(name, value),
        };
        redactor = Some(crate::redact::Redactor::new(s));
    }
    let clean = |t: &str, cut: bool| redactor.as_ref().map(|r| r.redact(t, cut)).unwrap_or_else(|| t.to_string());
    let res = match req.send().await {
        Ok(r) => r,
        Err(e) => {
            return ApplyOutcome::failed(
                "request_failed",
                format!("the request failed: {}", clean(&e.to_string(), false)),
            );
        }
    };
    let status = res.status();
    let mut headers = Map::new();
    for name in KEPT_HEADERS {
        if let Some(v) = res.headers().get(name).and_then(|v| v.to_str().ok()) {
            headers.insert(name.into(), json!(clean(v, false)));
        }
    }
    let bytes = res.bytes().await.unwrap_or_default();
    let truncated = bytes.len() > MAX_RESULT_BODY;
    let body = String::from_utf8_lossy(&bytes[..bytes.len().min(MAX_RESULT_BODY)]).to_string();
    let result = json!({
        "status": status.as_u16(),
        "headers": headers,
        "body": clean(&body, truncated),
        "body_bytes": bytes.len(),
        "body_truncated": truncated,
    });
    if status.is_client_error() || status.is_server_error() {
        return ApplyOutcome {
            result: Some(result),
            error: Some(assent_core::proposal::ErrorInfo {
                code: "http_status".into(),
                message: format!("the server answered {status}"),
            }),
        };
    }
    ApplyOutcome::applied(result)
}

#[cfg(test)]
mod tests;

/// The header a credential's secret is sent in, as its scheme says: `Authorization: Bearer S`,
/// `Authorization: Basic base64(S)`, or `NAME: S`. The HTTP applier's, and the MCP proxy's.
pub fn credential_header(scheme: &Scheme, secret: &str) -> (String, String) {
    match scheme {
        Scheme::Bearer => ("authorization".into(), format!("Bearer {secret}")),
        Scheme::Basic => {
            ("authorization".into(), format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(secret)))
        }
        Scheme::Header(h) => (h.clone(), secret.to_string()),
    }
}
