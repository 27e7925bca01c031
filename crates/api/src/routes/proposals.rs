//! Proposals: create, read (with long-poll), list, withdraw, audit trail.

use crate::AppState;
use crate::error::ApiError;
use crate::extract::{Caller, Json, Query};
use assent_core::store::ListQuery;
use assent_core::{NewProposal, Principal, Proposal, Status};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use std::time::Duration;

/// Propose a write. The `Idempotency-Key` header makes a retry safe: the same key and body
/// return the same proposal (200); another body under the same key is 409.
#[utoipa::path(post, path = "/v1/proposals", tag = "proposals", operation_id = "propose",
    security(("agent" = [])),
    params(("Idempotency-Key" = Option<String>, Header, pattern = "^[!-~]{1,200}$",
        description = "1 to 200 visible ASCII characters; the same key and body return the same proposal")),
    request_body = assent_core::NewProposal,
    responses(
        (status = 201, description = "Filed (pending, or decided at once by a rule)", body = Proposal,
            headers(("Location" = String, description = "The proposal's address"))),
        (status = 200, description = "The proposal this idempotency key already made", body = Proposal,
            headers(("Location" = String, description = "The proposal's address"))),
    ))]
pub async fn create(
    State(s): State<AppState>,
    Caller(who): Caller,
    headers: HeaderMap,
    Json(req): Json<NewProposal>,
) -> Result<Response, ApiError> {
    let Principal::Agent(agent) = who else {
        return Err(ApiError::forbidden("proposals are made by agents: use an agent token, not the owner credential"));
    };
    let out = s.engine.propose(&agent, req, idempotency_key(&headers)?).await?;
    let status = if out.created { StatusCode::CREATED } else { StatusCode::OK };
    let mut res = (status, axum::Json(&out.proposal)).into_response();
    if let Ok(loc) = HeaderValue::from_str(&format!("/v1/proposals/{}", out.proposal.id)) {
        res.headers_mut().insert(header::LOCATION, loc);
    }
    Ok(res)
}

/// The request's `Idempotency-Key`, if any.
pub(crate) fn idempotency_key(headers: &HeaderMap) -> Result<Option<&str>, ApiError> {
    match headers.get("idempotency-key") {
        None => Ok(None),
        Some(v) => v.to_str().map(Some).map_err(|_| {
            ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "invalid_idempotency_key",
                "the Idempotency-Key must be visible ASCII",
            )
        }),
    }
}

/// Query of `GET /v1/proposals/{id}`.
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct GetQuery {
    /// Seconds to wait for the proposal to settle (more than the server's maximum, 120, waits
    /// that long).
    #[param(schema_with = crate::extract::count_schema)]
    wait: Option<crate::extract::Count>,
    /// With `wait`, what the wait's connection lost before its answer means: `keep` (the
    /// default) only ends the wait, and the proposal's lease runs from then; `withdraw`
    /// withdraws the agent's proposal at once, for a waiter that will not come back (a hook).
    #[param(inline)]
    lost: Option<Lost>,
}

/// What a wait's lost connection means (`GET /v1/proposals/{id}?wait=N&lost=`).
#[derive(Deserialize, utoipa::ToSchema, Clone, Copy)]
#[serde(rename_all = "lowercase")]
pub enum Lost {
    /// The wait ends; the proposal stays, its lease running.
    Keep,
    /// The agent's proposal is withdrawn at once.
    Withdraw,
}

/// A proposal; with `wait`, answered as soon as it is settled (or when the wait ends).
#[utoipa::path(get, path = "/v1/proposals/{id}", tag = "proposals", operation_id = "get_proposal",
    security(("agent" = []), ("owner" = [])),
    params(("id" = String, Path, description = "The proposal's id"), GetQuery),
    responses((status = 200, description = "The proposal (an agent sees only its own)", body = Proposal)))]
