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
use std::sync::atomic::{AtomicUsize, Ordering};
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

/// An open connection: its id, what closes it, and how many of its responses are under way.
struct Conn {
    id: u64,
    kill: Arc<Notify>,
    busy: Arc<AtomicUsize>,
}

/// The open connections: strangers' in the order they came, and each session's.
#[derive(Default)]
struct Registry {
    next: u64,
    strangers: VecDeque<Conn>,
    vouched: HashMap<[u8; 32], VecDeque<Conn>>,
}

/// Closes one of `conns` to make room: the oldest with no response under way (an idle
/// keep-alive connection, a head still coming), else the oldest. An event stream, or a large
/// proposal being sent, is closed last: closing it would cut the page that asked.
fn make_room(conns: &mut VecDeque<Conn>) {
    let i = conns.iter().position(|c| c.busy.load(Ordering::Relaxed) == 0).unwrap_or(0);
    if let Some(c) = conns.remove(i) {
        c.kill.notify_one();
    }
}

impl Registry {
    /// A new connection: its id, what closes it and its count of responses under way; one
    /// stranger is closed past [`STRANGERS`] (see [`make_room`]).
    fn open(&mut self) -> (u64, Arc<Notify>, Arc<AtomicUsize>) {
        self.next += 1;
        let (kill, busy) = (Arc::new(Notify::new()), Arc::new(AtomicUsize::new(0)));
        self.strangers.push_back(Conn { id: self.next, kill: kill.clone(), busy: busy.clone() });
        while self.strangers.len() > STRANGERS {
            make_room(&mut self.strangers);
        }
        (self.next, kill, busy)
    }

    /// Connection `id` carried session `key`: it is that session's from now on; one of the
    /// session's is closed past [`PER_SESSION`] (see [`make_room`]).
    fn vouch(&mut self, id: u64, key: [u8; 32]) {
        let Some(i) = self.strangers.iter().position(|c| c.id == id) else { return };
        let Some(conn) = self.strangers.remove(i) else { return };
        let mine = self.vouched.entry(key).or_default();
        mine.push_back(conn);
        while mine.len() > PER_SESSION {
            make_room(mine);
        }
    }

    /// Connection `id` ended.
    fn close(&mut self, id: u64) {
        self.strangers.retain(|c| c.id != id);
        self.vouched.retain(|_, v| {
            v.retain(|c| c.id != id);
            !v.is_empty()
        });
    }
}

/// A response's body, counted as under way on its connection until it is sent (or dropped).
struct Counted {
    body: axum::body::Body,
    _busy: Busy,
}

/// One response under way on a connection, until dropped.
struct Busy(Arc<AtomicUsize>);

impl Busy {
    fn new(count: &Arc<AtomicUsize>) -> Busy {
        count.fetch_add(1, Ordering::Relaxed);
        Busy(count.clone())
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl hyper::body::Body for Counted {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Self::Data>, Self::Error>>> {
        std::pin::Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.body.size_hint()
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
        let (id, kill, busy) = registry.lock().unwrap_or_else(|e| e.into_inner()).open();
        let _ = stream.set_nodelay(true);
        let (vouch, reg) = (vouch.clone(), registry.clone());
        let inner = hyper_util::service::TowerToHyperService::new(app.clone());
        // Looked up until a request carries a live session: the connection is then that
        // session's, and its later requests look nothing up.
        let vouched = std::sync::atomic::AtomicBool::new(false);
        let service = hyper::service::service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
            // Under way from its head on (so that making room for it never closes it).
            let under_way = Busy::new(&busy);
            if !vouched.load(std::sync::atomic::Ordering::Relaxed)
                && let Some(key) = vouch(req.headers())
            {
                reg.lock().unwrap_or_else(|e| e.into_inner()).vouch(id, key);
                vouched.store(true, std::sync::atomic::Ordering::Relaxed);
            }
            let response = hyper::service::Service::call(&inner, req);
            async move {
                let r = response.await?;
                Ok::<_, std::convert::Infallible>(r.map(|body| Counted { body, _busy: under_way }))
            }
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
        let first: Vec<u64> = (0..STRANGERS).map(|_| r.open().0).collect();
        let owner = r.open();
        assert_eq!(r.strangers.len(), STRANGERS, "the oldest stranger made room");
        assert!(r.strangers.iter().all(|c| c.id != first[0]));
        r.vouch(owner.0, [1; 32]);
        // A stolen cookie's connections push out only their own session's oldest.
        let thief: Vec<u64> = (0..PER_SESSION + 5).map(|_| r.open().0).collect();
        for id in &thief {
            r.vouch(*id, [2; 32]);
        }
        assert_eq!(r.vouched[&[2; 32]].len(), PER_SESSION);
        assert_eq!(r.vouched[&[1; 32]].len(), 1, "the owner's connection stays");
        // A flood of strangers after that does not close it either.
        for _ in 0..3 * STRANGERS {
            r.open();
        }
        assert_eq!(r.vouched[&[1; 32]].front().map(|c| c.id), Some(owner.0));
        r.close(owner.0);
        assert!(!r.vouched.contains_key(&[1; 32]));
    }

    #[test]
    fn a_response_under_way_is_closed_last() {
        let mut r = Registry::default();
        // The page's event stream, its oldest connection, is always under way.
        let (stream, stream_kill, stream_busy) = r.open();
        let _streaming = Busy::new(&stream_busy);
        r.vouch(stream, [1; 32]);
        let idle: Vec<u64> = (0..PER_SESSION + 3).map(|_| r.open().0).collect();
        for id in &idle {
            r.vouch(*id, [1; 32]);
        }
        let mine: Vec<u64> = r.vouched[&[1; 32]].iter().map(|c| c.id).collect();
        assert_eq!(mine.len(), PER_SESSION);
        assert_eq!(mine[0], stream, "the stream stays; idle ones made room");
        assert!(!mine.contains(&idle[0]) && mine.contains(&idle[PER_SESSION + 2]));
        // Once every one is under way, the oldest goes after all.
        let all: Vec<Busy> = r.vouched[&[1; 32]].iter().map(|c| Busy::new(&c.busy)).collect();
        let (newest, _, newest_busy) = r.open();
        let _asking = Busy::new(&newest_busy);
        r.vouch(newest, [1; 32]);
        assert!(r.vouched[&[1; 32]].iter().any(|c| c.id == newest), "the one asking is not closed for itself");
        assert!(!r.vouched[&[1; 32]].iter().any(|c| c.id == stream));
        drop(all);
        drop(stream_kill);
        // Strangers: a head still coming makes room before a request being answered.
        let mut r = Registry::default();
        let (answering, _, busy) = r.open();
        let _answering = Busy::new(&busy);
        let slow: Vec<u64> = (0..STRANGERS).map(|_| r.open().0).collect();
        assert!(r.strangers.iter().any(|c| c.id == answering) && !r.strangers.iter().any(|c| c.id == slow[0]));
    }
}
