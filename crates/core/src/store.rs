//! What the engine needs from storage. The SQLite implementation lives in `assent-store`; the
//! core only states the contract, so it depends on no database crate.

use crate::credentials::CredentialMeta;
use crate::error::CoreError;
use crate::proposal::{AgentInfo, AuditEntry, Channel, Decision, ErrorInfo, Proposal};
use crate::rules::{Facts, Rule, RuleLogEntry};
use crate::status::Status;
use crate::time::Timestamp;
use async_trait::async_trait;
use serde_json::Value;

/// A public key that signs decisions' receipts, as verifiers get it (`GET /v1/keys`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReceiptKey {
    /// Its id (the RFC 7638 thumbprint of its JWK).
    pub kid: String,
    /// The Ed25519 public key, base64url.
    pub x: String,
    /// The node whose key it is, on a team store.
    pub node: Option<String>,
    /// When it was first published.
    pub added_at: Timestamp,
    /// Once a newer key took over: until when it stays published (the last receipt it signed
    /// expires then). None while it signs.
    pub publish_until: Option<Timestamp>,
}

/// How long an idempotency key answers with its first proposal: a retry within a day gets it
/// back; after that the key files a new proposal (a model server that reuses tool-call ids
/// such as `call_0` never receives an old decision), and the old proposal keeps its history.
pub const IDEMPOTENCY_TTL_MS: i64 = 24 * 3600 * 1000;

/// An idempotency key and the hash of the request it was first used with.
#[derive(Debug, Clone)]
pub struct Idempotency {
    /// The client's `Idempotency-Key`.
    pub key: String,
    /// SHA-256 of the canonical request body.
    pub request_sha256: String,
}

/// A proposal to insert, with the checks the store makes atomically with the insert.
#[derive(Debug, Clone)]
pub struct NewRecord {
    /// The proposal, status `pending`.
    pub proposal: Proposal,
    /// When set, a second insert with the same key returns the first proposal.
    pub idempotency: Option<Idempotency>,
    /// The agent's pending limit: over it, `too_many_pending`.
    pub max_pending: u32,
    /// Who filed it when not the agent itself (the person retrying a failed write), and
    /// through which channel: its first audit row credits them.
    pub origin: Option<(String, Channel)>,
    /// Its payload and preview as they are written (serialized once, by the caller).
    pub stored: crate::stored::StoredJson,
    /// A rule's decision, made as it arrived: applied in the same transaction as the insert,
    /// so no one ever sees it pending (and it does not count against the pending limit).
    pub decided: Option<Transition>,
    /// The rule that matched it, whose count goes up with the insert.
    pub rule: Option<String>,
    /// With `decided`: the position in the rule log of the rules that decided it. Should the
    /// rules have changed since (on any node), the insert is refused with
    /// [`CoreError::RulesChanged`] and nothing is written: no proposal is decided by a rule
    /// that is no longer in force, nor by a set missing a rule added since.
    pub rules_seq: Option<i64>,
}

impl NewRecord {
    /// Whether it is a plain insert, one row that needs nothing read first and nothing more
    /// written: no idempotency key, no proposal it supersedes, no rule that matched it, filed by
    /// its agent (the store may then write it with others in one statement, the pending limit
    /// permitting). The one definition both stores use.
    pub fn is_plain(&self) -> bool {
        self.idempotency.is_none()
            && self.proposal.supersedes.is_none()
            && self.decided.is_none()
            && self.rule.is_none()
            && self.rules_seq.is_none()
            && self.origin.is_none()
    }
}

/// What an insert did.
#[derive(Debug, Clone)]
pub enum Inserted {
    /// A new proposal; `superseded` is the pending predecessor it withdrew, if any.
    Created {
        /// The stored proposal.
        proposal: Proposal,
        /// The predecessor it replaced while that was still pending.
        superseded: Option<Proposal>,
    },
    /// The idempotency key was already used with the same body: the earlier proposal.
    Existing(Proposal),
}

/// A compare-and-set status change plus its audit row.
#[derive(Debug, Clone)]
pub struct Transition {
    /// The proposal.
    pub id: String,
    /// The status the change was computed from: applied only if the row still has it.
    pub from: Status,
    /// The new status.
    pub to: Status,
    /// A decision to record.
    pub decision: Option<Decision>,
    /// A result to record.
    pub result: Option<Value>,
    /// An error to record.
    pub error: Option<ErrorInfo>,
    /// When.
    pub at: Timestamp,
    /// Who (for the audit row).
    pub actor: String,
    /// Through which channel (for the audit row).
    pub channel: Channel,
    /// Extra audit detail.
    pub detail: Option<Value>,
}

