//! Gating one tool call: the flow the agent hooks and the MCP permission prompt share. File the
//! call as a `tool.call` proposal, wait for the person up to a bound, and answer with a
//! [`Verdict`]; a proposal nobody will read the answer to (the wait ran out, or the caller
//! stopped waiting) is withdrawn, so the inbox never keeps a question nobody is waiting for.

use crate::{Client, Error, Waited};
use assent_core::verdict::{Verdict, verdict_of};
use serde_json::{Value, json};
use std::future::Future;
use std::time::{Duration, Instant};

/// One tool call to gate.
#[derive(Debug, Clone)]
pub struct Gate {
    /// The tool's name.
    pub tool: String,
    /// Its input.
    pub input: Value,
    /// The session's working folder (absolute), as the client gave it.
    pub cwd: Option<String>,
    /// The client the call comes through (`claude-code`, `codex`, `mcp-permission-prompt`):
    /// Assent's own notes on the call follow from it, apart from any words of the agent.
    pub client: Option<String>,
    /// The client's permission mode, as it reports it.
    pub permission_mode: Option<String>,
    /// The agent's session.
    pub session_id: Option<String>,
    /// What identifies the call, so a retried call files once.
    pub idempotency_key: Option<String>,
    /// How long the proposal lives if the gate itself dies without withdrawing it.
    pub expires_in: u64,
    /// How long to wait for the person.
    pub wait: Duration,
}

/// The lease a waiting client holds on its proposal, in seconds: should it die without
/// withdrawing it (SIGKILL, a crash, a lost machine), Assent withdraws the proposal this long
/// after its last wait ended.
pub const LEASE_SECS: u64 = 15;

/// How gating ended.
#[derive(Debug)]
pub enum Gated {
    /// The proposal settled: what the person decided (or that it expired or was withdrawn).
    Decided {
        /// The proposal.
        id: String,
        /// The answer.
        verdict: Verdict,
    },
    /// Nobody decided in time; the proposal was withdrawn.
    TimedOut {
        /// The proposal.
        id: String,
    },
    /// The caller stopped waiting; the proposal was withdrawn.
    Stopped {
        /// The proposal.
        id: String,
    },
    /// No Assent could be talked to: nothing was filed.
    NotRunning(Error),
    /// Assent refused the proposal.
    Refused(Error),
    /// Contact was lost while waiting.
    Lost {
        /// The proposal.
        id: String,
        /// Why.
        error: Error,
    },
}

impl Gate {
    /// The proposal's body.
    fn body(&self) -> Value {
        // No title or summary: a gated call carries no words of the agent, and what Assent
        // says of it (its description, its notes) comes from the payload, on the server.
        let mut payload = json!({"tool": self.tool, "input": self.input});
        for (k, v) in [("cwd", &self.cwd), ("client", &self.client), ("permission_mode", &self.permission_mode)] {
            if let Some(v) = v {
                payload[k] = json!(v);
            }
        }
        let mut body = json!({
            "kind": "tool.call",
            "payload": payload,
            "expires_in": self.expires_in,
            "lease_secs": LEASE_SECS,
        });
        if let Some(s) = &self.session_id {
            body["session_id"] = json!(s);
        }
        body
    }
}

/// Files `g`, waits for the person until `g.wait` passes or `stop` resolves, and answers.
pub async fn gate(client: &Client, g: Gate, stop: impl Future<Output = ()>) -> Gated {
    let p = match client.propose(&g.body(), g.idempotency_key.as_deref()).await {
        Ok(p) => p,
        Err(e) if e.is_not_running() => return Gated::NotRunning(e),
        Err(e) => return Gated::Refused(e),
    };
    let id = p.id.clone();
    match client.wait_settled(p, Some(Instant::now() + g.wait), stop).await {
        Ok(Waited::Settled(p)) => Gated::Decided { id, verdict: verdict_of(&p) },
        Ok(Waited::TimedOut(_)) => {
            let _ = client.withdraw(&id).await;
            Gated::TimedOut { id }
        }
        Ok(Waited::Stopped) => {
            let _ = client.withdraw(&id).await;
            Gated::Stopped { id }
        }
        Err(error) => Gated::Lost { id, error },
    }
}
