//! Answering from a phone, end to end over real HTTP: the real server's remote listener, turned
//! on by the real CLI, and a software authenticator (passkey-rs) standing in for the phone's
//! passkey. Pairing, login, and decisions each signed by the passkey over a challenge derived
//! from what they decide; then what an attacker who holds the phone's cookie, a used assertion
//! or the agent's words would try, each refused with nothing decided.

use crate::harness::{Server, stdout};
use assent_softkey::SoftKey;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use std::time::Duration;

/// A phone: its browser (cookies by hand, `Origin` as a browser sends it) and its passkey.
pub(crate) struct Phone {
    pub(crate) http: reqwest::Client,
    pub(crate) origin: String,
    pub(crate) cookie: Option<String>,
    pub(crate) key: SoftKey,
}

/// A free loopback port for the listener (its origin names it before it listens).
pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

impl Phone {
    pub(crate) fn new(port: u16) -> Phone {
        let http = reqwest::Client::builder()
            .no_proxy()
            .resolve("localhost", std::net::SocketAddr::from(([127, 0, 0, 1], port)))
            .timeout(Duration::from_secs(60))
            .build()
            .unwrap();
        Phone { http, origin: format!("http://localhost:{port}"), cookie: None, key: SoftKey::new(None) }
    }

    /// A phone that reaches the listener at `origin` (`https://HOST:PORT`) through `addr` (a TLS
    /// proxy standing in for a tunnel, its certificate not checked).
    pub(crate) fn at(origin: &str, addr: std::net::SocketAddr) -> Phone {
        let host = origin.trim_start_matches("https://").split(':').next().unwrap();
        let http = reqwest::Client::builder()
            .no_proxy()
            .resolve(host, addr)
            .danger_accept_invalid_certs(true)
            .timeout(Duration::from_secs(60))
            .build()
            .unwrap();
        Phone { http, origin: origin.to_string(), cookie: None, key: SoftKey::new(None) }
    }

    pub(crate) async fn send(&mut self, method: Method, path: &str, body: Option<&Value>) -> (StatusCode, Value) {
        self.try_send(method, path, body).await.unwrap()
    }

