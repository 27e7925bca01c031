//! Request guards that run before any route: DNS rebinding and browser protection, and
//! response headers. Assent's API is for local programs, never for web pages: a `Host` that is
//! not the loopback address or `localhost` with our port is refused (a rebinding attack
//! arrives with the attacker's host name), and so is anything a browser marks as coming from a
//! page (`Origin`, `Sec-Fetch-Site`). No CORS headers are ever sent.

use crate::AppState;
use crate::error::ApiError;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// Whether `host` (the Host header) names this server on loopback.
pub fn host_allowed(host: &str, port: u16) -> bool {
    let port = port.to_string();
    ["127.0.0.1", "localhost", "[::1]"]
        .iter()
        .any(|name| host.strip_prefix(name).and_then(|rest| rest.strip_prefix(':')) == Some(port.as_str()))
}

/// The guard middleware.
pub async fn guard(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let headers = req.headers();
    if headers.get_all(header::HOST).iter().nth(1).is_some() {
        return crate::error::ApiError::new(
            axum::http::StatusCode::BAD_REQUEST,
            "invalid_host",
            "a request has exactly one Host header",
        )
        .into_response();
    }
    // Only origin-form targets (`/v1/...`): a full URL as the target (`GET http://evil/...`)
    // names a host other than the Host header, which the check below would not see.
    let uri = req.uri();
    if uri.scheme().is_some() || uri.authority().is_some() || !uri.path().starts_with('/') {
        return crate::error::ApiError::new(
            axum::http::StatusCode::BAD_REQUEST,
            "invalid_target",
            "the request target is a path such as /v1/health, never a full URL",
        )
        .into_response();
    }
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("");
    if !host_allowed(host, state.port) {
        return ApiError::forbidden(
            "this API answers only requests addressed to 127.0.0.1 or localhost on its own port",
        )
        .into_response();
    }
    if headers.contains_key(header::ORIGIN) {
        return ApiError::forbidden("requests from web pages are refused (an Origin header was sent)").into_response();
    }
    if headers.get("sec-fetch-site").is_some_and(|v| v != "none") {
        return ApiError::forbidden("requests from web pages are refused").into_response();
    }
    let method = req.method().clone();
    let path = req.uri().path().to_string();
    let started = std::time::Instant::now();
    let mut res = next.run(req).await;
    // Method, path and status only: never headers (tokens) or bodies (payloads).
    tracing::debug!(%method, %path, status = res.status().as_u16(), ms = started.elapsed().as_millis() as u64, "request");
    let h = res.headers_mut();
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    res
}

#[cfg(test)]
mod tests {
    use super::host_allowed;

    #[test]
    fn only_loopback_names_with_our_port() {
        assert!(host_allowed("127.0.0.1:8080", 8080));
        assert!(host_allowed("localhost:8080", 8080));
        assert!(host_allowed("[::1]:8080", 8080));
        assert!(!host_allowed("127.0.0.1:8081", 8080));
        assert!(!host_allowed("127.0.0.1", 8080));
        assert!(!host_allowed("evil.example:8080", 8080));
        assert!(!host_allowed("localhost.evil.example:8080", 8080));
        assert!(!host_allowed("127.0.0.1:8080.evil", 8080));
        assert!(!host_allowed("", 8080));
    }
}
