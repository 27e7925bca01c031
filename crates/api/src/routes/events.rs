//! `GET /v1/events`: server-sent events of proposal changes (and, for the person, of rule
//! changes). Agents see only their own proposals'.

use crate::AppState;
use crate::extract::Caller;
use assent_core::Principal;
use axum::extract::State;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use futures_util::stream::Stream;
use std::convert::Infallible;
use std::time::Duration;
use tokio_stream::StreamExt;
use tokio_stream::wrappers::BroadcastStream;
use tokio_stream::wrappers::errors::BroadcastStreamRecvError;

/// Server-sent events: `proposal.created`, `proposal.updated` (an agent sees only its own
/// proposals'), `rules.changed` (the owner only) and `lagged` (events were missed: read again).
/// Each event's `data` is one JSON object.
#[utoipa::path(get, path = "/v1/events", tag = "proposals", operation_id = "events",
    security(("agent" = []), ("owner" = [])),
    responses((status = 200, description = "A stream of events; a comment every 15 s keeps it open",
        content_type = "text/event-stream", body = assent_core::events::Event)))]
pub async fn events(
    State(s): State<AppState>,
    Caller(who): Caller,
) -> Sse<impl Stream<Item = Result<SseEvent, Infallible>>> {
    let rx = s.engine.subscribe();
    let stream = BroadcastStream::new(rx).filter_map(move |item| match item {
        Ok(e) => {
            // An agent sees its own proposals' events and nothing else (never the rules).
            if let Principal::Agent(a) = &who
                && e.proposal().is_none_or(|p| !s.engine.belongs_to(a, p))
            {
                return None;
            }
            let id = match &e {
                assent_core::events::Event::RulesChanged { rule_id } => rule_id.clone(),
                _ => e.proposal().map(|p| p.id.clone()).unwrap_or_default(),
            };
            let data = serde_json::to_string(&e).unwrap_or_default();
            Some(Ok(SseEvent::default().event(e.name()).id(id).data(data)))
        }
        // A slow reader missed events: tell it to re-read what it cares about.
        Err(BroadcastStreamRecvError::Lagged(n)) => {
            Some(Ok(SseEvent::default().event("lagged").data(format!("{{\"type\":\"lagged\",\"missed\":{n}}}"))))
        }
    });
    Sse::new(stream).keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
}
