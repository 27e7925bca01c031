//! Opening a home and running the engine and the API on it: what both hosts (`assent serve`
//! and the desktop app) do the same way.

use crate::config::Config;
use crate::home::{Home, ServerInfo};
use anyhow::{Context, Result, bail};
use assent_core::credentials::SecretSource;
use assent_core::kinds::KindRegistry;
use assent_core::secret::{new_token, token_hash};
use assent_core::store::Store;
use assent_core::{Engine, EngineParts};
use assent_secrets::owner::{self, Where};
use assent_secrets::{Keychain, KeychainSecrets};
use assent_store::SqliteStore;
use assent_store::pg::{self, PgStore, TeamOptions};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

pub use assent_secrets::owner::Where as OwnerWhere;

/// Writes the public keys that sign receipts to `keys.json` (see [`Home::keys_json`]); one
/// that cannot be written only costs `assent run` a request.
async fn write_keys(home: &Home, engine: &Engine) {
    let keys = match engine.receipt_keys().await {
        Ok(k) => k,
        Err(e) => return tracing::warn!(error = %e, "cannot read the receipt keys to write keys.json"),
    };
    let jwks: Vec<serde_json::Value> = keys
        .iter()
        .filter_map(|k| assent_receipt::PublicKey::from_base64(&k.x).ok().filter(|pk| pk.kid == k.kid))
        .map(|pk| pk.jwk())
        .collect();
    if let Err(e) = assent_boundary::ticket::write_keys(home, &serde_json::json!({ "keys": jwks })) {
        tracing::warn!(error = %e, "cannot write keys.json");
    }
}

/// Everything a host needs, opened on a home directory.
pub struct Opened {
    /// The engine.
    pub engine: Engine,
    /// The settings.
    pub config: Config,
    /// Where the owner credential is.
    pub owner_location: Where,
}

/// The receipt issuer of `home`: its key from the keychain (made on first use), named after
/// this node in a team. None, said in the log, when no key can be kept.
async fn receipt_issuer(home: &Home, config: &Config) -> Option<Arc<crate::receipts::Issuer>> {
    let (dir, mode) = (home.dir.clone(), config.owner_mode().unwrap_or(assent_secrets::owner::Mode::Auto));
    let seed = tokio::task::spawn_blocking(move || {
        owner::load_or_create_in(
            assent_secrets::owner::RECEIPT,
            &dir,
            mode,
            &Keychain::default(),
            crate::receipts::Issuer::generate,
        )
    })
    .await;
    let iss = match &config.store {
        Some(_) => format!("assent:{}", config.node_name()),
        None => "assent".to_string(),
    };
    let ttl = config.receipt_ttl().unwrap_or(crate::receipts::DEFAULT_TTL);
    let (dir, keychain) = (home.dir.clone(), Keychain::default());
    let keep: crate::receipts::Keep = Box::new(move |seed| {
        owner::keep_in(assent_secrets::owner::RECEIPT, &dir, mode, &keychain, seed).map(drop).map_err(|e| e.to_string())
    });
    match seed.map(|s| s.map(|k| crate::receipts::Issuer::new(&k.token, iss, ttl, keep))) {
        Ok(Ok(Ok(i))) => Some(Arc::new(i)),
        Ok(Ok(Err(e))) => {
            tracing::error!(error = %e, "the receipt key cannot be read: decisions carry no receipt");
            None
        }
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "no receipt key (the keychain and the home refused it): decisions carry no receipt");
            None
        }
        Err(_) => None,
    }
}

