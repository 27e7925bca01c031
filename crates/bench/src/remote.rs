//! `remote`: a decision from a paired phone, through the remote listener, next to the same
//! decision through the owner API (the desktop's own path to the engine, over HTTP). From the
//! moment the phone sends its signed answer (the tap, after the passkey signed) to the agent's
//! wait returning. A software authenticator (passkey-rs) signs, as the phone's passkey would;
//! its signing is before the clock starts, as on a phone it happens before the request leaves.

use crate::load::{approve, client, propose, waiter};
use crate::{ms, pct, server, spread_max};
use anyhow::{Context, Result, bail};
use assent_softkey::SoftKey;
use serde_json::{Value, json};
use std::process::Command;
use std::time::{Duration, Instant};

/// The phone: its HTTP client with the session cookie, and its passkey.
struct Phone {
    http: reqwest::Client,
    origin: String,
    cookie: String,
    key: SoftKey,
}

impl Phone {
    async fn post(&self, path: &str, body: &Value) -> Result<Value> {
        let r = self
            .http
            .post(format!("{}{path}", self.origin))
            .header("Origin", &self.origin)
            .header("Cookie", format!("__Host-assent={}", self.cookie))
            .json(body)
            .send()
            .await?;
        let status = r.status();
        let v: Value = r.json().await.unwrap_or(Value::Null);
        if !status.is_success() {
            bail!("{path} answered {status}: {v}");
        }
        Ok(v)
    }

    async fn sign(&mut self, options: &Value) -> Result<Value> {
        self.key.sign(&self.origin, options).await.map_err(|e| anyhow::anyhow!("passkey: {e}"))
    }
}

/// Turns the listener on, pairs a phone, and returns it logged in.
async fn pair(bin: &std::path::Path, home: &std::path::Path) -> Result<Phone> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let origin = format!("http://localhost:{port}");
    let cli = |args: &[&str]| -> Result<Value> {
        let o = Command::new(bin).arg("--home").arg(home).args(args).env("ASSENT_OWNER_CREDENTIAL", "file").output()?;
        if !o.status.success() {
            bail!("assent {args:?}: {}", String::from_utf8_lossy(&o.stderr));
        }
        Ok(serde_json::from_slice(&o.stdout)?)
    };
    cli(&["remote", "enable", "--origin", &origin, "--port", &port.to_string(), "--push-after", "86400", "--json"])?;
    let link = cli(&["remote", "pair", "--json"])?["link"].as_str().context("no link")?.to_string();
    let code = link.split("#pair=").nth(1).context("no code")?.to_string();
    let http = reqwest::Client::builder()
        .no_proxy()
        .resolve("localhost", std::net::SocketAddr::from(([127, 0, 0, 1], port)))
        .build()?;
    let mut phone = Phone { http, origin, cookie: String::new(), key: SoftKey::new(None) };
    let asked = phone.post("/api/pair/options", &json!({ "code": code, "name": "bench" })).await?;
    let created =
        phone.key.register(&phone.origin, &asked["options"]).await.map_err(|e| anyhow::anyhow!("passkey: {e}"))?;
    let r = phone
        .http
        .post(format!("{}/api/pair", phone.origin))
        .header("Origin", &phone.origin)
        .json(&json!({ "ceremony": asked["ceremony"], "credential": created }))
        .send()
        .await?;
    let cookie = r.headers().get("set-cookie").and_then(|v| v.to_str().ok()).context("no session cookie")?;
    phone.cookie = cookie.split(';').next().unwrap_or("").trim_start_matches("__Host-assent=").to_string();
    Ok(phone)
}

pub async fn bench() -> Result<()> {
    const ROUNDS: usize = 200;
    println!("\n== remote: a phone's signed decision -> the agent's wait returns; {ROUNDS} rounds each");
    let server::Fresh { srv, bin, home, mut agents, owner } = server::fresh(1)?;
    let agent = agents.remove(0);
    let mut phone = pair(&bin, &home).await?;
    let (ca, co) = (client()?, client()?);
    let mut remote = Vec::with_capacity(ROUNDS);
    let mut direct = Vec::with_capacity(ROUNDS);
    for i in 0..2 * (ROUNDS + 10) {
        let id = propose(&ca, &srv.base, &agent, i).await?;
        let wait = waiter(&ca, &srv.base, &agent, &id);
        let by_phone = i % 2 == 0;
        let sent = if by_phone {
            // What the phone does before the tap's request: read the proposal, ask, sign.
            let shown: Value = phone
                .http
                .get(format!("{}/api/proposals/{id}", phone.origin))
                .header("Cookie", format!("__Host-assent={}", phone.cookie))
                .send()
                .await?
                .json()
                .await?;
            let ask = json!({ "items": [{ "id": id, "payload_sha256": shown["proposal"]["payload_sha256"] }], "outcome": "approve" });
            let asked = phone.post("/api/decisions/options", &ask).await?;
            let mut answer = ask.clone();
            answer["nonce"] = asked["nonce"].clone();
            answer["credential"] = phone.sign(&asked["options"]).await?;
            tokio::time::sleep(Duration::from_millis(5)).await;
            let sent = Instant::now();
            let done = phone.post("/api/decisions", &answer).await?;
            if done["decided"] != 1 {
                bail!("the phone's decision: {done}");
            }
            sent
        } else {
            tokio::time::sleep(Duration::from_millis(15)).await;
            let sent = Instant::now();
            approve(&co, &srv.base, &owner, &id).await?;
            sent
        };
        let (answered, status) = wait.await??;
        if status != "approved" {
            bail!("the waiter saw {status}");
        }
        if i >= 20 {
            let v = if by_phone { &mut remote } else { &mut direct };
            v.push(answered.saturating_duration_since(sent));
        }
    }
    remote.sort();
    direct.sort();
    println!("  phone (remote listener, assertion verified):  {}", spread_max(&remote));
    println!("  the desktop's path (owner API), the ceiling:  {}", spread_max(&direct));
    println!(
        "  => the phone's path costs p50 +{} over the desktop's (the passkey check, the challenge derived again, the counter stored)",
        ms(pct(&remote, 0.5).saturating_sub(pct(&direct, 0.5)))
    );
    Ok(())
}
