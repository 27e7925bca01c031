//! Decisions: one at a time, a batch where each item stands alone, or a whole group at once.
//! Only the owner decides; every decision is computed by the status machine from the status
//! the proposal had when it was read, and the store applies it only if that is still true.

use super::{Actor, Engine};
use crate::error::CoreError;
use crate::held::Held;
use crate::kinds::clip;
use crate::proposal::{Decision, DecisionRequest, Outcome, Proposal};
use crate::status::{Action, Status, next};
use crate::store::{Transition, Transitioned};
use crate::time::Timestamp;
use serde::Serialize;

/// The longest reason or feedback, in characters.
pub const REASON_MAX: usize = 10_000;

/// A decision on one proposal, and the rule it saved ("allow similar").
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Decided {
    /// The proposal as it now is.
    #[serde(flatten)]
    pub proposal: Proposal,
    /// The rule saved with it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<crate::rules::Rule>,
}

pub(super) fn err_info(e: &CoreError) -> crate::proposal::ErrorInfo {
    crate::proposal::ErrorInfo { code: e.code().to_string(), message: e.to_string() }
}

fn invalid_state(p_id: &str, status: Option<Status>) -> CoreError {
    match status {
        Some(s) => CoreError::InvalidState {
            message: format!("proposal `{}` is {s}; only pending proposals can be decided", clip(p_id, 80)),
        },
        None => CoreError::NotFound(format!("no proposal `{}`", clip(p_id, 80))),
    }
}

/// Whether a pending proposal's time ran out: from its `expires_at` on, to the millisecond,
/// whatever the expiry sweeper has done yet.
pub(super) fn past_expiry(p: &Proposal, now: Timestamp) -> bool {
    p.status == Status::Pending && now.0 >= p.expires_at.0
}

fn expired_error(p: &Proposal) -> CoreError {
    CoreError::InvalidState {
        message: format!(
            "proposal `{}` expired at {}; it can no longer be decided",
            clip(&p.id, 80),
            p.expires_at.to_rfc3339()
        ),
    }
}

/// A decision's fields as its schema has them, before anything is looked up: `seen` a SHA-256
/// in lower-case hexadecimal, the words within their length.
pub(super) fn check_form(req: &DecisionRequest) -> Result<(), CoreError> {
    if let Some(s) = &req.seen
        && !(s.len() == 64 && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)))
    {
        return Err(CoreError::invalid(
            "invalid_field",
            "`seen` is the SHA-256 of the payload shown: 64 lower-case hexadecimal digits",
        ));
    }
    for (field, v) in [("reason", &req.reason), ("feedback", &req.feedback)] {
        if v.as_ref().is_some_and(|s| s.chars().count() > REASON_MAX) {
            return Err(CoreError::invalid(
                "invalid_field",
                format!("`{field}` is longer than {REASON_MAX} characters"),
            ));
        }
    }
    Ok(())
}

/// The box a command proposal's preview names for an approval (none: not a command the client
/// runs through Assent, or no box here), when it is one: `Some(None)` for a command no box holds.
fn boxable(p: &Proposal) -> Option<Option<crate::confine::Confine>> {
    match &p.preview {
        crate::preview::Preview::ToolCall(t) if matches!(p.typed_payload().as_deref(), Ok(crate::payloads::Payload::ToolCall(c)) if c.confinable) => {
            t.input.get("command").map(|_| t.runs_in)
        }
        _ => None,
    }
}

