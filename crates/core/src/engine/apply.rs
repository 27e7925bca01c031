//! Carrying out approved writes, exactly once.
//!
//! `approved -> applying` is committed before any side effect, and `applying -> applied |
//! failed` after it. So at start-up an `approved` row is known not to have started (it is
//! applied now), and an `applying` row is settled by its kind's reconciler, which compares the
//! target with the before and after states, or reports `outcome_unknown` where that cannot be
//! known (an HTTP call), never retrying on its own.

use super::Engine;
use crate::crash;
use crate::kinds::{ApplyCtx, ApplyOutcome, Reconciled};
use crate::payloads::Payload;
use crate::proposal::{Channel, ErrorInfo, Proposal};
use crate::status::{Action, Status, next};
use crate::store::{Transition, Transitioned};
use serde_json::Value;

impl Engine {
    /// Starts carrying out an approved proposal in the background.
    pub(crate) fn spawn_apply(&self, id: String) {
        let e = self.clone();
        tokio::spawn(async move { e.apply_approved(&id).await });
    }

    async fn step(
        &self,
        p: &Proposal,
        action: Action,
        result: Option<Value>,
        error: Option<ErrorInfo>,
    ) -> Option<Proposal> {
        let to = next(p.status, action, p.class).ok()?;
        let detail = error.as_ref().map(|e| serde_json::json!({ "code": e.code }));
        let t = Transition {
            id: p.id.clone(),
            from: p.status,
            to,
            decision: None,
            result,
            error,
            at: self.now(),
            actor: "assent".into(),
            channel: Channel::System,
            detail,
        };
        match self.commit(vec![t], true).await {
            Ok(done) => match done.into_iter().next() {
                Some(Transitioned::Done(p)) => Some(p),
                _ => None,
            },
            Err(e) => {
                tracing::error!(id = %p.id, error = %e, "could not record the apply step");
                None
            }
        }
    }

    /// The payload to carry out, checked against the hash recorded with the approval, and
    /// read as its kind's: once, here, for the kind that carries it out.
    fn approved_payload(p: &Proposal) -> Result<Payload, ErrorInfo> {
        let payload = p.approved_payload.as_ref().unwrap_or(&p.payload);
        let recorded = p.decision.as_ref().and_then(|d| d.approved_sha256.as_deref());
        if recorded != Some(payload.sha256().as_str()) {
            return Err(ErrorInfo {
                code: "integrity".into(),
                message: "the payload to apply does not match the one that was approved; nothing was done".into(),
            });
        }
        payload
            .of(p.kind)
            .map(std::borrow::Cow::into_owned)
            .map_err(|m| ErrorInfo { code: "integrity".into(), message: format!("{m}; nothing was done") })
    }

    async fn apply_approved(&self, id: &str) {
        let _slot = self.inner.apply_slots.acquire().await;
        let p = match self.inner.ledger.store().get(id).await {
            Ok(Some(p)) if p.status == Status::Approved => p,
            _ => return,
        };
        let payload = match Self::approved_payload(&p) {
            Ok(v) => v,
            Err(e) => {
                self.step(&p, Action::Fail, None, Some(e)).await;
                return;
            }
        };
        // Durable before any side effect: from here on a crash is settled by the reconciler.
        let Some(p) = self.step(&p, Action::StartApply, None, None).await else { return };
        crash::point("applying-committed");
        self.run_apply(&p, &payload).await;
    }

    async fn run_apply(&self, p: &Proposal, payload: &Payload) {
        let outcome = match self.inner.kinds.of(p.kind) {
            Ok(kind) => {
                let ctx = ApplyCtx { credentials: self.credential_map() };
                kind.clone().apply(p, payload, &ctx).await
            }
            Err(_) => ApplyOutcome::failed("unknown_kind", format!("kind {} is not available", p.kind)),
        };
        crash::point("applied-before-commit");
        match outcome.error {
            None => self.step(p, Action::FinishApply, outcome.result, None).await,
            Some(e) => {
                tracing::warn!(id = %p.id, code = %e.code, "apply failed");
                self.step(p, Action::Fail, outcome.result, Some(e)).await
            }
        };
    }

    /// Settles every write that was approved or applying when Assent last stopped. Hosts
    /// call it once at start, before serving.
    pub async fn recover(&self) -> usize {
        let rows = match self.inner.ledger.store().unsettled_applies().await {
            Ok(r) => r,
            Err(e) => {
                tracing::error!(error = %e, "could not read unsettled writes");
                return 0;
            }
        };
        let n = rows.len();
        for p in rows {
            match p.status {
                Status::Approved => self.spawn_apply(p.id.clone()),
                Status::Applying => {
                    let payload = match Self::approved_payload(&p) {
                        Ok(v) => v,
                        Err(e) => {
                            self.step(&p, Action::Fail, None, Some(e)).await;
                            continue;
                        }
                    };
                    let found = match self.inner.kinds.of(p.kind) {
                        Ok(kind) => kind.clone().reconcile(&p, &payload).await,
                        Err(_) => Reconciled::Failed(ErrorInfo {
                            code: "outcome_unknown".into(),
                            message: format!("kind {} is not available to check the outcome", p.kind),
                        }),
                    };
                    tracing::info!(id = %p.id, ?found, "reconciled a write interrupted while applying");
                    match found {
                        Reconciled::Applied(result) => {
                            self.step(&p, Action::FinishApply, Some(result), None).await;
                        }
                        Reconciled::NotApplied => self.run_apply(&p, &payload).await,
                        Reconciled::Failed(e) => {
                            self.step(&p, Action::Fail, None, Some(e)).await;
                        }
                    }
                }
                _ => {}
            }
        }
        n
    }
}
