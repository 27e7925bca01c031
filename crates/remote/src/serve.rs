//! The remote listener's own accept loop, with budgets of its own so that nothing sent to it can
//! starve the agent API (a separate listener in the same process):
//!
//! - at most [`CONNECTIONS`] connections at once; past that a new one is closed at once, so a
//!   flood holds a bounded number of the process's open files;
//! - a request's head within [`HEAD`] (hyper's header timeout, which also ends a keep-alive
//!   connection idle that long), its body within [`BODY`] (the `Body` extractor);
//! - nothing else is shared with the agent API's listener but the engine behind both.
//!
//! Every source is the tunnel's (loopback), so there is no per-source budget to keep: the
//! budgets are the listener's as a whole.

use axum::Router;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::net::TcpListener;

/// Most connections open at once.
pub const CONNECTIONS: usize = 256;
/// How long a client has to send a request's head (and how long an idle connection stays).
pub const HEAD: Duration = Duration::from_secs(10);
/// How long a client has to send a request's body.
pub const BODY: Duration = Duration::from_secs(20);

/// The next connection on `listener`. A failure to accept (out of open files and the like)
/// pauses a moment rather than spinning. Cancel-safe, for a `select!` with a shutdown: the
/// agent API's accept loop uses it as well.
pub async fn next_connection(listener: &TcpListener) -> tokio::net::TcpStream {
    loop {
        match listener.accept().await {
            Ok((stream, _)) => return stream,
            Err(e) => {
                tracing::warn!(error = %e, "could not accept a connection");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

/// Serves `app` on `listener` until `shutdown` resolves.
pub(crate) async fn serve(listener: TcpListener, app: Router, shutdown: impl Future<Output = ()>) {
    let slots = Arc::new(tokio::sync::Semaphore::new(CONNECTIONS));
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let refused = AtomicU64::new(0);
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            stream = next_connection(&listener) => stream,
            () = &mut shutdown => break,
        };
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            // Closed at once: a flood costs one open file per connection for an instant.
            drop(stream);
            let n = refused.fetch_add(1, Ordering::Relaxed);
            if n.is_power_of_two() {
                tracing::warn!(refused = n + 1, "the remote listener is at its connection limit");
            }
            continue;
        };
        let _ = stream.set_nodelay(true);
        let service = hyper_util::service::TowerToHyperService::new(app.clone());
        let conn = hyper::server::conn::http1::Builder::new()
            .timer(hyper_util::rt::TokioTimer::new())
            .header_read_timeout(HEAD)
            .serve_connection(hyper_util::rt::TokioIo::new(stream), service);
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                tracing::debug!(error = %e, "a remote connection ended with an error");
            }
            drop(slot);
        });
    }
    drop(listener);
    // Requests under way get a moment; event streams and idle connections are cut after it.
    let _ = tokio::time::timeout(Duration::from_secs(1), graceful.shutdown()).await;
}
