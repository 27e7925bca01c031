//! The remote listener's own accept loop, with budgets of its own so that nothing sent to it can
//! starve the agent API (a separate listener in the same process), and nothing strangers send
//! keeps the owner's phone out:
//!
//! - a connection that has carried no live session is a stranger's: at most [`STRANGERS`] of
//!   them are open, and past that the oldest is closed to let the new one in (a slow head holds
//!   its place only until newer ones push it out, and the owner's phone, newest, is served);
//! - a connection whose request carried a live session (the `vouch` function says which)
//!   leaves the strangers' count for that session's own: at most [`PER_SESSION`] per session,
//!   its oldest closed past that, so a stolen cookie fills its own slots and nobody else's;
//! - a request's head within [`HEAD`] (hyper's header timeout, which also ends a keep-alive
//!   connection idle that long), its body within [`BODY`] (the `Body` extractor);
//! - nothing else is shared with the agent API's listener but the engine behind both.
//!
//! Every source is the tunnel's (loopback), so a source tells nobody apart: what tells the
//! owner from a stranger is the session a request carries.

use axum::Router;
use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::Notify;

/// Most connections open at once that have carried no live session.
pub const STRANGERS: usize = 512;
/// Most connections open at once that carried one session.
pub const PER_SESSION: usize = 16;
/// How long a client has to send a request's head (and how long an idle connection stays).
pub const HEAD: Duration = Duration::from_secs(10);
/// How long a client has to send a request's body.
pub const BODY: Duration = Duration::from_secs(20);

/// Which session a request's headers carry, if a live one: its key.
pub(crate) type Vouch = Arc<dyn Fn(&axum::http::HeaderMap) -> Option<[u8; 32]> + Send + Sync>;

/// The open connections, each with what closes it: strangers' in the order they came, and each
/// session's.
#[derive(Default)]
struct Registry {
    next: u64,
    strangers: VecDeque<(u64, Arc<Notify>)>,
    vouched: HashMap<[u8; 32], VecDeque<(u64, Arc<Notify>)>>,
}

impl Registry {
    /// A new connection: its id and what closes it; the oldest stranger is closed past
    /// [`STRANGERS`].
    fn open(&mut self) -> (u64, Arc<Notify>) {
        self.next += 1;
        let kill = Arc::new(Notify::new());
        self.strangers.push_back((self.next, kill.clone()));
        while self.strangers.len() > STRANGERS {
            if let Some((_, k)) = self.strangers.pop_front() {
                k.notify_one();
            }
        }
        (self.next, kill)
    }

    /// Connection `id` carried session `key`: it is that session's from now on; the session's
    /// oldest is closed past [`PER_SESSION`].
    fn vouch(&mut self, id: u64, key: [u8; 32]) {
        let Some(i) = self.strangers.iter().position(|(c, _)| *c == id) else { return };
        let Some(conn) = self.strangers.remove(i) else { return };
        let mine = self.vouched.entry(key).or_default();
        mine.push_back(conn);
        while mine.len() > PER_SESSION {
            if let Some((_, k)) = mine.pop_front() {
                k.notify_one();
            }
        }
    }

    /// Connection `id` ended.
    fn close(&mut self, id: u64) {
        self.strangers.retain(|(c, _)| *c != id);
        self.vouched.retain(|_, v| {
            v.retain(|(c, _)| *c != id);
            !v.is_empty()
        });
    }
}

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

/// Serves `app` on `listener` until `shutdown` resolves; `vouch` tells which requests carry a
/// live session.
pub(crate) async fn serve(listener: TcpListener, app: Router, vouch: Vouch, shutdown: impl Future<Output = ()>) {
    let registry = Arc::new(Mutex::new(Registry::default()));
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            stream = next_connection(&listener) => stream,
            () = &mut shutdown => break,
        };
        let (id, kill) = registry.lock().unwrap_or_else(|e| e.into_inner()).open();
        let _ = stream.set_nodelay(true);
        let (vouch, reg) = (vouch.clone(), registry.clone());
        let inner = hyper_util::service::TowerToHyperService::new(app.clone());
        // Looked up until a request carries a live session: the connection is then that
        // session's, and its later requests look nothing up.
        let vouched = std::sync::atomic::AtomicBool::new(false);
        let service = hyper::service::service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
            if !vouched.load(std::sync::atomic::Ordering::Relaxed)
                && let Some(key) = vouch(req.headers())
            {
                reg.lock().unwrap_or_else(|e| e.into_inner()).vouch(id, key);
                vouched.store(true, std::sync::atomic::Ordering::Relaxed);
            }
            hyper::service::Service::call(&inner, req)
        });
        let conn = hyper::server::conn::http1::Builder::new()
            .timer(hyper_util::rt::TokioTimer::new())
            .header_read_timeout(HEAD)
            .serve_connection(hyper_util::rt::TokioIo::new(stream), service);
        let conn = graceful.watch(conn);
        let registry = registry.clone();
        tokio::spawn(async move {
            tokio::select! {
                r = conn => if let Err(e) = r {
                    tracing::debug!(error = %e, "a remote connection ended with an error");
                },
                () = kill.notified() => tracing::debug!("a remote connection was closed to make room"),
            }
            registry.lock().unwrap_or_else(|e| e.into_inner()).close(id);
        });
    }
    drop(listener);
    // Requests under way get a moment; event streams and idle connections are cut after it.
    let _ = tokio::time::timeout(Duration::from_secs(1), graceful.shutdown()).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strangers_push_out_the_oldest_and_a_session_holds_its_own() {
        let mut r = Registry::default();
        let first: Vec<(u64, Arc<Notify>)> = (0..STRANGERS).map(|_| r.open()).collect();
        let owner = r.open();
        assert_eq!(r.strangers.len(), STRANGERS, "the oldest stranger made room");
        assert!(r.strangers.iter().all(|(c, _)| *c != first[0].0));
        r.vouch(owner.0, [1; 32]);
        // A stolen cookie's connections push out only their own session's oldest.
        let thief: Vec<(u64, Arc<Notify>)> = (0..PER_SESSION + 5).map(|_| r.open()).collect();
        for (id, _) in &thief {
            r.vouch(*id, [2; 32]);
        }
        assert_eq!(r.vouched[&[2; 32]].len(), PER_SESSION);
        assert_eq!(r.vouched[&[1; 32]].len(), 1, "the owner's connection stays");
        // A flood of strangers after that does not close it either.
        for _ in 0..3 * STRANGERS {
            r.open();
        }
        assert_eq!(r.vouched[&[1; 32]].front().map(|c| c.0), Some(owner.0));
        r.close(owner.0);
        assert!(!r.vouched.contains_key(&[1; 32]));
    }
}
