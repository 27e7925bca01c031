//! # assent-client
//!
//! Assent's API as its clients use it: the CLI's commands, the agent hooks and the MCP server
//! all talk to a running Assent through this one [`Client`], so that proving the server,
//! errors, long-polls and the "gate a tool call" flow ([`gate`]) are written once.
//!
//! Where the server is and which token to send are looked up on every request (a
//! [`Resolve`]), because a long-lived client (the MCP server) may start before Assent does
//! and outlive a restart on another port. Before a token is sent to a listener, the listener
//! proves it holds the key the server wrote in its `server.json` (an HMAC of a fresh
//! challenge): a program that took the port after Assent stopped never sees a token.

mod gate;
pub mod loopback;
mod owner;

pub use gate::{Gate, Gated, LEASE_SECS, RECEIPT_ARG, decided, gate, mcp_server};
pub use owner::AgentToken;

use assent_core::proposal::Proposal;
use reqwest::{Method, StatusCode};
use serde_json::Value;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Where a running Assent listens, and the key it proves it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// `http://127.0.0.1:PORT` (no `/v1`).
    pub url: String,
    /// The proof key from `server.json`; none means the server cannot be proven, and no token
    /// is sent.
    pub proof_key: Option<Vec<u8>>,
}

/// Looks a value up when a request is made (none: not available now).
pub type Resolve<T> = Arc<dyn Fn() -> Option<T> + Send + Sync>;

/// Why a request did not get an answer from the API, or got a refusal.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No Assent is recorded as running, or nothing listens where it was.
    #[error("Assent is not running")]
    NotRunning,
    /// There is no agent or owner token to send.
    #[error("no token: {0}")]
    NoToken(String),
    /// The listener did not prove it is the server of this home: nothing was sent to it.
    #[error("the program listening at {url} did not prove it is the Assent server; no credential was sent")]
    Impostor {
        /// Where it listens.
        url: String,
    },
    /// The server could not be reached in time.
    #[error("{}", if *timed_out { format!("timed out talking to Assent at {url}") } else { format!("cannot reach Assent at {url}") })]
    Unreachable {
        /// Where.
        url: String,
        /// Whether it was a timeout.
        timed_out: bool,
    },
    /// The API refused: its stable code and message.
    #[error("{message} ({code})")]
    Api {
        /// The HTTP status.
        status: u16,
        /// The stable code.
        code: String,
        /// The message.
        message: String,
    },
    /// An answer that is not what the API answers.
    #[error("unexpected answer from Assent: {0}")]
    BadAnswer(String),
}

impl Error {
    /// The stable code, for a refusal; a word for the others.
    pub fn code(&self) -> &str {
        match self {
            Error::NotRunning => "not_running",
            Error::NoToken(_) => "no_token",
            Error::Impostor { .. } => "impostor",
            Error::Unreachable { .. } => "unreachable",
            Error::Api { code, .. } => code,
            Error::BadAnswer(_) => "bad_answer",
        }
    }

    /// Whether no Assent could be talked to at all (as opposed to one that refused).
    pub fn is_not_running(&self) -> bool {
        matches!(self, Error::NotRunning | Error::Impostor { .. } | Error::NoToken(_))
    }
}

/// A client of one Assent, as one principal (an agent, or the owner).
#[derive(Clone)]
pub struct Client {
    http: reqwest::Client,
    endpoint: Resolve<Endpoint>,
    token: Resolve<String>,
    /// Sent as `assent-client` (the server records decisions from `cli` as such).
    name: &'static str,
    /// The endpoint last proven, so a restarted server is proven again.
    proven: Arc<Mutex<Option<Endpoint>>>,
}

/// The longest one long-poll asks the server to hold a request.
pub const MAX_WAIT_STEP: u64 = 120;

/// How a wait for a settled proposal ended.
#[derive(Debug)]
pub enum Waited {
    /// Settled (decided, and applied or failed for the kinds Assent applies).
    Settled(Proposal),
    /// The deadline passed first: the proposal as last seen.
    TimedOut(Proposal),
    /// The caller stopped waiting.
    Stopped,
}

