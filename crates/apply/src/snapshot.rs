//! A target's state: what the person reviewed (the base) and what apply checks against.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::Path;

/// Files larger than this are hashed but not read for a diff.
pub const MAX_DIFF_READ: u64 = 64 * 1024 * 1024;

/// The state of a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snapshot {
    /// Whether it exists.
    pub exists: bool,
    /// SHA-256 of its bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// Its size in bytes.
    #[serde(default)]
    pub size: u64,
    /// Last modification, ms since the epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mtime_ms: Option<i64>,
    /// Unix permission bits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<u32>,
}

impl Snapshot {
    /// True when `other` has the same content (or both are absent).
    pub fn same_content(&self, other: &Snapshot) -> bool {
        self.exists == other.exists && self.sha256 == other.sha256
    }
}

/// Snapshots `path` (without following a final symlink) and returns its bytes when they are
/// small enough to diff.
pub fn take(path: &Path) -> std::io::Result<(Snapshot, Option<Vec<u8>>)> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok((Snapshot { exists: false, sha256: None, size: 0, mtime_ms: None, mode: None }, None));
        }
        Err(e) => return Err(e),
    };
    let mtime_ms =
        meta.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()).map(|d| d.as_millis() as i64);
    #[cfg(unix)]
    let mode = {
        use std::os::unix::fs::PermissionsExt;
        Some(meta.permissions().mode() & 0o7777)
    };
    #[cfg(not(unix))]
    let mode = None;
    let mut f = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let keep = meta.len() <= MAX_DIFF_READ;
    let mut bytes = Vec::with_capacity(if keep { meta.len() as usize } else { 0 });
    let mut buf = vec![0u8; 1 << 16];
    let mut size = 0u64;
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        size += n as u64;
        if keep {
            bytes.extend_from_slice(&buf[..n]);
        }
    }
    let snap = Snapshot { exists: true, sha256: Some(hex::encode(hasher.finalize())), size, mtime_ms, mode };
    Ok((snap, keep.then_some(bytes)))
}

/// Hex SHA-256 of bytes.
pub fn sha256_hex(b: &[u8]) -> String {
    hex::encode(Sha256::digest(b))
}
