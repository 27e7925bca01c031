//! Waiting for a decision. The wait registers before it reads the status, so a decision that
//! lands while the wait is starting is never missed: either the read sees it, or the
//! notification after its commit wakes the registered wait.

use super::{Engine, Principal};
use crate::error::CoreError;
use crate::proposal::Proposal;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// What a wait's end without an answer means: its connection was lost (the waiting process
/// died, was killed, or stopped listening) before the proposal settled or the wait's time ran
/// out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnLost {
    /// Nothing more than the end of any wait: the proposal's lease (if any) runs from then, so a
    /// client that reconnects keeps its question.
    #[default]
    Keep,
    /// The agent's proposal is withdrawn at once: the waiter will not come back (a hook, whose
    /// client may run or drop the call when the hook dies), and nobody should decide a call that
    /// was already run or given up.
    Withdraw,
}

/// Why a proposal whose waiter was lost was withdrawn, as the audit trail says it.
pub const WAITER_LOST: &str = "waiter_lost";

/// Withdraws the proposal of an agent's wait that is dropped (its connection lost) while armed.
struct WithdrawIfLost {
    engine: Engine,
    agent: String,
    id: String,
    armed: bool,
}

impl Drop for WithdrawIfLost {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        // Dropped by the connection's task, on the runtime: the withdrawal is a write of its own.
        let Ok(rt) = tokio::runtime::Handle::try_current() else { return };
        let (engine, agent, id) = (self.engine.clone(), std::mem::take(&mut self.agent), std::mem::take(&mut self.id));
        rt.spawn(async move {
            if let Err(e) = engine.withdraw_lost(&agent, &id).await {
                tracing::debug!(proposal = %id, error = %e, "a lost waiter's proposal was not withdrawn");
            }
        });
    }
}

impl Engine {
    /// Returns the proposal as soon as it is settled, or as it is when `timeout` passes.
    pub async fn wait(&self, who: &Principal, id: &str, timeout: Duration) -> Result<Proposal, CoreError> {
        self.wait_then(who, id, timeout, OnLost::Keep).await
    }

    /// [`Engine::wait`], and what its connection's loss before an answer means (`on_lost`: for an
    /// agent's own proposal only; the person's waits keep everything).
    pub async fn wait_then(
        &self,
        who: &Principal,
        id: &str,
        timeout: Duration,
        on_lost: OnLost,
    ) -> Result<Proposal, CoreError> {
        // Made only for a wait that asks for it: most waits (10,000 open at once) keep nothing.
        let mut lost = (on_lost == OnLost::Withdraw).then(|| WithdrawIfLost {
            engine: self.clone(),
            agent: who.agent().unwrap_or_default().to_string(),
            id: id.to_string(),
            armed: false,
        });
        let p = Box::pin(self.wait_inner(who, id, timeout, lost.as_mut())).await;
        // Answered (or refused): nothing was lost.
        if let Some(l) = lost.as_mut() {
            l.armed = false;
        }
        p
    }

    async fn wait_inner(
        &self,
        who: &Principal,
        id: &str,
        timeout: Duration,
        lost: Option<&mut WithdrawIfLost>,
    ) -> Result<Proposal, CoreError> {
        let timeout = timeout.min(Duration::from_secs(self.inner.config.max_wait_secs));
        let mut guard =
            self.inner.ledger.waiters().register(id, who.agent(), self.inner.config.max_waits_per_agent as usize)?;
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
        // The proposal is the agent's (the read above checked): from here a lost connection
        // withdraws it, when the agent said so.
        if let Some(l) = lost {
            l.armed = who.agent().is_some() && !p.settled;
        }
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
