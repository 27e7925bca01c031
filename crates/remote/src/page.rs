//! The review page's files: the front end's remote build (`ui/dist-remote`), embedded in the
//! binary at build time (or read from a folder, for working on the page), served with headers
//! that keep it to its own origin: no outside scripts, no framing, no referrer.

use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use std::path::PathBuf;

include!(concat!(env!("OUT_DIR"), "/page.rs"));

/// The page runs only its own scripts, talks only to its own origin, and is never framed.
const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; \
     connect-src 'self'; manifest-src 'self'; worker-src 'self'; object-src 'none'; base-uri 'none'; \
     frame-ancestors 'none'; form-action 'self'";

/// Whether this build carries the page.
pub fn embedded() -> bool {
    !FILES.is_empty()
}

/// The routes of the page's files: from `dir` when given, else the embedded ones.
pub(crate) fn routes(dir: Option<PathBuf>) -> Router {
    Router::new().route("/", get(index)).route("/{*path}", get(file)).with_state(dir)
}

async fn index(State(dir): State<Option<PathBuf>>) -> Response {
    serve(dir, "remote.html").await
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
        "webmanifest" => "application/manifest+json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "woff2" => "font/woff2",
        _ => return None,
    })
}

fn missing(code: &str, message: &str) -> Response {
    (StatusCode::NOT_FOUND, axum::Json(serde_json::json!({ "error": { "code": code, "message": message } })))
        .into_response()
}

async fn serve(dir: Option<PathBuf>, path: &str) -> Response {
    // Only plain names: no `..`, nothing hidden, no back slashes.
    let plain = path.split('/').all(|p| !p.is_empty() && !p.starts_with('.') && !p.contains('\\'));
    let Some(content_type) = kind(path).filter(|_| plain) else { return missing("not_found", "nothing here") };
    let bytes: Vec<u8> = match &dir {
        Some(d) => match tokio::fs::read(d.join(path)).await {
            Ok(b) => b,
            Err(_) => return missing("not_found", "nothing here"),
        },
        None if FILES.is_empty() => {
            return missing(
                "page_not_built",
                "this Assent was built without its review page (run `npm run build` in ui/)",
            );
        }
        None => match FILES.iter().find(|(name, _)| *name == path) {
            Some((_, b)) => b.to_vec(),
            None => return missing("not_found", "nothing here"),
        },
    };
    let mut res = bytes.into_response();
    let h = res.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    // Hashed assets may be kept; the page and the service worker are asked for again, so a
    // new Assent's page is the one shown.
    let cache = if path.starts_with("assets/") { "public, max-age=31536000, immutable" } else { "no-cache" };
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    res
}
