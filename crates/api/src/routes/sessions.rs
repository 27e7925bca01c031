//! For agents that gather their writes before asking: several proposals in one call, and a
//! session's proposals counted by status.

use crate::AppState;
use crate::error::ApiError;
use crate::extract::{Caller, Json};
use assent_core::engine::{ProposedBatch, SessionCounts};
use assent_core::{NewProposal, Principal};
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use serde_json::Value;

/// Body of `POST /v1/proposals/batch`.
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
pub struct NewBatch {
    /// 1 to 100 proposals, each as `POST /v1/proposals` takes it (a `NewProposal`; its
    /// `group_id` left out, or the batch's). Each item is checked on its own: one that is not a
    /// proposal Assent takes (any JSON value) is refused alone, in its `items[i].error`, and the
    /// others are filed.
    #[schema(min_items = 1, max_items = 100, value_type = Vec<serde_json::Value>)]
    items: Vec<NewProposal>,
    /// The group they are filed in (left out: a new one), decided together in the inbox.
    #[schema(min_length = 1, max_length = 200, pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$")]
    group_id: Option<String>,
}

/// Propose several writes at once: each item is checked and filed on its own (a refused item
/// files nothing and leaves the others), all in one group. With `Idempotency-Key`, item `i` is
/// filed under `KEY/i`, so a retried batch files nothing twice.
#[utoipa::path(post, path = "/v1/proposals/batch", tag = "proposals", operation_id = "propose_batch",
    security(("agent" = [])),
    params(("Idempotency-Key" = Option<String>, Header, pattern = "^[!-~]{1,190}$",
        description = "1 to 190 visible ASCII characters; item i is filed under KEY/i")),
    request_body = NewBatch,
    responses((status = 200, description = "Per item: the proposal, or why it was refused", body = ProposedBatch)))]
pub async fn batch(
    State(s): State<AppState>,
    Caller(who): Caller,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Result<axum::Json<ProposedBatch>, ApiError> {
    let Principal::Agent(agent) = who else {
        return Err(ApiError::forbidden("proposals are made by agents: use an agent token, not the owner credential"));
    };
    let key = super::proposals::idempotency_key(&headers)?;
    Ok(axum::Json(s.engine.propose_batch(&agent, body, key).await?))
}

/// A session's proposals by status: an agent's own, or every agent's for the owner. `pending`
/// says how many it still waits on.
#[utoipa::path(get, path = "/v1/sessions/{session_id}", tag = "proposals", operation_id = "session_counts",
    security(("agent" = []), ("owner" = [])),
    params(("session_id" = String, Path, description = "The `session_id` the proposals were filed with")),
    responses((status = 200, description = "The counts", body = SessionCounts)))]
pub async fn counts(
    State(s): State<AppState>,
    Caller(who): Caller,
    Path(session_id): Path<String>,
) -> Result<axum::Json<SessionCounts>, ApiError> {
    Ok(axum::Json(s.engine.session(&who, &session_id).await?))
}
