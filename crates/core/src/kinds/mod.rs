//! The kind registry. A kind validates and normalizes its payload, snapshots its target (when
//! it has one), computes the preview from the stored payload, and applies a person's edits.
//! Kinds that Assent carries out itself also name an applier, registered by the host.

pub mod project_hooks;
mod tool_call;

pub use tool_call::{ToolCall, is_permission_mode};

use crate::credentials::CredentialMeta;
use crate::error::CoreError;
use crate::payloads::{KindName, Payload};
use crate::preview::Preview;
use crate::proposal::{ErrorInfo, Proposal};
use crate::status::KindClass;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

/// What proposing needs to know besides the payload.
#[derive(Debug, Clone)]
pub struct PrepareCtx {
    /// The agent proposing.
    pub agent: String,
    /// The credentials the owner has set up (metadata only, never secrets).
    pub credentials: Arc<BTreeMap<String, CredentialMeta>>,
    /// The boxes this host can build (a command's preview says which one an approval runs it in).
    pub can_box: Vec<crate::confine::Confine>,
}

/// What applying needs to know besides the proposal: the world as it is at apply time.
#[derive(Debug, Clone, Default)]
pub struct ApplyCtx {
    /// The credentials as they are now (metadata only). A credential is always used as it is
    /// when the request is sent, never as it was when the proposal was made.
    pub credentials: Arc<BTreeMap<String, CredentialMeta>>,
}

/// What applying produced: a result to keep, and an error when it did not succeed.
#[derive(Debug, Clone, Default)]
pub struct ApplyOutcome {
    /// What to store as the proposal's result (a response, a file's new hash).
    pub result: Option<Value>,
    /// Why it failed; none means applied.
    pub error: Option<ErrorInfo>,
}

impl ApplyOutcome {
    /// Success with a result.
    pub fn applied(result: Value) -> Self {
        Self { result: Some(result), error: None }
    }
    /// Failure with a stable code.
    pub fn failed(code: &str, message: impl Into<String>) -> Self {
        Self { result: None, error: Some(ErrorInfo { code: code.into(), message: message.into() }) }
    }
}

/// What a kind's reconciler found for a write that was `applying` when Assent stopped.
#[derive(Debug, Clone)]
pub enum Reconciled {
    /// The write landed: settle it as applied with this result.
    Applied(Value),
    /// The write did not happen and may safely be carried out now.
    NotApplied,
    /// It cannot be known or cannot be done: settle it as failed.
    Failed(ErrorInfo),
}

impl Reconciled {
    /// A kind handed a payload of another kind: failed, `integrity`.
    pub fn mismatch(payload: &Payload, kind: KindName) -> Reconciled {
        Reconciled::Failed(ErrorInfo { code: "integrity".into(), message: payload.not_of(kind) })
    }
}

/// A payload ready to store.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// Validated and normalized, typed by its kind (stored as [`Payload::to_value`] says).
    pub payload: Payload,
    /// The target's state at proposal time, if the kind has a target.
    pub base: Option<Value>,
    /// Computed from `payload` (and `base`).
    pub preview: Preview,
}

/// One kind of proposal.
#[async_trait::async_trait]
pub trait Kind: Send + Sync {
    /// `tool.call`, `file.write`, ...
    fn name(&self) -> KindName;
    /// Whether Assent applies it or only records the decision: its name's.
    fn class(&self) -> KindClass {
        self.name().class()
    }
    /// Whether preparing touches the file system (then it runs off the async runtime's worker
    /// threads): its name's.
    fn blocking(&self) -> bool {
        self.name().blocking()
    }
    /// The edge: validates and normalizes an agent's payload into its kind's typed payload,
    /// snapshots the target, computes the preview. Errors are [`CoreError::Invalid`] with a
    /// precise code. From here on the payload is typed.
    fn prepare(&self, payload: Value, ctx: &PrepareCtx) -> Result<Prepared, CoreError>;
    /// Applies a person's edits (as the API carries them) to a stored payload; the result is
    /// validated like a new one.
    fn edit(&self, payload: &Payload, edits: &Value) -> Result<Payload, CoreError>;
    /// What rules see of a payload: its tool and command, path, method, host and credential, as
    /// they apply to this kind.
    fn facts(&self, _payload: &Payload) -> crate::rules::Facts {
        crate::rules::Facts::default()
    }
    /// Whether approving it from a notification is too dangerous (deletes): only "Open" is
    /// offered there.
    fn destructive(&self, _payload: &Payload) -> bool {
        false
    }
    /// Carries out an approved write (kinds of class `Applied`): the result to store, or why it
    /// failed. `payload` is the approved one (edited or not), already checked against the hash
    /// recorded with the decision.
    async fn apply(&self, _p: &Proposal, _payload: &Payload, _ctx: &ApplyCtx) -> ApplyOutcome {
        ApplyOutcome::failed("not_applicable", format!("{} is not applied by Assent", self.name()))
    }
    /// After a crash, finds out whether a write that was `applying` landed.
    async fn reconcile(&self, _p: &Proposal, _payload: &Payload) -> Reconciled {
        Reconciled::Failed(ErrorInfo {
            code: "outcome_unknown".into(),
            message: "Assent stopped while applying this; whether it happened is unknown".into(),
        })
    }
}

/// The kinds an engine accepts, by name.
#[derive(Clone, Default)]
pub struct KindRegistry {
    kinds: BTreeMap<KindName, Arc<dyn Kind>>,
}

impl KindRegistry {
    /// A registry with the kinds the core ships (`tool.call`).
    pub fn with_builtins() -> Self {
        let mut r = Self::default();
        r.register(Arc::new(ToolCall));
        r
    }

    /// Adds (or replaces) a kind.
    pub fn register(&mut self, kind: Arc<dyn Kind>) {
        self.kinds.insert(kind.name(), kind);
    }

    /// The kind of that name, or `unknown_kind` (the edge: an agent's word for a kind).
    pub fn get(&self, name: &str) -> Result<&Arc<dyn Kind>, CoreError> {
        KindName::parse(name).and_then(|k| self.kinds.get(&k)).ok_or_else(|| {
            let known: Vec<&str> = self.kinds.keys().map(|k| k.as_str()).collect();
            CoreError::invalid(
                "unknown_kind",
                format!("unknown kind `{}`; known kinds: {}", clip(name, 64), known.join(", ")),
            )
        })
    }

    /// The kind, when registered here.
    pub fn kind(&self, name: KindName) -> Option<&Arc<dyn Kind>> {
        self.kinds.get(&name)
    }

    /// The kind, or `unknown_kind` when this host does not register it.
    pub fn of(&self, name: KindName) -> Result<&Arc<dyn Kind>, CoreError> {
        self.get(name.as_str())
    }

    /// The kind's class, defaulting to decision-only for a kind not registered here.
    pub fn class_of(&self, name: KindName) -> KindClass {
        self.kinds.get(&name).map(|k| k.class()).unwrap_or(KindClass::DecisionOnly)
    }

    /// The registered kinds.
    pub fn names(&self) -> Vec<KindName> {
        self.kinds.keys().copied().collect()
    }
}

/// Shortens text quoted back in an error message.
pub(crate) fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max).collect();
        t.push('…');
        t
    }
}

/// Shortens text quoted back in an error message (for kinds outside the core).
pub fn clip_pub(s: &str, max: usize) -> String {
    clip(s, max)
}
