//! The proposal and the types around it, as they are stored and as they cross the wire.

use crate::held::Held;
use crate::payloads::Payload;
use crate::preview::Preview;
use crate::status::{KindClass, Status};
use crate::time::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Who or what made a decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum Channel {
    /// The desktop inbox.
    App,
    /// An answered OS notification.
    Notification,
    /// The `assent` command.
    Cli,
    /// Another client of the owner API (a script, an integration).
    Api,
    /// A rule the person set.
    Rule,
    /// Assent itself (expiry, apply results, a revision replacing its predecessor).
    System,
    /// The agent (withdrawal).
    Agent,
    /// A paired phone, each decision signed by its passkey (the remote page).
    Remote,
}

impl Channel {
    /// The storage name.
    pub fn as_str(self) -> &'static str {
        match self {
            Channel::App => "app",
            Channel::Notification => "notification",
            Channel::Cli => "cli",
            Channel::Api => "api",
            Channel::Rule => "rule",
            Channel::System => "system",
            Channel::Agent => "agent",
            Channel::Remote => "remote",
        }
    }
}

/// A person's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum Outcome {
    /// Go ahead (possibly with edits).
    Approve,
    /// Do not.
    Reject,
    /// Not like this: the feedback says what to change.
    Refine,
}

/// The decision recorded on a proposal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Decision {
    /// What the person decided.
    pub outcome: Outcome,
    /// Why (shown to the agent on reject).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// What to change (refine).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback: Option<String>,
    /// The payload as the person edited it, when they did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(as = "Option<Value>"))]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Value>))]
    pub edited_payload: Option<Held>,
    /// SHA-256 of the canonical JSON of the payload that was approved (edited or not).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approved_sha256: Option<String>,
    /// Who decided (`owner`, the person's name on a team store, or `rule` when a rule did).
    pub by: String,
    /// The node (Assent server) it was decided on, on a team store.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub node: Option<String>,
    /// The rule that decided, when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<RuleRef>,
    /// The box an approved command runs in (`assent run`): the rule's that allowed it, or the
    /// one the person approved it in; none: as the client runs it. Its receipt says so too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub confine: Option<crate::confine::Confine>,
    /// The hosts the box reaches, through the proxy Assent runs for the run (none: no
    /// network). Its receipt says them too.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "ts", ts(as = "Option<Vec<String>>", optional))]
    pub hosts: Vec<String>,
    /// Through which channel.
    pub channel: Channel,
    /// The paired device whose passkey signed it (channel `remote`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub device: Option<String>,
    /// The signed receipt of this decision (a compact JWS anyone can check with `GET /v1/keys`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub receipt: Option<String>,
    /// When.
    pub at: Timestamp,
}

/// The rule behind a decision: its id and its words as they were when it decided.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RuleRef {
    /// The rule's id.
    pub id: String,
    /// The rule in plain words.
    pub description: String,
}

/// A stable error code and message, as stored on a failed proposal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ErrorInfo {
    /// Stable code (`stale`, `credential_unavailable`, ...).
    pub code: String,
    /// Human-readable explanation.
    pub message: String,
}

/// A proposal as stored and as returned by the API.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Proposal {
    /// Opaque, unguessable id.
    pub id: String,
    /// The kind (`tool.call`, ...).
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub kind: crate::payloads::KindName,
    /// The agent that proposed it: always from its token, never from the body.
    pub agent: String,
    /// The node (Assent server) that received it, on a team store: the only one that applies it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub node: Option<String>,
    /// The agent's own title: its words, not Assent's.
    pub title: Option<String>,
    /// The agent's own summary: its words, not Assent's.
    pub summary: Option<String>,
    /// The validated, normalized payload: stored once, never changed.
    #[cfg_attr(feature = "ts", ts(as = "Value"))]
    #[cfg_attr(feature = "openapi", schema(value_type = Value))]
    pub payload: Held,
    /// Computed by Assent from the stored payload.
    pub preview: Preview,
    /// What the target looked like when proposed (for kinds that have a target).
    pub base: Option<Value>,
    /// The agent's session (a conversation or task).
    pub session_id: Option<String>,
    /// A batch of proposals decided together.
    pub group_id: Option<String>,
    /// The proposal this one revises.
    pub supersedes: Option<String>,
    /// Where it is in its life.
    pub status: Status,
    /// Whether this is final for the proposal's kind (the agent stops waiting).
    pub settled: bool,
    /// When it was proposed.
    pub created_at: Timestamp,
    /// When it last changed.
    pub updated_at: Timestamp,
    /// When it expires if nobody decides.
    pub expires_at: Timestamp,
    /// Its lease, in seconds: while pending, it is withdrawn once its agent has neither waited
    /// for the answer nor read it for this long (none: it waits until it expires).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub lease_secs: Option<u32>,
    /// Who the decision's receipt is for (the tool server or API that will check it): its `aud`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub audience: Option<String>,
    /// The person's decision, once made.
    pub decision: Option<Decision>,
    /// The payload that was approved (the edited one when the person edited it): what runs.
    #[cfg_attr(feature = "ts", ts(as = "Option<Value>"))]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Value>))]
    pub approved_payload: Option<Held>,
    /// What applying it produced.
    pub result: Option<Value>,
    /// Why it failed.
    pub error: Option<ErrorInfo>,
    /// When its bulky content (payload, preview, response body) was pruned after the
    /// retention; what is left are its figures, hashes, decision and audit trail.
    pub pruned_at: Option<Timestamp>,
    /// The kind's class, to tell settledness (not on the wire: `settled` says it).
    #[serde(skip)]
    pub class: KindClass,
}

