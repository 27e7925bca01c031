//! `assent serve`: the engine and the API, headless. The desktop app hosts the same pieces.

use crate::config::Config;
use crate::home::{Home, ServerInfo};
use anyhow::{Context, Result, bail};
use assent_core::credentials::{SecretError, SecretSource};
use assent_core::kinds::KindRegistry;
use assent_core::secret::{new_token, token_hash};
use assent_core::{Engine, EngineParts};
use assent_secrets::Keychain;
use assent_secrets::owner::{self, Where};
use assent_store::SqliteStore;
use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

/// Flags of `serve`.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// Port to listen on (0 picks a free one). Default: config `port`, else 4517.
    #[arg(long)]
    pub port: Option<u16>,
    /// Address to listen on; only loopback addresses are accepted.
    #[arg(long)]
    pub bind: Option<IpAddr>,
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

/// Opens the database, the owner credential and the default agent of `home`.
pub async fn open(home: &Home, config: Config) -> Result<Opened> {
    let store = SqliteStore::open(&home.db()).await.with_context(|| format!("cannot open {}", home.db().display()))?;
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
            "no system keychain: the owner credential is in {} (mode 0600)",
            owner::file_path(&home.dir).display()
        ),
    }
    let mut kinds = KindRegistry::with_builtins();
    let secrets: Arc<dyn SecretSource> = Arc::new(KeychainSecrets::for_home(&home.dir));
    assent_apply::register(&mut kinds, config.path_policy(&home.dir), secrets.clone());
    let engine = Engine::new(EngineParts {
        store: Arc::new(store),
        kinds,
        config: config.engine(),
        owner_hash: token_hash(&owner.token),
        secrets: Some(secrets),
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

/// Credentials' secrets in the system keychain, one entry per credential and home.
pub struct KeychainSecrets {
    keychain: Keychain,
    prefix: String,
}

impl KeychainSecrets {
    /// The secrets of `home`'s credentials.
    pub fn for_home(home: &std::path::Path) -> Self {
        let owner_user = owner::keychain_user(home);
        let tag = owner_user.trim_start_matches("owner:").to_string();
        Self { keychain: Keychain::default(), prefix: format!("credential:{tag}:") }
    }
}

impl SecretSource for KeychainSecrets {
    fn get(&self, credential: &str) -> Result<String, SecretError> {
        self.keychain.get(&format!("{}{credential}", self.prefix)).map_err(|e| SecretError(e.to_string()))
    }
    fn set(&self, credential: &str, secret: &str) -> Result<(), SecretError> {
        let user = format!("{}{credential}", self.prefix);
        self.keychain.set(&user, secret).map_err(|e| SecretError(e.to_string()))?;
        match self.keychain.get(&user) {
            Ok(back) if back == secret => Ok(()),
            Ok(_) => Err(SecretError("the keychain did not keep the secret".into())),
            Err(e) => Err(SecretError(e.to_string())),
        }
    }
    fn delete(&self, credential: &str) -> Result<(), SecretError> {
        self.keychain.delete(&format!("{}{credential}", self.prefix)).map_err(|e| SecretError(e.to_string()))
    }
}

/// Resolves when the process is asked to stop (Ctrl-C, SIGTERM).
pub async fn stop_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! { _ = ctrl_c => {}, _ = term => {} }
}

/// Runs the server until a stop signal.
pub async fn run(home: Home, args: ServeArgs) -> Result<()> {
    home.ensure()?;
    let mut config = Config::load(&home.config())?;
    if let Some(p) = args.port {
        config.port = p;
    }
    if let Some(b) = args.bind {
        config.bind = b;
    }
    if !config.bind.is_loopback() {
        bail!(
            "refusing to listen on {}: Assent's API is for local agents and listens on loopback (127.0.0.1 or ::1) only",
            config.bind
        );
    }
    let _lock = home.lock_exclusive()?;
    // Every open wait and event stream is a socket: allow as many as the system lets us.
    match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(n) => tracing::debug!(limit = n, "open-file limit"),
        Err(e) => tracing::warn!(error = %e, "cannot raise the open-file limit"),
    }
    let api = assent_api::ApiConfig { max_body_bytes: config.max_body_bytes };
    let addr = SocketAddr::new(config.bind, config.port);
    let opened = open(&home, config).await?;
    let listener = tokio::net::TcpListener::bind(addr).await.with_context(|| format!("cannot listen on {addr}"))?;
    let local = listener.local_addr()?;
    let url = format!("http://{local}");
    let pid = std::process::id();
    home.write_server(&ServerInfo { url: url.clone(), pid, version: env!("CARGO_PKG_VERSION").into() })?;
    tracing::info!(%url, home = %home.dir.display(), "Assent is listening");
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "Assent is listening on {url}/v1 (home {})", home.dir.display())?;
        out.flush()?;
    }

    let engine = opened.engine.clone();
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let mut rx1 = stop_rx.clone();
    let expiry = tokio::spawn(async move {
        engine
            .run_expiry(async move {
                let _ = rx1.wait_for(|s| *s).await;
            })
            .await
    });
    let mut rx2 = stop_rx.clone();
    let served = assent_api::serve(listener, opened.engine.clone(), api, async move {
        let _ = rx2.wait_for(|s| *s).await;
    });
    tokio::pin!(served);
    let result = tokio::select! {
        r = &mut served => r.map_err(anyhow::Error::from),
        _ = stop_signal() => {
            let _ = stop_tx.send(true);
            // Give open requests a moment; long-polls and event streams are cut after that.
            let _ = tokio::time::timeout(std::time::Duration::from_secs(2), &mut served).await;
            Ok(())
        }
    };
    let _ = stop_tx.send(true);
    let _ = expiry.await;
    home.remove_server(pid);
    tracing::info!("Assent stopped");
    result
}
