//! Files reached through held folders, on Windows: the same interface as the Unix side
//! (`at.rs`), for a system with no `openat`.
//!
//! A path is checked once (the [`crate::paths`] policy), then walked one component at a time
//! from its drive's root, each folder opened as itself (`FILE_FLAG_OPEN_REPARSE_POINT`: a
//! symbolic link, a junction or any other reparse point is seen, never followed, and stops the
//! walk) and **held open without `FILE_SHARE_DELETE`** for as long as the [`Folder`] lives.
//! Renaming or deleting a folder needs `DELETE` access to it, which the held handle's share
//! mode refuses to everyone else: while Assent writes, nobody can swap a folder on the way for
//! a link or move it elsewhere, so the path it writes by names the folders it walked. The
//! folder's identity (volume serial number and file index) is recorded at proposal time and
//! compared at apply time, as device and inode are on Unix.
//!
//! Names Windows reads as something other than a file in the folder are refused before
//! anything is opened: alternate data streams (`name:stream`), reserved device names (`CON`,
//! `NUL`, `COM1`, ... with or without an extension), names ending in a dot or a space (which
//! Windows strips), and wildcard or control characters. A target that is a device or a pipe
//! once opened is refused too.

use serde::{Deserialize, Serialize};
use std::ffi::{OsStr, OsString};
use std::fs::{File, OpenOptions};
use std::io;
use std::os::windows::fs::OpenOptionsExt;
use std::path::{Component, Path, PathBuf};

// From the Windows SDK (winnt.h / winbase.h).
const FILE_SHARE_READ: u32 = 0x1;
const FILE_SHARE_WRITE: u32 = 0x2;
const FILE_SHARE_DELETE: u32 = 0x4;
const FILE_FLAG_BACKUP_SEMANTICS: u32 = 0x0200_0000;
const FILE_FLAG_OPEN_REPARSE_POINT: u32 = 0x0020_0000;
const FILE_ATTRIBUTE_READONLY: u64 = 0x1;
const FILE_ATTRIBUTE_DIRECTORY: u64 = 0x10;
const FILE_ATTRIBUTE_REPARSE_POINT: u64 = 0x400;
const ERROR_DIRECTORY: i32 = 267;
/// `mode` for a file whose read-only attribute is off / on (Windows has no permission bits).
const WRITABLE: u32 = 0o644;
const READ_ONLY: u32 = 0o444;

/// Where a file or folder is: its volume's serial number and its file index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileId {
    /// Volume serial number.
    pub dev: u64,
    /// File index on the volume.
    pub ino: u64,
}

impl FileId {
    fn of(info: &winapi_util::file::Information) -> Self {
        FileId { dev: info.volume_serial_number(), ino: info.file_index() }
    }
}

/// Why a target cannot be used.
#[derive(Debug)]
pub enum TargetError {
    /// The target is a symbolic link, a junction or another reparse point.
    Symlink,
    /// The target is a folder.
    Directory,
    /// A device or a pipe: not a regular file (the name of what it is).
    NotRegular(&'static str),
    /// A folder on the way is a link, a junction or not a folder.
    FolderNotReal,
    /// Anything else.
    Io(io::Error),
}

impl std::fmt::Display for TargetError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TargetError::Symlink => {
                f.write_str("it is a symbolic link or a junction; Assent does not write through links")
            }
            TargetError::Directory => f.write_str("it is a folder"),
            TargetError::NotRegular(what) => write!(f, "it is a {what}, not a regular file"),
            TargetError::FolderNotReal => f.write_str(
                "a folder on the way is a symbolic link, a junction or not a folder; Assent does not follow links",
            ),
            TargetError::Io(e) => write!(f, "{e}"),
        }
    }
}

impl From<io::Error> for TargetError {
    fn from(e: io::Error) -> Self {
        TargetError::Io(e)
    }
}

/// Why `name` is not a plain name of a file in a folder on Windows, if it is not.
pub fn unsafe_name(name: &OsStr) -> Option<&'static str> {
    let Some(name) = name.to_str() else { return Some("it is not valid Unicode") };
    if name.is_empty() || name == "." || name == ".." {
        return Some("it is not a name");
    }
    if name.contains(':') {
        return Some("it names an alternate data stream (`name:stream`)");
    }
    if name.chars().any(|c| c < ' ' || "<>\"/\\|?*".contains(c)) {
        return Some("it holds a character Windows does not allow in a name");
    }
    if name.ends_with('.') || name.ends_with(' ') {
        return Some("it ends in a dot or a space, which Windows strips");
    }
    let stem = name.split('.').next().unwrap_or_default().trim_end().to_ascii_uppercase();
    let reserved = matches!(stem.as_str(), "CON" | "PRN" | "AUX" | "NUL" | "CONIN$" | "CONOUT$")
        || ["COM", "LPT"].iter().any(|d| {
            stem.strip_prefix(d)
                .is_some_and(|n| matches!(n, "1" | "2" | "3" | "4" | "5" | "6" | "7" | "8" | "9" | "¹" | "²" | "³"))
        });
    reserved.then_some("it is a reserved device name on Windows")
}

