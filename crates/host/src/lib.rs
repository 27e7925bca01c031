//! # assent-host
//!
//! What both hosts of the engine share, the headless `assent serve` (in `assent-cli`) and the
//! desktop app (`src-tauri`): neither leans on the other.
//!
//! - [`home`]: the data directory and its files (`assent.db`, `agent.token`, `server.json`, the
//!   lock).
//! - [`config`]: `config.toml`, its defaults, and what the engine, the API and the file policy
//!   take from it.
//! - [`start`]: opening a home (store, owner credential, keychain-backed secrets, kinds, the
//!   default agent, recovery of interrupted writes) and running the engine and the loopback API
//!   on it until stopped.

/// This build's version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The commit this build comes from (short), or "unknown".
pub const COMMIT: &str = env!("ASSENT_COMMIT");

/// What `assent --version` and the app's About say: `0.1.0 (commit 3f2a9c1)`.
pub const VERSION_LINE: &str = concat!(env!("CARGO_PKG_VERSION"), " (commit ", env!("ASSENT_COMMIT"), ")");

pub mod config;
/// The data directory (the boundary's: the hook and the runner find the server, the token,
/// the tickets and the keys there).
pub use assent_boundary::home;
pub mod receipts;
pub mod start;

/// Installs the TLS provider every HTTP client in Assent uses (call once, early).
pub fn install_tls_provider() {
    assent_apply::install_tls_provider();
}