/// Opens the database, the owner credential and the default agent of `home`.
pub async fn open(home: &Home, config: Config) -> Result<Opened> {
    config.receipt_ttl()?;
    let store: Arc<dyn Store> = match &config.store {
        None => Arc::new(
            SqliteStore::open(&home.db()).await.with_context(|| format!("cannot open {}", home.db().display()))?,
        ),
        Some(url) => {
            let opts = team_options(&config, url).await?;
            let store = PgStore::open(&opts)
                .await
                .with_context(|| format!("cannot open the team store {}", pg::display_url(url)))?;
            tracing::info!(store = %pg::display_url(url), node = %opts.node, person = %opts.person, "on a team store");
            Arc::new(store)
        }
    };
    let mode = config.owner_mode()?;
    let dir = home.dir.clone();
    let owner = tokio::task::spawn_blocking(move || {
        owner::load_or_create(&dir, mode, &Keychain::default(), || new_token("asnt_owner"))
    })
    .await?
    .context("cannot load the owner credential")?;
    match owner.location {
        Where::Keychain => tracing::info!("the owner credential is in the system keychain"),
        Where::File => tracing::warn!(
            "no system keychain: the owner credential is in {} ({})",
            owner::file_path(&home.dir).display(),
            assent_secrets::PRIVATE_FILE
        ),
    }
    let mut kinds = KindRegistry::with_builtins();
    let secrets: Arc<dyn SecretSource> = Arc::new(KeychainSecrets::for_home(&home.dir));
    assent_apply::register(&mut kinds, config.path_policy(&home.dir), secrets.clone());
    let issuer = receipt_issuer(home, &config).await;
    let receipts = issuer.map(|i| i as Arc<dyn assent_core::engine::Receipts>);
    let mut engine_config = config.engine();
    engine_config.can_confine = confinement();
    let engine = Engine::new(EngineParts {
        store,
        kinds,
        config: engine_config,
        owner_hash: token_hash(&owner.token),
        secrets: Some(secrets),
        receipts,
    })
    .await?;
    let token = home.default_agent_token()?;
    if !engine.set_agent_token("default", &token).await? {
        tracing::info!("the built-in agent `default` is revoked; agent.token is not accepted");
    }
    let n = engine.recover().await;
    if n > 0 {
        tracing::info!(count = n, "settled writes that were interrupted when Assent last stopped");
    }
    Ok(Opened { engine, config, owner_location: owner.location })
}

/// The confinements commands a rule allows only confined can run under here (`assent run`),
/// said in the log: under any other, those rules ask instead.
fn confinement() -> Vec<assent_core::confine::Confine> {
    let support = assent_boundary::boxed::Support::detect();
    let mut can = Vec::new();
    for profile in assent_core::confine::Confine::ALL {
        let missing = support.missing(profile);
        if missing.is_empty() {
            can.push(profile);
        } else {
            tracing::warn!(
                profile = profile.as_str(),
                "commands cannot be confined as `{}` here ({}): rules that confine so ask instead",
                profile.as_str(),
                missing.join("; ")
            );
        }
    }
    if !can.is_empty() {
        tracing::info!(layers = %support.layers(), "commands run in a box");
    }
    can
}

/// What the remote listener needs from this host: its settings file, the Web Push key and
/// ntfy token from the keychain (the 0600 file where there is none), and the screen lock.
async fn remote_options(home: &Home, config: &Config) -> assent_remote::Options {
    use assent_secrets::owner::{NTFY, VAPID};
    let (dir, mode) = (home.dir.clone(), config.owner_mode().unwrap_or(assent_secrets::owner::Mode::Auto));
    let vapid = tokio::task::spawn_blocking(move || {
        owner::load_or_create_in(VAPID, &dir, mode, &Keychain::default(), assent_remote::push::Vapid::generate)
    })
    .await;
    let vapid = match vapid {
        Ok(Ok(k)) => Some(k.token),
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "no Web Push key (the keychain and the home refused it): phones are not pushed");
            None
        }
        Err(_) => None,
    };
    let dir = home.dir.clone();
    let ntfy_token: Arc<dyn Fn() -> Option<String> + Send + Sync> =
        Arc::new(move || owner::read_in(NTFY, &dir, &Keychain::default()));
    let locked: Arc<dyn Fn() -> futures_util::future::BoxFuture<'static, bool> + Send + Sync> =
        Arc::new(|| Box::pin(assent_notify::screen_locked()));
    assent_remote::Options {
        settings: Some(home.remote_json()),
        page: std::env::var_os("ASSENT_REMOTE_PAGE").map(Into::into),
        vapid,
        ntfy_token: Some(ntfy_token),
        locked: Some(locked),
    }
}

/// What the command line may say over `config.toml`.
#[derive(Debug, Clone, Default)]
pub struct Flags {
    /// The port.
    pub port: Option<u16>,
    /// The loopback address.
    pub bind: Option<IpAddr>,
    /// A team store URL.
    pub store: Option<String>,
}

