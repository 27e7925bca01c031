//! A client of the running server's API, for the commands that talk to it.

use crate::ExitError;
use crate::home::{Home, read_token};
use anyhow::Result;
use reqwest::{Method, StatusCode};
use serde_json::Value;
use std::path::PathBuf;
use std::time::Duration;

/// How the CLI identifies itself.
#[derive(Debug, Clone, clap::Args)]
pub struct AgentAuth {
    /// Act as an agent with the token in this file (default: the home's agent.token).
    #[arg(long, global = true, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
}

/// A connected client.
pub struct Client {
    http: reqwest::Client,
    base: String,
    token: String,
    /// The key from `server.json` the server must prove it holds before the token is sent.
    proof_key: Option<Vec<u8>>,
    proven: tokio::sync::OnceCell<()>,
}

/// An error answered by the API.
#[derive(Debug)]
pub struct ApiFailure {
    /// HTTP status.
    pub status: StatusCode,
    /// Stable code.
    pub code: String,
    /// Message.
    pub message: String,
}

impl std::fmt::Display for ApiFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}
impl std::error::Error for ApiFailure {}

fn not_running(home: &Home) -> anyhow::Error {
    ExitError::new(
        crate::exit::NOT_RUNNING,
        format!(
            "Assent is not running for {}: start it with `assent serve` (or open the desktop app)",
            home.dir.display()
        ),
    )
    .into()
}

impl Client {
    fn base(home: &Home) -> Result<(String, Option<Vec<u8>>)> {
        let info = home.server().ok_or_else(|| not_running(home))?;
        let key = info.proof_key.as_deref().and_then(|k| hex::decode(k).ok());
        Ok((format!("{}/v1", info.url.trim_end_matches('/')), key))
    }

    fn new(base: (String, Option<Vec<u8>>), token: String) -> Result<Self> {
        Ok(Self { http: Self::http()?, base: base.0, token, proof_key: base.1, proven: Default::default() })
    }

    /// Asks the listener at the recorded address to prove it is the server of this home (it
    /// holds the key in `server.json`); nothing is sent with a token until it has.
    async fn prove(&self, home: &Home) -> Result<()> {
        let impostor = || -> anyhow::Error {
            ExitError::new(
                crate::exit::NOT_RUNNING,
                format!(
                    "the program listening at {} did not prove it is the Assent server of {}; no credential was sent. \
                     If Assent stopped, start it again with `assent serve` (or the desktop app)",
                    self.base.trim_end_matches("/v1"),
                    home.dir.display()
                ),
            )
            .into()
        };
        let Some(key) = &self.proof_key else { return Err(impostor()) };
        let challenge = hex::encode(assent_core::secret::random_bytes::<24>());
        let ask = self.http.get(format!("{}/hello?challenge={challenge}", self.base)).timeout(Duration::from_secs(5));
        let res = match ask.send().await {
            Ok(r) => r,
            Err(e) if e.is_connect() => return Err(not_running(home)),
            Err(_) => return Err(impostor()),
        };
        let v: Value = tokio::time::timeout(Duration::from_secs(5), res.json())
            .await
            .ok()
            .and_then(Result::ok)
            .unwrap_or(Value::Null);
        match v["proof"].as_str() {
            Some(p) if assent_core::secret::proof_matches(key, &challenge, p) => Ok(()),
            _ => Err(impostor()),
        }
    }

    fn http() -> Result<reqwest::Client> {
        Ok(reqwest::Client::builder().no_proxy().connect_timeout(Duration::from_secs(3)).build()?)
    }

    /// A client with the owner credential.
    pub fn owner(home: &Home) -> Result<Self> {
        let base = Self::base(home)?;
        let mode = crate::config::Config::load(&home.config())?.owner_mode()?;
        let owner = assent_secrets::owner::load(&home.dir, mode, &assent_secrets::Keychain::default()).map_err(|e| {
            anyhow::anyhow!("cannot read the owner credential ({e}); decisions need the keychain (or owner.token) of the user running Assent")
        })?;
        Self::new(base, owner.token)
    }

    /// A client with an agent token: `--token-file`, else `ASSENT_TOKEN`, else the home's.
    pub fn agent(home: &Home, auth: &AgentAuth) -> Result<Self> {
        let base = Self::base(home)?;
        let token = agent_token(home, auth)?;
        Self::new(base, token)
    }

    /// Sends a request; an API error becomes [`ApiFailure`], a dead server a plain message.
    pub async fn call(
        &self,
        home: &Home,
        method: Method,
        path: &str,
        body: Option<&Value>,
        headers: &[(&str, String)],
    ) -> Result<(StatusCode, Value)> {
        self.proven.get_or_try_init(|| self.prove(home)).await?;
        let mut req = self
            .http
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(&self.token)
            .header("assent-client", "cli");
        for (k, v) in headers {
            req = req.header(*k, v);
        }
        if let Some(b) = body {
            req = req.json(b);
        }
        let res = match req.send().await {
            Ok(r) => r,
            Err(e) if e.is_connect() => return Err(not_running(home)),
            Err(e) => return Err(e.into()),
        };
        let status = res.status();
        let bytes = res.bytes().await?;
        let v: Value =
            if bytes.is_empty() { Value::Null } else { serde_json::from_slice(&bytes).unwrap_or(Value::Null) };
        if status.is_success() {
            return Ok((status, v));
        }
        let code = v["error"]["code"].as_str().unwrap_or("error").to_string();
        let message = v["error"]["message"].as_str().unwrap_or("the server refused the request").to_string();
        Err(ApiFailure { status, code, message }.into())
    }
}

/// The agent token: `--token-file`, else `ASSENT_TOKEN`, else the home's `agent.token`.
pub fn agent_token(home: &Home, auth: &AgentAuth) -> Result<String> {
    match (&auth.token_file, std::env::var("ASSENT_TOKEN")) {
        (Some(f), _) => read_token(f),
        (None, Ok(t)) if !t.trim().is_empty() => Ok(t.trim().to_string()),
        _ => read_token(&home.agent_token()),
    }
}
