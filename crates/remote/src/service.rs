//! Turning the remote listener on and off while Assent runs, pairing devices and revoking
//! them: what the owner API, the command line and the app's Settings call.
//!
//! The settings live in the home's `remote.json` (`{"enabled", "origin", "port", "push_after",
//! "ntfy"}`), written here and read when Assent starts, so the listener comes back on after a
//! restart on the same port the person's tunnel points at.

use crate::listener::{self, Listener};
use crate::push::{Sender, Vapid};
use crate::{RemoteError, front::Front};
use assent_core::Engine;
use assent_core::time::Timestamp;
use serde::{Deserialize, Serialize};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

/// The listener's default port (the API's, 4517, plus one).
pub const DEFAULT_PORT: u16 = 4518;

/// Seconds a proposal waits before the phones are pushed, unless set.
pub const DEFAULT_PUSH_AFTER: u64 = 60;

/// The longest wait before a push: a day.
pub const MAX_PUSH_AFTER: u64 = 86_400;

/// What `remote.json` holds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Settings {
    /// Whether the listener runs.
    pub enabled: bool,
    /// The origin the phone reaches it at (`https://NAME`).
    pub origin: Option<String>,
    /// The loopback port it listens on (0 picks a free one each time).
    pub port: Option<u16>,
    /// Seconds a proposal may wait before the phones are pushed (0: at once; none: 60).
    pub push_after: Option<u64>,
    /// An ntfy topic to push to as well (`https://ntfy.sh/TOPIC`); its token, if it needs one,
    /// is in the keychain.
    pub ntfy: Option<String>,
}

/// A change of settings (`assent remote enable`): what is left out stays as it was.
#[derive(Debug, Clone, Default)]
pub struct Change {
    /// The origin.
    pub origin: Option<String>,
    /// The loopback port.
    pub port: Option<u16>,
    /// Seconds before a push.
    pub push_after: Option<u64>,
    /// The ntfy topic URL (`Some("")` removes it).
    pub ntfy: Option<String>,
}

/// What the host gives the controller.
#[derive(Default)]
pub struct Options {
    /// Where the settings are kept (none: in memory only).
    pub settings: Option<PathBuf>,
    /// A folder to serve the page from instead of the embedded one (`ASSENT_REMOTE_PAGE`).
    pub page: Option<PathBuf>,
    /// The Web Push (VAPID) key as [`crate::push::Vapid::generate`] made it (none: no Web Push).
    pub vapid: Option<String>,
    /// Reads the ntfy token from the keychain, at push time.
    pub ntfy_token: Option<Arc<dyn Fn() -> Option<String> + Send + Sync>>,
    /// Whether the desktop's screen is locked or idle now (pushes go at once then).
    pub locked: Option<Arc<dyn Fn() -> futures_util::future::BoxFuture<'static, bool> + Send + Sync>>,
}

/// The remote listener's state, as `assent remote status` shows it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = RemoteStatus))]
pub struct Status {
    /// Whether it runs.
    pub enabled: bool,
    /// The origin it answers (also kept while it is off).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    /// `127.0.0.1:PORT`, where the tunnel must point, while it runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    /// Devices paired and not revoked.
    pub devices: usize,
    /// Of them, those that asked for pushes.
    pub subscribed: usize,
    /// Seconds a proposal waits before the phones are pushed (0: at once).
    pub push_after: u64,
    /// The ntfy topic pushed to as well.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ntfy: Option<String>,
}

/// A pairing code for a phone to open.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = RemotePairing))]
pub struct Pairing {
    /// The link to open on the phone (it carries the code after `#`, which no server or proxy
    /// on the way sees).
    pub link: String,
    /// When the code stops working.
    pub expires_at: Timestamp,
}

/// A pairing link as a QR code: `width` modules a side, row by row, `1` dark and `0` light.
#[derive(Debug, Clone, Serialize)]
pub struct Qr {
    /// Modules a side.
    pub width: usize,
    /// Every module, row by row.
    pub modules: String,
}

impl Qr {
    /// The QR code of `text` (none if it is too long for one).
    pub fn of(text: &str) -> Option<Qr> {
        let code = qrcode::QrCode::new(text.as_bytes()).ok()?;
        let modules = code.to_colors().iter().map(|c| if *c == qrcode::Color::Dark { '1' } else { '0' }).collect();
        Some(Qr { width: code.width(), modules })
    }
}

