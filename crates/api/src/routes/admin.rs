//! Owner administration: agents and the audit export.

use crate::AppState;
use crate::error::ApiError;
use crate::extract::{Json, Owner, Query};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::{Value, json};

/// `GET /v1/agents`
pub async fn list_agents(State(s): State<AppState>, _: Owner) -> Result<axum::Json<Value>, ApiError> {
    Ok(axum::Json(json!({ "items": s.engine.agents().await? })))
}

/// Body of `POST /v1/agents`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewAgent {
    name: String,
    /// Give a revoked agent's name a new token.
    #[serde(default)]
    reuse: bool,
}

/// `POST /v1/agents`: the token is in this response and nowhere else, ever.
pub async fn add_agent(
    State(s): State<AppState>,
    _: Owner,
    Json(a): Json<NewAgent>,
) -> Result<(StatusCode, axum::Json<Value>), ApiError> {
    let token = s.engine.add_agent_with(&a.name, a.reuse).await?;
    Ok((StatusCode::CREATED, axum::Json(json!({ "name": a.name, "token": token }))))
}

/// `DELETE /v1/agents/{name}`
pub async fn revoke_agent(
    State(s): State<AppState>,
    _: Owner,
    Path(name): Path<String>,
) -> Result<StatusCode, ApiError> {
    s.engine.revoke_agent(&name).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `GET /v1/audit?after=SEQ&limit=N`: the audit log in order, for export.
pub async fn audit(
    State(s): State<AppState>,
    _: Owner,
    Query(q): Query<super::LogQuery>,
) -> Result<axum::Json<Value>, ApiError> {
    let (after, limit) = q.range();
    let items = s.engine.audit_after(after, limit).await?;
    Ok(axum::Json(super::log_page(items, limit, |e| e.seq)))
}

/// `GET /v1/credentials`: metadata only.
pub async fn list_credentials(State(s): State<AppState>, _: Owner) -> Result<axum::Json<Value>, ApiError> {
    let items: Vec<_> = s.engine.credential_map().values().cloned().collect();
    Ok(axum::Json(json!({ "items": items })))
}

/// Body of `POST /v1/credentials`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewCredential {
    name: String,
    #[serde(default = "bearer")]
    scheme: String,
    hosts: Vec<String>,
    secret: String,
}

fn bearer() -> String {
    "bearer".into()
}

/// `POST /v1/credentials`: the secret goes straight to the keychain and is never returned.
pub async fn add_credential(
    State(s): State<AppState>,
    _: Owner,
    Json(c): Json<NewCredential>,
) -> Result<(StatusCode, axum::Json<Value>), ApiError> {
    let meta = s.engine.add_credential(&c.name, &c.scheme, &c.hosts, c.secret).await?;
    Ok((StatusCode::CREATED, axum::Json(json!(meta))))
}

/// `DELETE /v1/credentials/{name}`: from the keychain and the database.
pub async fn remove_credential(
    State(s): State<AppState>,
    _: Owner,
    Path(name): Path<String>,
) -> Result<StatusCode, ApiError> {
    s.engine.remove_credential(&name).await?;
    Ok(StatusCode::NO_CONTENT)
}
