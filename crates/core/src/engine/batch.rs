//! Decisions on many proposals: a batch, where each item stands alone (one that someone else
//! settled meanwhile is skipped), and a whole group at once.

use super::decide::{check_form, err_info, past_expiry};
use super::{Actor, Engine};
use crate::error::CoreError;
use crate::kinds::clip;
use crate::proposal::{DecisionRequest, Outcome, Proposal};
use crate::status::Status;
use crate::store::{Transition, Transitioned};
use serde::{Deserialize, Serialize};

// Read from a map and split by hand: `crate::strict` cannot see into serde's flattening.
/// One item of a batch decision.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, try_from = "serde_json::Map<String, serde_json::Value>")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BatchItem {
    /// The proposal.
    pub id: String,
    /// The decision.
    #[serde(flatten)]
    pub decision: DecisionRequest,
}

impl TryFrom<serde_json::Map<String, serde_json::Value>> for BatchItem {
    type Error = String;

    fn try_from(mut fields: serde_json::Map<String, serde_json::Value>) -> Result<Self, String> {
        let id = match fields.remove("id") {
            Some(serde_json::Value::String(id)) => id,
            Some(_) => return Err("`id` is a proposal's id".into()),
            None => return Err("missing field `id`".into()),
        };
        let decision = crate::strict::from_value(serde_json::Value::Object(fields)).map_err(|e| e.to_string())?;
        Ok(Self { id, decision })
    }
}

/// What became of one item of a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum ItemResult {
    /// Decided as asked.
    Decided,
    /// Someone settled it first.
    Skipped,
    /// Not decided: not found, or the decision was not valid for it.
    Error,
}

/// What happened to one item of a batch.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BatchItemResult {
    /// The proposal.
    pub id: String,
    /// `decided`, `skipped` (someone settled it first) or `error`.
    pub result: ItemResult,
    /// Its status now (when it exists).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<Status>,
    /// Why it was not decided.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<crate::proposal::ErrorInfo>,
}

/// The answer to a batch or group decision.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BatchResult {
    /// Per item, in request order.
    pub results: Vec<BatchItemResult>,
    /// How many were decided.
    pub decided: usize,
    /// Of those decided, how many are approved now (approved, applying or applied).
    pub approved: usize,
    /// Of those decided, how many are rejected.
    pub rejected: usize,
    /// Of those decided, how many the person asked to refine.
    pub refined: usize,
    /// How many were already settled by someone else.
    pub skipped: usize,
    /// How many could not be decided (not found, invalid).
    pub failed: usize,
}

/// A decision for every pending proposal of a group. A group belongs to the agent that made
/// it, on the node that received it: two agents using the same `group_id` (or agents of the
/// same name on two nodes of a team) have two groups, and a decision names the agent (and the
/// node) whenever the id alone is ambiguous.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GroupDecision {
    /// The group.
    #[cfg_attr(feature = "openapi", schema(min_length = 1))]
    pub group_id: String,
    /// The agent whose group it is (needed when more than one agent used this `group_id`).
    #[serde(default)]
    pub agent: Option<String>,
    /// The node that received the group, on a team store (needed when agents of the same name
    /// on several nodes used this `group_id`).
    #[serde(default)]
    pub node: Option<String>,
    /// The decision (no edits: edits are per proposal).
    pub outcome: Outcome,
    /// Why.
    #[serde(default)]
    pub reason: Option<String>,
    /// What to change (refine).
    #[serde(default)]
    pub feedback: Option<String>,
}

impl Engine {
    /// A person decides several proposals; each stands alone, and one that someone else
    /// settled meanwhile is reported as skipped.
    pub async fn decide_batch(&self, actor: &Actor, items: Vec<BatchItem>) -> Result<BatchResult, CoreError> {
        // A request not of its schema's form decides nothing (its items' answers are about
        // proposals, not about the request).
        for item in &items {
            check_form(&item.decision)?;
        }
        let mut results: Vec<BatchItemResult> = Vec::with_capacity(items.len());
        let mut planned = Vec::new(); // (index in results, transition)
        for item in items {
            let idx = results.len();
            results.push(BatchItemResult { id: item.id.clone(), result: ItemResult::Error, status: None, error: None });
            let p = match self.get(&super::Principal::Owner, &item.id).await {
                Ok(p) => p,
                Err(e) => {
                    results[idx].error = Some(err_info(&e));
                    continue;
                }
            };
            results[idx].status = Some(p.status);
            if let Err(e) = self.refuse_if_expired(&p).await {
                results[idx].result = ItemResult::Skipped;
                results[idx].status = Some(Status::Expired);
                results[idx].error = Some(err_info(&e));
                continue;
            }
            if p.status != Status::Pending {
                results[idx].result = ItemResult::Skipped;
                continue;
            }
            match self.plan(actor, &p, item.decision) {
                Ok(t) => planned.push((idx, t)),
                Err(e) => results[idx].error = Some(err_info(&e)),
            }
        }
        let (idxs, ts): (Vec<usize>, Vec<Transition>) = planned.into_iter().unzip();
        let done = self.commit(ts, false).await?;
        for (idx, t) in idxs.into_iter().zip(done) {
            match t {
                Transitioned::Done(p) => {
                    results[idx].result = ItemResult::Decided;
                    results[idx].status = Some(p.status);
                }
                Transitioned::Conflict(now) => {
                    results[idx].result = ItemResult::Skipped;
                    results[idx].status = now;
                }
            }
        }
        Ok(tally(results))
    }

