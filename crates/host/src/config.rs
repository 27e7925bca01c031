//! Settings: defaults in code, then `config.toml` in the home, then environment variables,
//! then flags. See `config.sample.toml` at the top of the repository for every key.

use anyhow::{Context, Result};
use serde::Deserialize;
use std::net::IpAddr;
use std::path::Path;

/// The default port of `assent serve`.
pub const DEFAULT_PORT: u16 = 4517;

/// Everything `config.toml` may say.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// Address to listen on: loopback only.
    pub bind: IpAddr,
    /// Port (0 picks a free one).
    pub port: u16,
    /// Seconds until a proposal expires when the agent does not say.
    pub default_expires_in: u64,
    /// Longest `expires_in` accepted.
    pub max_expires_in: u64,
    /// Pending proposals per agent.
    pub max_pending_per_agent: u32,
    /// Open waits per agent.
    pub max_waits_per_agent: u32,
    /// Largest request body in bytes.
    pub max_body_bytes: usize,
    /// Bytes of payloads and previews one agent may store in any 24 hours.
    pub max_bytes_per_agent_per_day: u64,
    /// Seconds a settled proposal's bulky content is kept.
    pub content_retention_secs: u64,
    /// Connections the API keeps open at once.
    pub max_connections: usize,
    /// Seconds a client may take to send a request's headers (and an idle connection stays).
    pub header_read_timeout: u64,
    /// Where the owner credential lives: `auto`, `keychain` or `file`.
    pub owner_credential: String,
    /// Paths never written, besides the built-in ones.
    pub protected_paths: Vec<std::path::PathBuf>,
    /// Per agent, the only folders its file proposals may touch.
    pub allowed_roots: std::collections::HashMap<String, Vec<std::path::PathBuf>>,
    /// A team store shared with other Assent servers: `postgres://USER@HOST:PORT/DB` (none: the
    /// SQLite database in the home). The password comes from the keychain or `.pgpass`.
    pub store: Option<String>,
    /// This server's name in the team (default: the host name).
    pub node: Option<String>,
    /// Who decides on this server, in the team's records (default: the OS user).
    pub person: Option<String>,
    /// The folders the person works in (`~/` allowed): when given, a session's working folder
    /// outside all of them makes no command "inside the folder" for the built-in rules.
    pub work_roots: Vec<std::path::PathBuf>,
    /// Decisions' receipts.
    pub receipts: ReceiptSettings,
}

/// The longest a receipt may be relied on: 30 days.
pub const MAX_RECEIPT_TTL: u64 = 30 * 24 * 3600;

/// `[receipts]` in `config.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ReceiptSettings {
    /// Seconds after the decision that its receipt may be relied on (`exp`).
    pub ttl_secs: u64,
}

impl Default for ReceiptSettings {
    fn default() -> Self {
        Self { ttl_secs: 600 }
    }
}

impl Default for Config {
    fn default() -> Self {
        let e = assent_core::EngineConfig::default();
        Self {
            bind: IpAddr::from([127, 0, 0, 1]),
            port: DEFAULT_PORT,
            default_expires_in: e.default_expires_in,
            max_expires_in: e.max_expires_in,
            max_pending_per_agent: e.max_pending_per_agent,
            max_waits_per_agent: e.max_waits_per_agent,
            max_body_bytes: assent_api::ApiConfig::default().max_body_bytes,
            max_bytes_per_agent_per_day: e.max_bytes_per_agent_per_day,
            content_retention_secs: e.content_retention_secs,
            max_connections: assent_api::ApiConfig::default().max_connections,
            header_read_timeout: assent_api::ApiConfig::default().header_read_timeout.as_secs(),
            owner_credential: "auto".into(),
            protected_paths: Vec::new(),
            allowed_roots: Default::default(),
            work_roots: Vec::new(),
            store: None,
            node: None,
            person: None,
            receipts: ReceiptSettings::default(),
        }
    }
}

impl Config {
    /// Reads `path` if it exists, then applies environment overrides.
    pub fn load(path: &Path) -> Result<Self> {
        let mut c = match std::fs::read_to_string(path) {
            Ok(s) => toml::from_str(&s).with_context(|| format!("invalid {}", path.display()))?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Config::default(),
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        };
        if let Ok(v) = std::env::var("ASSENT_OWNER_CREDENTIAL") {
            c.owner_credential = v;
        }
        for (var, field) in
            [("ASSENT_STORE", &mut c.store), ("ASSENT_NODE", &mut c.node), ("ASSENT_PERSON", &mut c.person)]
        {
            if let Ok(v) = std::env::var(var) {
                *field = Some(v).filter(|v| !v.is_empty());
            }
        }
        Ok(c)
    }

