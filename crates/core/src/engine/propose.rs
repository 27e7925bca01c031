//! Proposing: validate the envelope, let the kind validate and preview the payload, store it
//! once, announce it.

use super::Engine;
use crate::canonical::canonical_sha256;
use crate::error::CoreError;
use crate::events::Event;
use crate::kinds::{PrepareCtx, Prepared, clip};
use crate::proposal::{NewProposal, Proposal};
use crate::secret::{base32, random_bytes};
use crate::status::Status;
use crate::store::{Idempotency, Inserted, NewRecord};
use crate::time::Timestamp;
use serde_json::Value;
use std::sync::atomic::Ordering;

const TITLE_MAX: usize = 200;
const SUMMARY_MAX: usize = 10_000;
const REF_MAX: usize = 200;
const IDEMPOTENCY_KEY_MAX: usize = 200;

/// A fresh proposal id: `p_` and 128 random bits in base32.
pub fn new_proposal_id() -> String {
    format!("p_{}", base32(&random_bytes::<16>()))
}

fn text(field: &str, v: Option<String>, max: usize, single_line: bool) -> Result<Option<String>, CoreError> {
    let Some(v) = v else { return Ok(None) };
    if v.chars().count() > max {
        return Err(CoreError::invalid("invalid_field", format!("`{field}` is longer than {max} characters")));
    }
    let bad = |c: char| {
        if single_line { c.is_control() } else { c.is_control() && c != '\n' && c != '\t' && c != '\r' }
    };
    if v.chars().any(bad) {
        return Err(CoreError::invalid("invalid_field", format!("`{field}` contains control characters")));
    }
    Ok(if v.trim().is_empty() { None } else { Some(v) })
}

/// What a `propose` call did.
#[derive(Debug, Clone)]
pub struct Proposed {
    /// The proposal.
    pub proposal: Proposal,
    /// False when an idempotent retry returned an earlier proposal.
    pub created: bool,
}

impl Engine {
    /// Files a proposal for `agent` from a request body. `idempotency_key` makes retries safe.
    pub async fn propose(
        &self,
        agent: &str,
        body: Value,
        idempotency_key: Option<&str>,
    ) -> Result<Proposed, CoreError> {
        let idempotency = match idempotency_key {
            None => None,
            Some(k) if k.is_empty() || k.len() > IDEMPOTENCY_KEY_MAX || !k.chars().all(|c| c.is_ascii_graphic()) => {
                return Err(CoreError::invalid(
                    "invalid_idempotency_key",
                    format!("an Idempotency-Key is 1-{IDEMPOTENCY_KEY_MAX} visible ASCII characters"),
                ));
            }
            Some(k) => Some(Idempotency { key: k.to_string(), request_sha256: canonical_sha256(&body) }),
        };
        let req: NewProposal = serde_json::from_value(body)
            .map_err(|e| CoreError::invalid("invalid_request", format!("invalid proposal: {e}")))?;
        let cfg = &self.inner.config;
        let expires_in = req.expires_in.unwrap_or(cfg.default_expires_in);
        if expires_in == 0 || expires_in > cfg.max_expires_in {
            return Err(CoreError::invalid(
                "invalid_field",
                format!("`expires_in` must be between 1 and {} seconds", cfg.max_expires_in),
            ));
        }
        let title = text("title", req.title, TITLE_MAX, true)?;
        let summary = text("summary", req.summary, SUMMARY_MAX, false)?;
        let session_id = text("session_id", req.session_id, REF_MAX, true)?;
        let group_id = text("group_id", req.group_id, REF_MAX, true)?;
        let supersedes = text("supersedes", req.supersedes, REF_MAX, true)?;

        let kind = self.inner.kinds.get(&req.kind)?.clone();
        let ctx = PrepareCtx { agent: agent.to_string(), credentials: self.credential_map() };
        let payload = req.payload;
        let Prepared { payload, base, preview } = if kind.blocking() {
            let k = kind.clone();
            tokio::task::spawn_blocking(move || k.prepare(payload, &ctx))
                .await
                .map_err(|e| CoreError::invalid("invalid_payload", format!("could not prepare the payload: {e}")))??
        } else {
            kind.prepare(payload, &ctx)?
        };

        let now = Timestamp::now();
        let mut proposal = Proposal {
            id: new_proposal_id(),
            kind: kind.name().to_string(),
            agent: agent.to_string(),
            title,
            summary,
            payload,
            preview,
            base,
            session_id,
            group_id,
            supersedes: supersedes.map(|s| clip(&s, REF_MAX)),
            status: Status::Pending,
            settled: false,
            created_at: now,
            updated_at: now,
            expires_at: now.plus_secs(expires_in),
            decision: None,
            approved_payload: None,
            result: None,
            error: None,
            class: kind.class(),
        };
        proposal.refresh_derived();
        let rec = NewRecord { proposal, idempotency, max_pending: cfg.max_pending_per_agent };
        match self.inner.store.insert(rec).await? {
            Inserted::Existing(p) => Ok(Proposed { proposal: p, created: false }),
            Inserted::Created { proposal, superseded } => {
                if let Some(old) = superseded {
                    self.inner.waiters.notify(&old.id);
                    self.inner.bus.publish(Event::Updated { proposal: old.summary_view(), from: Status::Pending });
                }
                self.inner.bus.publish(Event::Created { proposal: proposal.summary_view() });
                if proposal.expires_at.0 < self.inner.next_sweep.load(Ordering::Acquire) {
                    self.inner.sweep_now.notify_one();
                }
                Ok(Proposed { proposal, created: true })
            }
        }
    }
}
