//! A target's state: what the person reviewed (the base) and what apply checks against.
//!
//! Targets are read only through an opened folder ([`crate::at`]) and only when they are
//! regular files. Reads stop at a byte limit whatever size the file system reports, so a file
//! that lies about its size (or grows while it is read) cannot make Assent read without end.

use crate::at::{FileId, Folder, TargetError};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::ffi::OsStr;
use std::io::Read;

/// Files larger than this are hashed but not read for a diff.
pub const MAX_DIFF_READ: u64 = 64 * 1024 * 1024;
/// Files larger than this are not targets at all (`target_too_large`).
pub const MAX_TARGET_BYTES: u64 = 512 * 1024 * 1024;

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
    /// The folder it is in (device and inode) when that folder existed at proposal time:
    /// apply refuses a folder that has been replaced since.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub folder: Option<FileId>,
}

impl Snapshot {
    /// Nothing there.
    pub fn absent(folder: Option<FileId>) -> Self {
        Snapshot { exists: false, sha256: None, size: 0, mtime_ms: None, mode: None, folder }
    }

    /// True when `other` has the same content (or both are absent).
    pub fn same_content(&self, other: &Snapshot) -> bool {
        self.exists == other.exists && self.sha256 == other.sha256
    }
}

/// Why a snapshot could not be taken.
#[derive(Debug)]
pub enum SnapshotError {
    /// Not a usable target.
    Target(TargetError),
    /// Larger than [`MAX_TARGET_BYTES`].
    TooLarge,
}

impl From<TargetError> for SnapshotError {
    fn from(e: TargetError) -> Self {
        SnapshotError::Target(e)
    }
}

impl From<std::io::Error> for SnapshotError {
    fn from(e: std::io::Error) -> Self {
        SnapshotError::Target(TargetError::Io(e))
    }
}

impl std::fmt::Display for SnapshotError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SnapshotError::Target(e) => write!(f, "{e}"),
            SnapshotError::TooLarge => write!(f, "it is larger than {} MiB", MAX_TARGET_BYTES >> 20),
        }
    }
}

/// Snapshots `name` in `folder` (never following a link, refusing anything but a regular file)
/// and returns its bytes when they are small enough to diff.
pub fn take(folder: &Folder, name: &OsStr) -> Result<(Snapshot, Option<Vec<u8>>), SnapshotError> {
    let Some(opened) = folder.open_regular(name)? else {
        return Ok((Snapshot::absent(Some(folder.id)), None));
    };
    let keep = opened.size <= MAX_DIFF_READ;
    let mut hasher = Sha256::new();
    let mut bytes = Vec::with_capacity(if keep { opened.size as usize } else { 0 });
    let mut buf = vec![0u8; 1 << 16];
    let mut size = 0u64;
    // One byte past the limit tells a file that is too large, whatever its size said.
    let mut reader = (&opened.file).take(MAX_TARGET_BYTES + 1);
    loop {
        let n = reader.read(&mut buf)?;
        if n == 0 {
            break;
        }
        size += n as u64;
        if size > MAX_TARGET_BYTES {
            return Err(SnapshotError::TooLarge);
        }
        hasher.update(&buf[..n]);
        if keep && size <= MAX_DIFF_READ {
            bytes.extend_from_slice(&buf[..n]);
        }
    }
    let snap = Snapshot {
        exists: true,
        sha256: Some(hex::encode(hasher.finalize())),
        size,
        mtime_ms: Some(opened.mtime_ms),
        mode: Some(opened.mode),
        folder: Some(folder.id),
    };
    Ok((snap, (keep && size <= MAX_DIFF_READ).then_some(bytes)))
}

/// Hex SHA-256 of bytes.
pub fn sha256_hex(b: &[u8]) -> String {
    hex::encode(Sha256::digest(b))
}
