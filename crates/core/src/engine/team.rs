//! A store several servers share (a team): what another node changed reaches this one's
//! waiters, event stream and notifications, and an approval made anywhere is carried out here
//! when this node received the proposal.

use super::{Engine, Inner};
use crate::status::Status;
use crate::store::RemoteChange;
use std::sync::Weak;
use tokio::sync::mpsc;

impl Engine {
    /// Follows the changes of a shared store for as long as the engine lives.
    pub(super) fn follow(inner: Weak<Inner>, mut rx: mpsc::Receiver<RemoteChange>) {
        tokio::spawn(async move {
            while let Some(change) = rx.recv().await {
                let Some(inner) = inner.upgrade() else { break };
                Engine { inner }.remote(change).await;
            }
        });
    }

    async fn remote(&self, change: RemoteChange) {
        match change {
            RemoteChange::Proposal { id, from } => {
                let p = match self.inner.ledger.store().get(&id).await {
                    Ok(Some(p)) => p,
                    Ok(None) => return,
                    Err(e) => {
                        tracing::warn!(id, error = %e, "could not read a proposal another node changed");
                        return;
                    }
                };
                self.inner.ledger.heard(&p, from);
                self.follow_up(&p);
            }
            RemoteChange::Rules => match self.reload_rules().await {
                Ok(()) => self.inner.ledger.rules_changed(String::new()),
                Err(e) => tracing::warn!(error = %e, "could not reload the rules another node changed"),
            },
            RemoteChange::Resync => self.resync().await,
        }
    }

    /// After the store was out of reach: every open wait reads its proposal again, and what
    /// was approved here meanwhile is carried out.
    async fn resync(&self) {
        for id in self.inner.ledger.waiters().ids() {
            if let Ok(Some(p)) = self.inner.ledger.store().get(&id).await {
                self.inner.ledger.wake(&p);
            }
        }
        match self.inner.ledger.store().unsettled_applies().await {
            Ok(rows) => {
                for p in rows.into_iter().filter(|p| p.status == Status::Approved && self.applies_here(p)) {
                    self.spawn_apply(p.id);
                }
            }
            Err(e) => tracing::warn!(error = %e, "could not read the approved writes after reconnecting"),
        }
        if let Err(e) = self.reload_rules().await {
            tracing::warn!(error = %e, "could not reload the rules after reconnecting");
        }
        tracing::info!("the team store is back; caught up with what changed meanwhile");
    }
}
