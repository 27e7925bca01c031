//! The [`Store`] contract on PostgreSQL: reads here, writes in `write`.

use super::{PgStore, core, db_err};
use crate::rows;
use assent_core::credentials::CredentialMeta;
use assent_core::error::{CoreError, StoreError};
use assent_core::proposal::{AgentInfo, AuditEntry, Channel, Proposal};
use assent_core::rules::{Facts, Rule, RuleLogEntry};
use assent_core::status::Status;
use assent_core::store::{Inserted, ListQuery, NewRecord, RemoteChange, Store, Transition, Transitioned};
use assent_core::time::Timestamp;
use async_trait::async_trait;
use sqlx::postgres::PgRow;
use sqlx::{Postgres, QueryBuilder, Row};

/// The columns [`rows::proposal`] reads, and the node, for `concat!` into queries (so that every
/// fixed query is a `&'static str`, as on SQLite).
macro_rules! proposal_cols {
    () => {
        concat!(crate::rows::proposal_cols!(), ", node")
    };
}
pub(crate) use proposal_cols;
macro_rules! audit_cols {
    () => {
        concat!(crate::rows::audit_cols!(), ", node")
    };
}
macro_rules! rule_cols {
    () => {
        concat!(crate::rows::rule_cols!(), ", node")
    };
}
pub(crate) use rule_cols;

fn proposals(rows: &[PgRow]) -> Result<Vec<Proposal>, CoreError> {
    Ok(rows.iter().map(rows::proposal).collect::<Result<_, _>>()?)
}

#[async_trait]
impl Store for PgStore {
    async fn insert(&self, rec: NewRecord) -> Result<Inserted, CoreError> {
        let (reply, answer) = tokio::sync::oneshot::channel();
        self.ingest.send((Box::new(rec), reply)).await.map_err(|_| StoreError::Closed)?;
        answer.await.map_err(|_| StoreError::Closed)?
    }

    async fn transition(&self, ts: Vec<Transition>, atomic: bool) -> Result<Vec<Transitioned>, CoreError> {
        self.transitions(ts, atomic).await
    }

    async fn get(&self, id: &str) -> Result<Option<Proposal>, CoreError> {
        let row = sqlx::query(concat!("SELECT ", proposal_cols!(), " FROM proposals WHERE id = $1"))
            .bind(id)
            .fetch_optional(&self.pool)
            .await
            .map_err(core)?;
        Ok(row.map(|r| rows::proposal(&r)).transpose()?)
    }

    async fn list(&self, q: &ListQuery) -> Result<Vec<(i64, Proposal)>, CoreError> {
        // Only the filters given are in the statement, so the planner picks the index for them.
        let mut b: QueryBuilder<Postgres> =
            QueryBuilder::new(concat!("SELECT seq, ", proposal_cols!(), " FROM proposals WHERE TRUE"));
        let eq = |b: &mut QueryBuilder<Postgres>, col: &str, v: &Option<String>| {
            if let Some(v) = v {
                b.push(format!(" AND {col} = ")).push_bind(v.clone());
            }
        };
        eq(&mut b, "status", &q.status.map(|s| s.as_str().to_string()));
        eq(&mut b, "group_id", &q.group_id);
        eq(&mut b, "agent", &q.agent);
        eq(&mut b, "kind", &q.kind);
        eq(&mut b, "supersedes", &q.supersedes);
        eq(&mut b, "node", &q.node);
        if let Some(before) = q.before {
            b.push(" AND seq < ").push_bind(before);
        }
        if let Some(text) = &q.text {
            b.push(
                " AND strpos(lower(id || ' ' || coalesce(title, '') || ' ' || coalesce(summary, '') || ' ' || agent \
                 || ' ' || kind || ' ' || payload), lower(",
            )
            .push_bind(text.clone())
            .push(")) > 0");
        }
        b.push(" ORDER BY seq DESC LIMIT ").push_bind(i64::from(q.limit));
        let rows = b.build().fetch_all(&self.pool).await.map_err(core)?;
        rows.iter().map(|r| Ok((r.try_get::<i64, _>("seq").map_err(db_err)?, rows::proposal(r)?))).collect()
    }

    async fn count_pending(&self) -> Result<u64, CoreError> {
        let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM proposals WHERE status = 'pending'")
            .fetch_one(&self.pool)
            .await
            .map_err(core)?;
        Ok(n.max(0) as u64)
    }

