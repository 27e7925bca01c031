//! Decoding rows into domain types, the same for both databases (through [`Cols`]).

use crate::conn::Cols;
use assent_core::error::StoreError;
use assent_core::held::Held;
use assent_core::light::{Gist, Listed};
use assent_core::payloads::Payload;
use assent_core::proposal::{AgentInfo, AuditEntry, Channel, Decision, Proposal};
use assent_core::status::{KindClass, Status};
use assent_core::time::Timestamp;
use serde::de::DeserializeOwned;
use serde_json::Value;

fn json<T: DeserializeOwned>(row: &dyn Cols, col: &str) -> Result<Option<T>, StoreError> {
    row.text_opt(col)?
        .map(|s| serde_json::from_str(&s).map_err(|e| StoreError::Corrupt(format!("{col}: {e}"))))
        .transpose()
}

pub(crate) fn status(s: &str) -> Result<Status, StoreError> {
    s.parse().map_err(StoreError::Corrupt)
}

/// A stored kind's name, read back.
pub(crate) fn kind(s: &str) -> Result<assent_core::payloads::KindName, StoreError> {
    assent_core::payloads::KindName::parse(s).ok_or_else(|| StoreError::Corrupt(format!("kind: no kind `{s}`")))
}

pub(crate) fn channel(s: &str) -> Result<Channel, StoreError> {
    serde_json::from_value(serde_json::Value::String(s.to_string()))
        .map_err(|e| StoreError::Corrupt(format!("channel: {e}")))
}

pub(crate) fn proposal(row: &dyn Cols) -> Result<Proposal, StoreError> {
    let g = |c: &str| row.text(c);
    let go = |c: &str| row.text_opt(c);
    let gi = |c: &str| row.int(c);
    let class = match g("class")?.as_str() {
        "applied" => KindClass::Applied,
        _ => KindClass::DecisionOnly,
    };
    let kind = kind(&g("kind")?)?;
    let pruned_at = row.int_opt("pruned_at")?.map(Timestamp);
    // Typed as its kind's where it reads so and writes back the same (see `Held::read`); what
    // was kept of a pruned one is held as kept (its long strings are their sizes and hashes).
    let held = |v: Value| if pruned_at.is_some() { Held::Json(v) } else { Held::read(kind, v) };
    let payload = held(json(row, "payload")?.unwrap_or_default());
    // The stored preview leaves out what a written file's content holds: filled in from it.
    let preview = {
        let typed = payload.of(kind).ok();
        let content = match typed.as_deref() {
            Some(Payload::FileWrite(w)) => Some(w.content.as_str()),
            _ => None,
        };
        assent_core::stored::expand(content, json(row, "preview")?.unwrap_or_default())
    };
    let mut p = Proposal {
        id: g("id")?,
        kind,
        agent: g("agent")?,
        node: row.node()?,
        title: go("title")?,
        summary: go("summary")?,
        payload,
        preview,
        base: json(row, "base")?,
        session_id: go("session_id")?,
        group_id: go("group_id")?,
        supersedes: go("supersedes")?,
        status: status(&g("status")?)?,
        settled: false,
        created_at: Timestamp(gi("created_at")?),
        updated_at: Timestamp(gi("updated_at")?),
        expires_at: Timestamp(gi("expires_at")?),
        lease_secs: row.int_opt("lease_secs")?.and_then(|s| u32::try_from(s).ok()),
        audience: go("audience")?,
        decision: json::<Decision>(row, "decision")?.map(|mut d| {
            d.edited_payload = d.edited_payload.map(|e| held(e.into_value()));
            d
        }),
        approved_payload: None,
        result: json(row, "result")?,
        error: json(row, "error")?,
        pruned_at,
        class,
    };
    p.refresh_derived();
    Ok(p)
}

pub(crate) fn audit(row: &dyn Cols) -> Result<AuditEntry, StoreError> {
    let from = row.text_opt("from_status")?;
    Ok(AuditEntry {
        seq: row.int("seq")?,
        proposal_id: row.text("proposal_id")?,
        actor: row.text("actor")?,
        node: row.node()?,
        channel: channel(&row.text("channel")?)?,
        from: from.as_deref().map(status).transpose()?,
        to: status(&row.text("to_status")?)?,
        at: Timestamp(row.int("at")?),
        detail: json(row, "detail")?,
    })
}

