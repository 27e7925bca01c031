//! Writes on the team store other than new proposals (those are `ingest`'s), each in a
//! transaction of its own: PostgreSQL takes concurrent writers itself, and a status change is a
//! compare-and-set, so any node may decide while another applies.

use super::reads::{proposal_cols, rule_cols};
use super::{PgStore, core};
use crate::rows;
use assent_core::credentials::CredentialMeta;
use assent_core::error::{CoreError, StoreError};
use assent_core::proposal::{Channel, Proposal};
use assent_core::rules::Rule;
use assent_core::store::{Transition, Transitioned};
use assent_core::time::Timestamp;
use serde_json::Value;
use sqlx::PgConnection;

fn json_text<T: serde::Serialize>(v: &T) -> Result<String, CoreError> {
    serde_json::to_string(v).map_err(|e| StoreError::Corrupt(e.to_string()).into())
}

/// One proposal, read inside the caller's transaction.
pub(super) async fn fetch(conn: &mut PgConnection, id: &str) -> Result<Option<Proposal>, CoreError> {
    let row = sqlx::query(concat!("SELECT ", proposal_cols!(), " FROM proposals WHERE id = $1"))
        .bind(id)
        .fetch_optional(&mut *conn)
        .await
        .map_err(core)?;
    Ok(row.map(|r| rows::proposal(&r)).transpose()?)
}