/// Why the listener could not be changed.
#[derive(Debug, thiserror::Error)]
pub enum ControlError {
    /// The origin is not one a phone's passkey can be bound to.
    #[error(transparent)]
    Origin(RemoteError),
    /// The port is taken.
    #[error("cannot listen on {addr}: {error}")]
    Bind {
        /// Where.
        addr: SocketAddr,
        /// Why.
        error: std::io::Error,
    },
    /// The wait before a push is longer than [`MAX_PUSH_AFTER`].
    #[error("`push_after` is 0 to {MAX_PUSH_AFTER} seconds")]
    PushAfter,
    /// The ntfy topic is not an https URL with a topic.
    #[error("the ntfy topic must be https://HOST/TOPIC: {0}")]
    Ntfy(String),
    /// It is off, so there is nothing to pair with.
    #[error("the remote listener is off: turn it on first (`assent remote enable --origin URL`)")]
    Disabled,
    /// Too many codes at once.
    #[error("too many pairing codes at once: use one, or wait five minutes")]
    Busy,
    /// `remote.json` could not be written.
    #[error("cannot save the remote settings: {0}")]
    Save(std::io::Error),
    /// The store failed.
    #[error(transparent)]
    Core(#[from] assent_core::CoreError),
}

struct Live {
    origin: String,
    port: u16,
    addr: SocketAddr,
    listener: Arc<Listener>,
    stop: tokio::sync::watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
    /// The task that pushes what waits too long.
    pusher: tokio::task::JoinHandle<()>,
}

struct Ctl {
    engine: Engine,
    settings: Option<PathBuf>,
    page: Option<PathBuf>,
    vapid: Option<Arc<Vapid>>,
    ntfy_token: Option<Arc<dyn Fn() -> Option<String> + Send + Sync>>,
    locked: Option<Arc<dyn Fn() -> futures_util::future::BoxFuture<'static, bool> + Send + Sync>>,
    http: reqwest::Client,
    live: tokio::sync::Mutex<(Settings, Option<Live>)>,
}

/// The remote listener's controller. Cheap to clone.
#[derive(Clone)]
pub struct Remote(Arc<Ctl>);

impl std::fmt::Debug for Remote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Remote")
    }
}

impl Remote {
    /// The controller of `engine`'s listener (see [`Options`]). Starts the listener if the
    /// settings say it was on; if it cannot start, says why in the log and stays off.
    pub async fn start(engine: Engine, o: Options) -> Self {
        let saved = o.settings.as_deref().map(load).unwrap_or_default();
        let vapid = o.vapid.as_deref().and_then(|k| match Vapid::from_kept(k) {
            Ok(v) => Some(Arc::new(v)),
            Err(e) => {
                tracing::error!(error = %e, "no Web Push: the VAPID key cannot be read");
                None
            }
        });
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(std::time::Duration::from_secs(15))
            .build()
            .unwrap_or_default();
        let remote = Remote(Arc::new(Ctl {
            engine,
            settings: o.settings,
            page: o.page,
            vapid,
            ntfy_token: o.ntfy_token,
            locked: o.locked,
            http,
            live: tokio::sync::Mutex::new((saved.clone(), None)),
        }));
        if let (true, Some(origin)) = (saved.enabled, saved.origin.as_deref()) {
            let mut g = remote.0.live.lock().await;
            match remote.listen(origin, saved.port.unwrap_or(DEFAULT_PORT), &saved).await {
                Ok(live) => g.1 = Some(live),
                Err(e) => tracing::error!(error = %e, "the remote listener could not start; it stays off"),
            }
        }
        remote
    }

    fn pusher(&self, s: &Settings) -> tokio::task::JoinHandle<()> {
        let sender = Arc::new(Sender {
            engine: self.0.engine.clone(),
            vapid: self.0.vapid.clone(),
            push_after: std::time::Duration::from_secs(s.push_after.unwrap_or(DEFAULT_PUSH_AFTER)),
            ntfy: s.ntfy.clone(),
            ntfy_token: self.0.ntfy_token.clone(),
            locked: self.0.locked.clone(),
            http: self.0.http.clone(),
        });
        tokio::spawn(sender.run())
    }