pub async fn get(
    State(s): State<AppState>,
    Caller(who): Caller,
    Path(id): Path<String>,
    Query(q): Query<GetQuery>,
) -> Result<axum::Json<Proposal>, ApiError> {
    let p = match q.wait {
        Some(crate::extract::Count(secs)) if secs > 0 => {
            let on_lost = match q.lost {
                Some(Lost::Withdraw) => assent_core::engine::OnLost::Withdraw,
                Some(Lost::Keep) | None => assent_core::engine::OnLost::Keep,
            };
            s.engine.wait_then(&who, &id, Duration::from_secs(secs), on_lost).await?
        }
        _ => Box::pin(s.engine.get(&who, &id)).await?,
    };
    Ok(axum::Json(p))
}

/// Query of `GET /v1/proposals`.
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListParams {
    /// Only proposals in this status (empty: any).
    #[param(schema_with = status_filter)]
    status: Option<String>,
    /// Only this batch.
    group_id: Option<String>,
    /// Only this agent's (the owner only; an agent sees its own).
    agent: Option<String>,
    /// Only this kind.
    kind: Option<String>,
    /// Only those this node (Assent server) received, on a team store (the owner only).
    node: Option<String>,
    /// How many (50 when left out; 0 counts as 1, and more than 500 as 500).
    #[param(schema_with = crate::extract::count_schema)]
    limit: Option<crate::extract::Count>,
    /// The `next_cursor` of the page before (a position: digits; empty: the first page).
    #[param(pattern = "^([1-9][0-9]{0,17})?$")]
    cursor: Option<String>,
    /// Words to find in the title, summary, agent, kind or payload.
    q: Option<String>,
    /// Only the revisions of this proposal.
    supersedes: Option<String>,
    /// Only this session's (the `session_id` the agent gave).
    session_id: Option<String>,
}

/// A status, or empty for any.
fn status_filter() -> utoipa::openapi::Object {
    let names = Status::ALL.iter().map(|s| s.as_str()).chain([""]);
    utoipa::openapi::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::String)
        .enum_values(Some(names))
        .build()
}

/// Proposals, newest first, a page at a time.
#[utoipa::path(get, path = "/v1/proposals", tag = "proposals", operation_id = "list_proposals",
    security(("agent" = []), ("owner" = [])),
    params(ListParams),
    responses((status = 200, description = "A page; `next_cursor` asks for the next", body = assent_core::Page)))]
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
        session_id: p.session_id.filter(|s| !s.is_empty()),
        node: p.node.filter(|n| !n.is_empty()),
        before: None,
        limit: p.limit.map_or(50, |c| c.0.min(500) as u32),
    };
    Ok(axum::Json(s.engine.list(&who, q, p.cursor.as_deref()).await?))
}

/// The agent takes back its own pending proposal.
#[utoipa::path(delete, path = "/v1/proposals/{id}", tag = "proposals", operation_id = "withdraw",
    security(("agent" = [])),
    params(("id" = String, Path, description = "The proposal's id")),
    responses((status = 200, description = "Withdrawn", body = Proposal)))]
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

/// A proposal's audit trail.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct AuditTrail {
    /// Oldest first.
    pub items: Vec<assent_core::AuditEntry>,
}

/// A proposal's audit trail, oldest first.
#[utoipa::path(get, path = "/v1/proposals/{id}/audit", tag = "proposals", operation_id = "proposal_audit",
    security(("agent" = []), ("owner" = [])),
    params(("id" = String, Path, description = "The proposal's id")),
    responses((status = 200, description = "Every change of the proposal, oldest first", body = AuditTrail)))]
pub async fn audit(
    State(s): State<AppState>,
    Caller(who): Caller,
    Path(id): Path<String>,
) -> Result<axum::Json<AuditTrail>, ApiError> {
    let items = s.engine.audit_of(&who, &id).await?;
    Ok(axum::Json(AuditTrail { items }))
}