impl Transition {
    /// A change of status alone: no decision, result, error or detail.
    pub fn status_change(id: String, from: Status, to: Status, at: Timestamp, actor: &str, channel: Channel) -> Self {
        Transition {
            id,
            from,
            to,
            decision: None,
            result: None,
            error: None,
            at,
            actor: actor.to_string(),
            channel,
            detail: None,
        }
    }
}

impl Transition {
    /// The withdrawal of the pending proposal `prev` that its agent's revision `by` replaces, as
    /// the status machine makes it (`Withdraw`), with the revision's id in the audit row.
    pub fn superseded(prev: &str, by: &Proposal) -> Result<Self, CoreError> {
        let to = crate::status::next(Status::Pending, crate::status::Action::Withdraw, by.class)
            .map_err(|e| CoreError::InvalidState { message: e.to_string() })?;
        Ok(Transition {
            detail: Some(serde_json::json!({ "superseded_by": by.id })),
            ..Transition::status_change(prev.to_string(), Status::Pending, to, by.created_at, &by.agent, Channel::Agent)
        })
    }
}

/// Why an all-or-nothing set of changes `ts` changed nothing, given what each did (`out`): the
/// first that found its proposal in another status. The one wording both stores answer with.
pub fn conflict_error(ts: &[Transition], out: &[Transitioned]) -> CoreError {
    for (t, o) in ts.iter().zip(out) {
        if let Transitioned::Conflict(now) = o {
            let now = now.map(|s| s.to_string()).unwrap_or_else(|| "gone".into());
            return CoreError::InvalidState {
                message: format!("proposal `{}` is {now}, no longer {}; nothing was changed", t.id, t.from),
            };
        }
    }
    CoreError::InvalidState { message: "a proposal changed meanwhile; nothing was changed".into() }
}

/// What adding an agent does, given the state of its name.
pub enum AgentAdd {
    /// A new row.
    Insert,
    /// The revoked name gets the new token (the agent log says `reused`).
    Reuse,
}

/// What adding the agent `name` does given its state (`None`: unknown; `Some(None)`: active;
/// `Some(Some(at))`: revoked at `at`), or why it is refused. The one rule both stores follow.
pub fn agent_add(name: &str, state: Option<Option<i64>>, reuse: bool) -> Result<AgentAdd, CoreError> {
    match state {
        None => Ok(AgentAdd::Insert),
        Some(None) => Err(CoreError::Conflict(format!("an agent named `{name}` already exists; revoke it first"))),
        Some(Some(_)) if !reuse => Err(CoreError::Conflict(format!(
            "agent `{name}` was revoked, and its proposals stay under that name: pick another name, or reuse it \
             (`assent agent add {name} --reuse`, or \"reuse\": true) to give it a new token"
        ))),
        Some(Some(_)) => Ok(AgentAdd::Reuse),
    }
}

/// What one transition did.
#[derive(Debug, Clone)]
pub enum Transitioned {
    /// Applied; the proposal as it now is.
    Done(Proposal),
    /// The row no longer had `from` (someone else changed it first); its current status, or
    /// none if the proposal does not exist.
    Conflict(Option<Status>),
}

/// Filters for listing proposals, newest first.
#[derive(Debug, Clone, Default)]
pub struct ListQuery {
    /// Only this status.
    pub status: Option<Status>,
    /// Only this group.
    pub group_id: Option<String>,
    /// Only this agent's.
    pub agent: Option<String>,
    /// Only this kind.
    pub kind: Option<String>,
    /// Only those whose id, title, summary, agent, kind or payload contain this text.
    pub text: Option<String>,
    /// Only the revisions of this proposal.
    pub supersedes: Option<String>,
    /// Only this session's (an agent's conversation or task).
    pub session_id: Option<String>,
    /// Only those this node received (an agent's own, on a team store).
    pub node: Option<String>,
    /// Only older than this position (the cursor).
    pub before: Option<i64>,
    /// At most this many.
    pub limit: u32,
}

/// A change another server made to a store several servers share.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RemoteChange {
    /// A proposal was filed (`from` none) or changed status.
    Proposal {
        /// The proposal.
        id: String,
        /// Its status before.
        from: Option<Status>,
    },
    /// A rule was added or removed.
    Rules,
    /// Changes may have been missed (the connection to the store was lost and is back).
    Resync,
}

/// The storage the engine runs on: the filing of proposals ([`Filing`]) and every other
/// record ([`Records`]). The engine's ledger alone holds a `Store`; the rest of the engine
/// reaches the store as [`Records`], which cannot file or move a proposal.
pub trait Store: Filing + Records {}

impl<T: Filing + Records + ?Sized> Store for T {}

