//! The API's one error type: a stable code, a status, and a message that never carries
//! internals (5xx details go to the log only).

use assent_core::CoreError;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// An error answered as `{"error": {"code", "message"}}`.
#[derive(Debug)]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// The stable code.
    pub code: &'static str,
    /// For people.
    pub message: String,
}

impl ApiError {
    /// Any error.
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self { status, code, message: message.into() }
    }

    /// 401: no or bad token.
    pub fn unauthorized() -> Self {
        Self::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "a valid token is required: send `Authorization: Bearer <token>`",
        )
    }

    /// 403.
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, "forbidden", message)
    }
}

/// Codes of a body that is well formed but names something that does not exist (a credential,
/// the proposal it revises, the file to delete): answered 404, like any other missing thing.
pub const NAMES_NOTHING: [&str; 3] = ["target_not_found", "unknown_credential", "unknown_supersedes"];

/// Codes of a decision made on another proposal than the one the person was shown: answered
/// 409, as any decision the proposal's state no longer allows.
pub const NOT_SHOWN: [&str; 1] = ["not_what_was_shown"];

impl From<CoreError> for ApiError {
    fn from(e: CoreError) -> Self {
        let status = match &e {
            CoreError::NotFound(_) => StatusCode::NOT_FOUND,
            CoreError::InvalidState { .. }
            | CoreError::IdempotencyConflict
            | CoreError::Conflict(_)
            | CoreError::RulesChanged => StatusCode::CONFLICT,
            // A decision for another proposal than the one the person was shown.
            e @ CoreError::Invalid { .. } if NOT_SHOWN.contains(&e.code()) => StatusCode::CONFLICT,
            // A well-formed body naming something that does not exist: the thing is not found.
            e @ CoreError::Invalid { .. } if NAMES_NOTHING.contains(&e.code()) => StatusCode::NOT_FOUND,
            CoreError::Invalid { .. } => StatusCode::UNPROCESSABLE_ENTITY,
            CoreError::Forbidden(_) => StatusCode::FORBIDDEN,
            CoreError::TooMany { .. } => StatusCode::TOO_MANY_REQUESTS,
            CoreError::Unavailable { .. } => StatusCode::SERVICE_UNAVAILABLE,
            CoreError::Store(assent_core::StoreError::Full) => StatusCode::INSUFFICIENT_STORAGE,
            CoreError::Store(assent_core::StoreError::Unavailable(_)) => StatusCode::SERVICE_UNAVAILABLE,
            CoreError::Store(_) => StatusCode::INTERNAL_SERVER_ERROR,
        };
        if status == StatusCode::INTERNAL_SERVER_ERROR {
            tracing::error!(error = %e, "internal error");
            return Self::new(status, "internal", "internal error; see the Assent log");
        }
        Self::new(status, e.code(), e.to_string())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({ "error": { "code": self.code, "message": self.message } });
        let mut res = (self.status, axum::Json(body)).into_response();
        if self.status == StatusCode::UNAUTHORIZED {
            res.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        res
    }
}
