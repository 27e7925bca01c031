//! # assent-secrets
//!
//! Assent's secrets live in the system keychain (the Secret Service on Linux, Keychain on
//! macOS, the Credential Manager on Windows) through `keyring`, under the service `assent`.
//!
//! - [`Keychain`] reads, writes and deletes entries, with a time limit on every call (a
//!   keychain that waits for an unlock prompt nobody can answer must not hang Assent), and
//!   turns every failure into a [`SecretsError`] the caller can explain.
//! - [`KeychainSecrets`] is the engine's [`SecretSource`]: credentials' secrets, one entry per
//!   credential and home.
//! - [`owner`] keeps the owner credential: in the keychain where one is reachable, else in
//!   `owner.token` (mode 0600) in the home directory, which is logged.

pub mod owner;
// One of the workspace's two modules of unsafe code (the other makes the Linux box): five Win32
// calls, each with what makes it sound.
#[cfg(windows)]
#[allow(unsafe_code)]
mod acl;

use assent_core::credentials::{SecretError, SecretSource};
use std::sync::mpsc;
use std::time::Duration;

/// The keychain service name for every Assent entry.
pub const SERVICE: &str = "assent";

/// How to get a keychain on this platform, for people.
#[cfg(target_os = "linux")]
pub const KEYCHAIN_HELP: &str = "Assent keeps credentials in a Secret Service keychain: run one in your desktop \
session (GNOME Keyring or KeePassXC with Secret Service enabled) and unlock it; on a machine without a desktop, \
start Assent inside `dbus-run-session` with `gnome-keyring-daemon --unlock` fed a password";
/// How to get a keychain on this platform, for people.
#[cfg(target_os = "macos")]
pub const KEYCHAIN_HELP: &str =
    "Assent keeps credentials in the login Keychain: unlock it (Keychain Access) and try again";
/// How to get a keychain on this platform, for people.
#[cfg(not(any(target_os = "linux", target_os = "macos")))]
pub const KEYCHAIN_HELP: &str =
    "Assent keeps credentials in the system credential store: make sure it is available to your user";

/// How a file that holds a secret is kept from other users, as said next to its path.
#[cfg(unix)]
pub const PRIVATE_FILE: &str = "mode 0600";
/// How a file that holds a secret is kept from other users, as said next to its path.
#[cfg(not(unix))]
pub const PRIVATE_FILE: &str = "readable by this user alone (its access list)";

/// Why a secret could not be had.
#[derive(Debug, thiserror::Error)]
pub enum SecretsError {
    /// No keychain is reachable (no Secret Service on the session bus, no session bus).
    #[error("no system keychain is reachable ({0}). {KEYCHAIN_HELP}")]
    Unavailable(String),
    /// The keychain is locked or refused access.
    #[error("the system keychain is locked or refused access ({0}). {KEYCHAIN_HELP}")]
    Locked(String),
    /// There is no such entry.
    #[error("the keychain has no entry `{0}`")]
    Missing(String),
    /// The keychain did not answer in time.
    #[error("the system keychain did not answer within {0:?}")]
    Timeout(Duration),
    /// A file could not be read or written.
    #[error("{0}")]
    Io(String),
}

impl SecretsError {
    /// True when the keychain as a whole cannot be used (rather than one entry missing).
    pub fn keychain_unusable(&self) -> bool {
        matches!(self, SecretsError::Unavailable(_) | SecretsError::Locked(_) | SecretsError::Timeout(_))
    }
}

fn map_err(e: keyring::Error, user: &str) -> SecretsError {
    use keyring::Error as E;
    match e {
        E::NoEntry => SecretsError::Missing(user.to_string()),
        E::NoStorageAccess(inner) => SecretsError::Locked(inner.to_string()),
        other => SecretsError::Unavailable(other.to_string()),
    }
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

/// The system keychain, entries under service [`SERVICE`].
#[derive(Debug, Clone)]
pub struct Keychain {
    timeout: Duration,
}

impl Default for Keychain {
    fn default() -> Self {
        Self { timeout: Duration::from_secs(5) }
    }
}

impl Keychain {
    /// Runs `f` on its own thread and gives up after the timeout.
    fn bounded<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> Result<T, SecretsError> + Send + 'static,
    ) -> Result<T, SecretsError> {
        let (tx, rx) = mpsc::channel();
        std::thread::Builder::new()
            .name("assent-keychain".into())
            .spawn(move || {
                let _ = tx.send(f());
            })
            .map_err(|e| SecretsError::Io(e.to_string()))?;
        rx.recv_timeout(self.timeout).map_err(|_| SecretsError::Timeout(self.timeout))?
    }

    /// Reads the secret stored for `user`.
    pub fn get(&self, user: &str) -> Result<String, SecretsError> {
        let u = user.to_string();
        self.bounded(move || {
            let entry = keyring::Entry::new(SERVICE, &u).map_err(|e| map_err(e, &u))?;
            entry.get_password().map_err(|e| map_err(e, &u))
        })
    }

    /// Stores `secret` for `user`, replacing what was there.
    pub fn set(&self, user: &str, secret: &str) -> Result<(), SecretsError> {
        let (u, s) = (user.to_string(), secret.to_string());
        self.bounded(move || {
            let entry = keyring::Entry::new(SERVICE, &u).map_err(|e| map_err(e, &u))?;
            entry.set_password(&s).map_err(|e| map_err(e, &u))
        })
    }

    /// Deletes the entry for `user`; a missing entry is not an error.
    pub fn delete(&self, user: &str) -> Result<(), SecretsError> {
        let u = user.to_string();
        self.bounded(move || {
            let entry = keyring::Entry::new(SERVICE, &u).map_err(|e| map_err(e, &u))?;
            match entry.delete_credential() {
                Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
                Err(e) => Err(map_err(e, &u)),
            }
        })
    }
}
