//! The listener's one error type and its JSON body extractor: every refusal answered as
//! `{"error": {"code", "message"}}` with a stable code.

use crate::RemoteError;
use crate::access::Refusal;
use assent_core::CoreError;
use assent_core::time::Timestamp;
use axum::extract::rejection::JsonRejection;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;
use webauthn_rs::prelude::WebauthnError;

/// An error answered as `{"error": {"code", "message"}}`.
#[derive(Debug)]
pub struct Fail {
    status: StatusCode,
    pub(super) code: &'static str,
    message: String,
    retry_after: Option<i64>,
}

impl Fail {
    pub(super) fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self { status, code, message: message.into(), retry_after: None }
    }
}

impl From<Refusal> for Fail {
    fn from(r: Refusal) -> Self {
        let (status, message) = match r {
            Refusal::UnknownCode => (StatusCode::FORBIDDEN, "this pairing code is not valid: make a new one".into()),
            Refusal::ExpiredCode => (StatusCode::FORBIDDEN, "this pairing code expired: make a new one".into()),
            Refusal::LockedOut { until } => (
                StatusCode::TOO_MANY_REQUESTS,
                format!("too many failed attempts: try again after {}", until.to_rfc3339()),
            ),
            Refusal::NoSession => (StatusCode::UNAUTHORIZED, "log in with your passkey first".into()),
            Refusal::UnknownNonce => {
                (StatusCode::FORBIDDEN, "this decision's challenge was used, expired or is not yours: try again".into())
            }
            Refusal::Busy => (StatusCode::SERVICE_UNAVAILABLE, "too many requests at once: try again shortly".into()),
        };
        let mut f = Fail::new(status, r.code(), message);
        if let Refusal::LockedOut { until } = r {
            f.retry_after = Some(((until.0 - Timestamp::now().0) / 1000).max(1));
        }
        f
    }
}

impl From<CoreError> for Fail {
    fn from(e: CoreError) -> Self {
        let status = match &e {
            CoreError::NotFound(_) => StatusCode::NOT_FOUND,
            CoreError::InvalidState { .. } | CoreError::Conflict(_) => StatusCode::CONFLICT,
            CoreError::Invalid { .. } => StatusCode::UNPROCESSABLE_ENTITY,
            CoreError::Forbidden(_) => StatusCode::FORBIDDEN,
            CoreError::TooMany { .. } => StatusCode::TOO_MANY_REQUESTS,
            _ => StatusCode::SERVICE_UNAVAILABLE,
        };
        if status == StatusCode::SERVICE_UNAVAILABLE {
            tracing::error!(error = %e, "remote listener");
            return Fail::new(status, "unavailable", "Assent cannot answer right now; see its log");
        }
        Fail::new(status, e.code(), e.to_string())
    }
}

/// What a passkey ceremony's failure is called.
pub(super) fn passkey_fail(e: &RemoteError) -> Fail {
    match e {
        RemoteError::Passkey(WebauthnError::CredentialNotFound) => Fail::new(
            StatusCode::FORBIDDEN,
            "unknown_device",
            "this passkey is not a paired device's (or it was revoked)",
        ),
        RemoteError::Passkey(WebauthnError::CredentialPossibleCompromise) => Fail::new(
            StatusCode::FORBIDDEN,
            "authenticator_cloned",
            "this passkey's signature counter went backwards: it may have been copied; revoke the device",
        ),
        RemoteError::Passkey(WebauthnError::MismatchedChallenge) => Fail::new(
            StatusCode::FORBIDDEN,
            "assertion_mismatch",
            "the passkey signed something other than this decision: nothing was decided",
        ),
        RemoteError::Passkey(_) => {
            Fail::new(StatusCode::FORBIDDEN, "assertion_invalid", "the passkey's answer did not verify")
        }
        RemoteError::Origin(_) | RemoteError::State(_) => {
            tracing::error!(error = %e, "remote listener");
            Fail::new(StatusCode::SERVICE_UNAVAILABLE, "unavailable", "Assent cannot answer right now; see its log")
        }
    }
}

impl IntoResponse for Fail {
    fn into_response(self) -> Response {
        let body = json!({ "error": { "code": self.code, "message": self.message } });
        let mut res = (self.status, axum::Json(body)).into_response();
        if let Some(secs) = self.retry_after
            && let Ok(v) = HeaderValue::from_str(&secs.to_string())
        {
            res.headers_mut().insert(header::RETRY_AFTER, v);
        }
        res
    }
}

/// A JSON body, its problems answered in this listener's error shape.
pub(super) struct Body<T>(pub(super) T);

impl<T: serde::de::DeserializeOwned, S: Send + Sync> axum::extract::FromRequest<S> for Body<T> {
    type Rejection = Fail;

    async fn from_request(req: axum::extract::Request, state: &S) -> Result<Self, Fail> {
        // The body within its budget: a client that sends it slowly holds nothing for long.
        let read = tokio::time::timeout(crate::serve::BODY, axum::Json::<T>::from_request(req, state));
        let Ok(read) = read.await else {
            return Err(Fail::new(StatusCode::REQUEST_TIMEOUT, "body_timeout", "the body took too long to arrive"));
        };
        match read {
            Ok(axum::Json(v)) => Ok(Body(v)),
            Err(JsonRejection::MissingJsonContentType(_)) => Err(Fail::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_media_type",
                "send JSON with `Content-Type: application/json`",
            )),
            Err(JsonRejection::BytesRejection(_)) => {
                Err(Fail::new(StatusCode::PAYLOAD_TOO_LARGE, "body_too_large", "the body is too large"))
            }
            Err(e) => Err(Fail::new(StatusCode::BAD_REQUEST, "invalid_json", e.body_text())),
        }
    }
}
