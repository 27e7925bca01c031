//! # assent-apply
//!
//! The kinds Assent carries out itself, registered by the host next to the core's
//! `tool.call`:
//!
//! - [`files`]: `file.write` and `file.delete`, checked against the [`paths::PathPolicy`],
//!   snapshotted at proposal time ([`snapshot`]), previewed as a line diff ([`diff`]), written
//!   atomically and only onto the state the person saw.
//! - [`http`]: `http.request`, with a credential's secret read from the keychain at apply time.
//!
//! The engine moves an approved proposal to `applying` (durably) before it calls a kind's
//! `apply`, and asks its `reconcile` after a crash.

#[cfg(unix)]
pub mod at;
#[cfg(windows)]
#[path = "at_windows.rs"]
pub mod at;
pub mod diff;
pub mod files;
pub mod http;
pub mod paths;
pub mod redact;
pub mod snapshot;

use assent_core::credentials::SecretSource;
use assent_core::kinds::KindRegistry;
use std::sync::Arc;

/// Installs the process-wide TLS provider (ring) that every HTTP client here uses. Call it
/// once, early in `main`; later calls do nothing.
pub fn install_tls_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// Registers `file.write`, `file.delete` and `http.request`.
pub fn register(kinds: &mut KindRegistry, policy: paths::PathPolicy, secrets: Arc<dyn SecretSource>) {
    install_tls_provider();
    let policy = Arc::new(policy);
    kinds.register(Arc::new(files::FileWrite { policy: policy.clone() }));
    kinds.register(Arc::new(files::FileDelete { policy }));
    kinds.register(Arc::new(http::HttpRequest { secrets, timeout: std::time::Duration::from_secs(30) }));
}
