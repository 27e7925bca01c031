//! Expiry: a background task settles pending proposals whose `expires_at` has passed. It sleeps
//! until the earliest expiry (or a minute), and a new proposal that expires earlier wakes it.
//! While proposals hold a lease it looks every second for leases that lapsed.

use super::Engine;
use crate::proposal::Channel;
use crate::status::{Action, next};
use crate::store::Transition;
use crate::time::Timestamp;
use std::future::Future;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

const MAX_SLEEP_MS: i64 = 60_000;
const BATCH: u32 = 500;
/// How often leases are looked at while there are any.
const LEASE_TICK_MS: i64 = 1000;

/// When the expiry sweeper looks next, and what wakes it sooner: its own state, kept here.
pub(crate) struct Sweeper {
    /// When it plans to wake next (ms); a new proposal expiring earlier pokes it.
    next: AtomicI64,
    now: tokio::sync::Notify,
    /// The clock's skew it last finished looking at (see [`Engine::move_clock`]).
    swept: tokio::sync::watch::Sender<i64>,
}

impl Sweeper {
    pub(crate) fn new() -> Sweeper {
        Sweeper {
            next: AtomicI64::new(i64::MAX),
            now: tokio::sync::Notify::new(),
            swept: tokio::sync::watch::Sender::new(i64::MIN),
        }
    }

    /// Wakes it now (a lease was granted: it looks every second from now on).
    pub(crate) fn poke(&self) {
        self.now.notify_one();
    }

    /// Wakes it now if `at` (ms) comes before it planned to look.
    pub(crate) fn poke_if_before(&self, at: i64) {
        if at < self.next.load(Ordering::Acquire) {
            self.now.notify_one();
        }
    }

    /// Whenever it finishes looking: the time it was looking at and when it looks next.
    fn looked(&self, skew: i64, next: i64) {
        self.next.store(next, Ordering::Release);
        self.swept.send_replace(skew);
    }

    /// The skew it last finished looking at, as it moves.
    pub(crate) fn swept(&self) -> tokio::sync::watch::Receiver<i64> {
        self.swept.subscribe()
    }
}

impl Engine {
    /// Expires every pending proposal that is due now. Returns how many it expired.
    pub async fn expire_due(&self) -> usize {
        let mut total = 0;
        loop {
            let due = match self.inner.ledger.store().due_for_expiry(self.now(), BATCH).await {
                Ok(d) => d,
                Err(e) => {
                    tracing::error!(error = %e, "could not read proposals due for expiry");
                    return total;
                }
            };
            if due.is_empty() {
                return total;
            }
            let now = self.now();
            let mut ts = Vec::new();
            for (id, status) in due {
                let class = crate::status::KindClass::DecisionOnly; // Expire is class-independent.
                if let Ok(to) = next(status, Action::Expire, class) {
                    ts.push(Transition::status_change(id, status, to, now, "assent", Channel::System));
                }
            }
            let n = ts.len();
            match self.commit(ts, false).await {
                Ok(_) => {
                    total += n;
                }
                Err(e) => {
                    tracing::error!(error = %e, "could not expire proposals");
                    return total;
                }
            }
            if n < BATCH as usize {
                return total;
            }
        }
    }

    /// Prunes the bulky content of settled proposals older than the retention. Returns how
    /// many it pruned.
    pub async fn prune_due(&self) -> u64 {
        let keep_ms = (self.inner.config.content_retention_secs as i64).saturating_mul(1000);
        let now = self.now();
        let before = Timestamp(now.0.saturating_sub(keep_ms));
        let mut total = 0;
        loop {
            match self.inner.ledger.store().prune(before, now, BATCH).await {
                Ok(n) => {
                    total += n;
                    if n < u64::from(BATCH) {
                        break;
                    }
                }
                Err(e) => {
                    tracing::error!(error = %e, "could not prune proposals past the retention");
                    break;
                }
            }
        }
        if total > 0 {
            tracing::info!(pruned = total, "pruned the content of settled proposals past the retention");
        }
        total
    }

    /// Runs the expiry sweeper (and the retention's pruning) until `shutdown` resolves.
    pub async fn run_expiry(&self, shutdown: impl Future<Output = ()>) {
        tokio::pin!(shutdown);
        // Prune a few times per retention period, at least every second and at most hourly.
        let prune_every = (self.inner.config.content_retention_secs as i64 * 1000 / 4).clamp(1000, 3_600_000);
        let mut next_prune = 0;
        loop {
            let skew = self.inner.clock.skew_ms();
            self.expire_due().await;
            self.withdraw_lapsed().await;
            if self.now().0 >= next_prune {
                self.prune_due().await;
                next_prune = self.now().0 + prune_every;
            }
            let now = self.now().0;
            let next = match self.inner.ledger.store().next_expiry().await {
                Ok(Some(t)) => t.0.min(now + MAX_SLEEP_MS),
                Ok(None) => now + MAX_SLEEP_MS,
                Err(e) => {
                    tracing::error!(error = %e, "could not read the next expiry");
                    now + 1000
                }
            };
            let mut next = next.min(next_prune);
            if self.inner.leases.len() > 0 {
                next = next.min(now + LEASE_TICK_MS);
            }
            self.inner.sweeper.looked(skew, next);
            let wait = Duration::from_millis((next - now).max(0) as u64);
            tokio::select! {
                _ = &mut shutdown => return,
                () = self.inner.clock.sleep(wait) => {}
                _ = self.inner.sweeper.now.notified() => {}
            }
        }
    }
}
