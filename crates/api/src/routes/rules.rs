//! Rules: the person's only. An agent token gets 403 on every route here, so an agent can
//! neither read nor infer the rules beyond what its own proposals' decisions say.

use super::decisions::owner_actor;
use crate::AppState;
use crate::error::ApiError;
use crate::extract::{Json, Owner, Query};
use assent_core::engine::rules::{NewRule, RuleList, Similar, Verdict};
use assent_core::rules::Rule;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde_json::Value;

/// `GET /v1/rules`: every rule, oldest first, with how many proposals it matched and how many
/// of the latest 10,000 it would have matched.
pub async fn list(State(s): State<AppState>, _: Owner) -> Result<axum::Json<RuleList>, ApiError> {
    Ok(axum::Json(s.engine.rules().await?))
}

/// `POST /v1/rules` -> 201 with the rule, its `id` and `description` (it in plain words).
pub async fn add(
    State(s): State<AppState>,
    _: Owner,
    headers: axum::http::HeaderMap,
    Json(req): Json<NewRule>,
) -> Result<(StatusCode, axum::Json<Rule>), ApiError> {
    Ok((StatusCode::CREATED, axum::Json(s.engine.add_rule(&owner_actor(&headers), req).await?)))
}

/// `DELETE /v1/rules/{id}`
pub async fn remove(
    State(s): State<AppState>,
    _: Owner,
    headers: axum::http::HeaderMap,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    s.engine.remove_rule(&owner_actor(&headers), &id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `POST /v1/rules/test` with a proposal body (and `agent`, `default` when left out) ->
/// `{"effect", "rule"}`, `rule` null when no rule matches. Nothing is stored.
pub async fn test(
    State(s): State<AppState>,
    _: Owner,
    Json(mut body): Json<Value>,
) -> Result<axum::Json<Verdict>, ApiError> {
    let agent = match body.as_object_mut().and_then(|m| m.remove("agent")) {
        None => "default".to_string(),
        Some(Value::String(a)) => a,
        Some(_) => {
            return Err(ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "invalid_request",
                "`agent` is an agent's name",
            ));
        }
    };
    Ok(axum::Json(s.engine.test_rules(&agent, body).await?))
}

/// `GET /v1/proposals/{id}/similar`: the rule "approve and allow similar" would save, in
/// words, before anything is saved.
pub async fn similar(
    State(s): State<AppState>,
    _: Owner,
    Path(id): Path<String>,
) -> Result<axum::Json<Similar>, ApiError> {
    Ok(axum::Json(s.engine.similar(&id).await?))
}

/// `GET /v1/rules/log?after=SEQ&limit=N`: every rule added or removed, in order (for export).
pub async fn log(
    State(s): State<AppState>,
    _: Owner,
    Query(q): Query<super::LogQuery>,
) -> Result<axum::Json<Value>, ApiError> {
    let (after, limit) = q.range();
    let items = s.engine.rule_log_after(after, limit).await?;
    Ok(axum::Json(super::log_page(items, limit, |e| e.seq)))
}