/// Where an approval of `p` runs its command (see [`DecisionRequest::run`]): the box the
/// person chose, else the one its preview names, and the hosts it reaches (the person's, else
/// the preview's); none for anything else, or `unconfined`.
fn run_in(
    p: &Proposal,
    req: &DecisionRequest,
    can_box: &[crate::confine::Confine],
) -> Result<(Option<crate::confine::Confine>, Vec<String>), CoreError> {
    use crate::confine::RunIn;
    let Some(default) = boxable(p).filter(|_| req.outcome == Outcome::Approve) else {
        let why = if req.outcome != Outcome::Approve {
            "it goes with approve only"
        } else {
            "this proposal is not a command its client runs through Assent"
        };
        return match (req.run.is_some(), req.hosts.is_some()) {
            (false, false) => Ok((None, Vec::new())),
            (true, _) => {
                Err(CoreError::invalid("invalid_run", format!("`run` says where an approved command runs: {why}")))
            }
            (false, true) => Err(CoreError::invalid(
                "invalid_hosts",
                format!("`hosts` says what an approved command's box reaches: {why}"),
            )),
        };
    };
    let confine = match req.run {
        None => default,
        Some(RunIn::Unconfined) => None,
        Some(r) => {
            let chosen = r.boxed();
            if !chosen.is_some_and(|c| can_box.contains(&c)) {
                return Err(CoreError::invalid(
                    "box_unavailable",
                    format!(
                        "this system cannot build the `{}` box (see `assent doctor`): nothing was decided",
                        r.as_str()
                    ),
                ));
            }
            chosen
        }
    };
    let hosts = match (&req.hosts, confine) {
        (Some(_), None) => {
            return Err(CoreError::invalid(
                "invalid_hosts",
                "`hosts` says what a box reaches: a command run unconfined reaches whatever it likes",
            ));
        }
        (Some(h), Some(_)) => crate::confine::check_hosts(h).map_err(|why| CoreError::invalid("invalid_hosts", why))?,
        (None, Some(_)) => match &p.preview {
            crate::preview::Preview::ToolCall(t) => t.reaches.clone(),
            _ => Vec::new(),
        },
        (None, None) => Vec::new(),
    };
    Ok((confine, hosts))
}

impl Engine {
    /// Settles proposals whose time ran out before the sweeper got to them, so a decision that
    /// arrives late finds them `expired`.
    pub(super) async fn expire_now(&self, ps: &[&Proposal]) {
        if ps.is_empty() {
            return;
        }
        let now = self.now();
        let ts: Vec<Transition> = ps
            .iter()
            .filter_map(|p| {
                let to = next(p.status, Action::Expire, p.class).ok()?;
                Some(Transition::status_change(
                    p.id.clone(),
                    p.status,
                    to,
                    now,
                    "assent",
                    crate::proposal::Channel::System,
                ))
            })
            .collect();
        match self.commit(ts, false).await {
            Ok(_) => {}
            Err(e) => tracing::error!(error = %e, "could not expire proposals at decision time"),
        }
    }

    /// Refuses a decision on a proposal whose time ran out, expiring it on the spot: the one
    /// check every single decision goes through (a group filters its members the same way).
    pub(super) async fn refuse_if_expired(&self, p: &Proposal) -> Result<(), CoreError> {
        if past_expiry(p, self.now()) {
            self.expire_now(&[p]).await;
            return Err(expired_error(p));
        }
        Ok(())
    }