impl Client {
    /// A client that looks up the endpoint and the token on each request; `name` says which
    /// client it is (`cli`, `hook`, `mcp`).
    pub fn new(endpoint: Resolve<Endpoint>, token: Resolve<String>, name: &'static str) -> Result<Self, Error> {
        // Whichever comes first installs the process's TLS provider; the others find it there.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .no_proxy()
            .connect_timeout(Duration::from_secs(3))
            .redirect(reqwest::redirect::Policy::none())
            // The server closes a kept-alive connection idle for its header-read timeout (15 s by
            // default): a long-lived client (the MCP server, the proxy) that reused one as it
            // closed would get a broken answer, so idle ones are dropped before that.
            .pool_idle_timeout(Duration::from_secs(10))
            // Assent listens on plain HTTP over loopback: no certificate is ever needed, so the
            // system's roots are not loaded (reading them was most of a hook's run).
            .tls_certs_only(Vec::<reqwest::Certificate>::new())
            .build()
            .map_err(|e| Error::BadAnswer(format!("cannot build the HTTP client: {e}")))?;
        Ok(Client { http, endpoint, token, name, proven: Default::default() })
    }

    /// The endpoint now, proven before it is used with a token: the server of this home, not
    /// another program listening on its port.
    pub async fn endpoint(&self) -> Result<Endpoint, Error> {
        let ep = (self.endpoint)().ok_or(Error::NotRunning)?;
        if self.proven.lock().map(|p| p.as_ref() == Some(&ep)).unwrap_or(false) {
            return Ok(ep);
        }
        self.prove(&ep).await?;
        if let Ok(mut p) = self.proven.lock() {
            *p = Some(ep.clone());
        }
        Ok(ep)
    }

    /// Asks the listener to prove it holds the endpoint's key.
    async fn prove(&self, ep: &Endpoint) -> Result<(), Error> {
        let impostor = || Error::Impostor { url: ep.url.clone() };
        let Some(key) = &ep.proof_key else { return Err(impostor()) };
        let challenge = hex::encode(assent_core::secret::random_bytes::<24>());
        let ask = self
            .http
            .get(format!("{}/v1/hello?challenge={challenge}", ep.url.trim_end_matches('/')))
            .timeout(Duration::from_secs(5));
        let res = match ask.send().await {
            Ok(r) => r,
            Err(e) if e.is_connect() => return Err(Error::NotRunning),
            Err(_) => return Err(impostor()),
        };
        let v: Value = res.json().await.unwrap_or(Value::Null);
        match v["proof"].as_str() {
            Some(p) if assent_core::secret::proof_matches(key, &challenge, p) => Ok(()),
            _ => Err(impostor()),
        }
    }

