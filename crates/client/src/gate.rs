//! Gating one tool call: the flow the agent hooks and the MCP permission prompt share. File the
//! call as a `tool.call` proposal, wait for the person up to a bound, and answer with a
//! [`Verdict`]; a proposal nobody will read the answer to (the wait ran out, or the caller
//! stopped waiting) is withdrawn, so the inbox never keeps a question nobody is waiting for.

use crate::{Client, Error, Waited};
use assent_core::Proposal;
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
    /// Whether the client runs the call with the input the answer gives (Claude Code's hooks and
    /// its permission prompt do; Codex does not): then a tool that declares [`RECEIPT_ARG`] gets
    /// the decision's receipt in it.
    pub carry_receipt: bool,
    /// Whether the client runs the command confined when a rule allows it only so: the answer
    /// is then [`Verdict::Confined`], and the client rewrites the call to `assent run`.
    pub confinable: bool,
}

/// The argument a tool declares to be handed Assent's receipt for the call: the model leaves it
/// empty; it is taken out of the call before the person sees it (the receipt binds the other
/// arguments), and on approval it holds the receipt.
pub use assent_core::verdict::RECEIPT_ARG;

/// The receipt's audience for a tool named as MCP clients name them (`mcp__SERVER__TOOL`): the
/// server's name.
pub fn mcp_server(tool: &str) -> Option<&str> {
    let rest = tool.strip_prefix("mcp__")?;
    let (server, name) = rest.split_once("__")?;
    (!server.is_empty() && !name.is_empty()).then_some(server)
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
        /// The proposal as it settled (its decision and receipt).
        proposal: Box<Proposal>,
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
    /// The proposal's body, and whether the tool asks for a receipt.
    pub fn body(&self) -> (Value, bool) {
        // No title or summary: a gated call carries no words of the agent, and what Assent
        // says of it (its description, its notes) comes from the payload, on the server.
        let mut input = self.input.clone();
        let wants_receipt =
            self.carry_receipt && input.as_object_mut().is_some_and(|i| i.remove(RECEIPT_ARG).is_some());
        let mut payload = json!({"tool": self.tool, "input": input});
        for (k, v) in [("cwd", &self.cwd), ("client", &self.client), ("permission_mode", &self.permission_mode)] {
            if let Some(v) = v {
                payload[k] = json!(v);
            }
        }
        if self.confinable {
            payload["confinable"] = json!(true);
        }
        let mut body = json!({
            "kind": assent_core::payloads::KindName::ToolCall.as_str(),
            "payload": payload,
            "expires_in": self.expires_in,
            "lease_secs": LEASE_SECS,
        });
        if let Some(s) = &self.session_id {
            body["session_id"] = json!(s);
        }
        if wants_receipt && let Some(server) = mcp_server(&self.tool) {
            body["audience"] = json!(server);
        }
        (body, wants_receipt)
    }
}

/// Files `g`, waits for the person until `g.wait` passes or `stop` resolves, and answers.
pub async fn gate(client: &Client, g: Gate, stop: impl Future<Output = ()>) -> Gated {
    let (body, wants_receipt) = g.body();
    let p = match client.propose(&body, g.idempotency_key.as_deref()).await {
        Ok(p) => p,
        Err(e) if e.is_not_running() => return Gated::NotRunning(e),
        Err(e) => return Gated::Refused(e),
    };
    let id = p.id.clone();
    match client.wait_settled_last(p, Some(Instant::now() + g.wait), stop).await {
        Ok(Waited::Settled(p)) => decided(&body, wants_receipt, p),
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

/// The answer for `p`, settled, filed with `body` ([`Gate::body`]): what was decided, with the
/// decision's receipt in the input to run when the tool asked for one.
pub fn decided(body: &Value, wants_receipt: bool, p: Proposal) -> Gated {
    let mut verdict = verdict_of(&p);
    if wants_receipt && let Verdict::Allow(edited) = &verdict {
        // The input to run: the person's edit, or the call as proposed; with the receipt.
        let mut input = edited.clone().unwrap_or_else(|| body["payload"]["input"].clone());
        if let (Some(i), Some(r)) = (input.as_object_mut(), p.decision.as_ref().and_then(|d| d.receipt.clone())) {
            i.insert(RECEIPT_ARG.into(), json!(r));
        }
        verdict = Verdict::Allow(Some(input));
    }
    Gated::Decided { id: p.id.clone(), verdict, proposal: Box::new(p) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(tool: &str, input: Value, carry_receipt: bool) -> Gate {
        Gate {
            tool: tool.into(),
            input,
            cwd: Some("/w".into()),
            client: None,
            permission_mode: None,
            session_id: None,
            idempotency_key: None,
            expires_in: 60,
            wait: Duration::from_secs(1),
            carry_receipt,
            confinable: false,
        }
    }

    #[test]
    fn a_tool_asking_for_a_receipt_is_proposed_without_it_and_for_its_server() {
        let (body, wants) = call("mcp__blog__delete_post", json!({"id": 7, RECEIPT_ARG: "forged"}), true).body();
        assert!(wants);
        assert_eq!(body["payload"]["input"], json!({"id": 7}), "the model's value never reaches the person");
        assert_eq!(body["audience"], "blog");
        // A client that cannot carry it sends the call as it is, for the person to see.
        let (body, wants) = call("mcp__blog__delete_post", json!({"id": 7, RECEIPT_ARG: "x"}), false).body();
        assert!(!wants);
        assert_eq!(body["payload"]["input"], json!({"id": 7, RECEIPT_ARG: "x"}));
        assert!(body.get("audience").is_none());
        // No receipt asked: no audience.
        let (body, wants) = call("mcp__blog__delete_post", json!({"id": 7}), true).body();
        assert!(!wants && body.get("audience").is_none());
        // A built-in tool asking for one gets a receipt for no audience.
        let (body, wants) = call("Deploy", json!({RECEIPT_ARG: ""}), true).body();
        assert!(wants && body.get("audience").is_none());
    }

    #[test]
    fn mcp_names() {
        assert_eq!(mcp_server("mcp__blog__delete_post"), Some("blog"));
        assert_eq!(mcp_server("mcp__blog__a__b"), Some("blog"));
        for other in ["Bash", "mcp__blog", "mcp____x", "mcp__blog__", "mcpblog__x"] {
            assert_eq!(mcp_server(other), None, "{other}");
        }
    }
}
