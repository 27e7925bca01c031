//! `http.request` with a credential from a real Secret Service, against a real local server
//! that records what arrives.

use crate::harness::{Bus, Recorder, Server, cli_with_stdin, private_bus_with_keyring, stderr, stdout};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

const SECRET: &str = "s3cret-token-1f9a7c";

async fn server_with_credential(rec: &Recorder) -> (Bus, Server) {
    let bus = private_bus_with_keyring();
    let s = Server::start_with("", &[("DBUS_SESSION_BUS_ADDRESS", &bus.address)]).await;
    let out = cli_with_stdin(
        s.home(),
        &s.env,
        &["credential", "add", "api", "--host", &rec.url, "--host", "api.example.com"],
        SECRET,
    );
    assert!(out.status.success(), "{}: {}", out.status, stderr(&out));
    assert!(!stdout(&out).contains(SECRET));
    (bus, s)
}

async fn propose(s: &Server, payload: Value) -> (StatusCode, Value) {
    s.try_propose(json!({"kind": "http.request", "payload": payload})).await
}

async fn approve_and_settle(s: &Server, id: &str) -> Value {
    let (st, d) = s.decide(id, json!({"outcome": "approve"})).await;
    assert_eq!(st, StatusCode::OK, "{d}");
    s.req(Method::GET, &format!("/proposals/{id}?wait=20"), Some(&s.agent), None).await.1
}