    async fn group(&self, agent: Option<&str>, group_id: &str) -> Result<Vec<Proposal>, CoreError> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            proposal_cols!(),
            " FROM proposals WHERE group_id = $1 AND ($2::text IS NULL OR agent = $2) ORDER BY seq"
        ))
        .bind(group_id)
        .bind(agent)
        .fetch_all(&self.pool)
        .await
        .map_err(core)?;
        proposals(&rows)
    }

    async fn due_for_expiry(&self, now: Timestamp, limit: u32) -> Result<Vec<(String, Status)>, CoreError> {
        let ids: Vec<String> = sqlx::query_scalar(
            "SELECT id FROM proposals WHERE status = 'pending' AND expires_at <= $1 ORDER BY expires_at LIMIT $2",
        )
        .bind(now.0)
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await
        .map_err(core)?;
        Ok(ids.into_iter().map(|id| (id, Status::Pending)).collect())
    }

    async fn next_expiry(&self) -> Result<Option<Timestamp>, CoreError> {
        let v: Option<i64> = sqlx::query_scalar("SELECT MIN(expires_at) FROM proposals WHERE status = 'pending'")
            .fetch_one(&self.pool)
            .await
            .map_err(core)?;
        Ok(v.map(Timestamp))
    }

    async fn audit_for(&self, id: &str) -> Result<Vec<AuditEntry>, CoreError> {
        let rows = sqlx::query(concat!("SELECT ", audit_cols!(), " FROM audit WHERE proposal_id = $1 ORDER BY seq"))
            .bind(id)
            .fetch_all(&self.pool)
            .await
            .map_err(core)?;
        Ok(rows.iter().map(rows::audit).collect::<Result<_, _>>()?)
    }

    async fn audit_after(&self, after_seq: i64, limit: u32) -> Result<Vec<AuditEntry>, CoreError> {
        let rows = sqlx::query(concat!("SELECT ", audit_cols!(), " FROM audit WHERE seq > $1 ORDER BY seq LIMIT $2"))
            .bind(after_seq)
            .bind(i64::from(limit))
            .fetch_all(&self.pool)
            .await
            .map_err(core)?;
        Ok(rows.iter().map(rows::audit).collect::<Result<_, _>>()?)
    }

    async fn agents(&self) -> Result<Vec<AgentInfo>, CoreError> {
        let rows: Vec<(String, i64, Option<i64>)> =
            sqlx::query_as("SELECT name, created_at, revoked_at FROM agents WHERE node = $1 ORDER BY name")
                .bind(&self.node)
                .fetch_all(&self.pool)
                .await
                .map_err(core)?;
        Ok(rows
            .into_iter()
            .map(|(name, created_at, revoked_at)| AgentInfo {
                name,
                created_at: Timestamp(created_at),
                revoked_at: revoked_at.map(Timestamp),
            })
            .collect())
    }

    async fn agent_tokens(&self) -> Result<Vec<(String, [u8; 32])>, CoreError> {
        let rows: Vec<(String, Vec<u8>)> =
            sqlx::query_as("SELECT name, token_hash FROM agents WHERE node = $1 AND revoked_at IS NULL")
                .bind(&self.node)
                .fetch_all(&self.pool)
                .await
                .map_err(core)?;
        rows.into_iter()
            .map(|(name, h)| {
                let h: [u8; 32] =
                    h.try_into().map_err(|_| StoreError::Corrupt(format!("token hash of agent {name}")))?;
                Ok((name, h))
            })
            .collect()
    }

    async fn add_agent(&self, name: &str, token_hash: [u8; 32], at: Timestamp, reuse: bool) -> Result<(), CoreError> {
        self.add_agent_row(name, &token_hash, at, reuse).await
    }

    async fn set_agent_token(&self, name: &str, token_hash: [u8; 32], at: Timestamp) -> Result<bool, CoreError> {
        self.set_agent_token_row(name, &token_hash, at).await
    }

    async fn revoke_agent(&self, name: &str, at: Timestamp) -> Result<bool, CoreError> {
        self.revoke_agent_row(name, at).await
    }

    async fn unsettled_applies(&self) -> Result<Vec<Proposal>, CoreError> {
        // This node's only: another node's writes are its own to carry out and settle.
        let rows = sqlx::query(concat!(
            "SELECT ",
            proposal_cols!(),
            " FROM proposals WHERE node = $1 AND status IN ('approved', 'applying') AND class = 'applied' ORDER BY seq"
        ))
        .bind(&self.node)
        .fetch_all(&self.pool)
        .await
        .map_err(core)?;
        proposals(&rows)
    }

    async fn stored_bytes_since(&self, since: Timestamp) -> Result<Vec<(String, Timestamp, u64)>, CoreError> {
        let rows: Vec<(String, i64, i64)> = sqlx::query_as(
            "SELECT agent, created_at, (octet_length(payload) + octet_length(preview))::int8 FROM proposals \
             WHERE node = $1 AND created_at >= $2 ORDER BY created_at",
        )
        .bind(&self.node)
        .bind(since.0)
        .fetch_all(&self.pool)
        .await
        .map_err(core)?;
        Ok(rows.into_iter().map(|(a, at, n)| (a, Timestamp(at), n.max(0) as u64)).collect())
    }

    async fn prune(&self, before: Timestamp, now: Timestamp, limit: u32) -> Result<u64, CoreError> {
        self.prune_rows(before, now, limit).await
    }

    async fn credentials(&self) -> Result<Vec<CredentialMeta>, CoreError> {
        let rows =
            sqlx::query("SELECT name, scheme, origins, created_at FROM credentials WHERE node = $1 ORDER BY name")
                .bind(&self.node)
                .fetch_all(&self.pool)
                .await
                .map_err(core)?;
        Ok(rows.iter().map(rows::credential).collect::<Result<_, _>>()?)
    }

    async fn add_credential(&self, meta: CredentialMeta) -> Result<(), CoreError> {
        self.add_credential_row(&meta).await
    }

    async fn remove_credential(&self, name: &str) -> Result<bool, CoreError> {
        let r = sqlx::query("DELETE FROM credentials WHERE node = $1 AND name = $2")
            .bind(&self.node)
            .bind(name)
            .execute(&self.pool)
            .await
            .map_err(core)?;
        Ok(r.rows_affected() == 1)
    }

    async fn rules(&self) -> Result<Vec<Rule>, CoreError> {
        let rows = sqlx::query(concat!("SELECT ", rule_cols!(), " FROM rules ORDER BY seq"))
            .fetch_all(&self.pool)
            .await
            .map_err(core)?;
        Ok(rows.iter().map(rows::rule).collect::<Result<_, _>>()?)
    }

    async fn rule(&self, id: &str) -> Result<Option<Rule>, CoreError> {
        let row = sqlx::query(concat!("SELECT ", rule_cols!(), " FROM rules WHERE id = $1"))
            .bind(id)
            .fetch_optional(&self.pool)
            .await
            .map_err(core)?;
        Ok(row.map(|r| rows::rule(&r)).transpose()?)
    }

    async fn add_rule(&self, rule: Rule) -> Result<i64, CoreError> {
        self.add_rule_row(&rule).await
    }

    async fn rules_after(&self, after: i64, limit: u32) -> Result<Vec<(i64, Rule)>, CoreError> {
        let sql = concat!("SELECT seq, ", rule_cols!(), " FROM rules WHERE seq > $1 ORDER BY seq LIMIT $2");
        let rows = sqlx::query(sql).bind(after).bind(i64::from(limit)).fetch_all(&self.pool).await.map_err(core)?;
        Ok(rows.iter().map(|r| Ok((rows::Cols::int(r, "seq")?, rows::rule(r)?))).collect::<Result<_, StoreError>>()?)
    }

    async fn rule_decisions_since(&self, since: Timestamp) -> Result<Vec<(String, u64)>, CoreError> {
        // The decision is JSON kept as text.
        let sql = "SELECT (decision::jsonb)->'rule'->>'id' AS rule, COUNT(*) AS n FROM proposals \
                   WHERE id >= $1 AND (decision::jsonb)->>'by' = 'rule' GROUP BY rule";
        let rows: Vec<(Option<String>, i64)> = sqlx::query_as(sql)
            .bind(assent_core::engine::proposal_id_floor(since))
            .fetch_all(&self.pool)
            .await
            .map_err(core)?;
        Ok(rows.into_iter().filter_map(|(r, n)| Some((r?, n.max(0) as u64))).collect())
    }

    async fn rule_seq(&self) -> Result<i64, CoreError> {
        let (seq,): (i64,) =
            sqlx::query_as("SELECT COALESCE(MAX(seq), 0) FROM rule_log").fetch_one(&self.pool).await.map_err(core)?;
        Ok(seq)
    }

    async fn remove_rule(
        &self,
        id: &str,
        actor: &str,
        channel: Channel,
        at: Timestamp,
    ) -> Result<Option<(Rule, i64)>, CoreError> {
        self.remove_rule_row(id, actor, channel, at).await
    }

    async fn rule_log_after(&self, after_seq: i64, limit: u32) -> Result<Vec<RuleLogEntry>, CoreError> {
        let rows = sqlx::query(
            "SELECT seq, rule_id, event, actor, channel, at, rule FROM rule_log WHERE seq > $1 ORDER BY seq LIMIT $2",
        )
        .bind(after_seq)
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await
        .map_err(core)?;
        Ok(rows.iter().map(rows::rule_log).collect::<Result<_, _>>()?)
    }

    async fn recent_facts(&self, limit: u32) -> Result<Vec<(String, String, Facts)>, CoreError> {
        let rows: Vec<(String, String, String)> = sqlx::query_as(
            "SELECT agent, kind, facts FROM proposals WHERE facts IS NOT NULL ORDER BY seq DESC LIMIT $1",
        )
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await
        .map_err(core)?;
        // A row this version cannot read is left out of a count, not an error.
        Ok(rows.into_iter().filter_map(|(a, k, f)| Some((a, k, serde_json::from_str(&f).ok()?))).collect())
    }

    fn take_changes(&self) -> Option<tokio::sync::mpsc::Receiver<RemoteChange>> {
        self.take()
    }
}
