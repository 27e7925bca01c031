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

mod conn;
pub mod error;
pub mod extract;
pub mod guard;
pub mod openapi;
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
    /// The key this server proves it holds (`GET /v1/hello`), written to the home's
    /// `server.json`.
    pub proof_key: Option<std::sync::Arc<[u8]>>,
    /// The remote listener's controller (none: the `/v1/remote` routes answer 404).
    pub remote: Option<assent_remote::Remote>,
}

/// API options.
#[derive(Debug, Clone)]
pub struct ApiConfig {
    /// Largest request body, in bytes (4 MiB).
    pub max_body_bytes: usize,
    /// Connections open at once; past it a new one is answered 503 `too_many_connections` and
    /// closed.
    pub max_connections: usize,
    /// How long a client may take to send a request's headers, and how long an idle
    /// keep-alive connection stays open. A request in progress (a long-poll, an event stream)
    /// is not cut by it.
    pub header_read_timeout: std::time::Duration,
    /// The key for `GET /v1/hello`'s proof (none: the route answers 404).
    pub proof_key: Option<Vec<u8>>,
    /// The remote listener's controller, for its administration routes.
    pub remote: Option<assent_remote::Remote>,
}

impl Default for ApiConfig {
    fn default() -> Self {
        Self {
            max_body_bytes: 4 * 1024 * 1024,
            max_connections: 16_384,
            header_read_timeout: std::time::Duration::from_secs(15),
            proof_key: None,
            remote: None,
        }
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

/// `GET /v1/health`.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct Health {
    /// Always `ok`.
    #[schema(example = "ok")]
    pub status: &'static str,
    /// The server's version.
    #[schema(example = "0.1.0")]
    pub version: &'static str,
}

/// Whether the server is up.
#[utoipa::path(get, path = "/v1/health", tag = "server", operation_id = "health",
    responses((status = 200, description = "The server is up", body = Health)))]
pub async fn health() -> axum::Json<Health> {
    axum::Json(Health { status: "ok", version: env!("CARGO_PKG_VERSION") })
}

/// Query of `GET /v1/hello`.
#[derive(serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct Hello {
    /// 32 to 128 hex digits, fresh for each ask.
    #[param(min_length = 32, max_length = 128, pattern = "^[0-9a-fA-F]+$")]
    challenge: String,
}

/// `GET /v1/hello`: the proof.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct Proof {
    /// Always `assent`.
    #[schema(example = "assent")]
    pub server: &'static str,
    /// HMAC-SHA256 of the challenge under the key in the home's `server.json`, in hex.
    pub proof: String,
}

/// `GET /v1/hello?challenge=HEX`: the proof that this is the server of the home whose
/// `server.json` a client read. Anyone may ask; the answer tells nothing but that.
#[utoipa::path(get, path = "/v1/hello", tag = "server", operation_id = "hello", params(Hello),
    responses((status = 200, description = "The proof that this is the server of the home whose `server.json` the client read", body = Proof)))]
pub async fn hello(
    axum::extract::State(s): axum::extract::State<AppState>,
    extract::Query(q): extract::Query<Hello>,
) -> Result<axum::Json<Proof>, ApiError> {
    let Some(key) = &s.proof_key else { return Err(not_found().await) };
    if q.challenge.len() < 32 || q.challenge.len() > 128 || !q.challenge.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(ApiError::new(StatusCode::BAD_REQUEST, "invalid_query", "`challenge` is 32-128 hex digits"));
    }
    Ok(axum::Json(Proof { server: "assent", proof: assent_core::secret::server_proof(key, &q.challenge) }))
}

/// Body of `POST /v1/testing/clock`.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct MoveClock {
    /// How far to move the engine's clock forward, in milliseconds.
    advance_ms: u64,
}

/// Moves the engine's clock forward and answers once the expiry sweeper has looked at the new
/// time (a test build's route only, owner only, undocumented).
async fn move_clock(
    axum::extract::State(s): axum::extract::State<AppState>,
    _: extract::Owner,
    extract::Json(m): extract::Json<MoveClock>,
) -> Result<StatusCode, ApiError> {
    if !s.engine.move_clock(std::time::Duration::from_millis(m.advance_ms)).await {
        return Err(not_found().await);
    }
    Ok(StatusCode::NO_CONTENT)
}

/// How many agents wait on a decision now (open long-polls): a test knows a client is waiting
/// before it moves the clock. Test builds only, as the clock route.
async fn waits(
    axum::extract::State(s): axum::extract::State<AppState>,
    _: extract::Owner,
) -> axum::Json<serde_json::Value> {
    axum::Json(serde_json::json!({"agents_waiting": s.engine.agents_waiting()}))
}

async fn not_found() -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "not_found", "no such endpoint")
}