/// The keychain entry that holds a team store's password.
pub fn store_password_entry(url: &str) -> String {
    format!("store:{}", pg::display_url(url))
}

/// How to reach the team store at `url`, and who this server is in it. The password is the
/// keychain's (`assent store password`), else `.pgpass`'s.
pub async fn team_options(config: &Config, url: &str) -> Result<TeamOptions> {
    pg::parse_url(url).map_err(anyhow::Error::msg)?;
    let entry = store_password_entry(url);
    let password = tokio::task::spawn_blocking(move || Keychain::default().get(&entry).ok()).await?;
    Ok(TeamOptions { url: url.to_string(), node: config.node_name(), person: config.person_name(), password })
}

/// Resolves when the process is asked to stop: Ctrl-C (SIGINT), SIGTERM, or SIGHUP (its
/// terminal closed). `assent serve` then stops cleanly; a waiting hook withdraws its proposal.
pub async fn stop_signal() {
    StopSignals::listen().recv().await;
}

/// The stop signals (SIGINT, SIGTERM, SIGHUP; Ctrl-C on Windows), listened for from the moment
/// this is made: one that arrives before [`StopSignals::recv`] is awaited is not lost.
pub struct StopSignals {
    #[cfg(unix)]
    signals: Option<[tokio::signal::unix::Signal; 3]>,
}