    /// Builds the transition for a decision on `p`, validating the request.
    pub(super) fn plan(&self, actor: &Actor, p: &Proposal, req: DecisionRequest) -> Result<Transition, CoreError> {
        let action = match req.outcome {
            Outcome::Approve => Action::Approve,
            Outcome::Reject => Action::Reject,
            Outcome::Refine => Action::Refine,
        };
        // The stored payload's hash, once: what the person was shown and, unedited, what an
        // approval binds.
        let shown = p.payload.sha256();
        if let Some(seen) = &req.seen
            && *seen != shown
        {
            return Err(CoreError::invalid(
                "not_what_was_shown",
                format!("the proposal shown is not `{}`: nothing was decided; look at it again", clip(&p.id, 80)),
            ));
        }
        let to = next(p.status, action, p.class).map_err(|_| invalid_state(&p.id, Some(p.status)))?;
        let now = self.now();
        let clean = |field: &str, v: Option<String>| -> Result<Option<String>, CoreError> {
            match v {
                Some(s) if s.chars().count() > REASON_MAX => Err(CoreError::invalid(
                    "invalid_field",
                    format!("`{field}` is longer than {REASON_MAX} characters"),
                )),
                Some(s) if s.trim().is_empty() => Ok(None),
                other => Ok(other),
            }
        };
        let (confine, hosts) = run_in(p, &req, &self.inner.config.can_confine)?;
        let reason = clean("reason", req.reason)?;
        let feedback = clean("feedback", req.feedback)?;
        if req.outcome == Outcome::Refine && feedback.is_none() {
            return Err(CoreError::invalid(
                "feedback_required",
                "a refine needs `feedback` telling the agent what to change",
            ));
        }
        if req.allow_similar.is_some() {
            return Err(CoreError::invalid(
                "invalid_allow_similar",
                "`allow_similar` goes with the approval of one proposal, not a batch or a group",
            ));
        }
        if req.outcome != Outcome::Approve && req.edits.is_some() {
            return Err(CoreError::invalid("invalid_edits", "edits go with approve only"));
        }
        if let Some(edits) = &req.edits {
            super::envelope::refuse_beyond_i_json(edits, "edit")?;
        }
        // The stored payload read as its kind's once: what an edit applies to and, unedited,
        // what the receipt binds.
        let stored = p.typed_payload();
        let edited = match (&req.edits, req.outcome) {
            (Some(edits), Outcome::Approve) => {
                let stored = stored.as_ref().map_err(|message| CoreError::InvalidState { message: message.clone() })?;
                Some(self.inner.kinds.of(p.kind)?.edit(stored, edits)?)
            }
            _ => None,
        };
        let edited_payload = edited.clone().map(Held::Typed);
        let approved_sha256 =
            (req.outcome == Outcome::Approve).then(|| edited_payload.as_ref().map_or(shown, Held::sha256));
        let mut detail = serde_json::json!({
            "outcome": req.outcome,
            "reason": reason,
            "feedback": feedback,
            "edited": edited.is_some(),
        });
        if req.outcome == Outcome::Approve && boxable(p).is_some() {
            detail["run"] = serde_json::Value::String(confine.map_or("unconfined", |c| c.as_str()).to_string());
            if !hosts.is_empty() {
                detail["hosts"] = serde_json::json!(hosts);
            }
        }
        if let Some(d) = &actor.device {
            detail["device"] = serde_json::Value::String(d.clone());
        }
        Ok(Transition {
            id: p.id.clone(),
            from: p.status,
            to,
            decision: Some(self.with_receipt(
                p,
                Decision {
                    outcome: req.outcome,
                    reason,
                    feedback,
                    edited_payload,
                    approved_sha256,
                    by: actor.by.clone(),
                    node: self.inner.config.node.clone(),
                    rule: None,
                    confine,
                    hosts,
                    channel: actor.channel,
                    device: actor.device.clone(),
                    receipt: None,
                    at: now,
                },
                edited.as_ref().or(stored.as_ref().ok().map(|s| &**s)),
            )),
            result: None,
            error: None,
            at: now,
            actor: actor.by.clone(),
            channel: actor.channel,
            detail: Some(detail),
        })
    }

    /// A person decides one proposal.
    pub async fn decide(&self, actor: &Actor, id: &str, req: DecisionRequest) -> Result<Proposal, CoreError> {
        Ok(self.decide_one(actor, id, req).await?.proposal)
    }

    /// A person decides one proposal, and with `allow_similar` also saves the rule that allows
    /// proposals like it from now on (returned with the decision).
    pub async fn decide_one(&self, actor: &Actor, id: &str, mut req: DecisionRequest) -> Result<Decided, CoreError> {
        check_form(&req)?;
        let similar = req.allow_similar.take();
        if let Some(s) = &similar {
            if req.outcome != Outcome::Approve {
                return Err(CoreError::invalid("invalid_allow_similar", "`allow_similar` goes with approve only"));
            }
            if s.expires_in.is_some_and(|e| !(1..=super::rules::MAX_RULE_SECS).contains(&e)) {
                return Err(CoreError::invalid(
                    "invalid_expiry",
                    format!("`allow_similar.expires_in` is between 1 and {} seconds", super::rules::MAX_RULE_SECS),
                ));
            }
        }
        let p = self.get(&super::Principal::Owner, id).await?;
        self.refuse_if_expired(&p).await?;
        if similar.is_some() {
            // No rule can be saved for it: nothing is decided, the person hears why first.
            self.similar_match(&p)?;
        }
        let t = self.plan(actor, &p, req)?;
        let committed = self.inner.ledger.transition(vec![t], true).await?;
        let p = match committed.done().first() {
            Some(Transitioned::Done(p)) => p.clone(),
            Some(Transitioned::Conflict(now)) => return Err(invalid_state(id, *now)),
            None => return Err(CoreError::invalid("internal", "no transition result")),
        };
        // The rule is in force before the agent hears of the approval: its next, similar
        // proposal is decided by it.
        let rule = match similar {
            Some(s) => Some(self.allow_similar(actor, &p, s.expires_in).await),
            None => None,
        };
        let _ = self.announce(committed);
        Ok(Decided { proposal: p, rule: rule.transpose()? })
    }

