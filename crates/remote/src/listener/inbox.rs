//! The inbox as the phone reads it: the list (rows, not whole proposals), one proposal (whole
//! with its history, or as a row), and the live events, each ending with the session.

use super::fail::Fail;
use super::{Listener, Session, cookie, light, no_store};
use assent_core::light::Listed;
use assent_core::proposal::{AuditEntry, Proposal};
use assent_core::store::ListQuery;
use assent_core::time::Timestamp;
use assent_core::{Principal, Status};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::sync::Arc;

/// A proposal as the phone shows it: with the hash of its payload, which a decision on it
/// names.
#[derive(Serialize)]
struct Shown2 {
    #[serde(flatten)]
    proposal: Proposal,
    payload_sha256: String,
}

fn shown(p: Proposal) -> Shown2 {
    Shown2 { payload_sha256: p.payload.sha256(), proposal: p }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ListAsk {
    status: Option<Status>,
    cursor: Option<String>,
    limit: Option<u32>,
    /// Only this kind.
    kind: Option<String>,
    /// Only this agent's.
    agent: Option<String>,
    /// Words to find (as the agent API's `q`).
    q: Option<String>,
}

pub(super) async fn list(
    State(l): State<Arc<Listener>>,
    _: Session,
    q: Result<Query<ListAsk>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, Fail> {
    let Query(q) = q.map_err(|e| Fail::new(StatusCode::BAD_REQUEST, "invalid_query", e.body_text()))?;
    let some = |s: Option<String>| s.filter(|s| !s.trim().is_empty());
    let query = ListQuery {
        status: q.status,
        limit: q.limit.unwrap_or(50),
        kind: some(q.kind),
        agent: some(q.agent),
        text: some(q.q),
        ..ListQuery::default()
    };
    // Rows, not whole proposals (made without reading any payload): a phone opens the one it
    // wants.
    let (rows, next_cursor) = l.engine.list_rows(&Principal::Owner, query, q.cursor.as_deref()).await?;
    let items: Vec<serde_json::Value> = rows.into_iter().map(row).collect();
    Ok(no_store(axum::Json(json!({ "items": items, "next_cursor": next_cursor }))))
}

/// How one proposal is asked for: whole with its history (opened), or as a row of the list
/// (`view=row`: what the list shows when a proposal arrives or changes while the page is open).
#[derive(Deserialize)]
pub(super) struct ShowAsk {
    view: Option<String>,
}

pub(super) async fn show(
    State(l): State<Arc<Listener>>,
    _: Session,
    Path(id): Path<String>,
    q: Result<Query<ShowAsk>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, Fail> {
    let Query(q) = q.map_err(|e| Fail::new(StatusCode::BAD_REQUEST, "invalid_query", e.body_text()))?;
    match q.view.as_deref() {
        None => {
            let p = l.engine.get(&Principal::Owner, &id).await?;
            let audit: Vec<AuditEntry> = l.engine.audit_of(&Principal::Owner, &id).await?;
            Ok(no_store(axum::Json(json!({ "proposal": shown(p), "audit": audit }))))
        }
        // As the list has it, from the stored gist (the page asks at every change it hears of).
        Some("row") => Ok(no_store(axum::Json(json!({ "proposal": row(l.engine.row(&id).await?) })))),
        Some(_) => Err(Fail::new(StatusCode::BAD_REQUEST, "invalid_query", "view is `row` or absent")),
    }
}

/// A proposal as a row of the phone's list (see [`light`]).
fn row(l: Listed) -> serde_json::Value {
    light::row(serde_json::to_value(l.proposal).unwrap_or_default(), l.gist)
}

pub(super) async fn events(
    State(l): State<Arc<Listener>>,
    s: Session,
    headers: HeaderMap,
) -> Sse<impl futures_util::Stream<Item = Result<SseEvent, std::convert::Infallible>>> {
    let token = cookie(&headers).unwrap_or_default().to_string();
    let rx = l.engine.subscribe();
    let device = s.device;
    // Ends when the session does (revoked, expired, logged out, the listener turned off),
    // checked at each event and every 15 seconds.
    let stream = futures_util::stream::unfold((rx, l, token, device), |(mut rx, l, token, device)| async move {
        loop {
            let next = tokio::time::timeout(std::time::Duration::from_secs(15), rx.recv()).await;
            if !l.access().alive(&token, &device, Timestamp::now()) {
                return None;
            }
            let ev = match next {
                Err(_) => SseEvent::default().comment("alive"),
                Ok(Ok(e)) => {
                    if matches!(e, assent_core::events::Event::RulesChanged { .. }) {
                        continue;
                    }
                    let id = e.proposal().map(|p| p.id.clone()).unwrap_or_default();
                    let data = serde_json::to_string(&e).unwrap_or_default();
                    SseEvent::default().event(e.name()).id(id).data(data)
                }
                Ok(Err(tokio::sync::broadcast::error::RecvError::Lagged(n))) => {
                    SseEvent::default().event("lagged").data(format!("{{\"type\":\"lagged\",\"missed\":{n}}}"))
                }
                Ok(Err(tokio::sync::broadcast::error::RecvError::Closed)) => return None,
            };
            return Some((Ok(ev), (rx, l, token, device)));
        }
    });
    Sse::new(stream).keep_alive(KeepAlive::new().interval(std::time::Duration::from_secs(30)))
}
