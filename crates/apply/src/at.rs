//! Files reached through an opened folder, never through a path walked twice.
//!
//! A path is checked once (the [`crate::paths`] policy) and then every step of a read or a
//! write happens relative to a folder opened one component at a time from `/`, each with
//! `O_NOFOLLOW | O_DIRECTORY`: a symbolic link anywhere on the way stops the walk, and once the
//! folder is open, swapping it (or any folder above it) for a link changes nothing about where
//! the temporary file, the rename, the delete and the fsyncs land. The folder's identity
//! (device and inode) is recorded at proposal time and compared at apply time.
//!
//! Only regular files are targets. A target is looked at with `fstatat(AT_SYMLINK_NOFOLLOW)`
//! before it is opened, so a device, a FIFO or a socket is refused without being opened (an
//! open can block, or have effects of its own), and opened with `O_NOFOLLOW | O_NONBLOCK`, then
//! checked again on the open descriptor.

use rustix::fs::{AtFlags, FileType, Mode, OFlags, Stat};
use rustix::io::Errno;
use serde::{Deserialize, Serialize};
use std::ffi::OsStr;
use std::fs::File;
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Component, Path};

/// Where a file or folder is: its device and inode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileId {
    /// Device.
    pub dev: u64,
    /// Inode.
    pub ino: u64,
}

impl FileId {
    fn of(st: &Stat) -> Self {
        #[allow(clippy::unnecessary_cast, clippy::useless_conversion)]
        FileId { dev: st.st_dev as u64, ino: st.st_ino as u64 }
    }
}

/// Why a target cannot be used.
#[derive(Debug)]
pub enum TargetError {
    /// The target is a symbolic link.
    Symlink,
    /// The target is a folder.
    Directory,
    /// A device, FIFO, socket: not a regular file (the name of what it is).
    NotRegular(&'static str),
    /// A folder on the way is a symbolic link or not a folder.
    FolderNotReal,
    /// Anything else.
    Io(io::Error),
}

impl std::fmt::Display for TargetError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TargetError::Symlink => f.write_str("it is a symbolic link; Assent does not write through links"),
            TargetError::Directory => f.write_str("it is a folder"),
            TargetError::NotRegular(what) => write!(f, "it is a {what}, not a regular file"),
            TargetError::FolderNotReal => {
                f.write_str("a folder on the way is a symbolic link or not a folder; Assent does not follow links")
            }
            TargetError::Io(e) => write!(f, "{e}"),
        }
    }
}

impl From<Errno> for TargetError {
    fn from(e: Errno) -> Self {
        TargetError::Io(e.into())
    }
}

fn type_name(t: FileType) -> &'static str {
    match t {
        FileType::RegularFile => "regular file",
        FileType::Directory => "folder",
        FileType::Symlink => "symbolic link",
        FileType::Fifo => "FIFO (named pipe)",
        FileType::Socket => "socket",
        FileType::CharacterDevice => "character device",
        FileType::BlockDevice => "block device",
        _ => "special file",
    }
}

const DIR_FLAGS: OFlags = OFlags::RDONLY.union(OFlags::DIRECTORY).union(OFlags::NOFOLLOW).union(OFlags::CLOEXEC);

/// An opened folder.
#[derive(Debug)]
pub struct Folder {
    fd: OwnedFd,
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
        rest: Vec<std::ffi::OsString>,
    },
}

fn open_dir_at(parent: &OwnedFd, name: &OsStr) -> Result<Folder, Errno> {
    let fd = rustix::fs::openat(parent, name, DIR_FLAGS, Mode::empty())?;
    let st = rustix::fs::fstat(&fd)?;
    Ok(Folder { id: FileId::of(&st), fd })
}