    /// This server's name in a team: `node`, or the host name made into a name.
    pub fn node_name(&self) -> String {
        if let Some(n) = &self.node {
            return n.clone();
        }
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .ok()
            .or_else(|| std::env::var("HOSTNAME").ok())
            .or_else(|| std::env::var("COMPUTERNAME").ok())
            .unwrap_or_default();
        let name: String = host
            .trim()
            .to_ascii_lowercase()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '-' })
            .take(64)
            .collect();
        if name.is_empty() { "node".into() } else { name }
    }

    /// The receipts' settings, checked.
    pub fn receipt_ttl(&self) -> Result<i64> {
        match self.receipts.ttl_secs {
            t @ 1..=MAX_RECEIPT_TTL => Ok(t as i64),
            t => anyhow::bail!("receipts.ttl_secs is {t}: it is 1 to {MAX_RECEIPT_TTL} seconds"),
        }
    }

    /// Who decides here: `person`, or the OS user.
    pub fn person_name(&self) -> String {
        self.person
            .clone()
            .or_else(|| std::env::var("USER").ok())
            .or_else(|| std::env::var("USERNAME").ok())
            .filter(|p| !p.trim().is_empty())
            .unwrap_or_else(|| "owner".into())
    }

    /// The owner-credential mode.
    pub fn owner_mode(&self) -> Result<assent_secrets::owner::Mode> {
        self.owner_credential.parse().map_err(|e: String| anyhow::anyhow!("owner_credential: {e}"))
    }

    /// The file policy: the built-in protected paths (Assent's home, keychain files, SSH and
    /// GnuPG keys, and on Linux /proc, /sys and /dev), the configured ones, and the allowed
    /// roots.
    pub fn path_policy(&self, home: &Path) -> assent_apply::paths::PathPolicy {
        let mut protected = vec![home.to_path_buf()];
        if let Some(h) = dirs::home_dir() {
            for p in [".ssh", ".gnupg", ".local/share/keyrings", "Library/Keychains", ".password-store"] {
                protected.push(h.join(p));
            }
        }
        // The kernel's own file systems: their "files" are devices and switches, not documents.
        #[cfg(target_os = "linux")]
        protected.extend(["/proc", "/sys", "/dev"].map(std::path::PathBuf::from));
        protected.extend(self.protected_paths.iter().cloned());
        assent_apply::paths::PathPolicy { protected, allowed_roots: self.allowed_roots.clone() }
    }

    /// The engine's part.
    pub fn engine(&self) -> assent_core::EngineConfig {
        assent_core::EngineConfig {
            default_expires_in: self.default_expires_in,
            max_expires_in: self.max_expires_in,
            max_pending_per_agent: self.max_pending_per_agent,
            max_waits_per_agent: self.max_waits_per_agent,
            max_bytes_per_agent_per_day: self.max_bytes_per_agent_per_day,
            content_retention_secs: self.content_retention_secs,
            node: self.store.as_ref().map(|_| self.node_name()),
            person: if self.store.is_some() { self.person_name() } else { "owner".into() },
            work_roots: self.work_roots.iter().filter_map(|r| expand_home(r)).collect(),
            ..assent_core::EngineConfig::default()
        }
    }
}

/// A work root as rules compare folders: `~/` expanded, absolute and normalized; none when it
/// is neither absolute nor in the home.
fn expand_home(p: &std::path::Path) -> Option<String> {
    let s = p.to_str()?;
    let full = match s.strip_prefix("~/") {
        Some(rest) => format!("{}/{rest}", dirs::home_dir()?.to_str()?),
        None => s.to_string(),
    };
    assent_core::rules::normalize_folder(&full)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sample_config_parses_and_matches_the_defaults() {
        let sample = include_str!("../../../config.sample.toml");
        let uncommented: String = sample
            .lines()
            .map(|l| {
                l.strip_prefix("# ")
                    .filter(|r| r.contains(" = ") || r.starts_with('['))
                    .unwrap_or(if l.starts_with('#') { "" } else { l })
            })
            .collect::<Vec<_>>()
            .join("\n");
        let c: Config = toml::from_str(&uncommented).unwrap_or_else(|e| panic!("{e}"));
        let d = Config::default();
        assert_eq!(
            (c.port, c.bind, c.default_expires_in, c.max_body_bytes),
            (d.port, d.bind, d.default_expires_in, d.max_body_bytes)
        );
        assert_eq!(
            (c.max_pending_per_agent, c.max_waits_per_agent, c.owner_credential),
            (d.max_pending_per_agent, d.max_waits_per_agent, d.owner_credential)
        );
        assert_eq!(c.receipts.ttl_secs, d.receipts.ttl_secs);
        assert_eq!(c.work_roots, vec![std::path::PathBuf::from("~/src")]);
    }

    #[test]
    fn a_receipt_lasts_from_a_second_to_thirty_days() {
        let at =
            |t: u64| toml::from_str::<Config>(&format!("[receipts]\nttl_secs = {t}")).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(Config::default().receipt_ttl().ok(), Some(600));
        assert_eq!(at(60).receipt_ttl().ok(), Some(60));
        assert!(at(0).receipt_ttl().is_err());
        assert!(at(MAX_RECEIPT_TTL + 1).receipt_ttl().is_err());
        assert!(toml::from_str::<Config>("[receipts]\nttl = 60").is_err(), "unknown keys are refused");
    }
}
