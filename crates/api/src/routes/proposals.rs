//! Proposals: create, read (with long-poll), list, withdraw, audit trail.

use crate::AppState;
use crate::error::ApiError;
use crate::extract::{Caller, Json, Query};
use assent_core::store::ListQuery;
use assent_core::{Principal, Proposal, Status};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::Value;
use std::time::Duration;

/// `POST /v1/proposals`
pub async fn create(
    State(s): State<AppState>,
    Caller(who): Caller,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Result<Response, ApiError> {
    let Principal::Agent(agent) = who else {
        return Err(ApiError::forbidden("proposals are made by agents: use an agent token, not the owner credential"));
    };
    let key = match headers.get("idempotency-key") {
        None => None,
        Some(v) => Some(v.to_str().map_err(|_| {
            ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "invalid_idempotency_key",
                "the Idempotency-Key must be visible ASCII",
            )
        })?),
    };
    let out = s.engine.propose(&agent, body, key).await?;
    let status = if out.created { StatusCode::CREATED } else { StatusCode::OK };
    let mut res = (status, axum::Json(&out.proposal)).into_response();
    if let Ok(loc) = HeaderValue::from_str(&format!("/v1/proposals/{}", out.proposal.id)) {
        res.headers_mut().insert(header::LOCATION, loc);
    }
    Ok(res)
}

/// Query of `GET /v1/proposals/{id}`.
#[derive(Deserialize)]
pub struct GetQuery {
    /// Seconds to wait for the proposal to settle (clamped to the server's maximum, 120).
    wait: Option<u64>,
}

/// `GET /v1/proposals/{id}[?wait=SECONDS]`
pub async fn get(
    State(s): State<AppState>,
    Caller(who): Caller,
    Path(id): Path<String>,
    Query(q): Query<GetQuery>,
) -> Result<axum::Json<Proposal>, ApiError> {
    let p = match q.wait {
        Some(secs) if secs > 0 => s.engine.wait(&who, &id, Duration::from_secs(secs)).await?,
        _ => Box::pin(s.engine.get(&who, &id)).await?,
    };
    Ok(axum::Json(p))
}

/// Query of `GET /v1/proposals`.
#[derive(Deserialize)]
pub struct ListParams {
    status: Option<String>,
    group_id: Option<String>,
    agent: Option<String>,
    kind: Option<String>,
    limit: Option<u32>,
    cursor: Option<String>,
    q: Option<String>,
    supersedes: Option<String>,
}

/// `GET /v1/proposals?status=&group_id=&agent=&kind=&limit=&cursor=`
pub async fn list(
    State(s): State<AppState>,
    Caller(who): Caller,
    Query(p): Query<ListParams>,
) -> Result<axum::Json<assent_core::Page>, ApiError> {
    let status = match p.status.as_deref() {
        None | Some("") => None,
        Some(st) => Some(
            st.parse::<Status>().map_err(|e| ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid_field", e))?,
        ),
    };
    let q = ListQuery {
        status,
        group_id: p.group_id.filter(|g| !g.is_empty()),
        agent: p.agent.filter(|a| !a.is_empty()),
        kind: p.kind.filter(|k| !k.is_empty()),
        text: p.q.filter(|t| !t.trim().is_empty()),
        supersedes: p.supersedes.filter(|s| !s.is_empty()),
        before: None,
        limit: p.limit.unwrap_or(50),
    };
    Ok(axum::Json(s.engine.list(&who, q, p.cursor.as_deref()).await?))
}

/// `DELETE /v1/proposals/{id}`: the agent withdraws its own pending proposal.
pub async fn withdraw(
    State(s): State<AppState>,
    Caller(who): Caller,
    Path(id): Path<String>,
) -> Result<axum::Json<Proposal>, ApiError> {
    let Principal::Agent(agent) = who else {
        return Err(ApiError::forbidden(
            "only the agent that proposed it can withdraw a proposal; the owner rejects instead",
        ));
    };
    Ok(axum::Json(s.engine.withdraw(&agent, &id).await?))
}

/// `GET /v1/proposals/{id}/audit`
pub async fn audit(
    State(s): State<AppState>,
    Caller(who): Caller,
    Path(id): Path<String>,
) -> Result<axum::Json<Value>, ApiError> {
    let entries = s.engine.audit_of(&who, &id).await?;
    Ok(axum::Json(serde_json::json!({ "items": entries })))
}
