//! `assent run PROPOSAL`: runs a command a rule allowed only confined, confined.
//!
//! A hook answers such an allow by rewriting the call to this command. What runs is what Assent
//! stored and decided, never the agent's text quoted once more: the approved payload's command
//! in its working folder, under the confinement the decision names. The decision's receipt is
//! checked first (signed by this Assent, for this proposal, approved, for exactly this payload,
//! naming the same confinement), so a tampered store or a proposal decided otherwise runs
//! nothing. Where the kernel cannot confine as the profile says, nothing runs.
//!
//! The ticket, the check and the box are the boundary's ([`assent_boundary::ticket`],
//! [`assent_boundary::run`]): `assent run` as the hook wrote it takes the ticket first, before
//! any parsing of other commands or any request (in `assent-run`, or in `main`), and here, with
//! no good ticket, it asks the server.

use crate::client::{AgentAuth, Client};
use crate::home::Home;
use anyhow::{Context, Result};
use assent_boundary::{run as runner, ticket};
use assent_receipt::KeySet;

/// Runs `assent run ID`: exits with the command's code. From the ticket the hook left, else
/// from the server (the proposal and the keys that sign its receipt).
pub async fn run(home: &Home, id: &str, auth: &AgentAuth) -> Result<()> {
    let a = match ticket::claim(home, id) {
        Some(a) => a,
        None => {
            let client = Client::agent(home, auth)?;
            let (p, jwks) = tokio::join!(client.api.get(id), client.call(reqwest::Method::GET, "/keys", None, &[]));
            let (p, jwks) = (p.map_err(|e| client.failed(e))?, jwks?);
            let keys = KeySet::from_json(&jwks).map_err(|e| anyhow::anyhow!("the server's key set: {e}"))?;
            runner::approved(&p, &keys)?
        }
    };
    let id = id.to_string();
    tokio::task::spawn_blocking(move || runner::execute(&id, a)).await.context("the confined run stopped")?
}
