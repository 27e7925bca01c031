//! The writer's small ops: agents and credentials.

use super::Writer;
use crate::db_err;
use assent_core::credentials::CredentialMeta;
use assent_core::error::{CoreError, StoreError};
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
        match active {
            Some(None) => Err(CoreError::Conflict(format!("an agent named `{name}` already exists; revoke it first"))),
            Some(Some(_)) if !reuse => Err(CoreError::Conflict(format!(
                "agent `{name}` was revoked, and its proposals stay under that name: pick another name, or reuse it \
                 (`assent agent add {name} --reuse`, or \"reuse\": true) to give it a new token"
            ))),
            Some(Some(_)) => {
                sqlx::query("UPDATE agents SET token_hash = ?, created_at = ?, revoked_at = NULL WHERE name = ?")
                    .bind(&hash[..])
                    .bind(at.0)
                    .bind(name)
                    .execute(&mut self.conn)
                    .await
                    .map_err(db_err)?;
                self.log_agent(name, "reused", at).await
            }
            None => {
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
}