    async fn listen(&self, origin: &str, port: u16, s: &Settings) -> Result<Live, ControlError> {
        let front = Front::new(origin).map_err(ControlError::Origin)?;
        let vapid = self.0.vapid.as_ref().map(|v| v.public_key());
        let listener = Arc::new(Listener::new(self.0.engine.clone(), origin, vapid).map_err(ControlError::Origin)?);
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let socket = tokio::net::TcpListener::bind(addr).await.map_err(|error| ControlError::Bind { addr, error })?;
        let addr = socket.local_addr().map_err(|error| ControlError::Bind { addr, error })?;
        let routes = crate::page::routes(self.0.page.clone()).merge(listener::router(listener.clone()));
        let app = front.guard_logged(routes, self.0.engine.clone());
        let vouch = listener::vouch(listener.clone());
        let (stop, mut rx) = tokio::sync::watch::channel(false);
        let task = tokio::spawn(async move {
            let shutdown = async move {
                let _ = rx.wait_for(|s| *s).await;
            };
            crate::serve::serve(socket, app, vouch, shutdown).await;
        });
        tracing::info!(%origin, %addr, "the remote listener is on");
        let pusher = self.pusher(s);
        Ok(Live { origin: origin.to_string(), port, addr, listener, stop, task, pusher })
    }

    fn save(&self, s: &Settings) -> Result<(), ControlError> {
        let Some(path) = &self.0.settings else { return Ok(()) };
        let text = serde_json::to_string_pretty(s).unwrap_or_default();
        let tmp = path.with_extension("json.tmp");
        std::fs::write(&tmp, text + "\n").and_then(|()| std::fs::rename(&tmp, path)).map_err(ControlError::Save)
    }

    /// Where things stand.
    pub async fn status(&self) -> Result<Status, ControlError> {
        let g = self.0.live.lock().await;
        let paired: Vec<_> = self.0.engine.devices().await?.into_iter().filter(|d| d.revoked_at.is_none()).collect();
        Ok(Status {
            enabled: g.1.is_some(),
            origin: g.1.as_ref().map(|l| l.origin.clone()).or_else(|| g.0.origin.clone()),
            address: g.1.as_ref().map(|l| l.addr.to_string()),
            devices: paired.len(),
            subscribed: paired.iter().filter(|d| d.push.is_some()).count(),
            push_after: g.0.push_after.unwrap_or(DEFAULT_PUSH_AFTER),
            ntfy: g.0.ntfy.clone(),
        })
    }

    /// Turns the listener on at the origin (on the port, else the one used before, else
    /// [`DEFAULT_PORT`]), or moves it there, and sets when and where pushes go. Sessions end
    /// when the origin or port changes.
    pub async fn enable(&self, c: Change) -> Result<Status, ControlError> {
        if c.push_after.is_some_and(|s| s > MAX_PUSH_AFTER) {
            return Err(ControlError::PushAfter);
        }
        {
            let mut g = self.0.live.lock().await;
            let origin = match c.origin.as_deref().or(g.0.origin.as_deref()) {
                Some(o) => crate::checked_origin(o).map_err(ControlError::Origin)?.origin().ascii_serialization(),
                None => return Err(ControlError::Origin(RemoteError::Origin("(none given)".into()))),
            };
            let ntfy = match c.ntfy {
                Some(u) if u.is_empty() => None,
                Some(u) => Some(checked_ntfy(&u)?),
                None => g.0.ntfy.clone(),
            };
            let next = Settings {
                enabled: true,
                origin: Some(origin.clone()),
                port: Some(c.port.or(g.0.port).unwrap_or(DEFAULT_PORT)),
                push_after: c.push_after.or(g.0.push_after),
                ntfy,
            };
            let port = next.port.unwrap_or(DEFAULT_PORT);
            let same = g.1.as_ref().is_some_and(|l| l.origin == origin && l.port == port);
            if same {
                // The same listener; pushes as now set.
                if let Some(live) = g.1.as_mut() {
                    live.pusher.abort();
                    live.pusher = self.pusher(&next);
                }
            } else {
                // The old listener gives up its port before the new one takes it.
                if let Some(old) = g.1.take() {
                    stop(old).await;
                }
                match self.listen(&origin, port, &next).await {
                    Ok(live) => g.1 = Some(live),
                    Err(e) => {
                        // Still off, and said so: nothing half-done is saved.
                        g.0.enabled = false;
                        return Err(e);
                    }
                }
            }
            g.0 = next;
            self.save(&g.0)?;
            self.0
                .engine
                .remote_log("", "enabled", Timestamp::now(), Some(serde_json::json!({ "origin": g.0.origin })))
                .await;
        }
        self.status().await
    }

