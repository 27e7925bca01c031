//! Decoding rows into domain types.

use crate::db_err;
use assent_core::error::StoreError;
use assent_core::preview::Preview;
use assent_core::proposal::{AuditEntry, Channel, Proposal};
use assent_core::status::{KindClass, Status};
use assent_core::time::Timestamp;
use serde::de::DeserializeOwned;
use serde_json::Value;
use sqlx::Row;
use sqlx::sqlite::SqliteRow;

/// The columns [`proposal`] reads, for `concat!` into queries.
macro_rules! proposal_cols {
    () => {
        "seq, id, kind, class, agent, title, summary, payload, preview, base, session_id, group_id, \
         supersedes, status, created_at, updated_at, expires_at, decision, result, error, pruned_at"
    };
}
pub(crate) use proposal_cols;

/// The columns [`audit`] reads.
macro_rules! audit_cols {
    () => {
        "seq, proposal_id, actor, channel, from_status, to_status, at, detail"
    };
}
pub(crate) use audit_cols;

fn json<T: DeserializeOwned>(row: &SqliteRow, col: &str) -> Result<Option<T>, StoreError> {
    let s: Option<String> = row.try_get(col).map_err(db_err)?;
    s.map(|s| serde_json::from_str(&s).map_err(|e| StoreError::Corrupt(format!("{col}: {e}")))).transpose()
}

fn status(s: &str) -> Result<Status, StoreError> {
    s.parse().map_err(StoreError::Corrupt)
}

pub(crate) fn channel(s: &str) -> Result<Channel, StoreError> {
    serde_json::from_value(serde_json::Value::String(s.to_string()))
        .map_err(|e| StoreError::Corrupt(format!("channel: {e}")))
}

pub(crate) fn proposal(row: &SqliteRow) -> Result<Proposal, StoreError> {
    let g = |c: &str| -> Result<String, StoreError> { row.try_get(c).map_err(db_err) };
    let go = |c: &str| -> Result<Option<String>, StoreError> { row.try_get(c).map_err(db_err) };
    let gi = |c: &str| -> Result<i64, StoreError> { row.try_get(c).map_err(db_err) };
    let class = match g("class")?.as_str() {
        "applied" => KindClass::Applied,
        _ => KindClass::DecisionOnly,
    };
    let mut p = Proposal {
        id: g("id")?,
        kind: g("kind")?,
        agent: g("agent")?,
        title: go("title")?,
        summary: go("summary")?,
        payload: json(row, "payload")?.unwrap_or_default(),
        preview: Preview::Unreadable { raw: Value::Null },
        base: json(row, "base")?,
        session_id: go("session_id")?,
        group_id: go("group_id")?,
        supersedes: go("supersedes")?,
        status: status(&g("status")?)?,
        settled: false,
        created_at: Timestamp(gi("created_at")?),
        updated_at: Timestamp(gi("updated_at")?),
        expires_at: Timestamp(gi("expires_at")?),
        decision: json(row, "decision")?,
        approved_payload: None,
        result: json(row, "result")?,
        error: json(row, "error")?,
        pruned_at: row.try_get::<Option<i64>, _>("pruned_at").map_err(db_err)?.map(Timestamp),
        class,
    };
    // The stored preview leaves out what the payload holds: fill it in, then read it typed.
    let mut preview: Value = json(row, "preview")?.unwrap_or_default();
    assent_core::stored::expand(&p.payload, &mut preview);
    p.preview = Preview::read(preview);
    p.refresh_derived();
    Ok(p)
}

pub(crate) fn audit(row: &SqliteRow) -> Result<AuditEntry, StoreError> {
    let from: Option<String> = row.try_get("from_status").map_err(db_err)?;
    Ok(AuditEntry {
        seq: row.try_get("seq").map_err(db_err)?,
        proposal_id: row.try_get("proposal_id").map_err(db_err)?,
        actor: row.try_get("actor").map_err(db_err)?,
        channel: channel(&row.try_get::<String, _>("channel").map_err(db_err)?)?,
        from: from.as_deref().map(status).transpose()?,
        to: status(&row.try_get::<String, _>("to_status").map_err(db_err)?)?,
        at: Timestamp(row.try_get("at").map_err(db_err)?),
        detail: json(row, "detail")?,
    })
}

pub(crate) fn class_str(c: KindClass) -> &'static str {
    match c {
        KindClass::Applied => "applied",
        KindClass::DecisionOnly => "decision_only",
    }
}

pub(crate) fn credential(row: &SqliteRow) -> Result<assent_core::credentials::CredentialMeta, StoreError> {
    Ok(assent_core::credentials::CredentialMeta {
        name: row.try_get("name").map_err(db_err)?,
        scheme: json(row, "scheme")?.ok_or_else(|| StoreError::Corrupt("credential scheme".into()))?,
        origins: json(row, "origins")?.unwrap_or_default(),
        created_at: Timestamp(row.try_get("created_at").map_err(db_err)?),
    })
}

/// The columns [`rule`] reads.
macro_rules! rule_cols {
    () => {
        "id, effect, match, everything, note, created_by, created_channel, created_at, expires_at, matched"
    };
}
pub(crate) use rule_cols;

pub(crate) fn rule(row: &SqliteRow) -> Result<assent_core::rules::Rule, StoreError> {
    use assent_core::rules::{Effect, RuleMatch, describe};
    let effect: String = row.try_get("effect").map_err(db_err)?;
    let effect: Effect = effect.parse().map_err(|()| StoreError::Corrupt(format!("rule effect `{effect}`")))?;
    let matches: RuleMatch = json(row, "match")?.ok_or_else(|| StoreError::Corrupt("rule without a match".into()))?;
    Ok(assent_core::rules::Rule {
        id: row.try_get("id").map_err(db_err)?,
        effect,
        description: describe(effect, &matches),
        matches,
        everything: row.try_get::<i64, _>("everything").map_err(db_err)? != 0,
        note: row.try_get("note").map_err(db_err)?,
        created_by: row.try_get("created_by").map_err(db_err)?,
        created_channel: channel(&row.try_get::<String, _>("created_channel").map_err(db_err)?)?,
        created_at: Timestamp(row.try_get("created_at").map_err(db_err)?),
        expires_at: row.try_get::<Option<i64>, _>("expires_at").map_err(db_err)?.map(Timestamp),
        matched: row.try_get::<i64, _>("matched").map_err(db_err)?.max(0) as u64,
    })
}