impl Proposal {
    /// Its stored payload as its kind's, or why it is not one.
    pub fn typed_payload(&self) -> Result<std::borrow::Cow<'_, Payload>, String> {
        self.payload.of(self.kind)
    }

    /// The input of the approved call (the person's edit, when they edited it), when this is an
    /// approved tool call whose approved payload reads as one.
    pub fn approved_input(&self) -> Option<Value> {
        match &*self.approved_payload.as_ref()?.of(self.kind).ok()? {
            Payload::ToolCall(call) => Some(call.input.clone()),
            _ => None,
        }
    }

    /// A proposal of an applied kind, being applied, with `payload` and `base` and nothing
    /// else: what a kind's apply sees, for the kinds' own tests.
    pub fn applying(
        id: &str,
        kind: crate::payloads::KindName,
        agent: &str,
        payload: Value,
        base: Option<Value>,
    ) -> Self {
        let at = Timestamp(0);
        Proposal {
            id: id.into(),
            kind,
            agent: agent.into(),
            node: None,
            title: None,
            summary: None,
            payload: Held::read(kind, payload),
            preview: Preview::Unreadable { raw: Value::Null },
            base,
            session_id: None,
            group_id: None,
            supersedes: None,
            status: Status::Applying,
            settled: false,
            created_at: at,
            updated_at: at,
            expires_at: at,
            lease_secs: None,
            audience: None,
            decision: None,
            approved_payload: None,
            result: None,
            error: None,
            pruned_at: None,
            class: KindClass::Applied,
        }
    }

    /// Recomputes the derived fields after a change of status or decision.
    pub fn refresh_derived(&mut self) {
        self.settled = self.status.is_settled(self.class);
        self.approved_payload = match &self.decision {
            Some(d) if d.outcome == Outcome::Approve => {
                Some(d.edited_payload.clone().unwrap_or_else(|| self.payload.clone()))
            }
            _ => None,
        };
    }

    /// The proposal as an agent may see it: the preview reduced to its figures (see
    /// [`Preview::for_agent`]). Everything an agent is handed goes through this.
    pub fn for_agent(mut self) -> Self {
        self.preview = self.preview.for_agent();
        self
    }
}

// Read at the API's route (strictly: an unknown field is 422); the engine checks its envelope
// and its kind reads its payload. Serialized (fields left out stay out) for the hash an
// idempotency key binds.
/// What an agent sends to propose.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NewProposal {
    /// The kind.
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::payloads::kind_schema))]
    pub kind: String,
    /// The kind's payload.
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::payloads::payload_schema))]
    pub payload: Value,
    /// A short title in the agent's words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(max_length = 200, pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$"))]
    pub title: Option<String>,
    /// A longer summary in the agent's words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "openapi",
        schema(max_length = 10000, pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]*$")
    )]
    pub summary: Option<String>,
    /// The agent's session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(max_length = 200, pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$"))]
    pub session_id: Option<String>,
    /// The batch it belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(max_length = 200, pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$"))]
    pub group_id: Option<String>,
    /// The refined (or pending) proposal this one revises.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(max_length = 200, pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$"))]
    pub supersedes: Option<String>,
    /// Seconds until it expires undecided: 1 to the server's `max_expires_in` (30 days,
    /// 2,592,000, unless configured otherwise); left out, the server's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 2592000))]
    pub expires_in: Option<u64>,
    /// Seconds the proposal may go without its agent waiting for the answer (an open wait) or
    /// reading it, 5 to 3,600: once they pass, Assent withdraws it, so a question nobody waits
    /// for leaves the inbox (the agent was killed, or gave up). Left out: it waits until it
    /// expires.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(minimum = 5, maximum = 3600))]
    pub lease_secs: Option<u64>,
    /// Who will check the decision's receipt (a tool server's or an API's name, as it expects
    /// it): the receipt's `aud`, so a receipt made for one server is refused by another.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(max_length = 200, pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$"))]
    pub audience: Option<String>,
}

impl NewProposal {
    /// A proposal body as JSON, read strictly (`invalid_request` with where it went wrong): the
    /// items of a batch, and callers holding JSON.
    pub fn read(body: Value) -> Result<NewProposal, crate::error::CoreError> {
        crate::strict::from_value(body)
            .map_err(|e| crate::error::CoreError::invalid("invalid_request", format!("invalid proposal: {e}")))
    }