    /// Turns the listener off: every session, code and ceremony ends with it.
    pub async fn disable(&self) -> Result<Status, ControlError> {
        {
            let mut g = self.0.live.lock().await;
            let was = g.1.take();
            if let Some(live) = was {
                stop(live).await;
                self.0.engine.remote_log("", "disabled", Timestamp::now(), None).await;
            }
            g.0.enabled = false;
            self.save(&g.0)?;
        }
        self.status().await
    }

    /// A pairing code, as a link to open on the phone (`name` fills in the device's name).
    pub async fn pair(&self, name: Option<&str>) -> Result<Pairing, ControlError> {
        if let Some(n) = name {
            assent_core::engine::devices::validate_device_name(n)?;
        }
        let g = self.0.live.lock().await;
        let Some(live) = &g.1 else { return Err(ControlError::Disabled) };
        let now = Timestamp::now();
        let code = {
            let mut access = live.listener.access.lock().unwrap_or_else(|e| e.into_inner());
            access.pairing_code(now)
        };
        let code = code.map_err(|_| ControlError::Busy)?;
        let mut link = format!("{}/#pair={code}", live.origin);
        if let Some(n) = name {
            link.push_str("&name=");
            link.extend(form_urlencoded(n));
        }
        Ok(Pairing { link, expires_at: Timestamp(now.0 + crate::access::CODE_MS) })
    }

    /// Revokes a device: it can no longer log in or decide, and its sessions end now.
    pub async fn revoke(&self, name: &str) -> Result<(), ControlError> {
        self.0.engine.revoke_device(name).await?;
        if let Some(live) = &self.0.live.lock().await.1 {
            live.listener.access.lock().unwrap_or_else(|e| e.into_inner()).forget(name);
        }
        tracing::info!(device = %name, "a paired device was revoked");
        Ok(())
    }

    /// Stops the listener as Assent stops (the settings stay as they are).
    pub async fn shutdown(&self) {
        if let Some(live) = self.0.live.lock().await.1.take() {
            stop(live).await;
        }
    }
}

async fn stop(live: Live) {
    live.pusher.abort();
    let _ = live.stop.send(true);
    let mut task = live.task;
    // Open event streams hold a graceful stop; a moment, then they are cut.
    if tokio::time::timeout(std::time::Duration::from_secs(1), &mut task).await.is_err() {
        task.abort();
        let _ = task.await;
    }
    live.listener.access.lock().unwrap_or_else(|e| e.into_inner()).clear();
    tracing::info!(addr = %live.addr, "the remote listener is off");
}

/// An ntfy topic URL: `https://HOST/TOPIC` (or `http` to a loopback address, for tests).
fn checked_ntfy(u: &str) -> Result<String, ControlError> {
    let bad = || ControlError::Ntfy(u.to_string());
    let url = webauthn_rs::prelude::Url::parse(u).map_err(|_| bad())?;
    let loopback = matches!(url.host_str(), Some("127.0.0.1" | "localhost" | "[::1]"));
    if !(url.scheme() == "https" || (url.scheme() == "http" && loopback))
        || url.path().len() < 2
        || !url.username().is_empty()
        || url.query().is_some()
    {
        return Err(bad());
    }
    Ok(url.to_string())
}

fn load(path: &std::path::Path) -> Settings {
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text).unwrap_or_else(|e| {
            tracing::error!(error = %e, path = %path.display(), "cannot read the remote settings; the listener stays off");
            Settings::default()
        }),
        Err(_) => Settings::default(),
    }
}

/// `s` percent-encoded for a link's fragment.
fn form_urlencoded(s: &str) -> impl Iterator<Item = char> + '_ {
    s.bytes().flat_map(|b| {
        let keep = b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~');
        let text = if keep { (b as char).to_string() } else { format!("%{b:02X}") };
        text.chars().collect::<Vec<_>>()
    })
}
