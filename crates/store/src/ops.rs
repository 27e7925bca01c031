//! The writes, once for both stores: each runs on a [`Conn`] inside its caller's transaction
//! (SQLite's writer batch, a team node's ingest batch, or a PostgreSQL transaction of its own),
//! which undoes it when it fails. `node` is the team store's node, '' on a store of one's own.
//! What the writes decide is the domain's (`assent-core`): the status machine, what counts as a
//! plain insert, how a refusal is worded.

use crate::conn::{Arg, Conn, args};
use crate::pending::PendingBound;
use crate::{rows, sql};
use assent_core::credentials::CredentialMeta;
use assent_core::error::{CoreError, StoreError};
use assent_core::proposal::{Channel, Proposal};
use assent_core::remote::Device;
use assent_core::rules::Rule;
use assent_core::store::{
    AgentAdd, Inserted, NewRecord, ReceiptKey, Transition, Transitioned, agent_add, conflict_error,
};
use assent_core::time::Timestamp;
use serde_json::Value;

fn json(v: &impl serde::Serialize) -> Result<String, StoreError> {
    serde_json::to_string(v).map_err(|e| StoreError::Corrupt(e.to_string()))
}

/// The node as a proposal says it: none on a store of one's own.
pub(crate) fn node_of(node: &str) -> Option<String> {
    (!node.is_empty()).then(|| node.to_string())
}

/// A new proposal's columns, in the order of [`sql::INSERT`].
pub(crate) fn row<'a>(rec: &'a NewRecord, node: &'a str) -> [Arg<'a>; sql::INSERT_COLUMNS] {
    let p = &rec.proposal;
    let idem = rec.idempotency.as_ref();
    let origin = rec.origin.as_ref();
    args![
        &p.id,
        node,
        p.kind.as_str(),
        rows::class_str(p.class),
        &p.agent,
        &p.title,
        &p.summary,
        rec.stored.payload.as_str(),
        rec.stored.preview.as_str(),
        p.base.as_ref().map(Value::to_string),
        &p.session_id,
        &p.group_id,
        p.status.as_str(),
        p.created_at.0,
        p.updated_at.0,
        p.expires_at.0,
        rec.stored.facts.as_deref(),
        &p.supersedes,
        idem.map(|i| i.key.as_str()),
        idem.map(|i| i.request_sha256.as_str()),
        origin.map(|o| o.0.as_str()),
        origin.map(|o| o.1.as_str()),
        p.lease_secs.map(i64::from),
        &p.audience,
        rec.stored.gist.as_str(),
    ]
}

pub(crate) async fn fetch(c: &mut impl Conn, id: &str) -> Result<Option<Proposal>, CoreError> {
    c.one(sql::PROPOSAL, &args![id], rows::proposal).await
}