    /// The SHA-256 of its canonical JSON: what an idempotency key is bound to.
    pub fn sha256(&self) -> String {
        serde_json::to_value(self).map(|v| crate::canonical::canonical_sha256(&v)).unwrap_or_default()
    }
}

/// What a person sends to decide.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DecisionRequest {
    /// Approve, reject or refine.
    pub outcome: Outcome,
    /// Why.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(max_length = 10000))]
    pub reason: Option<String>,
    /// What to change (refine).
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(max_length = 10000))]
    pub feedback: Option<String>,
    /// Changes to the payload (approve only), in the kind's edit form.
    #[serde(default)]
    pub edits: Option<Value>,
    /// Also allow proposals like this one from now on (approve only, one proposal at a time):
    /// Assent saves the narrowest rule that covers it and returns it with the decision.
    #[serde(default)]
    pub allow_similar: Option<AllowSimilar>,
    /// What the person was shown: the SHA-256 (hex) of the canonical payload of the proposal on
    /// their screen. A decision that names another proposal than the one shown is refused (409
    /// `not_what_was_shown`) and changes nothing. The app and the phone send it.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(type = "string | null", optional))]
    #[cfg_attr(feature = "openapi", schema(pattern = "^[0-9a-f]{64}$"))]
    pub seen: Option<String>,
    /// Where an approved command runs (approve only, a command the client runs through Assent):
    /// in the `read` or `workspace` box, or `unconfined` (the person's explicit choice). None:
    /// in the box its preview names (`runs_in`).
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub run: Option<crate::confine::RunIn>,
    /// The hosts an approved command's box reaches (approve only, a command run in a box): each
    /// a host name (`registry.npmjs.org`; HTTPS, HTTP or git's port) or `host:port`, at most 16.
    /// None: the hosts its preview names (`reaches`); `[]`: no network.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(type = "Array<string> | null", optional))]
    pub hosts: Option<Vec<String>>,
}

/// "Approve and allow similar": how long the rule lasts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AllowSimilar {
    /// Seconds until the rule expires, 1 to 31,622,400 (none: until removed).
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(type = "number | null", optional))]
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 31622400))]
    pub expires_in: Option<i64>,
}

/// One row of the append-only audit log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AuditEntry {
    /// Position in the log.
    pub seq: i64,
    /// The proposal.
    pub proposal_id: String,
    /// Who (`owner` or the person's name, an agent's name, `assent`).
    pub actor: String,
    /// The node (Assent server) the change was made on, on a team store.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub node: Option<String>,
    /// Through which channel.
    pub channel: Channel,
    /// Status before (none at creation).
    pub from: Option<Status>,
    /// Status after.
    pub to: Status,
    /// When.
    pub at: Timestamp,
    /// Anything worth keeping (a reason, an error code).
    pub detail: Option<Value>,
}

/// An agent known to Assent (never its token).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AgentInfo {
    /// Its name, which every proposal it makes carries.
    pub name: String,
    /// When it was added.
    pub created_at: Timestamp,
    /// When its token was revoked, if it was.
    pub revoked_at: Option<Timestamp>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_agent_sees_figures_never_content() {
        let pv = Preview::read(json!({
            "type": "file.delete", "path": "/etc/shadow", "exists": true, "current_size": 812,
            "current_sha256": "ab", "stats": {"added": 0, "removed": 20}, "summary": "root:x:...",
            "too_large": false, "truncated": false,
            "hunks": [{"old_start": 1, "old_lines": 1, "new_start": 0, "new_lines": 0,
                       "lines": [{"tag": "-", "old": 1, "new": null, "text": "root:$6$secret"}]}],
        }));
        assert_eq!(pv.kind(), "file.delete");
        let mut p =
            Proposal::applying("p_1", crate::payloads::KindName::FileDelete, "a", json!({"path": "/etc/shadow"}), None);
        p.preview = pv;
        let seen = serde_json::to_string(&p.for_agent().preview).unwrap_or_default();
        assert!(!seen.contains("secret") && !seen.contains("root:"), "{seen}");
        for k in ["current_size", "current_sha256", "stats", "content_withheld"] {
            assert!(seen.contains(k), "{k} in {seen}");
        }
    }

    #[test]
    fn a_proposal_reads_back_from_its_json() {
        let mut p = Proposal::applying(
            "p_1",
            crate::payloads::KindName::ToolCall,
            "a",
            json!({"tool": "Bash", "input": {}}),
            None,
        );
        p.preview = Preview::read(json!({"type": "tool.call", "tool": "Bash", "input": {}, "input_text": "{}"}));
        let back: Proposal =
            serde_json::from_value(serde_json::to_value(&p).unwrap_or_default()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back.preview, p.preview);
        assert_eq!(back.id, "p_1");
    }
}
