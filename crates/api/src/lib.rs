//! # assent-api
//!
//! The loopback HTTP API local agents talk to (base `/v1`, JSON in and out).
//!
//! A request passes [`guard::guard`] (loopback `Host` only, nothing from browsers), then the
//! route's extractors ([`extract::Caller`] authenticates the bearer token through the engine,
//! [`extract::Owner`] refuses agent tokens, [`extract::Json`] maps body problems to 400, 413,
//! 415 and 422), then a handler in [`routes`] that calls one engine method. Errors leave as
//! [`error::ApiError`]: `{"error": {"code", "message"}}`.
//!
//! [`serve`] takes a bound listener, an engine and a shutdown future; hosts (the headless
//! `assent serve`, the desktop app) only wire.

pub mod error;
pub mod extract;
pub mod guard;
pub mod routes;

use assent_core::Engine;
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::StatusCode;
use axum::routing::{get, post};
use error::ApiError;
use std::future::Future;
use tokio::net::TcpListener;

/// Shared state of the handlers.
#[derive(Clone)]
pub struct AppState {
    /// The engine.
    pub engine: Engine,
    /// The port we listen on (the `Host` check needs it).
    pub port: u16,
}

/// API options.
#[derive(Debug, Clone)]
pub struct ApiConfig {
    /// Largest request body, in bytes (4 MiB).
    pub max_body_bytes: usize,
}

impl Default for ApiConfig {
    fn default() -> Self {
        Self { max_body_bytes: 4 * 1024 * 1024 }
    }
}

/// Why the server could not run.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The listener is not on a loopback address.
    #[error("refusing to serve on {0}: Assent listens on loopback addresses (127.0.0.1, ::1) only")]
    NotLoopback(std::net::SocketAddr),
    /// Socket trouble.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

async fn health() -> axum::Json<serde_json::Value> {
    axum::Json(serde_json::json!({ "status": "ok", "version": env!("CARGO_PKG_VERSION") }))
}

async fn not_found() -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "not_found", "no such endpoint")
}

/// The router, for hosts that serve it themselves and for tests.
pub fn router(engine: Engine, port: u16, cfg: &ApiConfig) -> Router {
    let state = AppState { engine, port };
    let v1 = Router::new()
        .route("/health", get(health))
        .route("/proposals", post(routes::proposals::create).get(routes::proposals::list))
        .route("/proposals/{id}", get(routes::proposals::get).delete(routes::proposals::withdraw))
        .route("/proposals/{id}/decision", post(routes::decisions::decide))
        .route("/proposals/{id}/audit", get(routes::proposals::audit))
        .route("/proposals/{id}/retry", post(routes::decisions::retry))
        .route("/decisions", post(routes::decisions::batch))
        .route("/events", get(routes::events::events))
        .route("/agents", get(routes::admin::list_agents).post(routes::admin::add_agent))
        .route("/agents/{name}", axum::routing::delete(routes::admin::revoke_agent))
        .route("/audit", get(routes::admin::audit))
        .route("/credentials", get(routes::admin::list_credentials).post(routes::admin::add_credential))
        .route("/credentials/{name}", axum::routing::delete(routes::admin::remove_credential));
    Router::new()
        .nest("/v1", v1)
        .fallback(not_found)
        .method_not_allowed_fallback(|| async {
            ApiError::new(
                StatusCode::METHOD_NOT_ALLOWED,
                "method_not_allowed",
                "this endpoint does not take that method",
            )
        })
        .layer(DefaultBodyLimit::max(cfg.max_body_bytes))
        .layer(axum::middleware::from_fn_with_state(state.clone(), guard::guard))
        .with_state(state)
}

/// Serves the API on `listener` until `shutdown` resolves. Refuses a non-loopback listener.
pub async fn serve(
    listener: TcpListener,
    engine: Engine,
    cfg: ApiConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    let addr = listener.local_addr()?;
    if !addr.ip().is_loopback() {
        return Err(ServeError::NotLoopback(addr));
    }
    let app = router(engine, addr.port(), &cfg);
    // A plain HTTP/1.1 accept loop rather than `axum::serve`: that one rebuilds the router's
    // route tables for every connection (about 5 KB each), and with thousands of agents parked
    // on long-polls the per-connection cost is what the server's memory is made of. Here every
    // connection shares the one router.
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    // Out of file descriptors and the like: pause rather than spin.
                    tracing::warn!(error = %e, "could not accept a connection");
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let service = hyper_util::service::TowerToHyperService::new(app.clone());
        let conn =
            hyper::server::conn::http1::Builder::new().serve_connection(hyper_util::rt::TokioIo::new(stream), service);
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                tracing::debug!(error = %e, "connection ended with an error");
            }
        });
    }
    drop(listener);
    graceful.shutdown().await;
    Ok(())
}