/// The router, for hosts that serve it themselves and for tests.
pub fn router(engine: Engine, port: u16, cfg: &ApiConfig) -> Router {
    let proof_key = cfg.proof_key.as_deref().map(std::sync::Arc::from);
    let testing = engine.movable_clock().is_some();
    let state = AppState { engine, port, proof_key, remote: cfg.remote.clone() };
    let mut v1 = Router::new()
        .route("/health", get(health))
        .route("/hello", get(hello))
        .route("/openapi.json", get(openapi::serve))
        .route("/keys", get(routes::keys::list))
        .route("/keys/rotate", post(routes::keys::rotate))
        .route("/proposals", post(routes::proposals::create).get(routes::proposals::list))
        .route("/proposals/batch", post(routes::sessions::batch))
        .route("/proposals/{id}", get(routes::proposals::get).delete(routes::proposals::withdraw))
        .route("/sessions/{session_id}", get(routes::sessions::counts))
        .route("/proposals/{id}/decision", post(routes::decisions::decide))
        .route("/proposals/{id}/audit", get(routes::proposals::audit))
        .route("/proposals/{id}/retry", post(routes::decisions::retry))
        .route("/decisions", post(routes::decisions::batch))
        .route("/events", get(routes::events::events))
        .route("/agents", get(routes::admin::list_agents).post(routes::admin::add_agent))
        .route("/agents/{name}", axum::routing::delete(routes::admin::revoke_agent))
        .route("/audit", get(routes::admin::audit))
        .route("/credentials", get(routes::admin::list_credentials).post(routes::admin::add_credential))
        .route("/credentials/{name}", axum::routing::delete(routes::admin::remove_credential))
        .route("/rules", get(routes::rules::list).post(routes::rules::add))
        .route("/rules/test", post(routes::rules::test))
        .route("/rules/log", get(routes::rules::log))
        .route("/rules/{id}", axum::routing::delete(routes::rules::remove))
        .route("/proposals/{id}/similar", get(routes::rules::similar))
        .route("/remote", get(routes::remote::status).put(routes::remote::enable).delete(routes::remote::disable))
        .route("/remote/pairings", post(routes::remote::pair))
        .route("/remote/devices", get(routes::remote::devices))
        .route("/remote/devices/{name}", axum::routing::delete(routes::remote::revoke))
        .route("/remote/log", get(routes::remote::log));
    if testing {
        // A test build started with `ASSENT_TEST_CLOCK` (never a release): see `assent_core::crash`.
        v1 = v1.route("/testing/clock", post(move_clock)).route("/testing/waits", get(waits));
    }
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
    let slots = std::sync::Arc::new(tokio::sync::Semaphore::new(cfg.max_connections));
    // A plain HTTP/1.1 accept loop rather than `axum::serve`: that one rebuilds the router's
    // route tables for every connection (about 5 KB each), and with thousands of agents parked
    // on long-polls the per-connection cost is what the server's memory is made of. Here every
    // connection shares the one router.
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    // Connections served here (hyper's among them), to end them once the server stops.
    let mut open = tokio::task::JoinSet::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            stream = assent_remote::serve::next_connection(&listener) => stream,
            () = &mut shutdown => break,
        };
        while open.try_join_next().is_some() {}
        let _ = stream.set_nodelay(true);
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            tokio::spawn(refuse_connection(stream));
            continue;
        };
        let (for_hyper, watcher, timeout) = (app.clone(), graceful.watcher(), cfg.header_read_timeout);
        let by_hyper = move |io: conn::Rewind| {
            let service = hyper_util::service::TowerToHyperService::new(for_hyper);
            let conn = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(timeout)
                .serve_connection(hyper_util::rt::TokioIo::new(io), service);
            let conn = watcher.watch(conn);
            async move {
                if let Err(e) = conn.await {
                    tracing::debug!(error = %e, "connection ended with an error");
                }
            }
        };
        let app = app.clone();
        open.spawn(async move {
            conn::run(stream, app, timeout, by_hyper).await;
            drop(slot);
        });
    }
    drop(listener);
    // Requests in progress get a moment; long-polls, event streams and idle connections are
    // cut after it.
    let moment = async {
        graceful.shutdown().await;
        while open.join_next().await.is_some() {}
    };
    let _ = tokio::time::timeout(std::time::Duration::from_secs(1), moment).await;
    open.shutdown().await;
    Ok(())
}

/// Answers a connection over the limit with a 503 and closes it, without reading its request,
/// within a second.
async fn refuse_connection(mut stream: tokio::net::TcpStream) {
    use axum::http::{HeaderValue, header};
    use axum::response::IntoResponse;
    use tokio::io::AsyncWriteExt;
    let mut res = ApiError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        "too_many_connections",
        "Assent has as many connections open as it allows; try again shortly",
    )
    .into_response();
    let h = res.headers_mut();
    h.insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    let write = async {
        let _ = conn::write_response(&mut stream, res, true).await;
        let _ = stream.shutdown().await;
    };
    let _ = tokio::time::timeout(std::time::Duration::from_secs(1), write).await;
    tracing::warn!("refused a connection: too many open");
}