/// Opens the absolute folder `dir` one component at a time, never following a link.
pub fn walk(dir: &Path) -> Result<Walk, TargetError> {
    let fd = rustix::fs::open("/", DIR_FLAGS, Mode::empty())?;
    let st = rustix::fs::fstat(&fd)?;
    let mut cur = Folder { id: FileId::of(&st), fd };
    let names: Vec<&OsStr> = dir
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n),
            _ => None,
        })
        .collect();
    if dir.components().any(|c| matches!(c, Component::ParentDir)) {
        return Err(TargetError::Io(io::Error::new(io::ErrorKind::InvalidInput, "the path has `..` in it")));
    }
    for (i, name) in names.iter().enumerate() {
        match open_dir_at(&cur.fd, name) {
            Ok(next) => cur = next,
            Err(Errno::NOENT) => {
                return Ok(Walk::Missing { deepest: cur, rest: names[i..].iter().map(|n| n.to_os_string()).collect() });
            }
            Err(Errno::LOOP | Errno::NOTDIR) => return Err(TargetError::FolderNotReal),
            Err(e) => return Err(e.into()),
        }
    }
    Ok(Walk::Found(cur))
}

impl Walk {
    /// The folder, creating what is missing (each new folder opened without following links).
    pub fn create(self) -> Result<Folder, TargetError> {
        match self {
            Walk::Found(f) => Ok(f),
            Walk::Missing { mut deepest, rest } => {
                for name in rest {
                    match rustix::fs::mkdirat(&deepest.fd, name.as_os_str(), Mode::from_raw_mode(0o755)) {
                        Ok(()) | Err(Errno::EXIST) => {}
                        Err(e) => return Err(e.into()),
                    }
                    deepest = match open_dir_at(&deepest.fd, &name) {
                        Ok(f) => f,
                        Err(Errno::LOOP | Errno::NOTDIR) => return Err(TargetError::FolderNotReal),
                        Err(e) => return Err(e.into()),
                    };
                }
                Ok(deepest)
            }
        }
    }
}

/// A regular file opened for reading, with what `fstat` said of it.
pub struct Opened {
    /// The open file.
    pub file: File,
    /// Its size as the file system reports it (not trusted as a read limit).
    pub size: u64,
    /// Permission bits.
    pub mode: u32,
    /// Last modification, ms since the epoch.
    pub mtime_ms: i64,
    /// Where it is.
    pub id: FileId,
}

impl Folder {
    /// What `name` in this folder is, without following a link; none when it does not exist.
    pub fn entry(&self, name: &OsStr) -> Result<Option<Stat>, TargetError> {
        match rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => Ok(Some(st)),
            Err(Errno::NOENT) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Opens `name` for reading if it is a regular file; none when it does not exist. Anything
    /// that is not a regular file is refused before it is opened.
    pub fn open_regular(&self, name: &OsStr) -> Result<Option<Opened>, TargetError> {
        let Some(before) = self.entry(name)? else { return Ok(None) };
        match FileType::from_raw_mode(before.st_mode) {
            FileType::RegularFile => {}
            FileType::Symlink => return Err(TargetError::Symlink),
            FileType::Directory => return Err(TargetError::Directory),
            other => return Err(TargetError::NotRegular(type_name(other))),
        }
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY;
        let fd = match rustix::fs::openat(&self.fd, name, flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::NOENT) => return Ok(None),
            Err(Errno::LOOP) => return Err(TargetError::Symlink),
            Err(e) => return Err(e.into()),
        };
        let st = rustix::fs::fstat(&fd)?;
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
            return Err(TargetError::NotRegular(type_name(FileType::from_raw_mode(st.st_mode))));
        }
        #[allow(clippy::unnecessary_cast)]
        let mtime_ms = st.st_mtime as i64 * 1000 + st.st_mtime_nsec as i64 / 1_000_000;
        #[allow(clippy::unnecessary_cast)]
        Ok(Some(Opened {
            size: st.st_size as u64,
            mode: st.st_mode as u32 & 0o7777,
            mtime_ms,
            id: FileId::of(&st),
            file: File::from(fd),
        }))
    }

    /// Creates `name` exclusively, mode 0600, never through a link.
    pub fn create_new(&self, name: &OsStr) -> io::Result<File> {
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        Ok(File::from(rustix::fs::openat(&self.fd, name, flags, Mode::from_raw_mode(0o600))?))
    }

    /// Renames `from` to `to`, both in this folder.
    pub fn rename(&self, from: &OsStr, to: &OsStr) -> io::Result<()> {
        Ok(rustix::fs::renameat(&self.fd, from, &self.fd, to)?)
    }

    /// Removes the file `name` of this folder; missing is fine when `missing_ok`.
    pub fn remove(&self, name: &OsStr, missing_ok: bool) -> io::Result<()> {
        match rustix::fs::unlinkat(&self.fd, name, AtFlags::empty()) {
            Err(Errno::NOENT) if missing_ok => Ok(()),
            r => Ok(r?),
        }
    }

    /// Makes renames and removals in this folder durable.
    pub fn sync(&self) -> io::Result<()> {
        Ok(rustix::fs::fsync(&self.fd)?)
    }
}

