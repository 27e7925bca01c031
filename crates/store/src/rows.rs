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
use sqlx::postgres::PgRow;
use sqlx::sqlite::SqliteRow;

/// What decoding reads of a row, on either database.
pub(crate) trait Cols {
    fn text_opt(&self, col: &str) -> Result<Option<String>, StoreError>;
    fn int_opt(&self, col: &str) -> Result<Option<i64>, StoreError>;
    fn bytes_opt(&self, col: &str) -> Result<Option<Vec<u8>>, StoreError>;
    /// A yes/no column (an integer 0/1 on SQLite, a boolean on PostgreSQL).
    fn flag(&self, col: &str) -> Result<bool, StoreError>;
    /// The node a row belongs to (a team store's rows have one; SQLite's never do).
    fn node(&self) -> Result<Option<String>, StoreError>;

    fn text(&self, col: &str) -> Result<String, StoreError> {
        self.text_opt(col)?.ok_or_else(|| StoreError::Corrupt(format!("{col} is null")))
    }
    fn int(&self, col: &str) -> Result<i64, StoreError> {
        self.int_opt(col)?.ok_or_else(|| StoreError::Corrupt(format!("{col} is null")))
    }
}

impl Cols for SqliteRow {
    fn text_opt(&self, col: &str) -> Result<Option<String>, StoreError> {
        self.try_get(col).map_err(db_err)
    }
    fn int_opt(&self, col: &str) -> Result<Option<i64>, StoreError> {
        self.try_get(col).map_err(db_err)
    }
    fn bytes_opt(&self, col: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.try_get(col).map_err(db_err)
    }
    fn flag(&self, col: &str) -> Result<bool, StoreError> {
        Ok(self.try_get::<i64, _>(col).map_err(db_err)? != 0)
    }
    fn node(&self) -> Result<Option<String>, StoreError> {
        Ok(None)
    }
}

/// A row read through rusqlite (the writer's and the point reads' connections).
pub(crate) struct Lite<'a, 'b>(pub &'a rusqlite::Row<'b>);

impl Cols for Lite<'_, '_> {
    fn text_opt(&self, col: &str) -> Result<Option<String>, StoreError> {
        self.0.get(col).map_err(crate::lite_err)
    }
    fn int_opt(&self, col: &str) -> Result<Option<i64>, StoreError> {
        self.0.get(col).map_err(crate::lite_err)
    }
    fn bytes_opt(&self, col: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.0.get(col).map_err(crate::lite_err)
    }
    fn flag(&self, col: &str) -> Result<bool, StoreError> {
        Ok(self.0.get::<_, i64>(col).map_err(crate::lite_err)? != 0)
    }
    fn node(&self) -> Result<Option<String>, StoreError> {
        Ok(None)
    }
}

impl Cols for PgRow {
    fn text_opt(&self, col: &str) -> Result<Option<String>, StoreError> {
        self.try_get(col).map_err(crate::errors::pg_err)
    }
    fn int_opt(&self, col: &str) -> Result<Option<i64>, StoreError> {
        self.try_get(col).map_err(crate::errors::pg_err)
    }
    fn bytes_opt(&self, col: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.try_get(col).map_err(crate::errors::pg_err)
    }
    fn flag(&self, col: &str) -> Result<bool, StoreError> {
        self.try_get(col).map_err(crate::errors::pg_err)
    }
    fn node(&self) -> Result<Option<String>, StoreError> {
        self.try_get("node").map(Some).map_err(crate::errors::pg_err)
    }
}

/// The columns [`proposal`] reads, for `concat!` into queries.
macro_rules! proposal_cols {
    () => {
        "seq, id, kind, class, agent, title, summary, payload, preview, base, session_id, group_id, \
         supersedes, status, created_at, updated_at, expires_at, lease_secs, decision, result, error, pruned_at"
    };
}
pub(crate) use proposal_cols;

/// One proposal by its id, decoded by [`proposal`].
pub(crate) const PROPOSAL_BY_ID: &str = concat!("SELECT ", proposal_cols!(), " FROM proposals WHERE id = ?");

