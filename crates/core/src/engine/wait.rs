//! Waiting for a decision. The wait registers before it reads the status, so a decision that
//! lands while the wait is starting is never missed: either the read sees it, or the
//! notification after its commit wakes the registered wait.

use super::{Engine, Principal};
use crate::error::CoreError;
use crate::proposal::Proposal;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

impl Engine {
    /// Returns the proposal as soon as it is settled, or as it is when `timeout` passes.
    pub async fn wait(&self, who: &Principal, id: &str, timeout: Duration) -> Result<Proposal, CoreError> {
        let timeout = timeout.min(Duration::from_secs(self.inner.config.max_wait_secs));
        let mut guard = self.inner.waiters.register(id, who.agent(), self.inner.config.max_waits_per_agent as usize)?;
        let deadline = Instant::now() + timeout;
        // A wait spends nearly all its life parked below, and with 10,000 open waits what a
        // parked wait holds is what the server's memory is made of: so it holds no proposal
        // while parked, and the store read's future is boxed.
        // While the wait is open the proposal's lease does not run down; its end (an answer,
        // the timeout, or the connection dropped) renews it. Held before the first read: the
        // clock may pass the lease's end while the read is in flight (a slow store), and the
        // sweeper must not withdraw a proposal whose agent is, by then, waiting on it.
        let hold = self.inner.leases.hold(id);
        let mut p = match Box::pin(self.get(who, id)).await {
            Ok(p) => p,
            Err(e) => {
                // Not this agent's to wait on (or gone): it renews nothing.
                if let Some(h) = hold {
                    h.abandon();
                }
                return Err(e);
            }
        };
        let _hold = hold;
        loop {
            if p.settled {
                return Ok(p);
            }
            drop(p);
            let snapshot = tokio::select! {
                s = guard.changed() => s,
                _ = tokio::time::sleep_until(deadline) => return Box::pin(self.get(who, id)).await,
            };
            // The change hands over the proposal as it committed it: a settled one is the
            // answer without another read. Anything else is read again, since changes of one
            // proposal made by different tasks may be announced out of order.
            p = match snapshot {
                Some(s) if s.settled => who.view(Arc::unwrap_or_clone(s)),
                _ => Box::pin(self.get(who, id)).await?,
            };
        }
    }
}