fn refuse(name: &OsStr) -> Result<(), TargetError> {
    match unsafe_name(name) {
        Some(why) => Err(TargetError::Io(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("`{}` cannot be written: {why}", name.to_string_lossy()),
        ))),
        None => Ok(()),
    }
}

/// Opens `path` as itself (a link or junction is opened, not followed), for reading, with the
/// other sharers allowed to read and write, and to rename or delete it only when `share_delete`
/// (a file: Assent's own rename replaces it while it may still be open), never a folder.
fn open_as_itself(path: &Path, share_delete: bool) -> io::Result<File> {
    let delete = if share_delete { FILE_SHARE_DELETE } else { 0 };
    OpenOptions::new()
        .read(true)
        .share_mode(FILE_SHARE_READ | FILE_SHARE_WRITE | delete)
        .custom_flags(FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT)
        .open(path)
}

/// An opened folder, held (with every folder above it) so that none can be renamed or
/// deleted while it lives.
#[derive(Debug)]
pub struct Folder {
    path: PathBuf,
    /// This folder's handle and those of the folders above it, root first.
    _held: Vec<File>,
    /// Its identity when it was opened.
    pub id: FileId,
}

/// What walking a folder's path found.
#[derive(Debug)]
pub enum Walk {
    /// The whole folder exists and is open.
    Found(Folder),
    /// Only a part exists: the deepest existing folder, and the names still missing below it.
    Missing {
        /// The deepest folder that exists.
        deepest: Folder,
        /// The names to create under it, in order.
        rest: Vec<OsString>,
    },
}

/// Opens folder `path` as itself; it must be a real folder (no reparse point).
fn open_folder(path: &Path) -> Result<(File, FileId), TargetError> {
    let f = match open_as_itself(path, false) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(e.into()),
        Err(e) if e.raw_os_error() == Some(ERROR_DIRECTORY) => return Err(TargetError::FolderNotReal),
        Err(e) => return Err(e.into()),
    };
    let info = winapi_util::file::information(&f)?;
    let attrs = info.file_attributes();
    if attrs & FILE_ATTRIBUTE_REPARSE_POINT != 0 || attrs & FILE_ATTRIBUTE_DIRECTORY == 0 {
        return Err(TargetError::FolderNotReal);
    }
    Ok((f, FileId::of(&info)))
}

/// Opens the absolute folder `dir` one component at a time, never following a link.
pub fn walk(dir: &Path) -> Result<Walk, TargetError> {
    let invalid = |m: &str| TargetError::Io(io::Error::new(io::ErrorKind::InvalidInput, m.to_string()));
    let mut root = PathBuf::new();
    let mut names: Vec<&OsStr> = Vec::new();
    for c in dir.components() {
        match c {
            Component::Prefix(p) => root.push(p.as_os_str()),
            Component::RootDir => root.push("\\"),
            Component::Normal(n) => names.push(n),
            Component::CurDir => {}
            Component::ParentDir => return Err(invalid("the path has `..` in it")),
        }
    }
    if !dir.is_absolute() {
        return Err(invalid("the path is not absolute"));
    }
    for n in &names {
        refuse(n)?;
    }
    let (f, id) = open_folder(&root)?;
    let mut cur = Folder { path: root, _held: vec![f], id };
    for (i, name) in names.iter().enumerate() {
        let path = cur.path.join(name);
        match open_folder(&path) {
            Ok((f, id)) => {
                cur._held.push(f);
                cur = Folder { path, _held: cur._held, id };
            }
            Err(TargetError::Io(e)) if e.kind() == io::ErrorKind::NotFound => {
                return Ok(Walk::Missing { deepest: cur, rest: names[i..].iter().map(|n| n.to_os_string()).collect() });
            }
            Err(e) => return Err(e),
        }
    }
    Ok(Walk::Found(cur))
}

