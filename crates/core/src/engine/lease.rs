//! Leases: a question nobody waits for leaves the inbox. An agent that files a proposal with
//! `lease_secs` holds its lease while it waits for the answer (an open wait) or reads the
//! proposal; once it has done neither for `lease_secs` (its process was killed, its machine
//! slept, its connection dropped), the proposal is withdrawn, with `lease_lapsed` in the audit
//! trail. Leases live in memory on the node that received the proposal: every pending leased
//! proposal gets a whole lease afresh when the server starts, so a restart never withdraws one
//! whose client is about to wait again.

use super::Engine;
use crate::error::CoreError;
use crate::proposal::{Channel, Proposal};
use crate::status::{Action, Status, next};
use crate::store::{Transition, Transitioned};
use crate::time::Clock;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The shortest and longest lease an agent may ask for, in seconds.
pub const LEASE_SECS: std::ops::RangeInclusive<u64> = 5..=3600;

/// Why the proposal was withdrawn, as the audit trail says it.
pub const LAPSED: &str = "lease_lapsed";

struct Lease {
    secs: u32,
    /// Open waits on the proposal: while there is one, the lease does not run down.
    holders: u32,
    /// When it lapses with nobody holding it.
    lapses_at: Instant,
    /// The proposal is no longer pending: the last hold's end takes the lease out.
    settled: bool,
}

/// The leases of the pending proposals this node received.
pub(crate) struct Leases {
    map: Mutex<HashMap<String, Lease>>,
    clock: Arc<Clock>,
}

impl Leases {
    pub(crate) fn new(clock: Arc<Clock>) -> Self {
        Self { map: Mutex::default(), clock }
    }

    /// When a lease of `secs` seconds renewed now lapses.
    fn lapse_from_now(&self, secs: u32) -> Instant {
        self.clock.instant() + Duration::from_secs(secs.into())
    }

    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<String, Lease>> {
        self.map.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Starts (or renews) the lease of a pending proposal. Returns whether it is the only one.
    pub(crate) fn grant(&self, id: &str, secs: u32) -> bool {
        let lapses_at = self.lapse_from_now(secs);
        let mut map = self.map();
        match map.get_mut(id) {
            Some(l) => l.lapses_at = l.lapses_at.max(lapses_at),
            None => {
                map.insert(id.to_string(), Lease { secs, holders: 0, lapses_at, settled: false });
            }
        }
        map.len() == 1
    }

    /// Renews the lease of `id`, if it has one here.
    pub(crate) fn renew(&self, id: &str) {
        let mut map = self.map();
        if let Some(l) = map.get_mut(id) {
            l.lapses_at = l.lapses_at.max(self.lapse_from_now(l.secs));
        }
    }

    /// Holds the lease of `id` (if it has one) until the returned hold is dropped, and renews
    /// it then: an open wait keeps the proposal however long it lasts.
    pub(crate) fn hold<'a>(&'a self, id: &str) -> Option<Hold<'a>> {
        let mut map = self.map();
        let l = map.get_mut(id)?;
        l.holders += 1;
        Some(Hold { leases: self, id: id.to_string(), renew: true })
    }

    /// Takes out the leases that have lapsed by `now`.
    fn lapsed(&self, now: Instant) -> Vec<(String, u32)> {
        let mut map = self.map();
        let ids: Vec<String> =
            map.iter().filter(|(_, l)| l.holders == 0 && l.lapses_at <= now).map(|(id, _)| id.clone()).collect();
        ids.into_iter().filter_map(|id| map.remove(&id).map(|l| (id, l.secs))).collect()
    }

    /// Forgets the lease of a proposal that is no longer pending: now, or when the last wait
    /// holding it ends (the wait a decision answers is still open when the decision is known).
    pub(crate) fn forget(&self, id: &str) {
        let mut map = self.map();
        match map.get_mut(id) {
            Some(l) if l.holders > 0 => l.settled = true,
            Some(_) => {
                map.remove(id);
            }
            None => {}
        }
    }

    /// How many proposals hold a lease here.
    pub(crate) fn len(&self) -> usize {
        self.map().len()
    }
}

/// An open wait's hold on a lease.
pub(crate) struct Hold<'a> {
    leases: &'a Leases,
    id: String,
    /// Whether its end renews the lease: not for a wait that turned out not to be the agent's.
    renew: bool,
}

impl Hold<'_> {
    /// Lets go without renewing: the wait holding it was refused (not the agent's proposal).
    pub(crate) fn abandon(mut self) {
        self.renew = false;
    }
}

impl Drop for Hold<'_> {
    fn drop(&mut self) {
        let mut map = self.leases.map();
        if let Some(l) = map.get_mut(&self.id) {
            l.holders = l.holders.saturating_sub(1);
            if self.renew {
                l.lapses_at = l.lapses_at.max(self.leases.lapse_from_now(l.secs));
            }
            if l.holders == 0 && l.settled {
                map.remove(&self.id);
            }
        }
    }
}

