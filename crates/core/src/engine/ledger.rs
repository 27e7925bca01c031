//! The ledger: the one path by which a proposal's change is written and made known. A change is
//! written to the store first; only once it is committed are its waiters woken and its event
//! published ("announce after commit", said here once). The engine then does what follows from
//! it (a lease dropped, a write carried out, an expiry planned: `Engine::follow_up`).
//!
//! The event bus and the waiters are the ledger's own: nothing else can publish a proposal's
//! change or wake its waiters. The store is the ledger's too: the rest of the engine reaches it
//! through [`Ledger::store`] as its [`Records`] (reads, and what is not a proposal's change:
//! agents, rules, keys), which have no way to file or move a proposal; only the ledger holds its
//! [`crate::store::Filing`] (and `crates/core/tests/layers.rs` reads the engine's sources for a
//! call of that shape elsewhere).

use crate::error::CoreError;
use crate::events::{Event, EventBus, Waiters};
use crate::proposal::Proposal;
use crate::status::Status;
use crate::store::{Inserted, NewRecord, Records, Store, Transition, Transitioned};
use std::sync::Arc;
use tokio::sync::broadcast;

/// The store, the event bus and the waiters, as one path.
pub(crate) struct Ledger {
    store: Arc<dyn Store>,
    bus: EventBus,
    waiters: Waiters,
}

/// Status changes the store committed, not yet announced: the engine announces them
/// ([`Ledger::announce`]) when what must come first has (a rule put in force before the agent
/// hears of the approval that made it).
#[must_use = "a committed change is announced (Ledger::announce), or its waiters never hear of it"]
pub(crate) struct Committed {
    from: Vec<Status>,
    done: Vec<Transitioned>,
}

impl Committed {
    /// What the store did with each change, in order.
    pub(crate) fn done(&self) -> &[Transitioned] {
        &self.done
    }
}

impl Ledger {
    /// A ledger over `store`, its bus holding up to `capacity` events for a slow listener.
    pub(crate) fn new(store: Arc<dyn Store>, capacity: usize) -> Self {
        Ledger { store, bus: EventBus::new(capacity), waiters: Waiters::default() }
    }

    /// The store for reads, and for what is not a proposal's change: its [`Records`], which
    /// cannot file or move a proposal.
    pub(crate) fn store(&self) -> &dyn Records {
        &*self.store
    }

    /// The open waits on proposals.
    pub(crate) fn waiters(&self) -> &Waiters {
        &self.waiters
    }

    /// Subscribes to proposal events.
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.bus.subscribe()
    }

    /// Tells listeners the rules changed (`rule_id`, or empty: several, or another node's).
    pub(crate) fn rules_changed(&self, rule_id: String) {
        self.bus.publish(Event::RulesChanged { rule_id });
    }

    /// Files a new proposal; once committed, its predecessor's waiters (when it withdrew one)
    /// and everyone listening hear of it. An earlier proposal found under the same idempotency
    /// key is news to nobody.
    pub(crate) async fn insert(&self, rec: NewRecord) -> Result<Inserted, CoreError> {
        let inserted = self.store.insert(rec).await?;
        if let Inserted::Created { proposal, superseded } = &inserted {
            if let Some(old) = superseded {
                self.heard(old, Some(Status::Pending));
            }
            self.heard(proposal, None);
        }
        Ok(inserted)
    }

    /// Writes status changes (all or none when `atomic`), to be announced once the caller has
    /// done what must come first.
    pub(crate) async fn transition(&self, ts: Vec<Transition>, atomic: bool) -> Result<Committed, CoreError> {
        let from = ts.iter().map(|t| t.from).collect();
        let done = if ts.is_empty() { Vec::new() } else { self.store.transition(ts, atomic).await? };
        Ok(Committed { from, done })
    }

    /// Announces committed changes: each proposal changed wakes its waiters and is published
    /// with the status it left. What the store refused (a conflict) is news to nobody.
    pub(crate) fn announce(&self, c: Committed) -> Vec<Transitioned> {
        for (from, t) in c.from.iter().zip(&c.done) {
            if let Transitioned::Done(p) = t {
                self.heard(p, Some(*from));
            }
        }
        c.done
    }

    /// A proposal changed (here, or on another node of a team): its waiters wake, and listeners
    /// hear of it, as new (`from` none) or as having left `from`.
    pub(crate) fn heard(&self, p: &Proposal, from: Option<Status>) {
        self.waiters.notify(p);
        let proposal = crate::events::ProposalSummary::of(p);
        self.bus.publish(match from {
            None => Event::Created { proposal },
            Some(from) => Event::Updated { proposal, from },
        });
    }

    /// Wakes the waiters of `p` alone (a wait that reads its proposal again), publishing nothing.
    pub(crate) fn wake(&self, p: &Proposal) {
        self.waiters.notify(p);
    }
}
