//! The data directory: where it is, what is in it, and the lock that keeps two servers off it.
//!
//! ```text
//! assent.db      the SQLite database (+ -wal, -shm)
//! agent.token    the built-in agent `default`'s token (0600)
//! owner.token    the owner credential, only where no keychain is reachable (0600)
//! server.json    the running server's url and pid (present only while it runs)
//! config.toml    optional settings (see config.sample.toml)
//! assent.lock    held by the running server
//! ```

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};
use std::fs;
use std::path::{Path, PathBuf};

/// A resolved home directory.
#[derive(Debug, Clone)]
pub struct Home {
    /// The directory.
    pub dir: PathBuf,
}

/// What `server.json` holds.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ServerInfo {
    /// `http://127.0.0.1:PORT`
    pub url: String,
    /// The server's process id.
    pub pid: u32,
    /// Its version.
    #[serde(default)]
    pub version: String,
    /// The key the server proves it holds before a client sends it a credential (hex; this
    /// file is readable by the home's owner only).
    #[serde(default)]
    pub proof_key: Option<String>,
}

impl Home {
    /// `--home`, else `ASSENT_HOME`, else the platform data dir.
    pub fn resolve(flag: Option<PathBuf>) -> Result<Self> {
        let env = std::env::var_os("ASSENT_HOME").filter(|v| !v.is_empty()).map(PathBuf::from);
        let dir = match flag.or(env) {
            Some(d) => d,
            None => dirs::data_dir()
                .map(|d| d.join("assent"))
                .context("no home directory: pass --home DIR or set ASSENT_HOME")?,
        };
        Ok(Self { dir })
    }

    /// Creates the directory (0700) if needed.
    pub fn ensure(&self) -> Result<()> {
        fs::create_dir_all(&self.dir).with_context(|| format!("cannot create {}", self.dir.display()))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let _ = fs::set_permissions(&self.dir, fs::Permissions::from_mode(0o700));
        }
        Ok(())
    }

    /// The database file.
    pub fn db(&self) -> PathBuf {
        self.dir.join("assent.db")
    }
    /// The default agent's token file.
    pub fn agent_token(&self) -> PathBuf {
        self.dir.join("agent.token")
    }
    /// The running server's details.
    pub fn server_json(&self) -> PathBuf {
        self.dir.join("server.json")
    }
    /// The public keys that sign receipts, as the server last wrote them (a JWK Set): `assent
    /// run` checks the receipt of a proposal the hook left it with these, without a request.
    pub fn keys_json(&self) -> PathBuf {
        self.dir.join("keys.json")
    }
    /// Where the hook leaves the proposals a rule allowed confined, for `assent run`.
    pub fn runs(&self) -> PathBuf {
        self.dir.join("runs")
    }
    /// The remote listener's settings (written by `assent remote enable` and `disable`).
    pub fn remote_json(&self) -> PathBuf {
        self.dir.join("remote.json")
    }
    /// The config file.
    pub fn config(&self) -> PathBuf {
        self.dir.join("config.toml")
    }
    /// The lock file.
    pub fn lock(&self) -> PathBuf {
        self.dir.join("assent.lock")
    }

    /// The running server's endpoint, as `server.json` names it (none: no server).
    pub fn endpoint(&self) -> Option<assent_client::Endpoint> {
        self.server().map(|info| assent_client::Endpoint {
            url: info.url.trim_end_matches('/').to_string(),
            proof_key: info.proof_key.as_deref().and_then(|k| hex::decode(k).ok()),
        })
    }

    /// The running server, if `server.json` says there is one.
    pub fn server(&self) -> Option<ServerInfo> {
        let s = fs::read_to_string(self.server_json()).ok()?;
        serde_json::from_str(&s).ok()
    }

    /// Writes `server.json` atomically.
    pub fn write_server(&self, info: &ServerInfo) -> Result<()> {
        let body = serde_json::to_string_pretty(info)?;
        assent_secrets::owner::write_private(&self.server_json(), &body).map_err(|e| anyhow::anyhow!("{e}"))
    }

    /// Removes `server.json` if it is ours.
    pub fn remove_server(&self, pid: u32) {
        if self.server().is_some_and(|s| s.pid == pid) {
            let _ = fs::remove_file(self.server_json());
        }
    }

    /// Takes the home's lock, or explains who holds it.
    pub fn lock_exclusive(&self) -> Result<fs::File> {
        let f = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(self.lock())
            .with_context(|| format!("cannot open {}", self.lock().display()))?;
        match f.try_lock() {
            Ok(()) => Ok(f),
            Err(fs::TryLockError::WouldBlock) => {
                let who = self.server().map(|s| format!(" (pid {}, {})", s.pid, s.url)).unwrap_or_default();
                bail!(
                    "another Assent server is already running on {}{who}; stop it first, or use another --home",
                    self.dir.display()
                )
            }
            Err(fs::TryLockError::Error(e)) => Err(e).context("cannot lock the home directory"),
        }
    }

    /// Reads the default agent's token, or makes one (0600).
    pub fn default_agent_token(&self) -> Result<String> {
        if let Ok(t) = fs::read_to_string(self.agent_token()) {
            let t = t.trim().to_string();
            if !t.is_empty() {
                return Ok(t);
            }
        }
        let t = assent_core::secret::new_token("asnt");
        assent_secrets::owner::write_private(&self.agent_token(), &t).map_err(|e| anyhow::anyhow!("{e}"))?;
        Ok(t)
    }
}

/// How a command identifies itself as an agent (`--token-file`).
#[derive(Debug, Clone, clap::Args)]
pub struct AgentAuth {
    /// Act as an agent with the token in this file (default: the home's agent.token).
    #[arg(long, global = true, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
}

/// The agent token: `--token-file`, else `ASSENT_TOKEN`, else the home's `agent.token`.
pub fn agent_token(home: &Home, auth: &AgentAuth) -> Result<String> {
    match (&auth.token_file, std::env::var("ASSENT_TOKEN")) {
        (Some(f), _) => read_token(f),
        (None, Ok(t)) if !t.trim().is_empty() => Ok(t.trim().to_string()),
        _ => read_token(&home.agent_token()),
    }
}

/// Reads a token file (trimmed).
pub fn read_token(path: &Path) -> Result<String> {
    let t = fs::read_to_string(path).with_context(|| format!("cannot read the token file {}", path.display()))?;
    let t = t.trim().to_string();
    if t.is_empty() {
        bail!("the token file {} is empty", path.display());
    }
    Ok(t)
}
