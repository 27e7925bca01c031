//! The remote listener's front door, before any route: it answers only its configured origin.
//!
//! - The `Host` must be the origin's host and port (a request another name points at this port,
//!   as in DNS rebinding, is 421 `wrong_host`).
//! - Anything but a read must carry that exact `Origin` (403 `origin_required` or
//!   `wrong_origin`), so a page on another site cannot post here with the phone's cookie.
//! - An `Authorization` header is 401 `remote_takes_no_tokens`: neither an agent's token nor
//!   the owner's opens anything here; only a paired phone's passkey does.
//! - A body over [`MAX_BODY`] is 413 (a decision's routes take up to [`MAX_DECISION_BODY`], and
//!   only from a session), and any path the page does not serve is 404 `not_found`, each as
//!   `{"error": {"code", "message"}}`.
//!
//! Each refusal but a 404 is written to the remote log (`front_refused`, with its code), at most
//! [`LOGGED_PER_MINUTE`] a minute: past that they are counted, and the next one logged says
//! how many were not.

use crate::RemoteError;
use axum::Router;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use serde_json::json;
use std::sync::Arc;

/// The largest request body the page sends but for a decision (an assertion, a device's name, a
/// push subscription): what anyone who reaches the listener can make it hold, per connection.
pub const MAX_BODY: usize = 256 * 1024;

/// The largest decision the page sends, on the routes that read a session first: it carries the
/// person's edit of a proposal, whose payload the agent API took up to 4 MiB, and JSON's escapes
/// lengthen text (a file of 3 MiB was refused at 2 MiB).
pub const MAX_DECISION_BODY: usize = 10 * 1024 * 1024;

/// Most refusals at the door written to the remote log in a minute.
pub const LOGGED_PER_MINUTE: u32 = 60;

/// Where the door's refusals are written: the remote log, at a bounded rate.
struct Log {
    engine: assent_core::Engine,
    /// The minute counted, how many were logged in it, and how many were not since the last
    /// one that was.
    tally: std::sync::Mutex<(i64, u32, u64)>,
}

impl Log {
    async fn refused(&self, code: &str) {
        let now = assent_core::time::Timestamp::now();
        let unlogged = {
            let mut t = self.tally.lock().unwrap_or_else(|e| e.into_inner());
            let minute = now.0 / 60_000;
            if t.0 != minute {
                (t.0, t.1) = (minute, 0);
            }
            if t.1 >= LOGGED_PER_MINUTE {
                t.2 += 1;
                return;
            }
            t.1 += 1;
            std::mem::take(&mut t.2)
        };
        let mut detail = json!({ "code": code });
        if unlogged > 0 {
            detail["unlogged_before"] = json!(unlogged);
        }
        self.engine.remote_log("", "front_refused", now, Some(detail)).await;
    }
}

/// The door's state: the origin it answers, and where its refusals go.
struct Door {
    front: Front,
    log: Option<Log>,
}

/// The configured origin, as requests must name it.
#[derive(Debug, Clone)]
pub struct Front {
    /// `scheme://host[:port]`, as a browser sends it in `Origin`.
    origin: String,
    host: String,
    port: u16,
}

impl Front {
    /// The front door of `origin` (`https://HOST[:PORT]`, or `http://localhost:PORT`).
    pub fn new(origin: &str) -> Result<Self, RemoteError> {
        let url = crate::checked_origin(origin)?;
        let bad = || RemoteError::Origin(origin.to_string());
        let host = url.host_str().ok_or_else(bad)?.to_ascii_lowercase();
        let port = url.port_or_known_default().ok_or_else(bad)?;
        Ok(Self { origin: url.origin().ascii_serialization(), host, port })
    }

    /// Whether `value` (a `Host` header) names this origin: its host, and its port or none for
    /// the scheme's own.
    fn is_host(&self, value: &str) -> bool {
        let value = value.to_ascii_lowercase();
        let (name, port) = match value.rsplit_once(':') {
            Some((n, p)) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => (n, p.parse::<u16>().ok()),
            _ => (value.as_str(), Some(if self.origin.starts_with("https:") { 443 } else { 80 })),
        };
        name == self.host && port == Some(self.port)
    }

    /// `router`, behind this door.
    pub fn guard(self, router: Router) -> Router {
        self.guarded(router, None)
    }

    /// `router`, behind this door, its refusals written to `engine`'s remote log.
    pub fn guard_logged(self, router: Router, engine: assent_core::Engine) -> Router {
        self.guarded(router, Some(Log { engine, tally: Default::default() }))
    }

    fn guarded(self, router: Router, log: Option<Log>) -> Router {
        router
            .fallback(|| async { refuse(StatusCode::NOT_FOUND, "not_found", "nothing here") })
            .method_not_allowed_fallback(|| async {
                refuse(StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed", "this path does not take that method")
            })
            .layer(middleware::from_fn_with_state(Arc::new(Door { front: self, log }), door))
            .layer(DefaultBodyLimit::max(MAX_BODY))
    }
}

fn refuse(status: StatusCode, code: &str, message: &str) -> Response {
    (status, axum::Json(json!({ "error": { "code": code, "message": message } }))).into_response()
}

fn one(headers: &HeaderMap, name: header::HeaderName) -> Option<&str> {
    let mut all = headers.get_all(name).iter();
    match (all.next(), all.next()) {
        (Some(v), None) => v.to_str().ok(),
        _ => None,
    }
}

async fn door(State(d): State<Arc<Door>>, req: Request, next: Next) -> Response {
    let refused = match refusal(&d.front, &req) {
        Some(r) => r,
        None => {
            let response = next.run(req).await;
            if response.status() != StatusCode::PAYLOAD_TOO_LARGE {
                return response;
            }
            (StatusCode::PAYLOAD_TOO_LARGE, "body_too_large", "the body is larger than the page ever sends".to_string())
        }
    };
    let (status, code, message) = refused;
    if let Some(log) = &d.log {
        log.refused(code).await;
    }
    refuse(status, code, &message)
}

/// Why the door refuses `req` before any route, if it does.
fn refusal(front: &Front, req: &Request) -> Option<(StatusCode, &'static str, String)> {
    let headers = req.headers();
    if !one(headers, header::HOST).is_some_and(|h| front.is_host(h)) {
        let message = format!("this listener answers {} only", front.origin);
        return Some((StatusCode::MISDIRECTED_REQUEST, "wrong_host", message));
    }
    if headers.contains_key(header::AUTHORIZATION) {
        let message = "the remote listener takes no agent or owner token: only a paired device's passkey";
        return Some((StatusCode::UNAUTHORIZED, "remote_takes_no_tokens", message.into()));
    }
    if !matches!(*req.method(), Method::GET | Method::HEAD) {
        match one(headers, header::ORIGIN) {
            None => return Some((StatusCode::FORBIDDEN, "origin_required", "a change must say its Origin".into())),
            Some(o) if o != front.origin => {
                let message = format!("a change must come from {}", front.origin);
                return Some((StatusCode::FORBIDDEN, "wrong_origin", message));
            }
            Some(_) => {}
        }
    }
    None
}
