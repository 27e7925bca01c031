//! Decisions: owner only. An agent token gets 403 and the proposal is untouched.

use crate::AppState;
use crate::error::ApiError;
use crate::extract::{Json, Person};
use assent_core::engine::{BatchItem, BatchResult, GroupDecision};
use assent_core::{DecisionRequest, Proposal};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::Value;

/// Approve, reject or send back one proposal (the person only).
#[utoipa::path(post, path = "/v1/proposals/{id}/decision", tag = "decisions", operation_id = "decide",
    security(("owner" = [])),
    params(("id" = String, Path, description = "The proposal's id"), Person),
    request_body = DecisionRequest,
    responses((status = 200, description = "Decided; with `allow_similar`, the saved rule too", body = assent_core::engine::Decided)))]
pub async fn decide(
    State(s): State<AppState>,
    Person(actor): Person,
    Path(id): Path<String>,
    Json(req): Json<DecisionRequest>,
) -> Result<axum::Json<assent_core::engine::Decided>, ApiError> {
    Ok(axum::Json(s.engine.decide_one(&actor, &id, req).await?))
}

// Described by its derive; read by `Batch::read`, which tells the two apart by the `items` key
// (serde's untagged buffering would take arrays for objects, out of `strict`'s reach).
/// Body of `POST /v1/decisions`: a list of items, or a whole group.
#[derive(utoipa::ToSchema)]
#[serde(untagged)]
pub enum Batch {
    /// Each item stands alone.
    Items {
        /// The decisions.
        #[schema(min_items = 1, max_items = 1000)]
        items: Vec<BatchItem>,
    },
    /// Every pending proposal of the group, all or nothing.
    Group(GroupDecision),
}

impl Batch {
    fn read(body: Value) -> Result<Self, serde_json::Error> {
        #[derive(Deserialize)]
        struct Items {
            items: Vec<BatchItem>,
        }
        match &body {
            Value::Object(m) if m.contains_key("items") => {
                assent_core::strict::from_value::<Items>(body).map(|i| Batch::Items { items: i.items })
            }
            _ => assent_core::strict::from_value(body).map(Batch::Group),
        }
    }
}

const MAX_ITEMS: usize = 1000;

/// Decide several proposals (each stands alone), or every pending proposal of a group (all or
/// nothing).
#[utoipa::path(post, path = "/v1/decisions", tag = "decisions", operation_id = "decide_many",
    security(("owner" = [])),
    params(Person),
    request_body = Batch,
    responses((status = 200, description = "What happened to each", body = BatchResult)))]
pub async fn batch(
    State(s): State<AppState>,
    Person(actor): Person,
    Json(body): Json<Value>,
) -> Result<axum::Json<BatchResult>, ApiError> {
    let batch = Batch::read(body).map_err(|e| {
        ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_request",
            format!("{e}; send {{\"items\": [{{\"id\", \"outcome\", \"reason\"?, \"feedback\"?, \"edits\"?, \"allow_similar\"?}}]}} or {{\"group_id\", \"outcome\", \"reason\"?, \"feedback\"?}}"),
        )
    })?;
    let result = match batch {
        Batch::Items { items } if items.is_empty() || items.len() > MAX_ITEMS => {
            return Err(ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "invalid_request",
                format!("send 1 to {MAX_ITEMS} items"),
            ));
        }
        Batch::Items { items } => s.engine.decide_batch(&actor, items).await?,
        Batch::Group(g) => s.engine.decide_group(&actor, g).await?,
    };
    Ok(axum::Json(result))
}

/// A failed write proposed again: a new proposal that supersedes it, pending a new decision.
#[utoipa::path(post, path = "/v1/proposals/{id}/retry", tag = "decisions", operation_id = "retry",
    security(("owner" = [])),
    params(("id" = String, Path, description = "The failed proposal's id"), Person),
    responses((status = 201, description = "The new proposal", body = Proposal)))]
pub async fn retry(
    State(s): State<AppState>,
    Person(actor): Person,
    Path(id): Path<String>,
) -> Result<(StatusCode, axum::Json<Proposal>), ApiError> {
    Ok((StatusCode::CREATED, axum::Json(s.engine.retry(&actor, &id).await?)))
}
