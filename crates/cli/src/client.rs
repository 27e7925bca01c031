//! The CLI's client of the running server: [`assent_client::Client`] pointed at this home's
//! `server.json` and tokens, with its failures turned into the CLI's exit codes and messages.

use crate::ExitError;
use crate::home::Home;
use anyhow::Result;
use assent_client::{Endpoint, Resolve};
use reqwest::Method;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

pub use assent_boundary::home::{AgentAuth, agent_token};

/// A connected client, and the home it belongs to (for messages).
pub struct Client {
    /// The typed client.
    pub api: assent_client::Client,
    home: Home,
}

/// The endpoint recorded in this home's `server.json`, looked up on each request.
pub fn endpoint(home: &Home) -> Resolve<Endpoint> {
    let home = home.clone();
    Arc::new(move || home.endpoint())
}

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

/// A client failure as the CLI reports it.
pub fn failure(home: &Home, e: assent_client::Error) -> anyhow::Error {
    match e {
        assent_client::Error::NotRunning => not_running(home),
        assent_client::Error::Impostor { url } => ExitError::new(
            crate::exit::NOT_RUNNING,
            format!(
                "the program listening at {url} did not prove it is the Assent server of {}; no credential was sent. \
                 If Assent stopped, start it again with `assent serve` (or the desktop app)",
                home.dir.display()
            ),
        )
        .into(),
        other => other.into(),
    }
}

impl Client {
    /// Callers check that a server is recorded first: "not running" says more than a missing
    /// token.
    fn with_token(home: &Home, token: String) -> Result<Self> {
        let api = assent_client::Client::new(endpoint(home), Arc::new(move || Some(token.clone())), "cli")?;
        Ok(Self { api, home: home.clone() })
    }

    /// A client with the owner credential.
    pub fn owner(home: &Home) -> Result<Self> {
        if home.server().is_none() {
            return Err(not_running(home));
        }
        let mode = crate::config::Config::load(&home.config())?.owner_mode()?;
        let owner = assent_secrets::owner::load(&home.dir, mode, &assent_secrets::Keychain::default()).map_err(|e| {
            anyhow::anyhow!("cannot read the owner credential ({e}); decisions need the keychain (or owner.token) of the user running Assent")
        })?;
        Self::with_token(home, owner.token)
    }

    /// A client with an agent token: `--token-file`, else `ASSENT_TOKEN`, else the home's.
    pub fn agent(home: &Home, auth: &AgentAuth) -> Result<Self> {
        if home.server().is_none() {
            return Err(not_running(home));
        }
        let token = agent_token(home, auth)?;
        Self::with_token(home, token)
    }

    /// Sends a request to `/v1{path}`; a refusal keeps its code (see
    /// [`assent_client::Error::Api`]), a dead or unproven server is the not-running exit.
    pub async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        headers: &[(&str, String)],
    ) -> Result<Value> {
        self.api.call(method, path, body, headers, Duration::from_secs(300)).await.map_err(|e| self.failed(e))
    }

    /// A failure of [`Client::api`] as the CLI reports it.
    pub fn failed(&self, e: assent_client::Error) -> anyhow::Error {
        failure(&self.home, e)
    }
}

/// Read commands act as the owner unless an agent token was named.
pub(crate) fn reader(home: &Home, auth: &AgentAuth) -> Result<Client> {
    if auth.token_file.is_some() || std::env::var("ASSENT_TOKEN").is_ok_and(|t| !t.trim().is_empty()) {
        Client::agent(home, auth)
    } else {
        Client::owner(home)
    }
}