    /// [`Phone::send`]; an error when the request got no answer (the connection cut).
    pub(crate) async fn try_send(
        &mut self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> reqwest::Result<(StatusCode, Value)> {
        let mut r = self.http.request(method.clone(), format!("{}{path}", self.origin));
        if method != Method::GET {
            r = r.header("Origin", &self.origin);
        }
        if let Some(c) = &self.cookie {
            r = r.header("Cookie", format!("__Host-assent={c}"));
        }
        if let Some(b) = body {
            r = r.json(b);
        }
        let res = r.send().await?;
        let status = res.status();
        if let Some(set) = res.headers().get("set-cookie").and_then(|v| v.to_str().ok()) {
            assert!(
                ["HttpOnly", "Secure", "SameSite=Strict", "Path=/"].iter().all(|a| set.contains(a)),
                "the session cookie: {set}"
            );
            let value = set.split(';').next().unwrap().trim_start_matches("__Host-assent=");
            self.cookie = Some(value.to_string()).filter(|v| !v.is_empty());
        }
        let text = res.text().await?;
        Ok((status, serde_json::from_str(&text).unwrap_or(Value::String(text))))
    }

    pub(crate) async fn post(&mut self, path: &str, body: Value) -> (StatusCode, Value) {
        self.send(Method::POST, path, Some(&body)).await
    }

    pub(crate) async fn get(&mut self, path: &str) -> (StatusCode, Value) {
        self.send(Method::GET, path, None).await
    }

    /// Pairs with the code in `link` as `name`.
    pub(crate) async fn pair(&mut self, link: &str, name: &str) -> (StatusCode, Value) {
        let code = link.split("#pair=").nth(1).unwrap().split('&').next().unwrap();
        let (s, v) = self.post("/api/pair/options", json!({ "code": code, "name": name })).await;
        if s != StatusCode::OK {
            return (s, v);
        }
        let created = self.key.register(&self.origin, &v["options"]).await.unwrap();
        self.post("/api/pair", json!({ "ceremony": v["ceremony"], "credential": created })).await
    }

    /// Signs request options with the passkey.
    pub(crate) async fn sign(&mut self, options: &Value) -> Value {
        self.key.sign(&self.origin, options).await.unwrap()
    }

    pub(crate) async fn login(&mut self) -> (StatusCode, Value) {
        let (s, v) = self.post("/api/login/options", json!({})).await;
        assert_eq!(s, StatusCode::OK, "{v}");
        let credential = self.sign(&v["options"]).await;
        self.post("/api/login", json!({ "ceremony": v["ceremony"], "credential": credential })).await
    }

    /// Asks to decide: the nonce and the options to sign.
    pub(crate) async fn ask(&mut self, ask: &Value) -> (StatusCode, Value) {
        self.post("/api/decisions/options", ask.clone()).await
    }

    /// The signed answer to `asked`, saying `said`.
    pub(crate) async fn answer(&mut self, asked: &Value, said: &Value) -> Value {
        let credential = self.sign(&asked["options"]).await;
        let mut body = said.clone();
        body["nonce"] = asked["nonce"].clone();
        body["credential"] = credential;
        body
    }

    /// Decides `ask` as a person would: ask, sign, answer.
    pub(crate) async fn decide(&mut self, ask: Value) -> (StatusCode, Value) {
        let (s, asked) = self.ask(&ask).await;
        if s != StatusCode::OK {
            return (s, asked);
        }
        let body = self.answer(&asked, &ask).await;
        self.post("/api/decisions", body).await
    }

    /// The proposal as the phone shows it.
    async fn shown(&mut self, id: &str) -> Value {
        let (s, v) = self.get(&format!("/api/proposals/{id}")).await;
        assert_eq!(s, StatusCode::OK, "{v}");
        v["proposal"].clone()
    }

    /// What a decision on `id` names: its id and the hash of the payload shown.
    pub(crate) async fn item(&mut self, id: &str) -> Value {
        let p = self.shown(id).await;
        json!({ "id": id, "payload_sha256": p["payload_sha256"] })
    }
}

/// A server with its remote listener on at `http://localhost:PORT`, and a phone paired as
/// `pixel` and logged in.
pub(crate) async fn paired() -> (Server, Phone) {
    paired_with(&[]).await
}

/// [`paired`], the server started with `env` as well.
pub(crate) async fn paired_with(env: &[(&str, &str)]) -> (Server, Phone) {
    let s = Server::start_with("", env).await;
    let port = free_port();
    let origin = format!("http://localhost:{port}");
    let o = s.cli(&["remote", "enable", "--origin", &origin, "--port", &port.to_string(), "--json"]);
    assert!(o.status.success(), "{}", crate::harness::stderr(&o));
    let status: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(status["enabled"], true);
    assert_eq!(status["address"], format!("127.0.0.1:{port}"));
    let mut phone = Phone::new(port);
    let link = pairing(&s);
    let (st, v) = phone.pair(&link, "pixel").await;
    assert_eq!(st, StatusCode::OK, "{v}");
    assert_eq!(v["device"], "pixel");
    assert!(phone.cookie.is_some(), "pairing logs the phone in");
    (s, phone)
}

pub(crate) fn pairing(s: &Server) -> String {
    let o = s.cli(&["remote", "pair", "--json"]);
    assert!(o.status.success(), "{}", crate::harness::stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    v["link"].as_str().unwrap().to_string()
}

pub(crate) async fn status_of(s: &Server, id: &str) -> Value {
    s.get(id, &s.owner.clone()).await.1
}

/// Waits until `id` is settled as far as Assent takes it (applied, failed, or decided only).
async fn settled(s: &Server, id: &str, want: &str) -> Value {
    for _ in 0..400 {
        let p = status_of(s, id).await;
        if p["status"] == want {
            return p;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("{id} never became {want}: {}", status_of(s, id).await);
}

#[tokio::test]
async fn a_phone_pairs_logs_in_and_decides_each_decision_signed() {
    let (s, mut phone) = paired().await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.md");

    // The inbox as the phone sees it, with the hash of what it shows.
    let write = s
        .propose(json!({"kind": "file.write", "payload": {"path": path.to_str().unwrap(), "content": "hello\n"}}))
        .await;
    let id = write["id"].as_str().unwrap().to_string();
    let (st, page) = phone.get("/api/proposals?status=pending").await;
    assert_eq!(st, StatusCode::OK, "{page}");
    assert_eq!(page["items"][0]["id"], id.as_str());
    assert_eq!(page["items"][0]["payload_sha256"].as_str().unwrap().len(), 64);
    let (_, detail) = phone.get(&format!("/api/proposals/{id}")).await;
    assert_eq!(detail["proposal"]["preview"]["type"], "file.write", "the diff the app shows: {detail}");
    assert_eq!(detail["audit"][0]["to"], "pending");

    // Approve: Assent writes the file, and the phone can see it was applied.
    let item = phone.item(&id).await;
    let (st, done) = phone.decide(json!({ "items": [item], "outcome": "approve" })).await;
    assert_eq!(st, StatusCode::OK, "{done}");
    assert_eq!((done["decided"].as_u64(), done["results"][0]["result"].as_str()), (Some(1), Some("decided")));
    let p = settled(&s, &id, "applied").await;
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "hello\n");
    assert_eq!(p["decision"]["channel"], "remote");
    assert_eq!(p["decision"]["device"], "pixel");
    // Its receipt says so too, signed.
    let c = crate::receipts::decision_receipt(&s, &p).await;
    assert_eq!((c.channel.as_str(), c.decided_by.as_str()), ("remote", "owner:pixel"));
    assert_eq!(phone.shown(&id).await["status"], "applied", "the phone learns the write happened");
    let (_, audit) = s.req(Method::GET, &format!("/proposals/{id}/audit"), Some(&s.owner.clone()), None).await;
    let decided = audit["items"].as_array().unwrap().iter().find(|e| e["to"] == "approved").unwrap().clone();
    assert_eq!((decided["channel"].as_str(), decided["detail"]["device"].as_str()), (Some("remote"), Some("pixel")));

    // Reject with a reason: the agent's wait receives it.
    let id = s.propose_tool("rm -rf build").await;
    let agent = s.agent.clone();
    let url = format!("{}/v1/proposals/{id}?wait=60", s.url);
    let http = s.http.clone();
    let waiting =
        tokio::spawn(async move { http.get(url).bearer_auth(agent).send().await.unwrap().json::<Value>().await });
    tokio::time::sleep(Duration::from_millis(200)).await;
    let item = phone.item(&id).await;
    let (st, v) = phone.decide(json!({ "items": [item], "outcome": "reject", "reason": "not the build folder" })).await;
    assert_eq!(st, StatusCode::OK, "{v}");
    let heard = waiting.await.unwrap().unwrap();
    assert_eq!(
        (heard["status"].as_str(), heard["decision"]["reason"].as_str()),
        (Some("rejected"), Some("not the build folder"))
    );

    // Approve a tool call with the person's edits to its input.
    let id = s.propose_tool("git push --force").await;
    let item = phone.item(&id).await;
    let edits = json!({ "input": { "command": "git push" } });
    let (st, v) = phone.decide(json!({ "items": [item], "outcome": "approve", "edits": edits })).await;
    assert_eq!(st, StatusCode::OK, "{v}");
    let p = status_of(&s, &id).await;
    assert_eq!(p["decision"]["edited_payload"]["input"]["command"], "git push", "{p}");

    // Refine with feedback.
    let id = s.propose_tool("npm publish").await;
    let item = phone.item(&id).await;
    let (st, v) =
        phone.decide(json!({ "items": [item], "outcome": "refine", "feedback": "bump the version first" })).await;
    assert_eq!(st, StatusCode::OK, "{v}");
    assert_eq!(status_of(&s, &id).await["decision"]["feedback"], "bump the version first");

    // A batch: one assertion over every proposal in it.
    let (a, b) = (s.propose_tool("echo a").await, s.propose_tool("echo b").await);
    let items = json!([phone.item(&a).await, phone.item(&b).await]);
    let (st, v) = phone.decide(json!({ "items": items, "outcome": "reject", "reason": "not now" })).await;
    assert_eq!((st, v["decided"].as_u64()), (StatusCode::OK, Some(2)), "{v}");

    // A new session later, with the passkey alone (no name typed).
    phone.post("/api/logout", json!({})).await;
    assert_eq!(phone.get("/api/me").await.0, StatusCode::UNAUTHORIZED);
    let (st, v) = phone.login().await;
    assert_eq!((st, v["device"].as_str()), (StatusCode::OK, Some("pixel")), "{v}");
    let o = s.cli(&["remote", "devices", "--json"]);
    let devices: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(devices["items"][0]["name"], "pixel");
    assert!(devices["items"][0]["last_used_at"].is_string());
    assert!(!stdout(&o).contains("passkey") && !stdout(&o).contains("credential"), "never the passkey: {devices}");
}

#[tokio::test]
async fn an_assertion_decides_only_what_it_was_made_for_and_only_once() {
    let (s, mut phone) = paired().await;
    let (a, b) = (s.propose_tool("rm -rf /srv/a").await, s.propose_tool("rm -rf /srv/b").await);
    let (ia, ib) = (phone.item(&a).await, phone.item(&b).await);

    // Signed to reject A; sent as an approval of A, a rejection of B, with another reason, or
    // with edits: each refused, nothing decided.
    let ask = json!({ "items": [ia], "outcome": "reject", "reason": "no" });
    let (_, asked) = phone.ask(&ask).await;
    let signed = phone.answer(&asked, &ask).await;
    let swaps = [
        json!({ "outcome": "approve" }),
        json!({ "items": [ib] }),
        json!({ "reason": "yes, go ahead" }),
        json!({ "items": [ia, ib] }),
    ];
    for swap in swaps {
        let mut forged = signed.clone();
        for (k, v) in swap.as_object().unwrap() {
            forged[k] = v.clone();
        }
        // The nonce is spent by the first try: each forgery gets a fresh ask, signed for the
        // original decision, and then sent changed.
        let (_, asked) = phone.ask(&ask).await;
        let honest = phone.answer(&asked, &ask).await;
        forged["nonce"] = honest["nonce"].clone();
        forged["credential"] = honest["credential"].clone();
        let (st, v) = phone.post("/api/decisions", forged.clone()).await;
        assert_eq!((st, v["error"]["code"].as_str()), (StatusCode::FORBIDDEN, Some("assertion_mismatch")), "{forged}");
    }
    assert_eq!(status_of(&s, &a).await["status"], "pending");
    assert_eq!(status_of(&s, &b).await["status"], "pending");

    // The honest answer works once; the same answer again decides nothing.
    let (_, asked) = phone.ask(&ask).await;
    let honest = phone.answer(&asked, &ask).await;
    assert_eq!(phone.post("/api/decisions", honest.clone()).await.0, StatusCode::OK);
    let (st, v) = phone.post("/api/decisions", honest).await;
    assert_eq!((st, v["error"]["code"].as_str()), (StatusCode::FORBIDDEN, Some("challenge_invalid")));
    // The first signature, never sent, sent now: older than the passkey's last use, it is
    // refused (its counter is behind), and what it named stays as decided.
    let (st, v) = phone.post("/api/decisions", signed).await;
    assert_eq!((st, v["error"]["code"].as_str()), (StatusCode::FORBIDDEN, Some("authenticator_cloned")), "{v}");
    assert_eq!(status_of(&s, &a).await["status"], "rejected");

    // A payload the phone did not show, and a proposal no longer pending.
    let (st, v) =
        phone.ask(&json!({ "items": [{ "id": b, "payload_sha256": "00".repeat(32) }], "outcome": "approve" })).await;
    assert_eq!((st, v["error"]["code"].as_str()), (StatusCode::CONFLICT, Some("payload_changed")));
    let (st, v) = phone.ask(&json!({ "items": [ia], "outcome": "approve" })).await;
    assert_eq!((st, v["error"]["code"].as_str()), (StatusCode::CONFLICT, Some("invalid_state")));

    // A cookie alone never decides: a made-up nonce, or a real one with no valid signature.
    let fake = json!({ "nonce": "ab".repeat(32), "items": [ib], "outcome": "approve", "credential": signed_garbage() });
    let (st, v) = phone.post("/api/decisions", fake).await;
    assert_eq!((st, v["error"]["code"].as_str()), (StatusCode::FORBIDDEN, Some("challenge_invalid")));
    let ask_b = json!({ "items": [ib], "outcome": "approve" });
    let (_, asked) = phone.ask(&ask_b).await;
    let mut unsigned = ask_b.clone();
    unsigned["nonce"] = asked["nonce"].clone();
    unsigned["credential"] = signed_garbage();
    let (st, v) = phone.post("/api/decisions", unsigned.clone()).await;
    assert!(st == StatusCode::FORBIDDEN || st == StatusCode::BAD_REQUEST, "{st} {v}");
    // A field the decision does not take (no "allow similar" from the phone) is refused whole.
    let mut extra = unsigned;
    extra["allow_similar"] = json!({});
    let (st, v) = phone.post("/api/decisions", extra).await;
    assert_eq!((st, v["error"]["code"].as_str()), (StatusCode::BAD_REQUEST, Some("invalid_json")), "{v}");
    assert_eq!(status_of(&s, &b).await["status"], "pending");

    // A cloned authenticator: a copy of the passkey from before its last use signs with a
    // counter that did not go up.
    let copy = phone.key.stored();
    let (st, _) = phone.login().await;
    assert_eq!(st, StatusCode::OK);
    let mut clone = Phone::new(phone.origin.rsplit(':').next().unwrap().parse().unwrap());
    clone.key = SoftKey::new(copy);
    let (st, v) = clone.login().await;
    assert_eq!((st, v["error"]["code"].as_str()), (StatusCode::FORBIDDEN, Some("authenticator_cloned")), "{v}");

    // Revoked: its session ends at once, and its passkey opens nothing.
    let o = s.cli(&["remote", "revoke", "pixel"]);
    assert!(o.status.success(), "{}", crate::harness::stderr(&o));
    let (st, v) = phone.ask(&ask_b).await;
    assert_eq!((st, v["error"]["code"].as_str()), (StatusCode::UNAUTHORIZED, Some("session_required")));
    let (st, v) = phone.login().await;
    assert_eq!((st, v["error"]["code"].as_str()), (StatusCode::FORBIDDEN, Some("unknown_device")));
    assert_eq!(status_of(&s, &b).await["status"], "pending");

    // Every refusal is in the remote log, and nothing secret is.
    let o = s.cli(&["remote", "log", "--json"]);
    let log = stdout(&o);
    for event in ["paired", "decision_refused", "login_refused", "revoked"] {
        assert!(log.contains(&format!("\"event\":\"{event}\"")), "{event} in {log}");
    }
    assert!(log.contains("assertion_mismatch") && log.contains("authenticator_cloned"), "{log}");
}

/// A credential shaped right and signed by no one.
pub(crate) fn signed_garbage() -> Value {
    json!({
        "id": "AAAA", "rawId": "AAAA", "type": "public-key",
        "response": { "authenticatorData": "AAAA", "clientDataJSON": "AAAA", "signature": "AAAA" },
        "extensions": {}
    })
}

#[tokio::test]
async fn the_front_door_answers_only_its_origin_and_guessing_closes_nothing() {
    let (s, mut phone) = paired().await;
    let id = s.propose_tool("curl -X DELETE https://api.example.com/users/1").await;
    let port: u16 = phone.origin.rsplit(':').next().unwrap().parse().unwrap();
    let raw = |host: &str| {
        let http = phone.http.clone();
        let url = format!("http://127.0.0.1:{port}/api/me");
        let host = host.to_string();
        async move { http.get(url).header("Host", host).send().await.unwrap() }
    };
    // Another name pointed at this port (DNS rebinding): 421.
    assert_eq!(raw("evil.example").await.status(), StatusCode::MISDIRECTED_REQUEST);
    // A change from another site, or none named: 403.
    let cookie = format!("__Host-assent={}", phone.cookie.clone().unwrap());
    let cross = phone
        .http
        .post(format!("{}/api/decisions/options", phone.origin))
        .header("Origin", "https://evil.example")
        .header("Cookie", &cookie)
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(cross.status(), StatusCode::FORBIDDEN);
    assert_eq!(cross.json::<Value>().await.unwrap()["error"]["code"], "wrong_origin");
    // The agent's token and the owner's open nothing here; no route creates a proposal.
    for token in [s.agent.clone(), s.owner.clone()] {
        let r = phone.http.get(format!("{}/api/proposals", phone.origin)).bearer_auth(token).send().await.unwrap();
        assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    }
    let body = json!({"kind": "tool.call", "payload": {"tool": "Bash", "input": {"command": "id"}}});
    for path in ["/v1/proposals", "/api/proposals", "/proposals"] {
        let (st, v) = phone.post(path, body.clone()).await;
        assert_eq!(
            (st, v["error"]["code"].as_str()),
            (StatusCode::METHOD_NOT_ALLOWED, Some("method_not_allowed")),
            "{path}"
        );
    }
    let (_, pending) = s.req(Method::GET, "/proposals?status=pending", Some(&s.owner.clone()), None).await;
    assert_eq!(pending["items"].as_array().unwrap().len(), 1, "nothing was filed through the listener");
    // Too big a body: 256 KiB anywhere but a decision, which carries the person's edit of a
    // proposal (up to 10 MiB).
    let (st, v) = phone.send(Method::PUT, "/api/push", Some(&json!({ "pad": "x".repeat(256 << 10) }))).await;
    assert_eq!((st, v["error"]["code"].as_str()), (StatusCode::PAYLOAD_TOO_LARGE, Some("body_too_large")));
    let (st, v) = phone.post("/api/decisions/options", json!({ "pad": "x".repeat(3 << 20) })).await;
    assert_eq!(
        (st, v["error"]["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_json")),
        "read, then refused"
    );
    let (st, v) = phone.post("/api/decisions/options", json!({ "pad": "x".repeat(10 << 20) })).await;
    assert_eq!((st, v["error"]["code"].as_str()), (StatusCode::PAYLOAD_TOO_LARGE, Some("body_too_large")));

    // A pairing code works once.
    let link = pairing(&s);
    let mut tablet = Phone::new(port);
    assert_eq!(tablet.pair(&link, "tablet").await.0, StatusCode::OK);
    let mut thief = Phone::new(port);
    let (st, v) = thief.pair(&link, "thief").await;
    assert_eq!((st, v["error"]["code"].as_str()), (StatusCode::FORBIDDEN, Some("pairing_code_invalid")));
    // A name already paired does not use a code up.
    let link = pairing(&s);
    let (st, v) = thief.pair(&link, "pixel").await;
    assert_eq!((st, v["error"]["code"].as_str()), (StatusCode::CONFLICT, Some("device_exists")));

    // Guessing codes closes nothing (a code is 256 random bits): after 50 wrong ones, the code
    // the owner just made pairs, and the paired phone reads and decides throughout.
    let guess = json!({ "code": "0".repeat(64), "name": "thief" });
    for i in 1..=50 {
        let (st, v) = thief.post("/api/pair/options", guess.clone()).await;
        assert_eq!(
            (st, v["error"]["code"].as_str()),
            (StatusCode::FORBIDDEN, Some("pairing_code_invalid")),
            "failure {i}"
        );
    }
    assert_eq!(status_of(&s, &id).await["status"], "pending");
    let item = phone.item(&id).await;
    let (st, v) = phone.decide(json!({"items": [item], "outcome": "reject", "reason": "not now"})).await;
    assert_eq!(st, StatusCode::OK, "the owner's phone decides while strangers guess: {v}");
    assert_eq!(status_of(&s, &id).await["status"], "rejected");
    let link = pairing(&s);
    assert_eq!(Phone::new(port).pair(&link, "laptop").await.0, StatusCode::OK, "a fresh code pairs");

    // Each refusal at the door is in the remote log, with its code.
    let log = stdout(&s.cli(&["remote", "log", "--json"]));
    for code in ["wrong_host", "wrong_origin", "remote_takes_no_tokens", "body_too_large"] {
        assert!(log.contains("front_refused") && log.contains(&format!("\"{code}\"")), "{code} in {log}");
    }

    // Turning the listener off ends every session; on again, the old cookie opens nothing.
    assert!(s.cli(&["remote", "disable"]).status.success());
    let off = phone.http.get(format!("{}/api/me", phone.origin)).send().await;
    assert!(off.is_err(), "nothing listens");
    let origin = phone.origin.clone();
    assert!(s.cli(&["remote", "enable", "--origin", &origin]).status.success(), "the port is remembered");
    let (st, v) = phone.get("/api/me").await;
    assert_eq!((st, v["error"]["code"].as_str()), (StatusCode::UNAUTHORIZED, Some("session_required")));
    let o = s.cli(&["remote", "status", "--json"]);
    let status: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!((status["enabled"].as_bool(), status["devices"].as_u64()), (Some(true), Some(3)), "{status}");
}