/// The columns [`audit`] reads.
macro_rules! audit_cols {
    () => {
        "seq, proposal_id, actor, channel, from_status, to_status, at, detail"
    };
}
pub(crate) use audit_cols;

fn json<T: DeserializeOwned>(row: &impl Cols, col: &str) -> Result<Option<T>, StoreError> {
    row.text_opt(col)?
        .map(|s| serde_json::from_str(&s).map_err(|e| StoreError::Corrupt(format!("{col}: {e}"))))
        .transpose()
}

fn status(s: &str) -> Result<Status, StoreError> {
    s.parse().map_err(StoreError::Corrupt)
}

pub(crate) fn channel(s: &str) -> Result<Channel, StoreError> {
    serde_json::from_value(serde_json::Value::String(s.to_string()))
        .map_err(|e| StoreError::Corrupt(format!("channel: {e}")))
}

pub(crate) fn proposal(row: &impl Cols) -> Result<Proposal, StoreError> {
    let g = |c: &str| row.text(c);
    let go = |c: &str| row.text_opt(c);
    let gi = |c: &str| row.int(c);
    let class = match g("class")?.as_str() {
        "applied" => KindClass::Applied,
        _ => KindClass::DecisionOnly,
    };
    let mut p = Proposal {
        id: g("id")?,
        kind: g("kind")?,
        agent: g("agent")?,
        node: row.node()?,
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
        lease_secs: row.int_opt("lease_secs")?.and_then(|s| u32::try_from(s).ok()),
        decision: json(row, "decision")?,
        approved_payload: None,
        result: json(row, "result")?,
        error: json(row, "error")?,
        pruned_at: row.int_opt("pruned_at")?.map(Timestamp),
        class,
    };
    // The stored preview leaves out what the payload holds: fill it in, then read it typed.
    let mut preview: Value = json(row, "preview")?.unwrap_or_default();
    assent_core::stored::expand(&p.payload, &mut preview);
    p.preview = Preview::read(preview);
    p.refresh_derived();
    Ok(p)
}

pub(crate) fn audit(row: &impl Cols) -> Result<AuditEntry, StoreError> {
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

pub(crate) fn credential(row: &impl Cols) -> Result<assent_core::credentials::CredentialMeta, StoreError> {
    Ok(assent_core::credentials::CredentialMeta {
        name: row.text("name")?,
        scheme: json(row, "scheme")?.ok_or_else(|| StoreError::Corrupt("credential scheme".into()))?,
        origins: json(row, "origins")?.unwrap_or_default(),
        created_at: Timestamp(row.int("created_at")?),
    })
}

/// The columns [`rule`] reads.
macro_rules! rule_cols {
    () => {
        "id, effect, match, everything, note, created_by, created_channel, created_at, expires_at, matched"
    };
}
pub(crate) use rule_cols;

pub(crate) fn rule(row: &impl Cols) -> Result<assent_core::rules::Rule, StoreError> {
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
pub(crate) fn rule_log(row: &impl Cols) -> Result<assent_core::rules::RuleLogEntry, StoreError> {
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

pub(crate) fn pruned(row: &impl Cols) -> Result<Pruned, StoreError> {
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

/// Binds what an audit row says of a transition, in this order: actor, channel, from, to, at,
/// detail. Both stores' transitions write it.
pub(crate) fn bind_audit<'q, DB>(
    q: sqlx::query::Query<'q, DB, DB::Arguments>,
    t: &'q assent_core::store::Transition,
) -> sqlx::query::Query<'q, DB, DB::Arguments>
where
    DB: sqlx::Database,
    &'q str: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    i64: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    Option<String>: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
{
    q.bind(t.actor.as_str())
        .bind(t.channel.as_str())
        .bind(t.from.as_str())
        .bind(t.to.as_str())
        .bind(t.at.0)
        .bind(t.detail.as_ref().map(Value::to_string))
}
