//! The owner credential: the token that may decide. It lives in the keychain, keyed by the
//! home directory (several homes on one account have separate owners); where no keychain is
//! reachable it falls back to `owner.token` (mode 0600) in the home directory.
//!
//! Threat model: this keeps decisions away from agents that only hold an agent token (a model's
//! mistakes, injected instructions acting through the agent API). It is not a sandbox against a
//! hostile process running as the same OS user, which can read the keychain or the file too.

use crate::{Keychain, SecretsError};
use sha2::{Digest, Sha256};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Where the owner credential is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Where {
    /// The system keychain.
    Keychain,
    /// `owner.token` in the home directory.
    File,
}

/// Which stores to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The keychain if reachable, else the file.
    Auto,
    /// The keychain only.
    Keychain,
    /// The file only (headless machines with no keychain).
    File,
}

impl std::str::FromStr for Mode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(Mode::Auto),
            "keychain" => Ok(Mode::Keychain),
            "file" => Ok(Mode::File),
            _ => Err(format!("`{s}` is not one of auto, keychain, file")),
        }
    }
}

/// The owner credential and where it was found.
pub struct Owner {
    /// The token. Never logged; `Debug` hides it.
    pub token: String,
    /// Where it lives.
    pub location: Where,
}

impl std::fmt::Debug for Owner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Owner").field("token", &"<redacted>").field("location", &self.location).finish()
    }
}

/// A secret of a home kept like the owner credential: in the keychain under
/// `LABEL:<hash of the home>`, else in the home's file `FILE` (mode 0600).
#[derive(Debug, Clone, Copy)]
pub struct Slot {
    /// The keychain entry's prefix.
    pub label: &'static str,
    /// The fallback file's name in the home.
    pub file: &'static str,
    /// What it is, for the log.
    pub what: &'static str,
}

/// The owner credential's slot.
pub const OWNER: Slot = Slot { label: "owner", file: "owner.token", what: "the owner credential" };

/// The token of the ntfy topic the remote listener pushes to, when it needs one.
pub const NTFY: Slot = Slot { label: "ntfy", file: "ntfy.token", what: "the ntfy token" };

/// The key that signs decisions' receipts (an Ed25519 seed, hex).
pub const RECEIPT: Slot = Slot { label: "receipt", file: "receipt.key", what: "the receipt signing key" };

/// The remote listener's VAPID key (the Web Push sender's signing key).
pub const VAPID: Slot = Slot { label: "vapid", file: "vapid.key", what: "the Web Push (VAPID) key" };

impl Slot {
    /// The keychain user name of this secret of `home`.
    pub fn keychain_user(&self, home: &Path) -> String {
        let canon = fs::canonicalize(home).unwrap_or_else(|_| home.to_path_buf());
        let h = Sha256::digest(canon.to_string_lossy().as_bytes());
        format!("{}:{}", self.label, &hex::encode(h)[..16])
    }

    /// The fallback file.
    pub fn file_path(&self, home: &Path) -> PathBuf {
        home.join(self.file)
    }
}

/// The keychain user name of a home's owner credential.
pub fn keychain_user(home: &Path) -> String {
    OWNER.keychain_user(home)
}

/// The fallback file.
pub fn file_path(home: &Path) -> PathBuf {
    OWNER.file_path(home)
}

fn read_file(path: &Path) -> Result<Option<String>, SecretsError> {
    match fs::read_to_string(path) {
        Ok(s) => Ok(Some(s.trim().to_string()).filter(|t| !t.is_empty())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(SecretsError::Io(format!("{}: {e}", path.display()))),
    }
}

/// Opens `path` to write, created or emptied, readable by this user alone before anything is
/// written to it: mode 0600 on Unix (an existing file's mode set too), an access list of the
/// user's alone on Windows.
pub fn open_private(path: &Path) -> std::io::Result<fs::File> {
    let mut opts = fs::OpenOptions::new();
    opts.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
    #[cfg(windows)]
    std::os::windows::fs::OpenOptionsExt::access_mode(&mut opts, crate::acl::ACCESS);
    let f = opts.open(path)?;
    #[cfg(unix)]
    f.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(0o600))?;
    #[cfg(windows)]
    crate::acl::owner_only(&f)?;
    Ok(f)
}

/// Writes `contents` to `path`, readable by this user alone ([`open_private`]), atomically
/// (temp file, fsync, rename).
pub fn write_private(path: &Path, contents: &str) -> Result<(), SecretsError> {
    let io = |e: std::io::Error| SecretsError::Io(format!("{}: {e}", path.display()));
    let dir = path.parent().unwrap_or(Path::new("."));
    let tmp = dir.join(format!(".{}.tmp", path.file_name().and_then(|n| n.to_str()).unwrap_or("secret")));
    let mut f = open_private(&tmp).map_err(io)?;
    f.write_all(contents.as_bytes()).map_err(io)?;
    f.write_all(b"\n").map_err(io)?;
    f.sync_all().map_err(io)?;
    fs::rename(&tmp, path).map_err(io)?;
    Ok(())
}

/// Loads the owner credential, creating it with `generate` if there is none (the server).
pub fn load_or_create(
    home: &Path,
    mode: Mode,
    keychain: &Keychain,
    generate: impl FnOnce() -> String,
) -> Result<Owner, SecretsError> {
    load_or_create_in(OWNER, home, mode, keychain, generate)
}

