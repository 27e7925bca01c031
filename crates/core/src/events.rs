//! Changes are published as typed events on a broadcast bus (the event stream, the desktop
//! app and the notifier subscribe), and waiters on one proposal are woken through a registry
//! keyed by id, so that a decision wakes exactly its waiters, not every open wait.

use crate::error::CoreError;
use crate::proposal::Proposal;
use crate::status::Status;
use crate::time::Timestamp;
use serde::Serialize;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::{broadcast, watch};

/// A change to a proposal.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum Event {
    /// A new proposal.
    #[serde(rename = "proposal.created")]
    Created {
        /// The proposal.
        proposal: ProposalSummary,
    },
    /// A proposal changed status.
    #[serde(rename = "proposal.updated")]
    Updated {
        /// The proposal as it now is.
        proposal: ProposalSummary,
        /// Its previous status.
        from: Status,
    },
    /// The person added or removed a rule (the person's clients only: agents never see it).
    #[serde(rename = "rules.changed")]
    RulesChanged {
        /// The rule.
        rule_id: String,
    },
}

impl Event {
    /// The proposal the event is about (none for a change of rules).
    pub fn proposal(&self) -> Option<&ProposalSummary> {
        match self {
            Event::Created { proposal } | Event::Updated { proposal, .. } => Some(proposal),
            Event::RulesChanged { .. } => None,
        }
    }

    /// The SSE event name.
    pub fn name(&self) -> &'static str {
        match self {
            Event::Created { .. } => "proposal.created",
            Event::Updated { .. } => "proposal.updated",
            Event::RulesChanged { .. } => "rules.changed",
        }
    }
}

struct Slot {
    /// The proposal as its latest change left it.
    tx: watch::Sender<Option<Arc<Proposal>>>,
    count: usize,
}

#[derive(Default)]
struct Inner {
    slots: HashMap<String, Slot>,
    per_agent: HashMap<String, usize>,
}

/// Open waits, by proposal id, with a per-agent count for the open-waits limit.
#[derive(Default, Clone)]
pub struct Waiters {
    inner: Arc<Mutex<Inner>>,
}

/// One open wait. Dropping it unregisters.
pub struct WaitGuard {
    waiters: Waiters,
    id: String,
    agent: Option<String>,
    rx: watch::Receiver<Option<Arc<Proposal>>>,
}

impl Waiters {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A poisoned lock only means another waiter panicked mid-update of plain counters.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Registers a wait on `id`. `agent` counts it against that agent's limit.
    pub fn register(&self, id: &str, agent: Option<&str>, max_per_agent: usize) -> Result<WaitGuard, CoreError> {
        let mut inner = self.lock();
        if let Some(a) = agent {
            let n = inner.per_agent.entry(a.to_string()).or_default();
            if *n >= max_per_agent {
                return Err(CoreError::TooMany {
                    code: "too_many_waits",
                    message: format!(
                        "agent `{a}` already has {n} open waits (the limit); wait on fewer proposals at once"
                    ),
                });
            }
            *n += 1;
        }
        let slot = inner.slots.entry(id.to_string()).or_insert_with(|| Slot { tx: watch::channel(None).0, count: 0 });
        slot.count += 1;
        let rx = slot.tx.subscribe();
        Ok(WaitGuard { waiters: self.clone(), id: id.to_string(), agent: agent.map(str::to_string), rx })
    }

    /// Wakes every wait on `p`, handing them the proposal as the change left it.
    pub fn notify(&self, p: &Proposal) {
        // Most changes have nobody waiting; the copy for those that do is made outside the
        // lock that every wait's start and end takes.
        if !self.lock().slots.contains_key(&p.id) {
            return;
        }
        let snapshot = Some(Arc::new(p.clone()));
        if let Some(slot) = self.lock().slots.get(&p.id) {
            slot.tx.send_replace(snapshot);
        }
    }

    /// The proposals someone is waiting on.
    pub fn ids(&self) -> Vec<String> {
        self.lock().slots.keys().cloned().collect()
    }

    /// Number of open waits (all agents).
    pub fn open(&self) -> usize {
        self.lock().slots.values().map(|s| s.count).sum()
    }

    /// Number of agents with a wait open.
    pub fn agents_waiting(&self) -> usize {
        self.lock().per_agent.len()
    }
}

impl WaitGuard {
    /// Resolves when the proposal was notified since registration (or the last call), with
    /// the proposal as that change left it.
    pub async fn changed(&mut self) -> Option<Arc<Proposal>> {
        if self.rx.changed().await.is_err() {
            // The slot lives as long as this guard, so the sender cannot be gone; never spin.
            std::future::pending::<()>().await;
        }
        self.rx.borrow_and_update().clone()
    }
}