/// How proposals are filed and moved: the writes whose news the ledger announces once they are
/// committed.
#[async_trait]
pub trait Filing: Send + Sync + 'static {
    /// Inserts a proposal (idempotency, pending limit and supersession checked atomically)
    /// and appends its audit row. Returns only once the row is durable.
    async fn insert(&self, rec: NewRecord) -> Result<Inserted, CoreError>;
    /// Applies transitions. With `atomic`, all apply or none (a conflict rolls all back and
    /// is reported as such); without, each stands alone.
    async fn transition(&self, ts: Vec<Transition>, atomic: bool) -> Result<Vec<Transitioned>, CoreError>;
}

/// Everything stored but the filing of proposals: reading them, and agents, rules, credentials,
/// devices, keys and the upkeep that changes no proposal's status.
#[async_trait]
pub trait Records: Send + Sync + 'static {
    /// One proposal.
    async fn get(&self, id: &str) -> Result<Option<Proposal>, CoreError>;
    /// A page of proposals with their positions, newest first.
    async fn list(&self, q: &ListQuery) -> Result<Vec<(i64, Proposal)>, CoreError>;
    /// [`Records::list`] as a list shows it: each proposal's stored gist instead of its payload
    /// and preview, which are not read (see [`crate::light`]).
    async fn list_rows(&self, q: &ListQuery) -> Result<Vec<(i64, crate::light::Listed)>, CoreError>;
    /// One proposal as [`Records::list_rows`] has it: its status and its payload's hash without
    /// its payload read.
    async fn get_row(&self, id: &str) -> Result<Option<crate::light::Listed>, CoreError>;

    /// How many proposals are pending (all agents).
    async fn count_pending(&self) -> Result<u64, CoreError>;
    /// Every proposal of a group (any status), oldest first: one agent's when `agent` is set,
    /// else every agent's that used this `group_id`.
    async fn group(&self, agent: Option<&str>, group_id: &str) -> Result<Vec<Proposal>, CoreError>;
    /// Ids of pending proposals whose `expires_at` is at or before `now`.
    async fn due_for_expiry(&self, now: Timestamp, limit: u32) -> Result<Vec<(String, Status)>, CoreError>;
    /// The earliest `expires_at` among pending proposals.
    async fn next_expiry(&self) -> Result<Option<Timestamp>, CoreError>;
    /// The audit trail of a proposal, oldest first.
    async fn audit_for(&self, id: &str) -> Result<Vec<AuditEntry>, CoreError>;
    /// Audit rows after `after_seq`, in order.
    async fn audit_after(&self, after_seq: i64, limit: u32) -> Result<Vec<AuditEntry>, CoreError>;
    /// Every agent.
    async fn agents(&self) -> Result<Vec<AgentInfo>, CoreError>;
    /// Active agents with their token hashes.
    async fn agent_tokens(&self) -> Result<Vec<(String, [u8; 32])>, CoreError>;
    /// Adds an agent; `Conflict` if an active one has that name, and if a revoked one has it
    /// unless `reuse` (then the name gets the new token, and the agent log records it).
    async fn add_agent(&self, name: &str, token_hash: [u8; 32], at: Timestamp, reuse: bool) -> Result<(), CoreError>;
    /// Replaces an active agent's token hash, or adds it if unknown. Returns false (and changes
    /// nothing) if that agent was revoked.
    async fn set_agent_token(&self, name: &str, token_hash: [u8; 32], at: Timestamp) -> Result<bool, CoreError>;
    /// Revokes an agent; false if there was no active agent of that name.
    async fn revoke_agent(&self, name: &str, at: Timestamp) -> Result<bool, CoreError>;
    /// Proposals Assent applies that are `approved` or `applying` (to settle at start-up).
    async fn unsettled_applies(&self) -> Result<Vec<Proposal>, CoreError>;
    /// This node's pending proposals that carry a lease, as id and seconds (to give each a whole
    /// lease again at start-up, reading no other pending proposal).
    async fn pending_leases(&self) -> Result<Vec<(String, u32)>, CoreError>;
    /// What each agent stored since `since` (payload and stored preview, in bytes), as rows of
    /// agent, when, bytes: one per proposal, or one per agent and minute summed, dated by the
    /// minute's last proposal (the quota then forgets that minute when its last proposal is a
    /// day old, never sooner).
    async fn stored_bytes_since(&self, since: Timestamp) -> Result<Vec<(String, Timestamp, u64)>, CoreError>;
    /// Prunes the bulky content of up to `limit` settled proposals last changed before
    /// `before` (see [`crate::stored::prune`]), marking them pruned at `now`. Returns how many.
    async fn prune(&self, before: Timestamp, now: Timestamp, limit: u32) -> Result<u64, CoreError>;
    /// Every credential's metadata.
    async fn credentials(&self) -> Result<Vec<CredentialMeta>, CoreError>;
    /// Adds a credential's metadata; `Conflict` if the name is taken.
    async fn add_credential(&self, meta: CredentialMeta) -> Result<(), CoreError>;
    /// Removes a credential's metadata; false if there was none.
    async fn remove_credential(&self, name: &str) -> Result<bool, CoreError>;
    /// Every rule, oldest first, with how many proposals each matched.
    async fn rules(&self) -> Result<Vec<Rule>, CoreError>;
    /// One rule.
    async fn rule(&self, id: &str) -> Result<Option<Rule>, CoreError>;
    /// Adds a rule and logs it (`added`, by its creator); the log entry's position.
    async fn add_rule(&self, rule: Rule) -> Result<i64, CoreError>;
    /// Removes a rule and logs it (`removed`, by `actor`); the rule as it was and the log
    /// entry's position, or none if there was no such rule.
    async fn remove_rule(
        &self,
        id: &str,
        actor: &str,
        channel: Channel,
        at: Timestamp,
    ) -> Result<Option<(Rule, i64)>, CoreError>;
    /// At most `limit` rules after position `after` (0: from the first), oldest first, each
    /// with its position (the cursor of the next page).
    async fn rules_after(&self, after: i64, limit: u32) -> Result<Vec<(i64, Rule)>, CoreError>;
    /// How many proposals filed at `since` or later each rule decided (allowed or refused
    /// without asking), by rule id.
    async fn rule_decisions_since(&self, since: Timestamp) -> Result<Vec<(String, u64)>, CoreError>;
    /// The position of the latest entry of the rule log (0 when it is empty): read before the
    /// rules, it says which rules a set compiled from them holds at least.
    async fn rule_seq(&self) -> Result<i64, CoreError>;
    /// The rule log after `after_seq`, in order.
    async fn rule_log_after(&self, after_seq: i64, limit: u32) -> Result<Vec<RuleLogEntry>, CoreError>;
    /// What rules see of the latest `limit` proposals (agent, kind, facts), newest first;
    /// proposals whose content was pruned are left out.
    async fn recent_facts(&self, limit: u32) -> Result<Vec<(String, crate::payloads::KindName, Facts)>, CoreError>;

    /// This node's paired devices, revoked ones too, by name.
    async fn devices(&self) -> Result<Vec<crate::remote::Device>, CoreError>;

    /// Pairs a device: a new name, or a revoked one paired again (its new passkey replaces the
    /// old). `Conflict` while a device by that name is paired.
    async fn add_device(&self, device: crate::remote::Device) -> Result<(), CoreError>;

    /// Records a use of a paired device: the passkey as the library updated it (its counter)
    /// and when. False for a revoked or unknown device.
    async fn device_used(&self, name: &str, passkey: &str, at: Timestamp) -> Result<bool, CoreError>;

    /// Sets (or with `None` clears) a paired device's Web Push subscription; false for a
    /// revoked or unknown device.
    async fn set_device_push(&self, name: &str, push: Option<&str>) -> Result<bool, CoreError>;

    /// Revokes a paired device (and drops its push subscription); false if none by that name
    /// is paired.
    async fn revoke_device(&self, name: &str, at: Timestamp) -> Result<bool, CoreError>;

    /// Appends to this node's remote log (`device` '' when none is known).
    async fn remote_log(
        &self,
        device: &str,
        event: &str,
        at: Timestamp,
        detail: Option<serde_json::Value>,
    ) -> Result<(), CoreError>;

    /// This node's remote log after position `after_seq`, oldest first, at most `limit` rows.
    async fn remote_log_after(&self, after_seq: i64, limit: u32) -> Result<Vec<crate::remote::LogEntry>, CoreError>;

    /// How many of `agent`'s proposals in session `session_id` are in each status (any agent's
    /// when `agent` is none), on this node when `node` is given.
    async fn session_counts(
        &self,
        session_id: &str,
        agent: Option<&str>,
        node: Option<&str>,
    ) -> Result<Vec<(Status, u64)>, CoreError>;

    /// The receipt keys published at `now`: every node's current key, and the keys they
    /// retired whose receipts may still be relied on.
    async fn receipt_keys(&self, now: Timestamp) -> Result<Vec<ReceiptKey>, CoreError>;

    /// Publishes `key` as this node's current receipt key (nothing if it is already); this
    /// node's earlier current key is retired at `key.added_at` and stays published until
    /// `retired_until`.
    async fn publish_receipt_key(&self, key: ReceiptKey, retired_until: Timestamp) -> Result<(), CoreError>;

    /// The changes other servers make, for a store several share; taken once, by the engine
    /// (none for a store one server owns).
    fn take_changes(&self) -> Option<tokio::sync::mpsc::Receiver<RemoteChange>> {
        None
    }
}
