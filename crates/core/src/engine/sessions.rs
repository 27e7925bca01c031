//! What agents that gather their writes before asking need: several proposals filed in one call
//! (one group, each item checked on its own), and a session's proposals counted by status, so a
//! resumed task knows what it still waits on.

use super::{Engine, Principal};
use crate::error::CoreError;
use crate::proposal::{ErrorInfo, NewProposal, Proposal};
use crate::status::Status;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// The most proposals one batch files.
pub const MAX_BATCH: usize = 100;

/// One item of a batch as filed: the proposal, or why it was refused.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ProposedItem {
    /// Its place in the request, from 0.
    pub index: usize,
    /// The proposal (filed, or returned again for a retried idempotency key).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub proposal: Option<Proposal>,
    /// Why it was refused (nothing was filed for it).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub error: Option<ErrorInfo>,
}

/// What a batch filed.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ProposedBatch {
    /// The group every filed item is in (decided together in the inbox).
    pub group_id: String,
    /// Per item, in request order.
    pub items: Vec<ProposedItem>,
    /// How many were filed.
    pub filed: usize,
    /// How many were refused.
    pub refused: usize,
}

/// A session's proposals by status.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SessionCounts {
    /// The session.
    pub session_id: String,
    /// How many still wait for a decision.
    pub pending: u64,
    /// How many in all.
    pub total: u64,
    /// How many in each status (only the statuses it has).
    #[cfg_attr(feature = "ts", ts(type = "Record<string, number>"))]
    pub by_status: BTreeMap<String, u64>,
}

/// The longest Idempotency-Key a batch takes: room for `/99` within a proposal's 200.
pub const BATCH_KEY_MAX: usize = 190;

impl Engine {
    /// Files the proposals of `body` (`{"items": [...], "group_id"?}`) for `agent`, each checked
    /// and filed on its own, all in one group (the given one, else a new one). With an
    /// idempotency key, item `i` is filed under `KEY/i`, so a retried batch files nothing twice.
    pub async fn propose_batch(
        &self,
        agent: &str,
        body: Value,
        idempotency_key: Option<&str>,
    ) -> Result<ProposedBatch, CoreError> {
        let bad = |m: &str| CoreError::invalid("invalid_request", m.to_string());
        // The batch's key, checked whole before anything is filed: each item is filed under
        // `KEY/i`, which must itself be a key (a key too long or not visible ASCII used to be
        // cut or refused item by item, the request answered 200).
        if let Some(k) = idempotency_key
            && (k.is_empty() || k.len() > BATCH_KEY_MAX || !k.chars().all(|c| c.is_ascii_graphic()))
        {
            return Err(CoreError::invalid(
                "invalid_idempotency_key",
                format!("a batch's Idempotency-Key is 1-{BATCH_KEY_MAX} visible ASCII characters"),
            ));
        }
        let Value::Object(mut body) = body else { return Err(bad("a batch is {\"items\": [...], \"group_id\"?}")) };
        if let Some(k) = body.keys().find(|k| !["items", "group_id"].contains(&k.as_str())) {
            return Err(bad(&format!(
                "unknown field `{}` in a batch (items, group_id)",
                crate::kinds::clip_pub(k, 40)
            )));
        }
        let items = match body.remove("items") {
            Some(Value::Array(items)) if !items.is_empty() && items.len() <= MAX_BATCH => items,
            _ => return Err(bad(&format!("`items` is a list of 1 to {MAX_BATCH} proposals"))),
        };
        let group_id = match body.remove("group_id") {
            None | Some(Value::Null) => format!("g_{}", hex::encode(crate::secret::random_bytes::<12>())),
            // Checked as a single proposal's `group_id` is, and not left empty.
            Some(Value::String(g)) => super::envelope::text("group_id", Some(g), super::envelope::REF_MAX, true)?
                .ok_or_else(|| bad("`group_id` is not empty"))?,
            Some(_) => return Err(bad("`group_id` is a string")),
        };
        let mut out = Vec::with_capacity(items.len());
        for (index, mut item) in items.into_iter().enumerate() {
            let filed = match item.as_object_mut() {
                None => Err(CoreError::invalid("invalid_request", "an item is a proposal object")),
                Some(m) => match m.get("group_id") {
                    Some(Value::String(g)) if *g != group_id => {
                        Err(CoreError::invalid("invalid_field", "an item's `group_id` is the batch's (leave it out)"))
                    }
                    _ => {
                        m.insert("group_id".into(), Value::String(group_id.clone()));
                        let key = idempotency_key.map(|k| format!("{k}/{index}"));
                        match NewProposal::read(item) {
                            Ok(req) => self.propose(agent, req, key.as_deref()).await.map(|p| p.proposal.for_agent()),
                            Err(e) => Err(e),
                        }
                    }
                },
            };
            out.push(match filed {
                Ok(p) => ProposedItem { index, proposal: Some(p), error: None },
                Err(e) => ProposedItem { index, proposal: None, error: Some(super::decide::err_info(&e)) },
            });
        }
        let filed = out.iter().filter(|i| i.proposal.is_some()).count();
        Ok(ProposedBatch { group_id, refused: out.len() - filed, filed, items: out })
    }

    /// How many proposals of session `session_id` are in each status: the agent's own (on this
    /// node), or every agent's for the owner.
    pub async fn session(&self, who: &Principal, session_id: &str) -> Result<SessionCounts, CoreError> {
        if session_id.is_empty() || session_id.chars().count() > super::envelope::REF_MAX {
            return Err(CoreError::invalid("invalid_field", "a session id is 1-200 characters"));
        }
        // An agent counts its own on this node (a store of one's own keeps '' there).
        let (agent, node) = match who.agent() {
            Some(a) => (Some(a), Some(self.inner.config.node.as_deref().unwrap_or(""))),
            None => (None, None),
        };
        let rows = self.inner.ledger.store().session_counts(session_id, agent, node).await?;
        let by_status: BTreeMap<String, u64> = rows.iter().map(|(s, n)| (s.as_str().to_string(), *n)).collect();
        Ok(SessionCounts {
            session_id: session_id.to_string(),
            pending: rows.iter().filter(|(s, _)| *s == Status::Pending).map(|(_, n)| n).sum(),
            total: rows.iter().map(|(_, n)| n).sum(),
            by_status,
        })
    }
}