/// A new proposal that is not plain: its idempotency key, its agent's pending limit, the
/// proposal it supersedes, the rule that decided it. Its first audit row comes from the insert
/// trigger.
pub(crate) async fn insert<C: Conn>(
    c: &mut C,
    node: &str,
    rec: NewRecord,
    bound: &mut PendingBound,
) -> Result<Inserted, CoreError> {
    check_rules_seq(c, rec.rules_seq).await?;
    let p = &rec.proposal;
    if let Some(idem) = &rec.idempotency {
        let read = |r: &dyn crate::conn::Cols| Ok((r.text("id")?, r.text_opt("request_sha256")?, r.int("created_at")?));
        let found = c.one(sql::IDEMPOTENT, &args![&p.agent, &idem.key, node], read).await?;
        // A key past its time answers no more: it files a new proposal.
        let found = match found {
            Some((id, _, at)) if at < p.created_at.0 - assent_core::store::IDEMPOTENCY_TTL_MS => {
                c.exec(sql::RELEASE_KEY, &args![&id]).await?;
                None
            }
            other => other,
        };
        if let Some((id, hash, _)) = found {
            if hash.as_deref() != Some(idem.request_sha256.as_str()) {
                return Err(CoreError::IdempotencyConflict);
            }
            let existing =
                fetch(c, &id).await?.ok_or_else(|| StoreError::Corrupt(format!("proposal {id} vanished")))?;
            return Ok(Inserted::Existing(existing));
        }
    }
    if rec.decided.is_none() && !bound.under(&p.agent, rec.max_pending) {
        let count = |r: &dyn crate::conn::Cols| r.int("n");
        let n = c.one(sql::PENDING.pick(C::PG), &args![&p.agent, node], count).await?.unwrap_or(0);
        bound.counted(&p.agent, n, rec.max_pending)?;
    }
    let mut superseded = None;
    if let Some(prev) = &p.supersedes {
        let read = |r: &dyn crate::conn::Cols| Ok((r.text("agent")?, r.text("node")?, r.text("status")?));
        let found = c.one(sql::SUPERSEDED, &args![prev], read).await?;
        let Some((_, _, status)) = found.filter(|(agent, n, _)| *agent == p.agent && n == node) else {
            return Err(CoreError::invalid("unknown_supersedes", "`supersedes` names no proposal of this agent"));
        };
        if status == "pending"
            && let Transitioned::Done(old) = transition(c, node, &Transition::superseded(prev, p)?).await?
        {
            superseded = Some(old);
        }
    }
    c.exec(&sql::INSERT_ONE[usize::from(C::PG)], &row(&rec, node)).await?;
    if let Some(rule) = &rec.rule {
        c.exec(sql::RULE_MATCHED, &args![rule]).await?;
    }
    let Some(t) = &rec.decided else {
        bound.raise(&p.agent);
        let proposal = Proposal { node: node_of(node), ..rec.proposal };
        return Ok(Inserted::Created { proposal, superseded });
    };
    match transition(c, node, t).await? {
        Transitioned::Done(decided) => Ok(Inserted::Created { proposal: decided, superseded }),
        Transitioned::Conflict(_) => {
            Err(StoreError::Corrupt(format!("proposal {} changed as it was filed", p.id)).into())
        }
    }
}

/// One compare-and-set: the update, and only when it changed the row, its audit row and the row
/// as it now is; an unchanged row means the proposal was no longer in the state the transition
/// starts from.
pub(crate) async fn transition(c: &mut impl Conn, node: &str, t: &Transition) -> Result<Transitioned, CoreError> {
    let (decision, error) = (t.decision.as_ref().map(json).transpose()?, t.error.as_ref().map(json).transpose()?);
    let result = t.result.as_ref().map(Value::to_string);
    let set = args![t.to.as_str(), t.at.0, decision, result, error, &t.id, t.from.as_str()];
    if c.exec(sql::TRANSITION, &set).await? == 0 {
        let now = c.one(sql::STATUS, &args![&t.id], |r| r.text("status")).await?;
        return Ok(Transitioned::Conflict(now.and_then(|s| s.parse().ok())));
    }
    let detail = t.detail.as_ref().map(Value::to_string);
    let audit = args![&t.id, &t.actor, t.channel.as_str(), t.from.as_str(), t.to.as_str(), t.at.0, detail, node];
    c.exec(sql::AUDIT, &audit).await?;
    let now = fetch(c, &t.id).await?;
    Ok(Transitioned::Done(now.ok_or_else(|| StoreError::Corrupt(format!("proposal {} vanished", t.id)))?))
}

/// Each transition in turn; with `atomic`, one whose proposal was no longer in its starting
/// state refuses them all (the caller undoes what was written).
pub(crate) async fn transitions(
    c: &mut impl Conn,
    node: &str,
    ts: &[Transition],
    atomic: bool,
) -> Result<Vec<Transitioned>, CoreError> {
    let mut out = Vec::with_capacity(ts.len());
    for t in ts {
        out.push(transition(c, node, t).await?);
    }
    if atomic && out.iter().any(|t| matches!(t, Transitioned::Conflict(_))) {
        return Err(conflict_error(ts, &out));
    }
    Ok(out)
}

/// Refuses a rule's decision made by rules older than the rule log (`NewRecord::rules_seq`).
async fn check_rules_seq<C: Conn>(c: &mut C, seq: Option<i64>) -> Result<(), CoreError> {
    let Some(seq) = seq else { return Ok(()) };
    rules_lock(c, false).await?;
    let now = c.one(sql::RULE_SEQ, &[], |r| r.int("seq")).await?.unwrap_or(0);
    if now == seq { Ok(()) } else { Err(CoreError::RulesChanged) }
}

