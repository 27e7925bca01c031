//! What a decision's receipt says, built by the domain from typed values: the proposal, the
//! decision, and the approved payload read as its kind's. The host signs it as it is (adding
//! only who signs and until when), so what a receipt binds is decided here, once.

use crate::canonical::canonical_sha256;
use crate::confine::Confine;
use crate::payloads::{KindName, Payload};
use crate::proposal::{Channel, Decision, Outcome, Proposal};
use crate::time::Timestamp;

/// A decision as its receipt states it.
#[derive(Debug, Clone, PartialEq)]
pub struct Decided {
    /// The agent that proposed.
    pub agent: String,
    /// The proposal.
    pub proposal: String,
    /// When it was decided.
    pub at: Timestamp,
    /// Whom the proposal named as the receipt's audience.
    pub audience: Option<String>,
    /// How it was decided.
    pub outcome: Outcome,
    /// Its kind.
    pub kind: KindName,
    /// For a tool call: the tool.
    pub tool: Option<String>,
    /// For a tool call: the hash of the approved input (what a tool server checks its call
    /// against).
    pub input_sha256: Option<String>,
    /// The hash of the approved payload (the edited one when the person edited it).
    pub approved_sha256: String,
    /// The hash of the payload as proposed.
    pub proposed_sha256: String,
    /// Who decided: `rule:ID`, the person (and the device of a phone), or the engine.
    pub decided_by: String,
    /// Where it was decided.
    pub channel: Channel,
    /// The box an approved command runs in.
    pub confine: Option<Confine>,
    /// The hosts that box reaches.
    pub hosts: Vec<String>,
}

impl Decided {
    /// What `d` on `p` binds, `approved` being the payload it approved as the engine holds it
    /// typed (the kind's prepared payload, or the person's edit as the kind read it); none (a
    /// stored payload not of its kind's shape) binds no tool or input, its hashes still bind it
    /// whole.
    pub fn of(p: &Proposal, d: &Decision, approved: Option<&Payload>) -> Decided {
        // Each payload hashed once: an approval carries the hash the engine checks before it
        // applies, and unedited the approved payload is the proposed one.
        let proposed_sha256 = p.payload.sha256();
        let approved_sha256 = match (&d.approved_sha256, &d.edited_payload) {
            (Some(h), _) => h.clone(),
            (None, Some(edited)) => edited.sha256(),
            (None, None) => proposed_sha256.clone(),
        };
        let call = match approved {
            Some(Payload::ToolCall(call)) => Some(call),
            _ => None,
        };
        Decided {
            agent: p.agent.clone(),
            proposal: p.id.clone(),
            at: d.at,
            audience: p.audience.clone(),
            outcome: d.outcome,
            kind: p.kind,
            input_sha256: call.map(|c| canonical_sha256(&c.input)),
            tool: call.map(|c| c.tool.clone()),
            approved_sha256,
            proposed_sha256,
            decided_by: match (&d.rule, &d.device) {
                (Some(r), _) => format!("rule:{}", r.id),
                (None, Some(dev)) => format!("{}:{dev}", d.by),
                (None, None) => d.by.clone(),
            },
            channel: d.channel,
            confine: d.confine,
            hosts: d.hosts.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn proposal(kind: &str, payload: Value, decision: Value) -> Proposal {
        let v = json!({"id": "p_1", "kind": kind, "agent": "a", "payload": payload,
            "preview": null, "status": "approved", "settled": true, "created_at": "1970-01-01T00:00:00.000Z",
            "updated_at": "1970-01-01T00:00:00.000Z", "expires_at": "1970-01-01T00:00:00.000Z",
            "decision": decision});
        serde_json::from_value(v).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn a_receipt_binds_the_approved_input_of_the_typed_call() {
        let edited = json!({"tool": "Bash", "input": {"command": "ls"}});
        let p = proposal(
            "tool.call",
            json!({"tool": "Bash", "input": {"command": "rm -rf /"}}),
            json!({"outcome": "approve", "by": "owner", "channel": "app", "at": "1970-01-01T00:00:01.000Z",
                "edited_payload": edited}),
        );
        let Some(d) = &p.decision else { panic!("decided") };
        let typed = d.edited_payload.as_ref().and_then(|e| e.of(p.kind).ok());
        let decided = Decided::of(&p, d, typed.as_deref());
        assert_eq!(decided.tool.as_deref(), Some("Bash"));
        assert_eq!(decided.input_sha256, Some(canonical_sha256(&json!({"command": "ls"}))), "the edited input");
        assert_eq!(decided.approved_sha256, canonical_sha256(&edited));
        assert_eq!(decided.proposed_sha256, canonical_sha256(&p.payload.to_value()));
        assert_eq!((decided.decided_by.as_str(), decided.at), ("owner", Timestamp(1000)));
    }

    #[test]
    fn a_write_binds_no_tool_and_a_payload_not_of_its_kind_no_input() {
        let decision = json!({"outcome": "approve", "by": "owner", "channel": "app", "at": "1970-01-01T00:00:00.000Z",
            "rule": {"id": "r_1", "description": "allow writes"}});
        let write = proposal("file.write", json!({"path": "/w/a", "content": "x"}), decision.clone());
        let Some(d) = &write.decision else { panic!("decided") };
        let decided = Decided::of(&write, d, write.typed_payload().ok().as_deref());
        assert_eq!((decided.tool, decided.input_sha256), (None, None));
        assert_eq!(decided.decided_by, "rule:r_1");
        let odd = proposal("tool.call", json!({"tool": "Bash", "unknown": 1}), decision);
        let Some(d) = &odd.decision else { panic!("decided") };
        assert!(odd.typed_payload().is_err(), "not of its kind's shape");
        assert_eq!(Decided::of(&odd, d, None).input_sha256, None, "not read as a call: no input bound");
    }
}