/// Sets the permission bits of an open file.
pub fn set_mode(f: &File, mode: u32) -> io::Result<()> {
    // The permission bits fit the platform's `mode_t` (32 bits on Linux, 16 on macOS).
    #[allow(clippy::unnecessary_cast)]
    let raw = (mode & 0o7777) as rustix::fs::RawMode;
    Ok(rustix::fs::fchmod(f, Mode::from_raw_mode(raw))?)
}

#[cfg(test)]
mod tests {
    use super::*;

    impl Walk {
        /// The folder if it exists whole.
        fn found(self) -> Option<Folder> {
            match self {
                Walk::Found(f) => Some(f),
                Walk::Missing { .. } => None,
            }
        }
    }

    #[test]
    fn a_link_on_the_way_stops_the_walk() {
        let t = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let real = t.path().join("real");
        std::fs::create_dir_all(real.join("sub")).ok();
        std::os::unix::fs::symlink(&real, t.path().join("link")).ok();
        let base = std::fs::canonicalize(t.path()).unwrap_or_default();
        assert!(matches!(walk(&base.join("real/sub")), Ok(Walk::Found(_))));
        assert!(matches!(walk(&base.join("link/sub")), Err(TargetError::FolderNotReal)));
        assert!(matches!(walk(&base.join("link")), Err(TargetError::FolderNotReal)));
        match walk(&base.join("real/new/deeper")) {
            Ok(Walk::Missing { rest, .. }) => assert_eq!(rest.len(), 2),
            other => panic!("{other:?}"),
        }
        let made = walk(&base.join("real/new/deeper")).and_then(Walk::create);
        assert!(made.is_ok());
        assert!(base.join("real/new/deeper").is_dir());
    }

    #[test]
    fn only_regular_files_are_opened() {
        let t = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let base = std::fs::canonicalize(t.path()).unwrap_or_default();
        std::fs::write(base.join("f"), "x").ok();
        std::fs::create_dir(base.join("d")).ok();
        std::os::unix::fs::symlink(base.join("f"), base.join("l")).ok();
        let dev = walk(Path::new("/dev")).ok().and_then(Walk::found);
        let folder = walk(&base).ok().and_then(Walk::found).unwrap_or_else(|| panic!("no folder"));
        assert!(matches!(folder.open_regular(OsStr::new("f")), Ok(Some(_))));
        assert!(matches!(folder.open_regular(OsStr::new("missing")), Ok(None)));
        assert!(matches!(folder.open_regular(OsStr::new("d")), Err(TargetError::Directory)));
        assert!(matches!(folder.open_regular(OsStr::new("l")), Err(TargetError::Symlink)));
        if let Some(dev) = dev {
            assert!(matches!(dev.open_regular(OsStr::new("zero")), Err(TargetError::NotRegular(_))));
        }
    }
}