impl Drop for WaitGuard {
    fn drop(&mut self) {
        let mut inner = self.waiters.lock();
        if let Some(slot) = inner.slots.get_mut(&self.id) {
            slot.count -= 1;
            if slot.count == 0 {
                inner.slots.remove(&self.id);
            }
        }
        if let Some(a) = &self.agent
            && let Some(n) = inner.per_agent.get_mut(a)
        {
            *n -= 1;
            if *n == 0 {
                inner.per_agent.remove(a);
            }
        }
    }
}

/// The broadcast bus of events.
#[derive(Clone)]
pub struct EventBus {
    tx: broadcast::Sender<Event>,
}

impl EventBus {
    /// A bus that buffers `capacity` events per slow subscriber before it lags.
    pub fn new(capacity: usize) -> Self {
        Self { tx: broadcast::channel(capacity).0 }
    }

    /// Publishes (nobody listening is fine).
    pub fn publish(&self, e: Event) {
        let _ = self.tx.send(e);
    }

    /// A new subscription.
    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.tx.subscribe()
    }
}

/// The small form of a proposal carried by events.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ProposalSummary {
    /// Id.
    pub id: String,
    /// Kind.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub kind: crate::payloads::KindName,
    /// Agent.
    pub agent: String,
    /// The node that received it (team store).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub node: Option<String>,
    /// The agent's title.
    pub title: Option<String>,
    /// Status.
    pub status: Status,
    /// Settled for its kind.
    pub settled: bool,
    /// Session.
    pub session_id: Option<String>,
    /// Group.
    pub group_id: Option<String>,
    /// Revises.
    pub supersedes: Option<String>,
    /// Created.
    pub created_at: Timestamp,
    /// Last change.
    pub updated_at: Timestamp,
    /// Expiry.
    pub expires_at: Timestamp,
}

impl ProposalSummary {
    /// The small form of `p`, sent on the event stream.
    pub fn of(p: &Proposal) -> ProposalSummary {
        ProposalSummary {
            id: p.id.clone(),
            kind: p.kind,
            agent: p.agent.clone(),
            node: p.node.clone(),
            title: p.title.clone(),
            status: p.status,
            settled: p.settled,
            session_id: p.session_id.clone(),
            group_id: p.group_id.clone(),
            supersedes: p.supersedes.clone(),
            created_at: p.created_at,
            updated_at: p.updated_at,
            expires_at: p.expires_at,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::KindClass;
    use crate::time::Timestamp;
    use std::time::Duration;

    fn proposal(id: &str, status: Status) -> Proposal {
        let payload = serde_json::json!({"tool": "t", "input": {}});
        let mut p = Proposal::applying(id, crate::payloads::KindName::ToolCall, "a", payload, None);
        p.preview = crate::preview::Preview::Unreadable { raw: serde_json::json!({}) };
        p.expires_at = Timestamp(1);
        (p.status, p.class) = (status, KindClass::DecisionOnly);
        p.refresh_derived();
        p
    }

    #[tokio::test]
    async fn notify_wakes_registered_waiter_and_cleans_up() {
        let w = Waiters::default();
        let mut g = w.register("p1", Some("a"), 2).map_err(|e| e.to_string()).unwrap_or_else(|e| panic!("{e}"));
        w.notify(&proposal("p1", Status::Rejected));
        let got =
            tokio::time::timeout(Duration::from_secs(1), g.changed()).await.unwrap_or_else(|_| panic!("not woken"));
        let got = got.unwrap_or_else(|| panic!("the change carries the proposal"));
        assert_eq!((got.id.as_str(), got.status, got.settled), ("p1", Status::Rejected, true));
        assert_eq!(w.open(), 1);
        drop(g);
        assert_eq!(w.open(), 0);
        assert!(w.lock().per_agent.is_empty());
    }

    #[tokio::test]
    async fn a_notify_for_another_id_does_not_wake() {
        let w = Waiters::default();
        let mut g = w.register("p1", None, 1).unwrap_or_else(|e| panic!("{e}"));
        w.notify(&proposal("p2", Status::Approved));
        assert!(tokio::time::timeout(Duration::from_millis(50), g.changed()).await.is_err());
    }

    #[test]
    fn per_agent_limit() {
        let w = Waiters::default();
        let _a = w.register("p1", Some("a"), 2);
        let _b = w.register("p2", Some("a"), 2);
        assert_eq!(w.register("p3", Some("a"), 2).err().map(|e| e.code()), Some("too_many_waits"));
        assert!(w.register("p3", Some("b"), 2).is_ok());
    }
}