/// So a decision either commits before a change of the rules begins, or reads the rule log
/// after it committed (and is refused): none is made by a rule after its removal answered, even
/// by a node that missed the notification.
async fn rules_lock<C: Conn>(c: &mut C, alone: bool) -> Result<(), CoreError> {
    if C::PG {
        c.one(sql::RULES_LOCK[usize::from(alone)], &args![sql::RULES_LOCK_KEY], |_| Ok(())).await?;
    }
    Ok(())
}

/// Whether the agent `name` is unknown (`None`), active (`Some(None)`) or revoked.
async fn agent_state<C: Conn>(c: &mut C, node: &str, name: &str) -> Result<Option<Option<i64>>, CoreError> {
    c.one(sql::AGENT_STATE.pick(C::PG), &args![name, node], |r| r.int_opt("revoked_at")).await
}

async fn log_agent(c: &mut impl Conn, node: &str, name: &str, event: &str, at: Timestamp) -> Result<(), CoreError> {
    c.exec(sql::AGENT_LOG, &args![name, event, at.0, node]).await.map(drop)
}

pub(crate) async fn add_agent<C: Conn>(
    c: &mut C,
    node: &str,
    name: &str,
    hash: &[u8; 32],
    at: Timestamp,
    reuse: bool,
) -> Result<(), CoreError> {
    match agent_add(name, agent_state(c, node, name).await?, reuse)? {
        AgentAdd::Reuse => {
            c.exec(sql::AGENT_REUSE, &args![name, &hash[..], at.0, node]).await?;
            log_agent(c, node, name, "reused", at).await
        }
        AgentAdd::Insert => {
            c.exec(sql::AGENT_INSERT, &args![name, &hash[..], at.0, node]).await?;
            log_agent(c, node, name, "added", at).await
        }
    }
}

pub(crate) async fn set_agent_token<C: Conn>(
    c: &mut C,
    node: &str,
    name: &str,
    hash: &[u8; 32],
    at: Timestamp,
) -> Result<bool, CoreError> {
    match agent_state(c, node, name).await? {
        Some(Some(_)) => Ok(false),
        Some(None) => c.exec(sql::AGENT_TOKEN, &args![name, &hash[..], node]).await.map(|_| true),
        None => add_agent(c, node, name, hash, at, false).await.map(|()| true),
    }
}

pub(crate) async fn revoke_agent(c: &mut impl Conn, node: &str, name: &str, at: Timestamp) -> Result<bool, CoreError> {
    if c.exec(sql::AGENT_REVOKE, &args![name, at.0, node]).await? != 1 {
        return Ok(false);
    }
    log_agent(c, node, name, "revoked", at).await.map(|()| true)
}

pub(crate) async fn add_credential(c: &mut impl Conn, node: &str, meta: &CredentialMeta) -> Result<(), CoreError> {
    let row = args![&meta.name, json(&meta.scheme)?, json(&meta.origins)?, meta.created_at.0, node];
    if c.exec(sql::CREDENTIAL_INSERT, &row).await? == 0 {
        return Err(CoreError::Conflict(format!("a credential named `{}` already exists", meta.name)));
    }
    Ok(())
}

pub(crate) async fn remove_credential(c: &mut impl Conn, node: &str, name: &str) -> Result<bool, CoreError> {
    Ok(c.exec(sql::CREDENTIAL_DELETE, &args![name, node]).await? == 1)
}

async fn log_rule(
    c: &mut impl Conn,
    node: &str,
    rule: &Rule,
    event: &str,
    (actor, channel, at): (&str, Channel, Timestamp),
) -> Result<i64, CoreError> {
    let row = args![&rule.id, event, actor, channel.as_str(), at.0, json(rule)?, node];
    let seq = c.one(sql::RULE_LOG, &row, |r| r.int("seq")).await?;
    Ok(seq.ok_or_else(|| StoreError::Corrupt("the rule log gave no seq".into()))?)
}