    /// A person decides every pending proposal of a group together: all or nothing.
    pub async fn decide_group(&self, actor: &Actor, g: GroupDecision) -> Result<BatchResult, CoreError> {
        let mut members = self.inner.ledger.store().group(g.agent.as_deref(), &g.group_id).await?;
        if let Some(n) = &g.node {
            members.retain(|p| p.node.as_deref() == Some(n.as_str()));
        }
        if members.is_empty() {
            return Err(CoreError::NotFound(format!("no proposals in group `{}`", clip(&g.group_id, 80))));
        }
        // A group is one agent's on one node: never decided across agents or nodes.
        let mut owners: Vec<String> = members
            .iter()
            .map(|p| match &p.node {
                Some(n) => format!("{} on node {n}", p.agent),
                None => p.agent.clone(),
            })
            .collect();
        owners.sort_unstable();
        owners.dedup();
        if owners.len() > 1 {
            return Err(CoreError::invalid(
                "ambiguous_group",
                format!(
                    "agents {} each have a group `{}`; name the `agent` (and on a team, the `node`) whose group this decision is for",
                    owners.join(", "),
                    clip(&g.group_id, 80)
                ),
            ));
        }
        let now = self.now();
        let due: Vec<&Proposal> = members.iter().filter(|p| past_expiry(p, now)).collect();
        self.expire_now(&due).await;
        let pending: Vec<&Proposal> =
            members.iter().filter(|p| p.status == Status::Pending && !past_expiry(p, now)).collect();
        if pending.is_empty() {
            return Err(CoreError::InvalidState {
                message: format!("group `{}` has no pending proposals", clip(&g.group_id, 80)),
            });
        }
        let mut ts = Vec::with_capacity(pending.len());
        for p in &pending {
            let req = DecisionRequest {
                outcome: g.outcome,
                reason: g.reason.clone(),
                feedback: g.feedback.clone(),
                edits: None,
                allow_similar: None,
                seen: None,
                run: None,
                hosts: None,
            };
            ts.push(self.plan(actor, p, req)?);
        }
        let committed = self.inner.ledger.transition(ts, true).await?;
        // All or nothing: a conflict changed nothing, so there is nothing to announce.
        if let Some(pos) = committed.done().iter().position(|t| matches!(t, Transitioned::Conflict(_))) {
            return Err(CoreError::InvalidState {
                message: format!(
                    "proposal `{}` of group `{}` was settled meanwhile; nothing was changed",
                    pending[pos].id,
                    clip(&g.group_id, 80)
                ),
            });
        }
        let results = self
            .announce(committed)
            .into_iter()
            .filter_map(|t| match t {
                Transitioned::Done(p) => {
                    Some(BatchItemResult { id: p.id, result: ItemResult::Decided, status: Some(p.status), error: None })
                }
                Transitioned::Conflict(_) => None,
            })
            .collect();
        Ok(tally(results))
    }
}

fn tally(results: Vec<BatchItemResult>) -> BatchResult {
    let count = |r: ItemResult| results.iter().filter(|x| x.result == r).count();
    let decided_as = |statuses: &[Status]| {
        results
            .iter()
            .filter(|x| x.result == ItemResult::Decided && x.status.is_some_and(|s| statuses.contains(&s)))
            .count()
    };
    BatchResult {
        decided: count(ItemResult::Decided),
        approved: decided_as(&[Status::Approved, Status::Applying, Status::Applied, Status::Failed]),
        rejected: decided_as(&[Status::Rejected]),
        refined: decided_as(&[Status::Refined]),
        skipped: count(ItemResult::Skipped),
        failed: count(ItemResult::Error),
        results,
    }
}