    /// Sends one request to `/v1{path}`: the answer's JSON, or why there is none.
    pub async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        headers: &[(&str, String)],
        timeout: Duration,
    ) -> Result<Value, Error> {
        let ep = self.endpoint().await?;
        let token = (self.token)().ok_or_else(|| Error::NoToken("no token to send".into()))?;
        let url = ep.url.trim_end_matches('/');
        let mut req = self
            .http
            .request(method, format!("{url}/v1{path}"))
            .bearer_auth(token)
            .header("assent-client", self.name)
            .timeout(timeout);
        for (k, v) in headers {
            req = req.header(*k, v);
        }
        if let Some(b) = body {
            req = req.json(b);
        }
        let res = match req.send().await {
            Ok(r) => r,
            Err(e) if e.is_connect() => return Err(Error::NotRunning),
            Err(e) => return Err(Error::Unreachable { url: url.to_string(), timed_out: e.is_timeout() }),
        };
        let status = res.status();
        let bytes =
            res.bytes().await.map_err(|e| Error::Unreachable { url: url.to_string(), timed_out: e.is_timeout() })?;
        let v: Value =
            if bytes.is_empty() { Value::Null } else { serde_json::from_slice(&bytes).unwrap_or(Value::Null) };
        if status.is_success() {
            return Ok(v);
        }
        Err(refusal(status, &v))
    }

    /// Files a proposal (`{"kind", "payload", ...}`); a retry with the same idempotency key
    /// gets the first proposal back.
    pub async fn propose(&self, body: &Value, idempotency_key: Option<&str>) -> Result<Proposal, Error> {
        let headers: Vec<(&str, String)> =
            idempotency_key.map(|k| ("idempotency-key", k.to_string())).into_iter().collect();
        typed(self.call(Method::POST, "/proposals", Some(body), &headers, Duration::from_secs(30)).await?)
    }

    /// One proposal as it is now.
    pub async fn get(&self, id: &str) -> Result<Proposal, Error> {
        typed(self.call(Method::GET, &format!("/proposals/{}", enc(id)), None, &[], Duration::from_secs(30)).await?)
    }

    /// One long-poll: the proposal once it changes or settles, or after `secs` (at most
    /// [`MAX_WAIT_STEP`]).
    pub async fn wait_once(&self, id: &str, secs: u64) -> Result<Proposal, Error> {
        self.wait_step(id, secs, false).await
    }

    /// [`Client::wait_once`]; `last_word`: this process is the only waiter and will not come
    /// back, so a connection lost before the answer (this process killed) withdraws the proposal
    /// at once (`lost=withdraw`).
    async fn wait_step(&self, id: &str, secs: u64, last_word: bool) -> Result<Proposal, Error> {
        let secs = secs.clamp(1, MAX_WAIT_STEP);
        let lost = if last_word { "&lost=withdraw" } else { "" };
        let path = format!("/proposals/{}?wait={secs}{lost}", enc(id));
        typed(self.call(Method::GET, &path, None, &[], Duration::from_secs(secs + 15)).await?)
    }

    /// Waits until `current` settles, the deadline (if any) passes, or `stop` resolves: one
    /// loop of long-polls for every client.
    pub async fn wait_settled(
        &self,
        current: Proposal,
        deadline: Option<Instant>,
        stop: impl Future<Output = ()>,
    ) -> Result<Waited, Error> {
        self.wait_until(current, deadline, stop, false).await
    }

    /// [`Client::wait_settled`] for the one process that waits for `current` and will not come
    /// back (a hook): should it die mid-wait, SIGKILL included, Assent withdraws the proposal at
    /// once rather than when its lease lapses, so nobody decides a call its client has already
    /// run or dropped.
    pub async fn wait_settled_last(
        &self,
        current: Proposal,
        deadline: Option<Instant>,
        stop: impl Future<Output = ()>,
    ) -> Result<Waited, Error> {
        self.wait_until(current, deadline, stop, true).await
    }

    async fn wait_until(
        &self,
        current: Proposal,
        deadline: Option<Instant>,
        stop: impl Future<Output = ()>,
        last_word: bool,
    ) -> Result<Waited, Error> {
        tokio::pin!(stop);
        let mut current = current;
        while !current.settled {
            let step = match deadline.map(|d| d.saturating_duration_since(Instant::now())) {
                Some(left) if left.is_zero() => return Ok(Waited::TimedOut(current)),
                Some(left) => left.as_secs().max(1),
                None => MAX_WAIT_STEP,
            };
            tokio::select! {
                r = self.wait_step(&current.id, step, last_word) => current = r?,
                () = &mut stop => return Ok(Waited::Stopped),
            }
        }
        Ok(Waited::Settled(current))
    }

    /// Withdraws a pending proposal of this agent.
    pub async fn withdraw(&self, id: &str) -> Result<Proposal, Error> {
        typed(self.call(Method::DELETE, &format!("/proposals/{}", enc(id)), None, &[], Duration::from_secs(10)).await?)
    }
}

/// An answer read as a proposal.
fn typed(v: Value) -> Result<Proposal, Error> {
    serde_json::from_value(v).map_err(|e| Error::BadAnswer(format!("not a proposal: {e}")))
}

/// The error an API answer carries.
fn refusal(status: StatusCode, v: &Value) -> Error {
    Error::Api {
        status: status.as_u16(),
        code: v["error"]["code"].as_str().unwrap_or("error").to_string(),
        message: v["error"]["message"].as_str().unwrap_or("Assent refused the request").to_string(),
    }
}

/// A path segment, percent-encoded.
pub fn enc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