pub(crate) fn class_str(c: KindClass) -> &'static str {
    match c {
        KindClass::Applied => "applied",
        KindClass::DecisionOnly => "decision_only",
    }
}

pub(crate) fn credential(row: &dyn Cols) -> Result<assent_core::credentials::CredentialMeta, StoreError> {
    Ok(assent_core::credentials::CredentialMeta {
        name: row.text("name")?,
        scheme: json(row, "scheme")?.ok_or_else(|| StoreError::Corrupt("credential scheme".into()))?,
        origins: json(row, "origins")?.unwrap_or_default(),
        created_at: Timestamp(row.int("created_at")?),
    })
}

pub(crate) fn rule(row: &dyn Cols) -> Result<assent_core::rules::Rule, StoreError> {
    use assent_core::rules::{Effect, RuleMatch, describe};
    let effect = row.text("effect")?;
    let effect: Effect = effect.parse().map_err(|()| StoreError::Corrupt(format!("rule effect `{effect}`")))?;
    let matches: RuleMatch = json(row, "match")?.ok_or_else(|| StoreError::Corrupt("rule without a match".into()))?;
    Ok(assent_core::rules::Rule {
        id: row.text("id")?,
        effect,
        description: describe(effect, &matches),
        matches,
        everything: row.flag("everything")?,
        note: row.text_opt("note")?,
        created_by: row.text("created_by")?,
        node: row.node()?,
        created_channel: channel(&row.text("created_channel")?)?,
        created_at: Timestamp(row.int("created_at")?),
        expires_at: row.int_opt("expires_at")?.map(Timestamp),
        matched: row.int("matched")?.max(0) as u64,
    })
}

/// One entry of the rule log (`seq, rule_id, event, actor, channel, at, rule`).
pub(crate) fn rule_log(row: &dyn Cols) -> Result<assent_core::rules::RuleLogEntry, StoreError> {
    Ok(assent_core::rules::RuleLogEntry {
        seq: row.int("seq")?,
        rule_id: row.text("rule_id")?,
        event: row.text("event")?,
        actor: row.text("actor")?,
        channel: channel(&row.text("channel")?)?,
        at: Timestamp(row.int("at")?),
        rule: json(row, "rule")?.ok_or_else(|| StoreError::Corrupt("rule log without its rule".into()))?,
    })
}

/// A settled proposal's content as it is kept after the retention (`id, payload, preview,
/// result, decision` read; see [`assent_core::stored::prune`]).
pub(crate) struct Pruned {
    pub id: String,
    pub payload: String,
    pub preview: String,
    pub result: Option<String>,
    pub decision: Option<String>,
}

pub(crate) fn pruned(row: &dyn Cols) -> Result<Pruned, StoreError> {
    use assent_core::stored::{prune, pruned_preview};
    let parse = |c: &str| -> Result<Option<Value>, StoreError> {
        Ok(row.text_opt(c)?.and_then(|s| serde_json::from_str(&s).ok()))
    };
    let decision = parse("decision")?.map(|mut d| {
        if let Some(e) = d.get_mut("edited_payload") {
            *e = prune(e);
        }
        d
    });
    Ok(Pruned {
        id: row.text("id")?,
        payload: prune(&parse("payload")?.unwrap_or(Value::Null)).to_string(),
        preview: pruned_preview(&parse("preview")?.unwrap_or(Value::Null)).to_string(),
        result: parse("result")?.map(|r| prune(&r).to_string()),
        decision: decision.as_ref().map(Value::to_string),
    })
}

/// A proposal and its place in the inbox (`seq`).
pub(crate) fn listed(row: &dyn Cols) -> Result<(i64, Proposal), StoreError> {
    Ok((row.int("seq")?, proposal(row)?))
}

