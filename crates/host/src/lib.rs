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

pub mod config;
pub mod home;
pub mod start;

/// Installs the TLS provider every HTTP client in Assent uses (call once, early).
pub fn install_tls_provider() {
    assent_apply::install_tls_provider();
}