pub(crate) async fn add_rule<C: Conn>(c: &mut C, node: &str, rule: &Rule) -> Result<i64, CoreError> {
    rules_lock(c, true).await?;
    let row = args![
        &rule.id,
        rule.effect.as_str(),
        json(&rule.matches)?,
        rule.everything,
        &rule.note,
        &rule.created_by,
        rule.created_channel.as_str(),
        rule.created_at.0,
        rule.expires_at.map(|t| t.0),
        node,
    ];
    c.exec(sql::RULE_INSERT, &row).await?;
    log_rule(c, node, rule, "added", (&rule.created_by, rule.created_channel, rule.created_at)).await
}

pub(crate) async fn remove_rule<C: Conn>(
    c: &mut C,
    node: &str,
    id: &str,
    by: (&str, Channel, Timestamp),
) -> Result<Option<(Rule, i64)>, CoreError> {
    rules_lock(c, true).await?;
    let Some(rule) = c.one(sql::RULE_TO_REMOVE.pick(C::PG), &args![id], rows::rule).await? else { return Ok(None) };
    c.exec(sql::RULE_DELETE, &args![id]).await?;
    let seq = log_rule(c, node, &rule, "removed", by).await?;
    Ok(Some((rule, seq)))
}

/// Pairs a device: a new name, or a revoked one paired again.
pub(crate) async fn add_device<C: Conn>(c: &mut C, node: &str, d: &Device) -> Result<(), CoreError> {
    let state = c.one(sql::DEVICE_STATE.pick(C::PG), &args![&d.name, node], |r| r.int_opt("revoked_at")).await?;
    let row = args![&d.name, &d.credential_id, &d.passkey, d.added_at.0, node];
    match state {
        None => c.exec(sql::DEVICE_INSERT, &row).await.map(drop),
        Some(Some(_)) => c.exec(sql::DEVICE_PAIRED_AGAIN, &row).await.map(drop),
        Some(None) => Err(CoreError::Conflict(format!(
            "a device named `{}` is already paired; revoke it first or pick another name",
            d.name
        ))),
    }
}

pub(crate) async fn device_used(
    c: &mut impl Conn,
    node: &str,
    name: &str,
    passkey: &str,
    at: Timestamp,
) -> Result<bool, CoreError> {
    Ok(c.exec(sql::DEVICE_USED, &args![name, passkey, at.0, node]).await? == 1)
}

pub(crate) async fn device_push(
    c: &mut impl Conn,
    node: &str,
    name: &str,
    push: Option<&str>,
) -> Result<bool, CoreError> {
    Ok(c.exec(sql::DEVICE_PUSH, &args![name, push, node]).await? == 1)
}

pub(crate) async fn revoke_device(c: &mut impl Conn, node: &str, name: &str, at: Timestamp) -> Result<bool, CoreError> {
    Ok(c.exec(sql::DEVICE_REVOKE, &args![name, at.0, node]).await? == 1)
}

pub(crate) async fn remote_log(
    c: &mut impl Conn,
    node: &str,
    device: &str,
    event: &str,
    at: Timestamp,
    detail: Option<&str>,
) -> Result<(), CoreError> {
    c.exec(sql::REMOTE_LOG, &args![device, event, at.0, detail, node]).await.map(drop)
}

/// Publishes `key` as this node's current receipt key, retiring the one before it.
pub(crate) async fn publish_receipt_key(
    c: &mut impl Conn,
    node: &str,
    key: &ReceiptKey,
    retired_until: Timestamp,
) -> Result<(), CoreError> {
    c.exec(sql::RECEIPT_KEY_RETIRE, &args![node, key.added_at.0, retired_until.0, &key.kid]).await?;
    c.exec(sql::RECEIPT_KEY_INSERT, &args![&key.kid, node, &key.x, key.added_at.0]).await.map(drop)
}

/// Retention: a settled proposal's bulky content is replaced by its figures once it is old
/// enough (the one change to a payload the databases allow).
pub(crate) async fn prune<C: Conn>(c: &mut C, before: Timestamp, now: Timestamp, limit: u32) -> Result<u64, CoreError> {
    let due = c.all(sql::PRUNE_DUE.pick(C::PG), &args![before.0, i64::from(limit)], rows::pruned).await?;
    for p in &due {
        c.exec(sql::PRUNE, &args![now.0, &p.payload, &p.preview, &p.result, &p.decision, &p.id]).await?;
    }
    Ok(due.len() as u64)
}
