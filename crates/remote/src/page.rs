//! The review page's files: the built front end (`ui`, its remote build), served as they are,
//! with headers that keep it in its own origin (no framing, no outside scripts, no referrer).

use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use std::path::PathBuf;

/// Every page answer's headers: the page runs only its own scripts, is never framed, and
/// names no one where it came from.
const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; \
     connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'";

/// The routes of the page's files, from `dir` (none: every one is 404 `page_not_built`).
pub(crate) fn routes(dir: Option<PathBuf>) -> Router {
    Router::new().route("/", get(index)).route("/{*path}", get(file)).with_state(dir)
}

async fn index(State(dir): State<Option<PathBuf>>) -> Response {
    serve(dir, "index.html").await
}

async fn file(State(dir): State<Option<PathBuf>>, Path(path): Path<String>) -> Response {
    serve(dir, &path).await
}

fn kind(path: &str) -> Option<&'static str> {
    let ext = path.rsplit_once('.')?.1;
    Some(match ext {
        "html" => "text/html; charset=utf-8",
        "js" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "json" | "webmanifest" => "application/manifest+json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "woff2" => "font/woff2",
        _ => return None,
    })
}

async fn serve(dir: Option<PathBuf>, path: &str) -> Response {
    let missing = |code: &str, message: &str| {
        (StatusCode::NOT_FOUND, axum::Json(serde_json::json!({ "error": { "code": code, "message": message } })))
            .into_response()
    };
    let Some(dir) = dir else {
        return missing("page_not_built", "this Assent was built without the review page");
    };
    // Only plain names under the folder: no `..`, no hidden files, no folders of their own.
    let plain = path.split('/').all(|p| !p.is_empty() && !p.starts_with('.') && !p.contains('\\'));
    let Some(content_type) = kind(path).filter(|_| plain) else { return missing("not_found", "nothing here") };
    let Ok(bytes) = tokio::fs::read(dir.join(path)).await else { return missing("not_found", "nothing here") };
    let mut res = bytes.into_response();
    let h = res.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    // The page's own hashed assets may be kept; the page and the service worker are asked
    // for again, so a new Assent's page is the one shown.
    let cache = if path.starts_with("assets/") { "public, max-age=31536000, immutable" } else { "no-cache" };
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    res
}
