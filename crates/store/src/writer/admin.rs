//! The writer's small ops: agents, credentials and rules.

use super::Writer;
use crate::rows::{self, Lite};
use assent_core::credentials::CredentialMeta;
use assent_core::error::{CoreError, StoreError};
use assent_core::proposal::Channel;
use assent_core::rules::Rule;
use assent_core::time::Timestamp;
use rusqlite::params;

fn json(v: &impl serde::Serialize) -> Result<String, StoreError> {
    serde_json::to_string(v).map_err(|e| StoreError::Corrupt(e.to_string()))
}

impl Writer {
    pub(super) fn add_credential(&self, meta: &CredentialMeta) -> Result<(), CoreError> {
        let exists = self.row("SELECT name FROM credentials WHERE name = ?", [&meta.name], |_| Ok(()))?;
        if exists.is_some() {
            return Err(CoreError::Conflict(format!("a credential named `{}` already exists", meta.name)));
        }
        self.exec(
            "INSERT INTO credentials (name, scheme, origins, created_at) VALUES (?, ?, ?, ?)",
            params![meta.name, json(&meta.scheme)?, json(&meta.origins)?, meta.created_at.0],
        )?;
        Ok(())
    }

    /// Appends to the agent log.
    pub(super) fn log_agent(&self, name: &str, event: &str, at: Timestamp) -> Result<(), CoreError> {
        self.exec("INSERT INTO agent_log (name, event, at) VALUES (?, ?, ?)", params![name, event, at.0])?;
        Ok(())
    }

    /// Whether the agent `name` is unknown (`None`), active (`Some(None)`) or revoked.
    fn agent_state(&self, name: &str) -> Result<Option<Option<i64>>, StoreError> {
        self.row("SELECT revoked_at FROM agents WHERE name = ?", [name], |r| r.get(0))
    }

    pub(super) fn add_agent(&self, name: &str, hash: &[u8; 32], at: Timestamp, reuse: bool) -> Result<(), CoreError> {
        match crate::agent_add(name, self.agent_state(name)?, reuse)? {
            crate::AgentAdd::Reuse => {
                self.exec(
                    "UPDATE agents SET token_hash = ?, created_at = ?, revoked_at = NULL WHERE name = ?",
                    params![&hash[..], at.0, name],
                )?;
                self.log_agent(name, "reused", at)
            }
            crate::AgentAdd::Insert => {
                self.exec(
                    "INSERT INTO agents (name, token_hash, created_at) VALUES (?, ?, ?)",
                    params![name, &hash[..], at.0],
                )?;
                self.log_agent(name, "added", at)
            }
        }
    }

    pub(super) fn set_agent_token(&self, name: &str, hash: &[u8; 32], at: Timestamp) -> Result<bool, CoreError> {
        match self.agent_state(name)? {
            Some(Some(_)) => Ok(false),
            Some(None) => {
                self.exec("UPDATE agents SET token_hash = ? WHERE name = ?", params![&hash[..], name])?;
                Ok(true)
            }
            None => {
                self.add_agent(name, hash, at, false)?;
                Ok(true)
            }
        }
    }

    fn log_rule(
        &self,
        rule: &Rule,
        event: &str,
        actor: &str,
        channel: Channel,
        at: Timestamp,
    ) -> Result<i64, CoreError> {
        self.exec(
            "INSERT INTO rule_log (rule_id, event, actor, channel, at, rule) VALUES (?, ?, ?, ?, ?, ?)",
            params![rule.id, event, actor, channel.as_str(), at.0, json(rule)?],
        )?;
        Ok(self.conn.last_insert_rowid())
    }

    pub(super) fn add_rule(&self, rule: &Rule) -> Result<i64, CoreError> {
        self.exec(
            "INSERT INTO rules (id, effect, match, everything, note, created_by, created_channel, created_at, expires_at) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            params![
                rule.id,
                rule.effect.as_str(),
                json(&rule.matches)?,
                i64::from(rule.everything),
                rule.note,
                rule.created_by,
                rule.created_channel.as_str(),
                rule.created_at.0,
                rule.expires_at.map(|t| t.0),
            ],
        )?;
        self.log_rule(rule, "added", &rule.created_by, rule.created_channel, rule.created_at)
    }

    pub(super) fn remove_rule(
        &self,
        id: &str,
        actor: &str,
        channel: Channel,
        at: Timestamp,
    ) -> Result<Option<(Rule, i64)>, CoreError> {
        let sql = concat!("SELECT ", rows::rule_cols!(), " FROM rules WHERE id = ?");
        let Some(rule) = self.row(sql, [id], |r| Ok(rows::rule(&Lite(r))))?.transpose()? else { return Ok(None) };
        self.exec("DELETE FROM rules WHERE id = ?", [id])?;
        let seq = self.log_rule(&rule, "removed", actor, channel, at)?;
        Ok(Some((rule, seq)))
    }

    /// Refuses a rule's decision made by rules older than the log (see `NewRecord::rules_seq`):
    /// this writer is the only one, so the log cannot move before the insert commits.
    pub(super) fn check_rules_seq(&self, seq: Option<i64>) -> Result<(), CoreError> {
        let Some(seq) = seq else { return Ok(()) };
        let now: i64 = self.row("SELECT COALESCE(MAX(seq), 0) FROM rule_log", [], |r| r.get(0))?.unwrap_or(0);
        if now == seq { Ok(()) } else { Err(CoreError::RulesChanged) }
    }
}