impl Walk {
    /// The folder, creating what is missing (each new folder opened as itself and held).
    pub fn create(self) -> Result<Folder, TargetError> {
        match self {
            Walk::Found(f) => Ok(f),
            Walk::Missing { mut deepest, rest } => {
                for name in rest {
                    let path = deepest.path.join(&name);
                    match std::fs::create_dir(&path) {
                        Ok(()) => {}
                        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                        Err(e) => return Err(e.into()),
                    }
                    let (f, id) = open_folder(&path)?;
                    deepest._held.push(f);
                    deepest = Folder { path, _held: deepest._held, id };
                }
                Ok(deepest)
            }
        }
    }
}

/// A regular file opened for reading, with what its handle said of it.
pub struct Opened {
    /// The open file.
    pub file: File,
    /// Its size as the file system reports it (not trusted as a read limit).
    pub size: u64,
    /// Permission bits, as near as Windows has them: 0o444 read-only, else 0o644.
    pub mode: u32,
    /// Last modification, ms since the epoch.
    pub mtime_ms: i64,
    /// Where it is.
    pub id: FileId,
}

/// Milliseconds since the Unix epoch of a Windows file time (100 ns since 1601).
fn unix_ms(filetime: u64) -> i64 {
    (filetime / 10_000) as i64 - 11_644_473_600_000
}

impl Folder {
    /// Opens `name` for reading if it is a regular file; none when it does not exist. A link,
    /// a junction, a folder, a device or a pipe is refused.
    pub fn open_regular(&self, name: &OsStr) -> Result<Option<Opened>, TargetError> {
        refuse(name)?;
        let file = match open_as_itself(&self.path.join(name), true) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        let typ = winapi_util::file::typ(&file)?;
        if typ.is_char() {
            return Err(TargetError::NotRegular("device"));
        }
        if typ.is_pipe() {
            return Err(TargetError::NotRegular("pipe"));
        }
        let info = winapi_util::file::information(&file)?;
        let attrs = info.file_attributes();
        if attrs & FILE_ATTRIBUTE_REPARSE_POINT != 0 {
            return Err(TargetError::Symlink);
        }
        if attrs & FILE_ATTRIBUTE_DIRECTORY != 0 {
            return Err(TargetError::Directory);
        }
        Ok(Some(Opened {
            size: info.file_size(),
            mode: if attrs & FILE_ATTRIBUTE_READONLY != 0 { READ_ONLY } else { WRITABLE },
            mtime_ms: info.last_write_time().map(unix_ms).unwrap_or(0),
            id: FileId::of(&info),
            file,
        }))
    }

    /// Creates `name` exclusively (an existing entry, a link included, is an error). Shared for
    /// deleting: the open file is renamed over the target before it is closed.
    pub fn create_new(&self, name: &OsStr) -> io::Result<File> {
        if let Some(why) = unsafe_name(name) {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, why));
        }
        OpenOptions::new()
            .write(true)
            .create_new(true)
            .share_mode(FILE_SHARE_READ | FILE_SHARE_DELETE)
            .custom_flags(FILE_FLAG_OPEN_REPARSE_POINT)
            .open(self.path.join(name))
    }

    /// Renames `from` to `to`, both in this folder (replacing `to`'s entry itself, never what
    /// a link there points to).
    pub fn rename(&self, from: &OsStr, to: &OsStr) -> io::Result<()> {
        std::fs::rename(self.path.join(from), self.path.join(to))
    }

    /// Removes the file `name` of this folder; missing is fine when `missing_ok`.
    pub fn remove(&self, name: &OsStr, missing_ok: bool) -> io::Result<()> {
        match std::fs::remove_file(self.path.join(name)) {
            Err(e) if missing_ok && e.kind() == io::ErrorKind::NotFound => Ok(()),
            r => r,
        }
    }

    /// Nothing to do: a folder's entries cannot be flushed from a handle opened to read it, and
    /// NTFS journals them (the file itself was flushed before the rename).
    pub fn sync(&self) -> io::Result<()> {
        Ok(())
    }
}

/// Sets what Windows has of permission bits on an open file: read-only when no write bit is.
pub fn set_mode(f: &File, mode: u32) -> io::Result<()> {
    let mut perms = f.metadata()?.permissions();
    perms.set_readonly(mode & 0o222 == 0);
    f.set_permissions(perms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_windows_reads_otherwise_are_refused() {
        for bad in ["CON", "con.txt", "Nul", "COM1.log", "lpt9", "a:b", "file.txt:Zone.Identifier", "x.", "x ", "a*b"] {
            assert!(unsafe_name(OsStr::new(bad)).is_some(), "{bad}");
        }
        for good in ["console.txt", "COM10", "nul_file", "a.b", ".hidden", "CONTRIBUTING.md"] {
            assert_eq!(unsafe_name(OsStr::new(good)), None, "{good}");
        }
    }
}
