//! The writer's small ops: agents and credentials.

use super::Writer;
use crate::db_err;
use assent_core::credentials::CredentialMeta;
use assent_core::error::{CoreError, StoreError};
use assent_core::proposal::Channel;
use assent_core::rules::Rule;
use assent_core::time::Timestamp;

impl Writer {
    /// Runs a statement that changes at most one row; true if it changed one.
    pub(super) async fn changed_one(
        &mut self,
        q: sqlx::query::Query<'_, sqlx::Sqlite, sqlx::sqlite::SqliteArguments>,
    ) -> Result<bool, CoreError> {
        q.execute(&mut self.conn).await.map(|r| r.rows_affected() == 1).map_err(|e| CoreError::Store(db_err(e)))
    }

    pub(super) async fn add_credential(&mut self, meta: &CredentialMeta) -> Result<(), CoreError> {
        let exists: Option<String> = sqlx::query_scalar("SELECT name FROM credentials WHERE name = ?")
            .bind(&meta.name)
            .fetch_optional(&mut self.conn)
            .await
            .map_err(db_err)?;
        if exists.is_some() {
            return Err(CoreError::Conflict(format!("a credential named `{}` already exists", meta.name)));
        }
        sqlx::query("INSERT INTO credentials (name, scheme, origins, created_at) VALUES (?, ?, ?, ?)")
            .bind(&meta.name)
            .bind(serde_json::to_string(&meta.scheme).map_err(|e| StoreError::Corrupt(e.to_string()))?)
            .bind(serde_json::to_string(&meta.origins).map_err(|e| StoreError::Corrupt(e.to_string()))?)
            .bind(meta.created_at.0)
            .execute(&mut self.conn)
            .await
            .map_err(db_err)?;
        Ok(())
    }

    /// Appends to the agent log.
    pub(super) async fn log_agent(&mut self, name: &str, event: &str, at: Timestamp) -> Result<(), CoreError> {
        sqlx::query("INSERT INTO agent_log (name, event, at) VALUES (?, ?, ?)")
            .bind(name)
            .bind(event)
            .bind(at.0)
            .execute(&mut self.conn)
            .await
            .map_err(db_err)?;
        Ok(())
    }

    pub(super) async fn add_agent(
        &mut self,
        name: &str,
        hash: &[u8; 32],
        at: Timestamp,
        reuse: bool,
    ) -> Result<(), CoreError> {
        let active: Option<Option<i64>> = sqlx::query_scalar("SELECT revoked_at FROM agents WHERE name = ?")
            .bind(name)
            .fetch_optional(&mut self.conn)
            .await
            .map_err(db_err)?;
        match crate::agent_add(name, active, reuse)? {
            crate::AgentAdd::Reuse => {
                sqlx::query("UPDATE agents SET token_hash = ?, created_at = ?, revoked_at = NULL WHERE name = ?")
                    .bind(&hash[..])
                    .bind(at.0)
                    .bind(name)
                    .execute(&mut self.conn)
                    .await
                    .map_err(db_err)?;
                self.log_agent(name, "reused", at).await
            }
            crate::AgentAdd::Insert => {
                sqlx::query("INSERT INTO agents (name, token_hash, created_at) VALUES (?, ?, ?)")
                    .bind(name)
                    .bind(&hash[..])
                    .bind(at.0)
                    .execute(&mut self.conn)
                    .await
                    .map_err(db_err)?;
                self.log_agent(name, "added", at).await
            }
        }
    }

    pub(super) async fn set_agent_token(
        &mut self,
        name: &str,
        hash: &[u8; 32],
        at: Timestamp,
    ) -> Result<bool, CoreError> {
        let state: Option<Option<i64>> = sqlx::query_scalar("SELECT revoked_at FROM agents WHERE name = ?")
            .bind(name)
            .fetch_optional(&mut self.conn)
            .await
            .map_err(db_err)?;
        match state {
            Some(Some(_)) => Ok(false),
            Some(None) => {
                sqlx::query("UPDATE agents SET token_hash = ? WHERE name = ?")
                    .bind(&hash[..])
                    .bind(name)
                    .execute(&mut self.conn)
                    .await
                    .map_err(db_err)?;
                Ok(true)
            }
            None => {
                self.add_agent(name, hash, at, false).await?;
                Ok(true)
            }
        }
    }

    async fn log_rule(
        &mut self,
        rule: &Rule,
        event: &str,
        actor: &str,
        channel: Channel,
        at: Timestamp,
    ) -> Result<(), CoreError> {
        sqlx::query("INSERT INTO rule_log (rule_id, event, actor, channel, at, rule) VALUES (?, ?, ?, ?, ?, ?)")
            .bind(&rule.id)
            .bind(event)
            .bind(actor)
            .bind(channel.as_str())
            .bind(at.0)
            .bind(serde_json::to_string(rule).map_err(|e| StoreError::Corrupt(e.to_string()))?)
            .execute(&mut self.conn)
            .await
            .map_err(db_err)?;
        Ok(())
    }

    pub(super) async fn add_rule(&mut self, rule: &Rule) -> Result<(), CoreError> {
        sqlx::query(
            "INSERT INTO rules (id, effect, match, everything, note, created_by, created_channel, created_at, expires_at) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(&rule.id)
        .bind(rule.effect.as_str())
        .bind(serde_json::to_string(&rule.matches).map_err(|e| StoreError::Corrupt(e.to_string()))?)
        .bind(i64::from(rule.everything))
        .bind(&rule.note)
        .bind(&rule.created_by)
        .bind(rule.created_channel.as_str())
        .bind(rule.created_at.0)
        .bind(rule.expires_at.map(|t| t.0))
        .execute(&mut self.conn)
        .await
        .map_err(db_err)?;
        self.log_rule(rule, "added", &rule.created_by, rule.created_channel, rule.created_at).await
    }

    pub(super) async fn remove_rule(
        &mut self,
        id: &str,
        actor: &str,
        channel: Channel,
        at: Timestamp,
    ) -> Result<Option<Rule>, CoreError> {
        let row = sqlx::query(concat!("SELECT ", crate::rows::rule_cols!(), " FROM rules WHERE id = ?"))
            .bind(id)
            .fetch_optional(&mut self.conn)
            .await
            .map_err(db_err)?;
        let Some(rule) = row.map(|r| crate::rows::rule(&r)).transpose()? else { return Ok(None) };
        sqlx::query("DELETE FROM rules WHERE id = ?").bind(id).execute(&mut self.conn).await.map_err(db_err)?;
        self.log_rule(&rule, "removed", actor, channel, at).await?;
        Ok(Some(rule))
    }
}