#[tokio::test]
async fn the_secret_reaches_the_allowed_host_only_and_is_never_stored() {
    let rec = Recorder::start().await;
    let (_bus, mut s) = server_with_credential(&rec).await;
    let (st, p) = propose(
        &s,
        json!({"method": "post", "url": format!("{}/echo-auth", rec.url), "json": {"title": "hello"}, "headers": {"X-Trace": "t-1"}, "credential": "api"}),
    )
    .await;
    assert_eq!(st, StatusCode::CREATED, "{p}");
    let pv = &p["preview"];
    assert_eq!((pv["method"].as_str(), pv["host"].as_str()), (Some("POST"), Some("127.0.0.1")));
    assert_eq!(pv["credential"], "api");
    assert_eq!(pv["credential_scheme"], "bearer");
    assert_eq!(pv["header_names"], json!(["x-trace"]));
    assert!(pv["body"].as_str().unwrap().contains("hello"));
    assert!(rec.seen().is_empty(), "nothing sent before a decision");

    let id = p["id"].as_str().unwrap().to_string();
    let done = approve_and_settle(&s, &id).await;
    assert_eq!(done["status"], "applied", "{done}");
    let seen = rec.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].header("authorization"), Some(format!("Bearer {SECRET}").as_str()));
    assert_eq!(seen[0].header("idempotency-key"), Some(id.as_str()));
    assert_eq!(seen[0].header("x-trace"), Some("t-1"));
    assert_eq!(seen[0].body, r#"{"title":"hello"}"#);
    assert_eq!(done["result"]["status"], 200);
    assert_eq!(done["result"]["headers"]["x-request-id"], "r-1");
    let body = done["result"]["body"].as_str().unwrap();
    assert!(body.contains("[REDACTED]") && !body.contains(SECRET), "the echoed secret is redacted: {body}");

    // Not to a host off the allow-list, and not over plain http without a credential.
    let (st, e) = propose(&s, json!({"method": "GET", "url": "https://evil.example/x", "credential": "api"})).await;
    assert_eq!((st, e["error"]["code"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("host_not_allowed")));
    let (st, e) = propose(&s, json!({"method": "GET", "url": format!("{}/x", rec.url)})).await;
    assert_eq!((st, e["error"]["code"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("insecure_url")));
    let (st, e) = propose(&s, json!({"method": "GET", "url": format!("{}/x", rec.url), "credential": "nope"})).await;
    assert_eq!((st, e["error"]["code"].as_str()), (StatusCode::NOT_FOUND, Some("unknown_credential")));

    // The secret is nowhere: responses, the audit export, the database, the log.
    let (_, creds) = s.req(Method::GET, "/credentials", Some(&s.owner), None).await;
    assert_eq!(creds["items"][0]["name"], "api");
    assert!(!creds.to_string().contains(SECRET));
    let export = s.cli(&["export"]);
    assert!(!stdout(&export).contains(SECRET));
    let listed = s.cli(&["credential", "list"]);
    assert!(stdout(&listed).contains("api") && !stdout(&listed).contains(SECRET), "{}", stdout(&listed));
    s.stop();
    let stored = s.stored_bytes();
    assert!(!stored.is_empty());
    assert!(!String::from_utf8_lossy(&stored).contains(SECRET), "the secret is in the database");
    assert!(!s.stderr().contains(SECRET), "the secret was logged");
}

#[tokio::test]
async fn redirects_are_the_result_never_followed() {
    let rec = Recorder::start().await;
    let (_bus, s) = server_with_credential(&rec).await;
    let (_, p) =
        propose(&s, json!({"method": "GET", "url": format!("{}/redirect", rec.url), "credential": "api"})).await;
    let done = approve_and_settle(&s, p["id"].as_str().unwrap()).await;
    assert_eq!(done["status"], "applied");
    assert_eq!(done["result"]["status"], 302);
    assert_eq!(done["result"]["headers"]["location"], "/stolen");
    let seen = rec.seen();
    assert_eq!(seen.len(), 1, "the redirect was not followed: {seen:?}");

    let (_, p) =
        propose(&s, json!({"method": "DELETE", "url": format!("{}/fail", rec.url), "credential": "api"})).await;
    assert_eq!(p["preview"]["destructive"], true);
    let done = approve_and_settle(&s, p["id"].as_str().unwrap()).await;
    assert_eq!(done["status"], "failed");
    assert_eq!(done["error"]["code"], "http_status");
    assert_eq!(done["result"]["status"], 500);
}

#[tokio::test]
async fn keychain_trouble_fails_without_sending() {
    let rec = Recorder::start().await;
    let (bus, s) = server_with_credential(&rec).await;
    let (_, p) =
        propose(&s, json!({"method": "PUT", "url": format!("{}/x", rec.url), "body": "data", "credential": "api"}))
            .await;
    // The secret disappears from the keychain behind Assent's back.
    let out = std::process::Command::new("secret-tool")
        .args(["search", "--all", "service", "assent"])
        .env("DBUS_SESSION_BUS_ADDRESS", &bus.address)
        .output()
        .unwrap();
    // secret-tool prints the attributes on standard error.
    let listing = format!("{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let user = listing
        .split("attribute.username = ")
        .skip(1)
        .map(|rest| rest.split(['\n', ' ']).next().unwrap_or("").split("attribute.").next().unwrap_or(""))
        .find(|u| u.starts_with("credential:"))
        .unwrap()
        .to_string();
    let cleared = std::process::Command::new("secret-tool")
        .args(["clear", "service", "assent", "username", &user])
        .env("DBUS_SESSION_BUS_ADDRESS", &bus.address)
        .status()
        .unwrap();
    assert!(cleared.success());
    let done = approve_and_settle(&s, p["id"].as_str().unwrap()).await;
    assert_eq!(done["status"], "failed");
    assert_eq!(done["error"]["code"], "credential_unavailable");
    assert!(rec.seen().is_empty(), "no call without the secret");

    // Removing a credential removes it from Assent; without a keychain, adding fails plainly.
    assert!(s.cli(&["credential", "remove", "api"]).status.success());
    let (_, creds) = s.req(Method::GET, "/credentials", Some(&s.owner), None).await;
    assert_eq!(creds["items"], json!([]));
    drop(bus);
    let out = cli_with_stdin(s.home(), &s.env, &["credential", "add", "again", "--host", "api.example.com"], SECRET);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("keychain"), "{}\n{}", stderr(&out), s.stderr());
}

#[tokio::test]
async fn credential_metadata_is_validated() {
    let rec = Recorder::start().await;
    let (_bus, s) = server_with_credential(&rec).await;
    for (args, code) in [
        (vec!["credential", "add", "api", "--host", "x.example"], "conflict"),
        (vec!["credential", "add", "plain", "--host", "http://api.example.com"], "invalid_host"),
        (vec!["credential", "add", "Bad Name", "--host", "x.example"], "invalid_credential_name"),
        (vec!["credential", "add", "hdr", "--host", "x.example", "--scheme", "header:bad header"], "invalid_scheme"),
    ] {
        let out = cli_with_stdin(s.home(), &s.env, &args, SECRET);
        assert!(!out.status.success(), "{args:?}");
        assert!(stderr(&out).contains(code), "{args:?}: {}", stderr(&out));
    }
    let out = cli_with_stdin(
        s.home(),
        &s.env,
        &["credential", "add", "hdr", "--host", &rec.url, "--scheme", "header:X-Api-Key"],
        "k-123456",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let (_, p) = propose(&s, json!({"method": "GET", "url": format!("{}/h", rec.url), "credential": "hdr"})).await;
    approve_and_settle(&s, p["id"].as_str().unwrap()).await;
    assert_eq!(rec.seen()[0].header("x-api-key"), Some("k-123456"));
    assert_eq!(rec.seen()[0].header("authorization"), None);
}

/// A secret full of the characters encoders change.
const AWKWARD: &str = "q\"u/o+t=e\\s&3<cr>et==";

#[tokio::test]
async fn an_echoed_secret_is_redacted_in_every_common_encoding_and_at_the_cut() {
    let rec = Recorder::start().await;
    let bus = private_bus_with_keyring();
    let mut s = Server::start_with("", &[("DBUS_SESSION_BUS_ADDRESS", &bus.address)]).await;
    let out = cli_with_stdin(s.home(), &s.env, &["credential", "add", "odd", "--host", &rec.url], AWKWARD);
    assert!(out.status.success(), "{}", stderr(&out));
    for path in ["/echo-encoded", "/echo-cut", "/echo-auth"] {
        let (_, p) =
            propose(&s, json!({"method": "GET", "url": format!("{}{path}", rec.url), "credential": "odd"})).await;
        let done = approve_and_settle(&s, p["id"].as_str().unwrap()).await;
        assert_eq!(done["status"], "applied", "{done}");
        let body = done["result"]["body"].as_str().unwrap();
        assert!(body.contains("[REDACTED]"), "{path}: {body}");
        // No run of 8 characters of the secret, in any of the encodings the server used.
        let json = serde_json::to_string(AWKWARD).unwrap();
        let json = &json[1..json.len() - 1];
        for form in [AWKWARD, json] {
            let chars: Vec<char> = form.chars().collect();
            for w in chars.windows(8) {
                let piece: String = w.iter().collect();
                assert!(!body.contains(&piece), "{path}: `{piece}` survived in {body}");
            }
        }
        assert!(!body.contains("s%263%3Ccr%3Eet"), "{path}: the URL-encoded form survived: {body}");
        assert!(!body.contains("s&amp;3&lt;cr"), "{path}: the HTML form survived: {body}");
    }
    s.stop();
    let stored = String::from_utf8_lossy(&s.stored_bytes()).to_string();
    assert!(!stored.contains("s&3<cr>et"), "the secret reached the database");
}

#[tokio::test]
async fn a_credential_is_sent_only_where_it_is_allowed_when_the_request_is_sent() {
    let (a, b) = (Recorder::start().await, Recorder::start().await);
    let (_bus, s) = server_with_credential(&a).await;
    let (st, p) = propose(&s, json!({"method": "POST", "url": format!("{}/deploy", a.url), "credential": "api"})).await;
    assert_eq!(st, StatusCode::CREATED, "{p}");
    let id = p["id"].as_str().unwrap().to_string();
    // The person sees where the credential may go.
    let (_, full) = s.get(&id, &s.owner).await;
    assert!(full["preview"]["credential_origins"].to_string().contains(&a.url.replace("http://", "")), "{full}");
    assert!(stdout(&s.cli(&["show", &id])).contains("may be sent only to"));

    // The credential is removed and a new secret of the same name is allowed only for B.
    assert!(s.cli(&["credential", "remove", "api"]).status.success());
    let out = cli_with_stdin(s.home(), &s.env, &["credential", "add", "api", "--host", &b.url], "other-secret-2b7e");
    assert!(out.status.success(), "{}", stderr(&out));
    let done = approve_and_settle(&s, &id).await;
    assert_eq!(done["status"], "failed", "{done}");
    assert_eq!(done["error"]["code"], "host_not_allowed");
    assert!(a.seen().is_empty(), "A never receives B's secret");
    assert!(b.seen().is_empty());
}

#[tokio::test]
async fn header_values_are_shown_to_the_person_and_meaning_changers_flagged() {
    let rec = Recorder::start().await;
    let (_bus, s) = server_with_credential(&rec).await;
    let (_, p) = propose(
        &s,
        json!({"method": "POST", "url": format!("{}/items/1", rec.url), "credential": "api",
               "headers": {"X-HTTP-Method-Override": "DELETE", "Accept": "application/json"}}),
    )
    .await;
    let id = p["id"].as_str().unwrap();
    let (_, full) = s.get(id, &s.owner).await;
    let pv = &full["preview"];
    assert_eq!(pv["effective_method"], "DELETE");
    assert_eq!(pv["destructive"], true);
    let hs = pv["headers"].as_array().unwrap();
    assert!(
        hs.iter()
            .any(|h| h["name"] == "x-http-method-override" && h["value"] == "DELETE" && h["changes_meaning"] == true)
    );
    assert!(
        hs.iter().any(|h| h["name"] == "accept" && h["value"] == "application/json" && h["changes_meaning"].is_null())
    );
    assert!(!full.to_string().contains(SECRET), "never the credential's value");
    let shown = stdout(&s.cli(&["show", id]));
    assert!(
        shown.contains("x-http-method-override: DELETE") && shown.contains("changes what the request means"),
        "{shown}"
    );
}