/// A row of [`crate::sql::LIST_ROWS`]: the proposal without its payload and preview where its
/// gist was stored, or with them (and the gist cut from them) where it was not.
pub(crate) fn listed_row(row: &dyn Cols) -> Result<(i64, Listed), StoreError> {
    let mut proposal = proposal(row)?;
    let gist = match row.text_opt("gist")? {
        Some(g) => {
            // The payload was not read: nothing is derived from it (an edit approved is the
            // decision's own, and stays).
            if proposal.decision.as_ref().is_none_or(|d| d.edited_payload.is_none()) {
                proposal.approved_payload = None;
            }
            serde_json::from_str(&g).map_err(|e| StoreError::Corrupt(format!("gist of {}: {e}", proposal.id)))?
        }
        None => Gist::of(&proposal.payload.to_value(), &proposal.preview.to_value()),
    };
    Ok((row.int("seq")?, Listed { proposal, gist }))
}

/// A rule and its place in the rules' order (`seq`).
pub(crate) fn numbered_rule(row: &dyn Cols) -> Result<(i64, assent_core::rules::Rule), StoreError> {
    Ok((row.int("seq")?, rule(row)?))
}

pub(crate) fn agent(row: &dyn Cols) -> Result<AgentInfo, StoreError> {
    Ok(AgentInfo {
        name: row.text("name")?,
        created_at: Timestamp(row.int("created_at")?),
        revoked_at: row.int_opt("revoked_at")?.map(Timestamp),
    })
}

pub(crate) fn token(row: &dyn Cols) -> Result<(String, [u8; 32]), StoreError> {
    let name = row.text("name")?;
    let hash = row.bytes_opt("token_hash")?.unwrap_or_default();
    let hash = hash.try_into().map_err(|_| StoreError::Corrupt(format!("token hash of agent {name}")))?;
    Ok((name, hash))
}

/// What an agent stored at a time (`agent, at, bytes`).
pub(crate) fn stored(row: &dyn Cols) -> Result<(String, Timestamp, u64), StoreError> {
    Ok((row.text("agent")?, Timestamp(row.int("at")?), row.int("bytes")?.max(0) as u64))
}

/// A pending proposal's lease: its id and seconds.
pub(crate) fn lease(row: &dyn Cols) -> Result<(String, u32), StoreError> {
    Ok((row.text("id")?, u32::try_from(row.int("lease_secs")?.max(1)).unwrap_or(u32::MAX)))
}

/// How many proposals a rule decided (`rule, n`); `None` for a decision naming no rule.
pub(crate) fn rule_count(row: &dyn Cols) -> Result<Option<(String, u64)>, StoreError> {
    let Some(rule) = row.text_opt("rule")? else { return Ok(None) };
    Ok(Some((rule, row.int("n")?.max(0) as u64)))
}

/// An agent's facts (`agent, kind, facts`); `None` for facts this version cannot read (left
/// out of a count, not an error).
pub(crate) fn facts(
    row: &dyn Cols,
) -> Result<Option<(String, assent_core::payloads::KindName, assent_core::rules::Facts)>, StoreError> {
    let Ok(facts) = serde_json::from_str(&row.text("facts")?) else { return Ok(None) };
    Ok(Some((row.text("agent")?, kind(&row.text("kind")?)?, facts)))
}

pub(crate) fn device(row: &dyn Cols) -> Result<assent_core::remote::Device, StoreError> {
    Ok(assent_core::remote::Device {
        name: row.text("name")?,
        credential_id: row.text("credential_id")?,
        passkey: row.text("passkey")?,
        added_at: Timestamp(row.int("added_at")?),
        last_used_at: row.int_opt("last_used_at")?.map(Timestamp),
        revoked_at: row.int_opt("revoked_at")?.map(Timestamp),
        push: row.text_opt("push")?,
    })
}

pub(crate) fn receipt_key(row: &dyn Cols) -> Result<assent_core::store::ReceiptKey, StoreError> {
    Ok(assent_core::store::ReceiptKey {
        kid: row.text("kid")?,
        x: row.text("x")?,
        node: row.node()?,
        added_at: Timestamp(row.int("added_at")?),
        publish_until: row.int_opt("publish_until")?.map(Timestamp),
    })
}

pub(crate) fn remote_log(row: &dyn Cols) -> Result<assent_core::remote::LogEntry, StoreError> {
    Ok(assent_core::remote::LogEntry {
        seq: row.int("seq")?,
        device: Some(row.text("device")?).filter(|d| !d.is_empty()),
        event: row.text("event")?,
        at: Timestamp(row.int("at")?),
        detail: json(row, "detail")?,
    })
}
