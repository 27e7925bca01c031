//! Rules: the person's only. An agent token gets 403 on every route here, so an agent can
//! neither read nor infer the rules beyond what its own proposals' decisions say.

use crate::AppState;
use crate::error::ApiError;
use crate::extract::{Json, Owner, Person, Query};
use assent_core::engine::rules::{NewRule, RuleList, Similar, Verdict};
use assent_core::proposal::NewProposal;
use assent_core::rules::{Rule, RuleLogEntry};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde_json::Value;

/// The rules, oldest first, a page at a time (`next_after` names the next), each with how many
/// proposals it matched, how many of the latest 10,000 it would have matched, and how many
/// prompts it saved this week.
#[utoipa::path(get, path = "/v1/rules", tag = "rules", operation_id = "list_rules",
    security(("owner" = [])),
    params(super::RulePageQuery),
    responses((status = 200, description = "A page of the rules", body = RuleList)))]
pub async fn list(
    State(s): State<AppState>,
    _: Owner,
    Query(q): Query<super::RulePageQuery>,
) -> Result<axum::Json<RuleList>, ApiError> {
    Ok(axum::Json(s.engine.rules(q.after, q.limit.map(|c| c.0.min(u64::from(u32::MAX)) as u32)).await?))
}

/// Adds a rule; the answer has its `id` and `description` (it in plain words).
#[utoipa::path(post, path = "/v1/rules", tag = "rules", operation_id = "add_rule",
    security(("owner" = [])),
    params(Person),
    request_body = NewRule,
    responses((status = 201, description = "Added", body = Rule)))]
pub async fn add(
    State(s): State<AppState>,
    Person(actor): Person,
    Json(req): Json<NewRule>,
) -> Result<(StatusCode, axum::Json<Rule>), ApiError> {
    Ok((StatusCode::CREATED, axum::Json(s.engine.add_rule(&actor, req).await?)))
}

/// Removes a rule.
#[utoipa::path(delete, path = "/v1/rules/{id}", tag = "rules", operation_id = "remove_rule",
    security(("owner" = [])),
    params(("id" = String, Path, description = "The rule's id"),
        Person),
    responses((status = 204, description = "Removed")))]
pub async fn remove(
    State(s): State<AppState>,
    Person(actor): Person,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    s.engine.remove_rule(&actor, &id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// A proposal body, and the agent that would send it.
#[derive(serde::Deserialize, utoipa::ToSchema)]
pub struct RuleTest {
    /// The agent (`default` when left out).
    #[serde(default)]
    pub agent: Option<String>,
    /// The proposal, as the agent would send it.
    #[serde(flatten)]
    pub proposal: assent_core::NewProposal,
}

/// What the rules would say about a proposal; nothing is filed.
#[utoipa::path(post, path = "/v1/rules/test", tag = "rules", operation_id = "test_rules",
    security(("owner" = [])),
    request_body = RuleTest,
    responses((status = 200, description = "The effect and the deciding rule (`rule` null when none matches)", body = Verdict)))]
pub async fn test(
    State(s): State<AppState>,
    _: Owner,
    Json(mut body): Json<Value>,
) -> Result<axum::Json<Verdict>, ApiError> {
    let agent = match body.as_object_mut().and_then(|m| m.remove("agent")) {
        None | Some(Value::Null) => "default".to_string(),
        Some(Value::String(a)) => a,
        Some(_) => {
            return Err(ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "invalid_request",
                "`agent` is an agent's name",
            ));
        }
    };
    Ok(axum::Json(s.engine.test_rules(&agent, NewProposal::read(body)?).await?))
}

/// The rule "approve and allow similar" would save, in words, before anything is saved.
#[utoipa::path(get, path = "/v1/proposals/{id}/similar", tag = "rules", operation_id = "similar_rule",
    security(("owner" = [])),
    params(("id" = String, Path, description = "The proposal's id")),
    responses((status = 200, description = "The rule it would save", body = Similar)))]
pub async fn similar(
    State(s): State<AppState>,
    _: Owner,
    Path(id): Path<String>,
) -> Result<axum::Json<Similar>, ApiError> {
    Ok(axum::Json(s.engine.similar(&id).await?))
}

/// A page of the rule log.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct RuleLogPage {
    /// In order.
    pub items: Vec<RuleLogEntry>,
    /// When the page is full: the `after` to ask for next.
    pub next_after: Option<i64>,
}

/// Every rule added or removed, in order, a page at a time (for export).
#[utoipa::path(get, path = "/v1/rules/log", tag = "rules", operation_id = "rule_log",
    security(("owner" = [])),
    params(super::LogQuery),
    responses((status = 200, description = "A page of the log", body = RuleLogPage)))]
pub async fn log(
    State(s): State<AppState>,
    _: Owner,
    Query(q): Query<super::LogQuery>,
) -> Result<axum::Json<RuleLogPage>, ApiError> {
    let (after, limit) = q.range();
    let items = s.engine.rule_log_after(after, limit).await?;
    let next_after = super::next_after(&items, limit, |e| e.seq);
    Ok(axum::Json(RuleLogPage { items, next_after }))
}
