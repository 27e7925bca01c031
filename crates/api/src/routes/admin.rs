//! Owner administration: agents and the audit export.

use crate::AppState;
use crate::error::ApiError;
use crate::extract::{Json, Owner, Query};
use assent_core::{AgentInfo, AuditEntry, CredentialMeta};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};

/// The agents.
#[derive(Serialize, utoipa::ToSchema)]
pub struct AgentList {
    /// Oldest first, revoked ones included.
    pub items: Vec<AgentInfo>,
}

/// Every agent (never a token).
#[utoipa::path(get, path = "/v1/agents", tag = "agents", operation_id = "list_agents",
    security(("owner" = [])),
    responses((status = 200, description = "The agents", body = AgentList)))]
pub async fn list_agents(State(s): State<AppState>, _: Owner) -> Result<axum::Json<AgentList>, ApiError> {
    Ok(axum::Json(AgentList { items: s.engine.agents().await? }))
}

/// Body of `POST /v1/agents`.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewAgent {
    /// 1 to 64 of `a-z`, `0-9`, `.`, `_` and `-`, starting with a letter or digit.
    #[schema(pattern = "^[a-z0-9][a-z0-9._-]{0,63}$")]
    name: String,
    /// Give a revoked agent's name a new token.
    #[serde(default)]
    reuse: bool,
}

/// A new agent and its token.
#[derive(Serialize, utoipa::ToSchema)]
pub struct AgentToken {
    /// The agent.
    pub name: String,
    /// Its token: shown here once, stored only as a hash.
    pub token: String,
}

/// Adds an agent; its token is in this answer and nowhere else, ever.
#[utoipa::path(post, path = "/v1/agents", tag = "agents", operation_id = "add_agent",
    security(("owner" = [])),
    request_body = NewAgent,
    responses((status = 201, description = "Added; the token is shown once", body = AgentToken)))]
pub async fn add_agent(
    State(s): State<AppState>,
    _: Owner,
    Json(a): Json<NewAgent>,
) -> Result<(StatusCode, axum::Json<AgentToken>), ApiError> {
    let token = s.engine.add_agent_with(&a.name, a.reuse).await?;
    Ok((StatusCode::CREATED, axum::Json(AgentToken { name: a.name, token })))
}

/// Revokes an agent's token (its proposals stay under its name).
#[utoipa::path(delete, path = "/v1/agents/{name}", tag = "agents", operation_id = "revoke_agent",
    security(("owner" = [])),
    params(("name" = String, Path, description = "The agent's name")),
    responses((status = 204, description = "Revoked")))]
pub async fn revoke_agent(
    State(s): State<AppState>,
    _: Owner,
    Path(name): Path<String>,
) -> Result<StatusCode, ApiError> {
    s.engine.revoke_agent(&name).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// A page of the audit log.
#[derive(Serialize, utoipa::ToSchema)]
pub struct AuditPage {
    /// In order.
    pub items: Vec<AuditEntry>,
    /// When the page is full: the `after` to ask for next.
    pub next_after: Option<i64>,
}

/// The audit log in order, a page at a time (for export).
#[utoipa::path(get, path = "/v1/audit", tag = "audit", operation_id = "audit_log",
    security(("owner" = [])),
    params(super::LogQuery),
    responses((status = 200, description = "A page of the log", body = AuditPage)))]
pub async fn audit(
    State(s): State<AppState>,
    _: Owner,
    Query(q): Query<super::LogQuery>,
) -> Result<axum::Json<AuditPage>, ApiError> {
    let (after, limit) = q.range();
    let items = s.engine.audit_after(after, limit).await?;
    let next_after = super::next_after(&items, limit, |e| e.seq);
    Ok(axum::Json(AuditPage { items, next_after }))
}

/// The credentials.
#[derive(Serialize, utoipa::ToSchema)]
pub struct CredentialList {
    /// By name.
    pub items: Vec<CredentialMeta>,
}

/// Every credential's name, scheme and allowed origins (never a secret).
#[utoipa::path(get, path = "/v1/credentials", tag = "credentials", operation_id = "list_credentials",
    security(("owner" = [])),
    responses((status = 200, description = "The credentials", body = CredentialList)))]
pub async fn list_credentials(State(s): State<AppState>, _: Owner) -> Result<axum::Json<CredentialList>, ApiError> {
    let items: Vec<_> = s.engine.credential_map().values().cloned().collect();
    Ok(axum::Json(CredentialList { items }))
}

/// Body of `POST /v1/credentials`.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewCredential {
    /// 1 to 64 of `a-z`, `0-9`, `.`, `_` and `-`, starting with a letter or digit.
    #[schema(pattern = "^[a-z0-9][a-z0-9._-]{0,63}$")]
    name: String,
    /// `bearer` (the default), `basic`, or `header:NAME`.
    #[serde(default = "bearer")]
    #[schema(default = "bearer", pattern = "^(?:bearer|basic|header:[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128})$")]
    scheme: String,
    /// The hosts or origins it may be sent to: each a host name or address (HTTPS on 443), or
    /// an origin `https://host:port` (`http://` only for a loopback host), with no path.
    #[schema(schema_with = hosts_schema)]
    hosts: Vec<String>,
    /// The secret: it goes to the system keychain and is never returned. 1 to 16,384
    /// characters on one line.
    #[schema(format = Password, max_length = 16384, pattern = "^[^\\r\\n\\u0000]+$")]
    secret: String,
}

fn hosts_schema() -> utoipa::openapi::Array {
    use utoipa::openapi::schema::{SchemaFormat, Type};
    let host = utoipa::openapi::ObjectBuilder::new()
        .schema_type(Type::String)
        .format(Some(SchemaFormat::Custom("credential-host".into())));
    utoipa::openapi::ArrayBuilder::new()
        .items(host)
        .min_items(Some(1))
        .description(Some("The hosts or origins it may be sent to: each a host name or address (HTTPS on 443), or an origin `https://host:port` (`http://` only for a loopback host), with no path."))
        .build()
}

fn bearer() -> String {
    "bearer".into()
}

/// Adds a credential: the secret goes straight to the keychain and is never returned.
#[utoipa::path(post, path = "/v1/credentials", tag = "credentials", operation_id = "add_credential",
    security(("owner" = [])),
    request_body = NewCredential,
    responses((status = 201, description = "Added (the secret is in the keychain)", body = CredentialMeta)))]
pub async fn add_credential(
    State(s): State<AppState>,
    _: Owner,
    Json(c): Json<NewCredential>,
) -> Result<(StatusCode, axum::Json<CredentialMeta>), ApiError> {
    let meta = s.engine.add_credential(&c.name, &c.scheme, &c.hosts, c.secret).await?;
    Ok((StatusCode::CREATED, axum::Json(meta)))
}

/// Removes a credential from the keychain and the database.
#[utoipa::path(delete, path = "/v1/credentials/{name}", tag = "credentials", operation_id = "remove_credential",
    security(("owner" = [])),
    params(("name" = String, Path, description = "The credential's name")),
    responses((status = 204, description = "Removed")))]
pub async fn remove_credential(
    State(s): State<AppState>,
    _: Owner,
    Path(name): Path<String>,
) -> Result<StatusCode, ApiError> {
    s.engine.remove_credential(&name).await?;
    Ok(StatusCode::NO_CONTENT)
}