impl StopSignals {
    /// Starts listening now (on Unix, the handlers are in place when this returns).
    pub fn listen() -> Self {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let signals = match (
                signal(SignalKind::interrupt()),
                signal(SignalKind::terminate()),
                signal(SignalKind::hangup()),
            ) {
                (Ok(int), Ok(term), Ok(hup)) => Some([int, term, hup]),
                _ => None,
            };
            StopSignals { signals }
        }
        #[cfg(not(unix))]
        {
            StopSignals {}
        }
    }

    /// Resolves at the first stop signal (never, where they could not be listened for).
    pub async fn recv(self) {
        #[cfg(unix)]
        {
            let Some([mut int, mut term, mut hup]) = self.signals else {
                return std::future::pending().await;
            };
            tokio::select! {
                _ = int.recv() => {}
                _ = term.recv() => {}
                _ = hup.recv() => {}
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

/// A running engine and API: what both hosts (`assent serve`, the desktop app) hold.
pub struct Running {
    /// The engine.
    pub engine: Engine,
    /// The remote listener (answering from a phone), on or off.
    pub remote: assent_remote::Remote,
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    /// Where the owner credential is.
    pub owner_location: Where,
    /// The settings in force.
    pub config: Config,
    /// The home directory.
    pub home: Home,
    stop: tokio::sync::watch::Sender<bool>,
    api: tokio::task::JoinHandle<Result<(), assent_api::ServeError>>,
    expiry: tokio::task::JoinHandle<()>,
    api_done: bool,
    pid: u32,
    _lock: std::fs::File,
}

/// Takes the home's lock, opens the engine, listens on loopback, writes `server.json` and
/// starts serving and expiring. `port` and `bind` override the config.
pub async fn start(home: Home, flags: Flags) -> Result<Running> {
    home.ensure()?;
    let mut config = Config::load(&home.config())?;
    if let Some(p) = flags.port {
        config.port = p;
    }
    if let Some(b) = flags.bind {
        config.bind = b;
    }
    if let Some(s) = flags.store {
        config.store = Some(s);
    }
    if !config.bind.is_loopback() {
        bail!(
            "refusing to listen on {}: Assent's API is for local agents and listens on loopback (127.0.0.1 or ::1) only",
            config.bind
        );
    }
    let lock = home.lock_exclusive()?;
    // Whoever wrote a server.json that is still here while we hold the lock is gone: the file
    // names a port someone else may hold by now.
    if let Some(stale) = home.server() {
        tracing::info!(pid = stale.pid, url = %stale.url, "removing the server.json of a server that is no longer running");
        let _ = std::fs::remove_file(home.server_json());
    }
    // Every open wait and event stream is a socket: allow as many as the system lets us.
    match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(n) => tracing::debug!(limit = n, "open-file limit"),
        Err(e) => tracing::warn!(error = %e, "cannot raise the open-file limit"),
    }
    let proof_key = assent_core::secret::random_bytes::<32>().to_vec();
    let addr = SocketAddr::new(config.bind, config.port);
    let opened = open(&home, config).await?;
    let remote = assent_remote::Remote::start(opened.engine.clone(), remote_options(&home, &opened.config).await).await;
    let api_cfg = assent_api::ApiConfig {
        max_body_bytes: opened.config.max_body_bytes,
        max_connections: opened.config.max_connections.max(1),
        header_read_timeout: std::time::Duration::from_secs(opened.config.header_read_timeout.max(1)),
        proof_key: Some(proof_key.clone()),
        remote: Some(remote.clone()),
    };
    let listener = tokio::net::TcpListener::bind(addr).await.with_context(|| format!("cannot listen on {addr}"))?;
    let url = format!("http://{}", listener.local_addr()?);
    let pid = std::process::id();
    home.write_server(&ServerInfo {
        url: url.clone(),
        pid,
        version: env!("CARGO_PKG_VERSION").into(),
        proof_key: Some(hex::encode(&proof_key)),
    })?;
    tracing::info!(%url, home = %home.dir.display(), "Assent is listening");
    write_keys(&home, &opened.engine).await;
    // Written again at each rotation (`POST /v1/keys/rotate`, `assent receipt rotate`): a ticket
    // signed by the new key would otherwise be refused locally, and cost its run a request.
    {
        let (home, engine) = (home.clone(), opened.engine.clone());
        let mut rotated = engine.keys_rotated();
        tokio::spawn(async move {
            while rotated.changed().await.is_ok() {
                write_keys(&home, &engine).await;
            }
        });
    }
    // Tickets the hook left for calls the client never ran (the person stopped it) go after an
    // hour; looked for every ten minutes, off the hook's path.
    let runs = home.runs();
    tokio::spawn(async move {
        let mut every = tokio::time::interval(std::time::Duration::from_secs(600));
        loop {
            every.tick().await;
            let runs = runs.clone();
            let _ = tokio::task::spawn_blocking(move || assent_boundary::ticket::prune(&runs)).await;
        }
    });

    let (stop, stop_rx) = tokio::sync::watch::channel(false);
    let engine = opened.engine.clone();
    let mut rx1 = stop_rx.clone();
    let expiry = tokio::spawn(async move {
        engine
            .run_expiry(async move {
                let _ = rx1.wait_for(|s| *s).await;
            })
            .await
    });
    let mut rx2 = stop_rx;
    let api = tokio::spawn(assent_api::serve(listener, opened.engine.clone(), api_cfg, async move {
        let _ = rx2.wait_for(|s| *s).await;
    }));
    Ok(Running {
        engine: opened.engine,
        remote,
        url,
        owner_location: opened.owner_location,
        config: opened.config,
        home,
        stop,
        api,
        expiry,
        api_done: false,
        pid,
        _lock: lock,
    })
}

impl Running {
    /// Stops serving (open requests get a moment; long-polls and event streams are cut after
    /// that) and removes `server.json`.
    pub async fn stop(self) {
        // Each part gets a bounded moment: a stop asked for (SIGTERM, Ctrl-C) always ends the
        // process, whatever a part still waits on (once, an open event stream held one).
        let moment = std::time::Duration::from_secs(2);
        let _ = self.stop.send(true);
        if tokio::time::timeout(moment, self.remote.shutdown()).await.is_err() {
            tracing::warn!("the remote listener did not stop in time");
        }
        let mut api = self.api;
        if !self.api_done && tokio::time::timeout(moment, &mut api).await.is_err() {
            tracing::warn!("the API did not stop in time; its connections are cut");
            api.abort();
        }
        let mut expiry = self.expiry;
        if tokio::time::timeout(moment, &mut expiry).await.is_err() {
            tracing::warn!("the expiry sweeper did not stop in time");
            expiry.abort();
        }
        self.home.remove_server(self.pid);
        tracing::info!("Assent stopped");
    }

    /// Resolves if the API server ends by itself (it only does on an error).
    pub async fn failed(&mut self) -> anyhow::Error {
        let r = (&mut self.api).await;
        self.api_done = true;
        match r {
            Ok(Ok(())) => anyhow::anyhow!("the API server stopped"),
            Ok(Err(e)) => e.into(),
            Err(e) => anyhow::anyhow!("the API server task failed: {e}"),
        }
    }
}