    /// The agent takes back its own pending proposal.
    pub async fn withdraw(&self, agent: &str, id: &str) -> Result<Proposal, CoreError> {
        self.withdraw_with(agent, id, None).await
    }

    /// Withdraws the pending proposal of an agent whose wait (with
    /// [`OnLost::Withdraw`](super::OnLost)) lost its connection before the answer: in the
    /// agent's name, the audit trail saying why.
    pub(crate) async fn withdraw_lost(&self, agent: &str, id: &str) -> Result<Proposal, CoreError> {
        let detail = serde_json::json!({
            "reason": super::WAITER_LOST,
            "message": "the client waiting for the answer went away before it came (its hook or process ended)",
        });
        self.withdraw_with(agent, id, Some(detail)).await
    }

    async fn withdraw_with(
        &self,
        agent: &str,
        id: &str,
        detail: Option<serde_json::Value>,
    ) -> Result<Proposal, CoreError> {
        let p = self.get(&super::Principal::Agent(agent.to_string()), id).await?;
        let to = next(p.status, Action::Withdraw, p.class).map_err(|_| CoreError::InvalidState {
            message: format!("proposal `{}` is {}; only pending proposals can be withdrawn", p.id, p.status),
        })?;
        let t = Transition {
            detail,
            ..Transition::status_change(p.id.clone(), p.status, to, self.now(), agent, crate::proposal::Channel::Agent)
        };
        let done = self.commit(vec![t], true).await?;
        match done.into_iter().next() {
            Some(Transitioned::Done(p)) => Ok(p.for_agent()),
            Some(Transitioned::Conflict(now)) => Err(CoreError::InvalidState {
                message: format!(
                    "proposal `{}` is {}; only pending proposals can be withdrawn",
                    p.id,
                    now.unwrap_or(p.status)
                ),
            }),
            None => Err(CoreError::invalid("internal", "no transition result")),
        }
    }
}

impl Engine {
    /// The person asks for a failed write to be tried again: a new pending proposal with the
    /// payload that was approved, superseding the failed one, its preview computed afresh
    /// against the target as it is now. It needs a new decision.
    pub async fn retry(&self, actor: &super::Actor, id: &str) -> Result<Proposal, CoreError> {
        let p = self.get(&super::Principal::Owner, id).await?;
        if !self.applies_here(&p) {
            return Err(CoreError::InvalidState {
                message: format!(
                    "proposal `{}` was filed on node `{}`, whose agent and files it concerns: retry it there",
                    p.id,
                    p.node.as_deref().unwrap_or_default()
                ),
            });
        }
        if p.status != Status::Failed {
            return Err(CoreError::InvalidState {
                message: format!("proposal `{}` is {}; only failed proposals can be retried", p.id, p.status),
            });
        }
        if p.pruned_at.is_some() {
            return Err(CoreError::InvalidState {
                message: format!(
                    "proposal `{}` is past the retention and its content was pruned: propose it anew",
                    p.id
                ),
            });
        }
        let payload = p.approved_payload.as_ref().unwrap_or(&p.payload);
        let again = crate::proposal::NewProposal {
            kind: p.kind.as_str().to_string(),
            payload: payload.to_value().into_owned(),
            title: p.title.clone(),
            summary: p.summary.clone(),
            session_id: p.session_id.clone(),
            group_id: p.group_id.clone(),
            supersedes: Some(p.id.clone()),
            expires_in: None,
            lease_secs: None,
            audience: p.audience.clone(),
        };
        let origin = Some((actor.by.clone(), actor.channel));
        let id = self.propose_as(&p.agent, again, None, origin).await?.proposal.id;
        self.get(&super::Principal::Owner, &id).await
    }
}