/// The lease an agent asked for, checked.
pub(crate) fn requested(secs: Option<u64>) -> Result<Option<u32>, CoreError> {
    match secs {
        None => Ok(None),
        Some(s) if LEASE_SECS.contains(&s) => Ok(Some(s as u32)),
        Some(_) => Err(CoreError::invalid(
            "invalid_field",
            format!("`lease_secs` must be between {} and {} seconds", LEASE_SECS.start(), LEASE_SECS.end()),
        )),
    }
}

impl Engine {
    /// Starts the lease of a proposal just filed (or filed again under its idempotency key).
    pub(crate) fn lease(&self, p: &Proposal) {
        if let (Status::Pending, Some(secs)) = (p.status, p.lease_secs)
            && self.inner.leases.grant(&p.id, secs)
        {
            // The sweeper may be asleep for a minute: it looks every second from now on.
            self.inner.sweeper.poke();
        }
    }

    /// Gives every pending leased proposal this node received a whole lease: at start-up.
    pub(crate) async fn resume_leases(&self) -> Result<(), CoreError> {
        let mut granted = false;
        for (id, secs) in self.inner.ledger.store().pending_leases().await? {
            granted |= self.inner.leases.grant(&id, secs);
        }
        if granted {
            self.inner.sweeper.poke();
        }
        Ok(())
    }

    /// Withdraws the pending proposals whose lease lapsed. Returns how many it withdrew.
    pub(crate) async fn withdraw_lapsed(&self) -> usize {
        let lapsed = self.inner.leases.lapsed(self.inner.clock.instant());
        if lapsed.is_empty() {
            return 0;
        }
        // Withdrawing is the same change whatever the kind's class.
        let Ok(to) = next(Status::Pending, Action::Withdraw, crate::status::KindClass::DecisionOnly) else { return 0 };
        let now = self.now();
        let ts: Vec<Transition> = lapsed
            .into_iter()
            .map(|(id, secs)| Transition {
                detail: Some(serde_json::json!({
                    "reason": LAPSED,
                    "message": format!("nobody waited for the answer for {secs} seconds (the agent's lease lapsed)"),
                })),
                ..Transition::status_change(id, Status::Pending, to, now, "assent", Channel::System)
            })
            .collect();
        match self.commit(ts, false).await {
            Ok(done) => {
                let n = done.iter().filter(|t| matches!(t, Transitioned::Done(_))).count();
                if n > 0 {
                    tracing::info!(withdrawn = n, "withdrew proposals nobody waits for (their lease lapsed)");
                }
                n
            }
            Err(e) => {
                tracing::error!(error = %e, "could not withdraw proposals whose lease lapsed");
                0
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_abandoned_hold_held_the_lease_but_renews_nothing() {
        let clock = Arc::new(Clock::default());
        let l = Leases::new(clock.clone());
        l.grant("p", 5);
        let h = l.hold("p").expect("leased");
        clock.advance(Duration::from_secs(4));
        assert!(l.lapsed(clock.instant() + Duration::from_secs(2)).is_empty(), "held while it lasts");
        h.abandon();
        assert_eq!(l.lapsed(clock.instant() + Duration::from_secs(2)), vec![("p".to_string(), 5)], "not renewed");
    }

    #[test]
    fn an_open_wait_holds_the_lease_and_its_end_renews_it() {
        let l = Leases::new(Arc::default());
        l.grant("p", 5);
        let later = Instant::now() + Duration::from_secs(6);
        {
            let _h = l.hold("p").expect("leased");
            assert!(l.lapsed(later).is_empty(), "a held lease never lapses");
        }
        assert!(l.lapsed(Instant::now()).is_empty(), "the end of a wait renews it");
        assert_eq!(l.lapsed(Instant::now() + Duration::from_secs(6)), vec![("p".to_string(), 5)]);
        assert_eq!(l.len(), 0, "a lapsed lease is taken out once");
        assert!(l.hold("p").is_none() && l.hold("q").is_none(), "no lease, no hold");
    }

    #[test]
    fn renewing_never_shortens_and_forgetting_spares_a_held_lease() {
        let l = Leases::new(Arc::default());
        l.grant("p", 60);
        l.grant("p", 5);
        assert!(l.lapsed(Instant::now() + Duration::from_secs(30)).is_empty());
        let h = l.hold("p");
        l.forget("p");
        assert_eq!(l.len(), 1, "the wait holding it still runs");
        drop(h);
        assert_eq!(l.len(), 0, "its end takes out the lease of a settled proposal");
        l.grant("q", 5);
        l.forget("q");
        assert_eq!(l.len(), 0);
        assert!(requested(Some(4)).is_err() && requested(Some(3601)).is_err());
        assert_eq!(requested(Some(15)).ok(), Some(Some(15)));
    }
}