/// Loads the secret in `slot` of `home`, creating it with `generate` if there is none.
pub fn load_or_create_in(
    slot: Slot,
    home: &Path,
    mode: Mode,
    keychain: &Keychain,
    generate: impl FnOnce() -> String,
) -> Result<Owner, SecretsError> {
    let file = slot.file_path(home);
    let user = slot.keychain_user(home);
    if mode != Mode::File {
        match keychain.get(&user) {
            Ok(token) => {
                if file.exists() {
                    // An earlier run fell back to the file; the keychain is the one to keep.
                    let _ = fs::remove_file(&file);
                }
                return Ok(Owner { token, location: Where::Keychain });
            }
            Err(SecretsError::Missing(_)) => {
                let token = match read_file(&file)? {
                    Some(t) => t,
                    None => generate(),
                };
                match keychain.set(&user, &token).and_then(|_| keychain.get(&user)) {
                    Ok(stored) if stored == token => {
                        let _ = fs::remove_file(&file);
                        return Ok(Owner { token, location: Where::Keychain });
                    }
                    Ok(_) => {
                        return Err(SecretsError::Unavailable(format!("the keychain did not keep {}", slot.what)));
                    }
                    Err(e) if mode == Mode::Auto && e.keychain_unusable() => {
                        tracing::warn!(error = %e, "the system keychain cannot store {}", slot.what);
                    }
                    Err(e) => return Err(e),
                }
                return fallback(slot, &file, Some(token));
            }
            Err(e) if mode == Mode::Auto && e.keychain_unusable() => {
                tracing::warn!(error = %e, "no usable system keychain");
            }
            Err(e) => return Err(e),
        }
    }
    fallback(slot, &file, None).or_else(|_| fallback(slot, &file, Some(generate())))
}

fn fallback(slot: Slot, file: &Path, token: Option<String>) -> Result<Owner, SecretsError> {
    let token = match (read_file(file)?, token) {
        (Some(existing), _) => existing,
        (None, Some(t)) => {
            write_private(file, &t)?;
            t
        }
        (None, None) => return Err(SecretsError::Missing(file.display().to_string())),
    };
    tracing::warn!(
        path = %file.display(),
        "{} is kept in a file ({}) because no system keychain is in use; \
         any process running as this user can read it",
        slot.what,
        crate::PRIVATE_FILE
    );
    Ok(Owner { token, location: Where::File })
}

/// Reads the secret in `slot` of `home` where it is (the file, then the keychain); none if it
/// was never kept.
pub fn read_in(slot: Slot, home: &Path, keychain: &Keychain) -> Option<String> {
    if let Ok(Some(s)) = read_file(&slot.file_path(home)) {
        return Some(s);
    }
    keychain.get(&slot.keychain_user(home)).ok()
}

/// Keeps `secret` in `slot` of `home`: the keychain if it takes it, else the file (0600); an
/// empty one removes it from both. Where it went.
pub fn keep_in(slot: Slot, home: &Path, mode: Mode, keychain: &Keychain, secret: &str) -> Result<Where, SecretsError> {
    let (file, user) = (slot.file_path(home), slot.keychain_user(home));
    if secret.is_empty() {
        let _ = keychain.delete(&user);
        let _ = fs::remove_file(&file);
        return Ok(Where::Keychain);
    }
    if mode != Mode::File {
        match keychain.set(&user, secret) {
            Ok(()) => {
                let _ = fs::remove_file(&file);
                return Ok(Where::Keychain);
            }
            Err(e) if mode == Mode::Auto && e.keychain_unusable() => {}
            Err(e) => return Err(e),
        }
    }
    write_private(&file, secret)?;
    Ok(Where::File)
}

/// Loads the owner credential for a client (the CLI): the keychain, then the file. Never
/// creates one.
pub fn load(home: &Path, mode: Mode, keychain: &Keychain) -> Result<Owner, SecretsError> {
    let file = file_path(home);
    if mode != Mode::Keychain
        && let Some(token) = read_file(&file)?
    {
        return Ok(Owner { token, location: Where::File });
    }
    if mode == Mode::File {
        return Err(SecretsError::Missing(file.display().to_string()));
    }
    keychain.get(&keychain_user(home)).map(|token| Owner { token, location: Where::Keychain })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_mode_creates_a_private_file_once() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let kc = Keychain::default();
        let a = load_or_create(dir.path(), Mode::File, &kc, || "tok-1".into()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((a.token.as_str(), a.location), ("tok-1", Where::File));
        let b = load_or_create(dir.path(), Mode::File, &kc, || "tok-2".into()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(b.token, "tok-1");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(file_path(dir.path())).map(|m| m.permissions().mode() & 0o777).unwrap_or(0);
            assert_eq!(mode, 0o600);
        }
        assert_eq!(load(dir.path(), Mode::File, &kc).map(|o| o.token).ok(), Some("tok-1".to_string()));
        assert!(!format!("{a:?}").contains("tok-1"));
    }

    #[test]
    fn keychain_users_differ_per_home() {
        assert_ne!(keychain_user(Path::new("/a")), keychain_user(Path::new("/b")));
    }
}
