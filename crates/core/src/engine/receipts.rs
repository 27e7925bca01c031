//! The keys that sign decisions' receipts, as the store publishes them: this node's current
//! key, put there as the engine starts and when the person rotates it, and every other key a
//! verifier may still meet (another node's, or one retired while receipts it signed are still
//! valid).

use super::{Engine, Receipts};
use crate::error::CoreError;
use crate::store::ReceiptKey;
use std::sync::Arc;

/// Who signs each decision's receipt (none: decisions carry none), and how many times this
/// node's key was rotated (a host that keeps a copy of the published keys, `keys.json` for
/// `assent run`, writes it again when this moves).
pub(crate) struct Signer {
    receipts: Option<Arc<dyn Receipts>>,
    rotated: tokio::sync::watch::Sender<u64>,
}

impl Signer {
    pub(crate) fn new(receipts: Option<Arc<dyn Receipts>>) -> Signer {
        Signer { receipts, rotated: tokio::sync::watch::Sender::new(0) }
    }

    /// The receipt of a decision, when this engine signs receipts.
    pub(crate) fn issue(&self, decided: &crate::decided::Decided) -> Option<String> {
        self.receipts.as_ref().and_then(|r| r.issue(decided))
    }
}

/// Seconds a retired key stays published past its last receipt's expiry: the clock difference
/// a verifier tolerates (`assent_receipt::SKEW`).
pub const RETIRED_SKEW_SECS: i64 = 60;

impl Engine {
    /// Publishes the key that signs now, retiring this node's earlier one (it stays published
    /// until the last receipt it signed expires). Nothing without receipts.
    pub(super) async fn publish_receipt_key(&self) -> Result<(), CoreError> {
        let Some(r) = &self.inner.signer.receipts else { return Ok(()) };
        let (kid, x) = r.current();
        self.publish(kid, x, r.ttl_secs()).await
    }

    async fn publish(&self, kid: String, x: String, ttl_secs: i64) -> Result<(), CoreError> {
        let now = self.now();
        let key = ReceiptKey { kid, x, node: self.inner.config.node.clone(), added_at: now, publish_until: None };
        let until = now.plus_secs(u64::try_from(ttl_secs + RETIRED_SKEW_SECS).unwrap_or(0));
        self.inner.ledger.store().publish_receipt_key(key, until).await
    }

    /// The receipt keys verifiers may meet now: every node's current one, and retired ones
    /// whose receipts are still valid.
    pub async fn receipt_keys(&self) -> Result<Vec<ReceiptKey>, CoreError> {
        self.inner.ledger.store().receipt_keys(self.now()).await
    }

    /// Starts a new receipt key on this node: from now on it signs; the old one stays
    /// published until the last receipt it signed expires. The keys published after.
    pub async fn rotate_receipt_key(&self) -> Result<Vec<ReceiptKey>, CoreError> {
        let Some(r) = &self.inner.signer.receipts else {
            return Err(CoreError::InvalidState {
                message: "this Assent signs no receipts (no key could be kept; see its log)".into(),
            });
        };
        let (kid, x) = r.rotate().map_err(|e| CoreError::InvalidState { message: format!("cannot rotate: {e}") })?;
        self.publish(kid.clone(), x, r.ttl_secs()).await?;
        tracing::info!(kid = %kid, "a new receipt key signs from now on");
        self.inner.signer.rotated.send_modify(|n| *n += 1);
        self.receipt_keys().await
    }

    /// Moves each time this node's receipt key is rotated (see [`Engine::rotate_receipt_key`]).
    pub fn keys_rotated(&self) -> tokio::sync::watch::Receiver<u64> {
        self.inner.signer.rotated.subscribe()
    }
}