/// One compare-and-set with its audit row, inside the caller's transaction.
pub(super) async fn transition_in(
    conn: &mut PgConnection,
    node: &str,
    t: &Transition,
) -> Result<Transitioned, CoreError> {
    let decision = t.decision.as_ref().map(json_text).transpose()?;
    let error = t.error.as_ref().map(json_text).transpose()?;
    let res = sqlx::query(
        "UPDATE proposals SET status = $1, updated_at = $2, decision = COALESCE($3, decision), \
         result = COALESCE($4, result), error = COALESCE($5, error) WHERE id = $6 AND status = $7",
    )
    .bind(t.to.as_str())
    .bind(t.at.0)
    .bind(decision)
    .bind(t.result.as_ref().map(Value::to_string))
    .bind(error)
    .bind(&t.id)
    .bind(t.from.as_str())
    .execute(&mut *conn)
    .await
    .map_err(core)?;
    if res.rows_affected() != 1 {
        let now: Option<String> = sqlx::query_scalar("SELECT status FROM proposals WHERE id = $1")
            .bind(&t.id)
            .fetch_optional(&mut *conn)
            .await
            .map_err(core)?;
        return Ok(Transitioned::Conflict(now.and_then(|s| s.parse().ok())));
    }
    let insert = sqlx::query(
        "INSERT INTO audit (proposal_id, node, actor, channel, from_status, to_status, at, detail) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(&t.id)
    .bind(node);
    rows::bind_audit(insert, t).execute(&mut *conn).await.map_err(core)?;
    let p = fetch(conn, &t.id).await?.ok_or_else(|| StoreError::Corrupt(format!("proposal {} vanished", t.id)))?;
    Ok(Transitioned::Done(p))
}

impl PgStore {
    pub(super) async fn transitions(&self, ts: Vec<Transition>, atomic: bool) -> Result<Vec<Transitioned>, CoreError> {
        let mut out = Vec::with_capacity(ts.len());
        if !atomic {
            // Each stands alone.
            for t in &ts {
                let mut tx = self.pool.begin().await.map_err(core)?;
                let r = transition_in(&mut tx, &self.node, t).await?;
                tx.commit().await.map_err(core)?;
                out.push(r);
            }
            return Ok(out);
        }
        let mut tx = self.pool.begin().await.map_err(core)?;
        for t in &ts {
            out.push(transition_in(&mut tx, &self.node, t).await?);
        }
        if out.iter().any(|o| matches!(o, Transitioned::Conflict(_))) {
            // All or nothing: dropping the transaction rolls it back.
            return Err(assent_core::store::conflict_error(&ts, &out));
        }
        tx.commit().await.map_err(core)?;
        Ok(out)
    }

    async fn log_agent(
        &self,
        conn: &mut PgConnection,
        name: &str,
        event: &str,
        at: Timestamp,
    ) -> Result<(), CoreError> {
        sqlx::query("INSERT INTO agent_log (node, name, event, at) VALUES ($1, $2, $3, $4)")
            .bind(&self.node)
            .bind(name)
            .bind(event)
            .bind(at.0)
            .execute(&mut *conn)
            .await
            .map_err(core)?;
        Ok(())
    }

    async fn agent_state(&self, conn: &mut PgConnection, name: &str) -> Result<Option<Option<i64>>, CoreError> {
        sqlx::query_scalar("SELECT revoked_at FROM agents WHERE node = $1 AND name = $2 FOR UPDATE")
            .bind(&self.node)
            .bind(name)
            .fetch_optional(&mut *conn)
            .await
            .map_err(core)
    }

    async fn add_agent_in(
        &self,
        conn: &mut PgConnection,
        name: &str,
        hash: &[u8; 32],
        at: Timestamp,
        reuse: bool,
    ) -> Result<(), CoreError> {
        match crate::agent_add(name, self.agent_state(conn, name).await?, reuse)? {
            crate::AgentAdd::Reuse => {
                sqlx::query(
                    "UPDATE agents SET token_hash = $1, created_at = $2, revoked_at = NULL WHERE node = $3 AND name = $4",
                )
                .bind(&hash[..])
                .bind(at.0)
                .bind(&self.node)
                .bind(name)
                .execute(&mut *conn)
                .await
                .map_err(core)?;
                self.log_agent(conn, name, "reused", at).await
            }
            crate::AgentAdd::Insert => {
                sqlx::query("INSERT INTO agents (node, name, token_hash, created_at) VALUES ($1, $2, $3, $4)")
                    .bind(&self.node)
                    .bind(name)
                    .bind(&hash[..])
                    .bind(at.0)
                    .execute(&mut *conn)
                    .await
                    .map_err(core)?;
                self.log_agent(conn, name, "added", at).await
            }
        }
    }

    pub(super) async fn add_agent_row(
        &self,
        name: &str,
        hash: &[u8; 32],
        at: Timestamp,
        reuse: bool,
    ) -> Result<(), CoreError> {
        let mut tx = self.pool.begin().await.map_err(core)?;
        self.add_agent_in(&mut tx, name, hash, at, reuse).await?;
        tx.commit().await.map_err(core)
    }

    pub(super) async fn set_agent_token_row(
        &self,
        name: &str,
        hash: &[u8; 32],
        at: Timestamp,
    ) -> Result<bool, CoreError> {
        let mut tx = self.pool.begin().await.map_err(core)?;
        let changed = match self.agent_state(&mut tx, name).await? {
            Some(Some(_)) => false,
            Some(None) => {
                sqlx::query("UPDATE agents SET token_hash = $1 WHERE node = $2 AND name = $3")
                    .bind(&hash[..])
                    .bind(&self.node)
                    .bind(name)
                    .execute(&mut *tx)
                    .await
                    .map_err(core)?;
                true
            }
            None => {
                self.add_agent_in(&mut tx, name, hash, at, false).await?;
                true
            }
        };
        tx.commit().await.map_err(core)?;
        Ok(changed)
    }

    pub(super) async fn revoke_agent_row(&self, name: &str, at: Timestamp) -> Result<bool, CoreError> {
        let mut tx = self.pool.begin().await.map_err(core)?;
        let r = sqlx::query("UPDATE agents SET revoked_at = $1 WHERE node = $2 AND name = $3 AND revoked_at IS NULL")
            .bind(at.0)
            .bind(&self.node)
            .bind(name)
            .execute(&mut *tx)
            .await
            .map_err(core)?;
        if r.rows_affected() != 1 {
            return Ok(false);
        }
        self.log_agent(&mut tx, name, "revoked", at).await?;
        tx.commit().await.map_err(core)?;
        Ok(true)
    }

    pub(super) async fn add_credential_row(&self, meta: &CredentialMeta) -> Result<(), CoreError> {
        let r = sqlx::query(
            "INSERT INTO credentials (node, name, scheme, origins, created_at) VALUES ($1, $2, $3, $4, $5) \
             ON CONFLICT (node, name) DO NOTHING",
        )
        .bind(&self.node)
        .bind(&meta.name)
        .bind(json_text(&meta.scheme)?)
        .bind(json_text(&meta.origins)?)
        .bind(meta.created_at.0)
        .execute(&self.pool)
        .await
        .map_err(core)?;
        if r.rows_affected() == 0 {
            return Err(CoreError::Conflict(format!("a credential named `{}` already exists", meta.name)));
        }
        Ok(())
    }

    async fn log_rule(
        &self,
        conn: &mut PgConnection,
        rule: &Rule,
        event: &str,
        actor: &str,
        channel: Channel,
        at: Timestamp,
    ) -> Result<i64, CoreError> {
        let (seq,): (i64,) = sqlx::query_as(
            "INSERT INTO rule_log (rule_id, node, event, actor, channel, at, rule) VALUES ($1, $2, $3, $4, $5, $6, $7) \
             RETURNING seq",
        )
        .bind(&rule.id)
        .bind(&self.node)
        .bind(event)
        .bind(actor)
        .bind(channel.as_str())
        .bind(at.0)
        .bind(json_text(rule)?)
        .fetch_one(&mut *conn)
        .await
        .map_err(core)?;
        Ok(seq)
    }

    pub(super) async fn add_rule_row(&self, rule: &Rule) -> Result<i64, CoreError> {
        let mut tx = self.pool.begin().await.map_err(core)?;
        rules_lock(&mut tx, true).await?;
        sqlx::query(
            "INSERT INTO rules (id, node, effect, match, everything, note, created_by, created_channel, created_at, \
             expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
        )
        .bind(&rule.id)
        .bind(&self.node)
        .bind(rule.effect.as_str())
        .bind(json_text(&rule.matches)?)
        .bind(rule.everything)
        .bind(&rule.note)
        .bind(&rule.created_by)
        .bind(rule.created_channel.as_str())
        .bind(rule.created_at.0)
        .bind(rule.expires_at.map(|t| t.0))
        .execute(&mut *tx)
        .await
        .map_err(core)?;
        let seq =
            self.log_rule(&mut tx, rule, "added", &rule.created_by, rule.created_channel, rule.created_at).await?;
        tx.commit().await.map_err(core)?;
        Ok(seq)
    }

    pub(super) async fn remove_rule_row(
        &self,
        id: &str,
        actor: &str,
        channel: Channel,
        at: Timestamp,
    ) -> Result<Option<(Rule, i64)>, CoreError> {
        let mut tx = self.pool.begin().await.map_err(core)?;
        rules_lock(&mut tx, true).await?;
        let row = sqlx::query(concat!("SELECT ", rule_cols!(), " FROM rules WHERE id = $1 FOR UPDATE"))
            .bind(id)
            .fetch_optional(&mut *tx)
            .await
            .map_err(core)?;
        let Some(rule) = row.map(|r| rows::rule(&r)).transpose()? else { return Ok(None) };
        sqlx::query("DELETE FROM rules WHERE id = $1").bind(id).execute(&mut *tx).await.map_err(core)?;
        let seq = self.log_rule(&mut tx, &rule, "removed", actor, channel, at).await?;
        tx.commit().await.map_err(core)?;
        Ok(Some((rule, seq)))
    }

    pub(super) async fn prune_rows(&self, before: Timestamp, now: Timestamp, limit: u32) -> Result<u64, CoreError> {
        let mut tx = self.pool.begin().await.map_err(core)?;
        let rows = sqlx::query(
            "SELECT id, payload, preview, result, decision FROM proposals \
             WHERE pruned_at IS NULL AND updated_at < $1 \
             AND (status IN ('applied', 'failed', 'rejected', 'refined', 'expired', 'withdrawn') \
                  OR (status = 'approved' AND class = 'decision_only')) \
             ORDER BY seq LIMIT $2 FOR UPDATE SKIP LOCKED",
        )
        .bind(before.0)
        .bind(i64::from(limit))
        .fetch_all(&mut *tx)
        .await
        .map_err(core)?;
        let mut n = 0;
        for row in &rows {
            let p = rows::pruned(row)?;
            sqlx::query(
                "UPDATE proposals SET pruned_at = $1, payload = $2, preview = $3, result = $4, decision = $5, \
                 facts = NULL WHERE id = $6 AND pruned_at IS NULL",
            )
            .bind(now.0)
            .bind(p.payload)
            .bind(p.preview)
            .bind(p.result)
            .bind(p.decision)
            .bind(&p.id)
            .execute(&mut *tx)
            .await
            .map_err(core)?;
            n += 1;
        }
        tx.commit().await.map_err(core)?;
        Ok(n)
    }
}

/// The advisory lock between a change of the rules and the decisions rules make, whichever
/// node each runs on: a change takes it alone, a decision shared, each until its transaction
/// ends. So a decision either commits before a change begins, or reads the rule log after the
/// change committed (and is refused, see [`check_rules_seq`]): none is made by a rule after its
/// removal answered, even by a node that missed the notification.
pub(super) async fn rules_lock(conn: &mut PgConnection, alone: bool) -> Result<(), CoreError> {
    let sql = if alone { "SELECT pg_advisory_xact_lock($1)" } else { "SELECT pg_advisory_xact_lock_shared($1)" };
    sqlx::query(sql).bind(RULES_LOCK).execute(&mut *conn).await.map_err(core)?;
    Ok(())
}

/// The advisory lock's key (`assent-r` in ASCII).
const RULES_LOCK: i64 = 0x6173_7365_6e74_2d72;

/// Refuses a rule's decision made by rules older than the rule log (`NewRecord::rules_seq`).
pub(super) async fn check_rules_seq(conn: &mut PgConnection, seq: Option<i64>) -> Result<(), CoreError> {
    let Some(seq) = seq else { return Ok(()) };
    rules_lock(conn, false).await?;
    let (now,): (i64,) =
        sqlx::query_as("SELECT COALESCE(MAX(seq), 0) FROM rule_log").fetch_one(&mut *conn).await.map_err(core)?;
    if now == seq { Ok(()) } else { Err(CoreError::RulesChanged) }
}
