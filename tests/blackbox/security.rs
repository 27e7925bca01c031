//! The security items: loopback only, DNS rebinding and browsers, tokens, agents never decide,
//! secrets never logged or stored.

use crate::harness::{Server, cli, stderr};
use reqwest::{Method, StatusCode};
use serde_json::json;

#[tokio::test]
async fn refuses_to_listen_anywhere_but_loopback() {
    let home = tempfile::tempdir().unwrap();
    let env = vec![("ASSENT_OWNER_CREDENTIAL".to_string(), "file".to_string())];
    for addr in ["0.0.0.0", "::"] {
        let out = cli(home.path(), &env, &["serve", "--port", "0", "--bind", addr]);
        assert!(!out.status.success());
        assert!(stderr(&out).contains("loopback"), "{}", stderr(&out));
    }
    std::fs::write(home.path().join("config.toml"), "bind = \"0.0.0.0\"\n").unwrap();
    let out = cli(home.path(), &env, &["serve", "--port", "0"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("loopback"), "{}", stderr(&out));
}

#[tokio::test]
async fn rebinding_and_browser_requests_are_refused_without_cors() {
    let s = Server::start().await;
    let id = s.propose_tool("ls").await;
    let port = s.url.rsplit(':').next().unwrap().to_string();
    let client = &s.http;
    let url = format!("{}/v1/proposals/{id}", s.url);
    for host in [
        "evil.example",
        "evil.example:80",
        &format!("evil.example:{port}"),
        "127.0.0.1",
        "127.0.0.1:1",
        "localhost.evil.example",
    ] {
        let r = client.get(&url).bearer_auth(&s.owner).header("host", host).send().await.unwrap();
        assert_eq!(r.status(), StatusCode::FORBIDDEN, "Host {host}");
    }
    for host in [format!("127.0.0.1:{port}"), format!("localhost:{port}")] {
        let r = client.get(&url).bearer_auth(&s.owner).header("host", host.as_str()).send().await.unwrap();
        assert_eq!(r.status(), StatusCode::OK, "Host {host}");
    }
    for origin in ["http://evil.example", "null", &s.url] {
        let r = client
            .post(format!("{url}/decision"))
            .bearer_auth(&s.owner)
            .header("origin", origin)
            .json(&json!({"outcome": "approve"}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::FORBIDDEN, "Origin {origin}");
        assert!(r.headers().keys().all(|k| !k.as_str().starts_with("access-control-")));
    }
    let r = client.get(&url).bearer_auth(&s.owner).header("sec-fetch-site", "cross-site").send().await.unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    let r = client.request(Method::OPTIONS, &url).header("access-control-request-method", "POST").send().await.unwrap();
    assert!(r.headers().keys().all(|k| !k.as_str().starts_with("access-control-")), "no CORS, ever");
    assert_eq!(s.get(&id, &s.agent).await.1["status"], "pending", "nothing was decided");
}

#[tokio::test]
async fn an_agent_token_can_never_decide() {
    let s = Server::start().await;
    let id = s.propose_tool("deploy").await;
    let (_, other) = s.req(Method::POST, "/agents", Some(&s.owner), Some(json!({"name": "helper"}))).await;
    let other = other["token"].as_str().unwrap().to_string();
    for tok in [s.agent.clone(), other.clone()] {
        for outcome in ["approve", "reject", "refine"] {
            let (st, e) = s
                .req(
                    Method::POST,
                    &format!("/proposals/{id}/decision"),
                    Some(&tok),
                    Some(json!({"outcome": outcome, "feedback": "x"})),
                )
                .await;
            assert_eq!(st, StatusCode::FORBIDDEN, "{e}");
        }
        let (st, _) = s
            .req(Method::POST, "/decisions", Some(&tok), Some(json!({"items": [{"id": id, "outcome": "approve"}]})))
            .await;
        assert_eq!(st, StatusCode::FORBIDDEN);
        let (st, _) = s.req(Method::POST, "/agents", Some(&tok), Some(json!({"name": "sneaky"}))).await;
        assert_eq!(st, StatusCode::FORBIDDEN);
        let (st, _) = s.req(Method::GET, "/audit", Some(&tok), None).await;
        assert_eq!(st, StatusCode::FORBIDDEN);
    }
    let (_, p) = s.get(&id, &s.owner).await;
    assert_eq!(p["status"], "pending");
    assert!(p["decision"].is_null());
    let (_, audit) = s.req(Method::GET, &format!("/proposals/{id}/audit"), Some(&s.owner), None).await;
    assert_eq!(audit["items"].as_array().unwrap().len(), 1, "only the creation was recorded");
    // The owner does not propose: proposals always carry an agent's name.
    let (st, _) = s
        .req(Method::POST, "/proposals", Some(&s.owner), Some(json!({"kind": "tool.call", "payload": {"tool": "x"}})))
        .await;
    assert_eq!(st, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn tokens_are_hashed_revocable_and_never_logged() {
    let mut s = Server::start().await;
    let (st, added) = s.req(Method::POST, "/agents", Some(&s.owner), Some(json!({"name": "ci-bot"}))).await;
    assert_eq!(st, StatusCode::CREATED);
    let tok = added["token"].as_str().unwrap().to_string();
    assert!(tok.len() >= 50, "256 random bits");
    let (st, e) = s.req(Method::POST, "/agents", Some(&s.owner), Some(json!({"name": "ci-bot"}))).await;
    assert_eq!((st, e["error"]["code"].as_str()), (StatusCode::CONFLICT, Some("conflict")));
    let (st, e) = s.req(Method::POST, "/agents", Some(&s.owner), Some(json!({"name": "Bad Name"}))).await;
    assert_eq!((st, e["error"]["code"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("invalid_agent_name")));
    let (st, p) = s
        .req(Method::POST, "/proposals", Some(&tok), Some(json!({"kind": "tool.call", "payload": {"tool": "x"}})))
        .await;
    assert_eq!(st, StatusCode::CREATED);
    assert_eq!(p["agent"], "ci-bot", "the agent comes from the token");
    let (_, list) = s.req(Method::GET, "/agents", Some(&s.owner), None).await;
    assert!(!list.to_string().contains(&tok), "tokens are never listed");

    let (st, _) = s.req(Method::DELETE, "/agents/ci-bot", Some(&s.owner), None).await;
    assert_eq!(st, StatusCode::NO_CONTENT);
    let (st, _) = s.req(Method::GET, "/proposals", Some(&tok), None).await;
    assert_eq!(st, StatusCode::UNAUTHORIZED, "revoked at once");
    let (st, _) = s.req(Method::DELETE, "/agents/ci-bot", Some(&s.owner), None).await;
    assert_eq!(st, StatusCode::NOT_FOUND);

    // Nothing secret in the database file, the WAL, or the debug log.
    s.stop();
    let stored = s.stored_bytes();
    assert!(!stored.is_empty());
    let hay = String::from_utf8_lossy(&stored);
    for secret in [&tok, &s.agent, &s.owner] {
        assert!(!hay.contains(secret.as_str()), "a token is stored in clear");
        assert!(!s.stderr().contains(secret.as_str()), "a token was logged");
    }
    assert!(s.stderr().contains("request"), "the debug log was on: {}", s.stderr());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        for f in ["agent.token", "owner.token"] {
            let mode = std::fs::metadata(s.home().join(f)).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "{f}");
        }
    }
}

#[tokio::test]
async fn the_audit_log_is_append_only_at_the_database_level() {
    let mut s = Server::start().await;
    let id = s.propose_tool("ls").await;
    s.decide(&id, json!({"outcome": "approve"})).await;
    s.stop();
    // The check can fail: the database is there and takes what is allowed.
    let n = s.sql("SELECT count(*) FROM audit").unwrap();
    assert_eq!(n, "2");
    assert!(s.sql("UPDATE proposals SET title = 'renamed'").is_ok());
    for sql in ["UPDATE audit SET actor = 'someone'", "DELETE FROM audit", "UPDATE proposals SET payload = '{}'"] {
        assert!(s.sql(sql).is_err(), "{sql} was allowed");
    }
    assert_eq!(s.sql("SELECT count(*) FROM audit").unwrap(), "2");
}
