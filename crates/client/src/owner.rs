//! The person's half of the API, typed like the agent's: each call a method that says what it
//! sends and reads its answer as the engine's own types, so a field read from an answer is a
//! field of a type, never a key looked up in JSON.

use super::{Client, Error, enc};
use assent_core::engine::rules::{RuleList, Verdict};
use assent_core::engine::{BatchResult, Decided};
use assent_core::proposal::{AgentInfo, AuditEntry, Proposal};
use assent_core::rules::Rule;
use assent_core::store::ListQuery;
use assent_core::{CredentialMeta, Page};
use reqwest::Method;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::time::Duration;

/// How long an owner's call may take (a decision may wait on the store; a rule's check reads
/// the recent proposals).
const OWNER_TIMEOUT: Duration = Duration::from_secs(300);

/// `/proposals?…` with the filters of `q` (each left out when none) and the `cursor` a page
/// before returned.
fn list_path(q: &ListQuery, cursor: Option<&str>) -> String {
    let mut path = format!("/proposals?limit={}", q.limit);
    let filters = [
        ("status", q.status.map(|s| s.as_str())),
        ("group_id", q.group_id.as_deref()),
        ("agent", q.agent.as_deref()),
        ("kind", q.kind.as_deref()),
        ("node", q.node.as_deref()),
        ("q", q.text.as_deref()),
        ("supersedes", q.supersedes.as_deref()),
        ("session_id", q.session_id.as_deref()),
        ("cursor", cursor),
    ];
    for (k, v) in filters {
        if let Some(v) = v {
            path.push_str(&format!("&{k}={}", enc(v)));
        }
    }
    path
}

/// A list answer: `{"items": [...]}`.
#[derive(Deserialize)]
struct Items<T> {
    items: Vec<T>,
}

/// A new agent and its token, shown once.
#[derive(Debug, Clone, Deserialize)]
pub struct AgentToken {
    /// The agent.
    pub name: String,
    /// Its token.
    pub token: String,
}

/// An answer read as `T`.
fn typed<T: DeserializeOwned>(what: &str, v: Value) -> Result<T, Error> {
    serde_json::from_value(v).map_err(|e| Error::BadAnswer(format!("not {what}: {e}")))
}

impl Client {
    async fn owner_call(&self, method: Method, path: &str, body: Option<&Value>) -> Result<Value, Error> {
        self.call(method, path, body, &[], OWNER_TIMEOUT).await
    }

    /// A page of proposals (`cursor`: the `next_cursor` of the page before).
    pub async fn list(&self, q: &ListQuery, cursor: Option<&str>) -> Result<Page, Error> {
        typed("a page of proposals", self.owner_call(Method::GET, &list_path(q, cursor), None).await?)
    }

    /// Every change of one proposal, oldest first.
    pub async fn audit_of(&self, id: &str) -> Result<Vec<AuditEntry>, Error> {
        let v = self.owner_call(Method::GET, &format!("/proposals/{}/audit", enc(id)), None).await?;
        Ok(typed::<Items<AuditEntry>>("an audit trail", v)?.items)
    }

    /// Decides one proposal (`body` as `POST /proposals/{id}/decision` takes it).
    pub async fn decide(&self, id: &str, body: &Value) -> Result<Decided, Error> {
        let v = self.owner_call(Method::POST, &format!("/proposals/{}/decision", enc(id)), Some(body)).await?;
        typed("a decision", v)
    }

    /// Decides several proposals, or a whole group (`body` as `POST /decisions` takes it).
    pub async fn decide_many(&self, body: &Value) -> Result<BatchResult, Error> {
        typed("a batch's answer", self.owner_call(Method::POST, "/decisions", Some(body)).await?)
    }

    /// Files a failed write again, for a new decision.
    pub async fn retry(&self, id: &str) -> Result<Proposal, Error> {
        typed("a proposal", self.owner_call(Method::POST, &format!("/proposals/{}/retry", enc(id)), None).await?)
    }

    /// Every agent, revoked ones too.
    pub async fn agents(&self) -> Result<Vec<AgentInfo>, Error> {
        Ok(typed::<Items<AgentInfo>>("a list of agents", self.owner_call(Method::GET, "/agents", None).await?)?.items)
    }

    /// Adds an agent (or, with `reuse`, a revoked name's new token).
    pub async fn add_agent(&self, name: &str, reuse: bool) -> Result<AgentToken, Error> {
        let body = serde_json::json!({ "name": name, "reuse": reuse });
        typed("a new agent", self.owner_call(Method::POST, "/agents", Some(&body)).await?)
    }

    /// Revokes an agent's token.
    pub async fn revoke_agent(&self, name: &str) -> Result<(), Error> {
        self.owner_call(Method::DELETE, &format!("/agents/{}", enc(name)), None).await.map(drop)
    }

    /// Every credential (never a secret).
    pub async fn credentials(&self) -> Result<Vec<CredentialMeta>, Error> {
        let v = self.owner_call(Method::GET, "/credentials", None).await?;
        Ok(typed::<Items<CredentialMeta>>("a list of credentials", v)?.items)
    }

    /// Adds a credential (`body` as `POST /credentials` takes it, the secret included).
    pub async fn add_credential(&self, body: &Value) -> Result<CredentialMeta, Error> {
        typed("a credential", self.owner_call(Method::POST, "/credentials", Some(body)).await?)
    }

    /// Removes a credential.
    pub async fn remove_credential(&self, name: &str) -> Result<(), Error> {
        self.owner_call(Method::DELETE, &format!("/credentials/{}", enc(name)), None).await.map(drop)
    }

    /// A page of the rules.
    pub async fn rules(&self, path: &str) -> Result<RuleList, Error> {
        typed("a page of rules", self.owner_call(Method::GET, path, None).await?)
    }

    /// Adds a rule (`body` as `POST /rules` takes it).
    pub async fn add_rule(&self, body: &Value) -> Result<Rule, Error> {
        typed("a rule", self.owner_call(Method::POST, "/rules", Some(body)).await?)
    }

    /// Removes a rule.
    pub async fn remove_rule(&self, id: &str) -> Result<(), Error> {
        self.owner_call(Method::DELETE, &format!("/rules/{}", enc(id)), None).await.map(drop)
    }

    /// What the rules in force say about a proposal an agent might make.
    pub async fn test_rules(&self, body: &Value) -> Result<Verdict, Error> {
        typed("a verdict", self.owner_call(Method::POST, "/rules/test", Some(body)).await?)
    }
}
