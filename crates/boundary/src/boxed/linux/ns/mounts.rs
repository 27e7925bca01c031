//! The box's view: a fresh root of its own with only the profile's mounts in it, made by the
//! box's init in its own mount namespace (see `ns.rs`).

use super::{cstr, os};
use crate::boxed::linux::view::Mount;
use std::ffi::{CString, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// `mount_setattr`'s attributes (`linux/mount.h`).
const MOUNT_ATTR_RDONLY: u64 = 0x1;
const MOUNT_ATTR_NOSUID: u64 = 0x2;
const MOUNT_ATTR_NODEV: u64 = 0x4;

#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

/// The box's view: a fresh root of its own with only `mounts` in it (bubblewrap's way: a
/// temporary root, the system's tree under it at `/oldroot` while the view is made at
/// `/newroot`, then the system's tree detached and `/newroot` made the root).
pub(super) fn view(mounts: &[Mount]) -> Result<(), String> {
    let root = c"/";
    // SAFETY: mount calls on paths this function names; the namespace is this process's own.
    unsafe {
        if libc::mount(
            std::ptr::null(),
            root.as_ptr(),
            std::ptr::null(),
            libc::MS_SLAVE | libc::MS_REC,
            std::ptr::null(),
        ) != 0
        {
            return Err(os("making the mounts private"));
        }
        let base = c"/tmp";
        if libc::mount(
            c"tmpfs".as_ptr(),
            base.as_ptr(),
            c"tmpfs".as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV,
            c"mode=0755".as_ptr().cast(),
        ) != 0
        {
            return Err(os("the box's root"));
        }
        if libc::chdir(base.as_ptr()) != 0
            || libc::mkdir(c"newroot".as_ptr(), 0o755) != 0
            || libc::mkdir(c"oldroot".as_ptr(), 0o755) != 0
        {
            return Err(os("the box's root"));
        }
        if libc::syscall(libc::SYS_pivot_root, base.as_ptr(), c"oldroot".as_ptr()) != 0 {
            return Err(os("pivot_root"));
        }
        if libc::chdir(root.as_ptr()) != 0
            || libc::mount(
                c"/newroot".as_ptr(),
                c"/newroot".as_ptr(),
                std::ptr::null(),
                libc::MS_BIND | libc::MS_REC,
                std::ptr::null(),
            ) != 0
        {
            return Err(os("the box's root"));
        }
    }
    for m in mounts {
        apply(m)?;
    }
    // SAFETY: as above.
    unsafe {
        if libc::umount2(c"/oldroot".as_ptr(), libc::MNT_DETACH) != 0 {
            return Err(os("detaching the system's mounts"));
        }
        if libc::chdir(c"/newroot".as_ptr()) != 0
            || libc::syscall(libc::SYS_pivot_root, c".".as_ptr(), c".".as_ptr()) != 0
        {
            return Err(os("pivot_root into the view"));
        }
        if libc::umount2(c".".as_ptr(), libc::MNT_DETACH) != 0 || libc::chdir(root.as_ptr()) != 0 {
            return Err(os("the view's root"));
        }
        // The view's own root (the folders made for its mounts) is read-only.
        let flags = libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV;
        if libc::mount(std::ptr::null(), root.as_ptr(), std::ptr::null(), flags, std::ptr::null()) != 0 {
            return Err(os("the view's root read-only"));
        }
    }
    Ok(())
}

/// `p` (absolute) under `/newroot`, or under `/oldroot` (the system's tree while the view is made).
fn under(base: &str, p: &Path) -> PathBuf {
    Path::new(base).join(p.strip_prefix("/").unwrap_or(p))
}

/// Makes `p` exist as a folder, or as an empty file, with the folders it is in.
fn make(p: &Path, folder: bool) -> Result<(), String> {
    let made = if folder {
        std::fs::create_dir_all(p)
    } else {
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("`{}`: {e}", parent.display()))?;
        }
        match std::fs::symlink_metadata(p) {
            Ok(_) => Ok(()),
            Err(_) => std::fs::OpenOptions::new().write(true).create(true).truncate(false).open(p).map(drop),
        }
    };
    made.map_err(|e| format!("`{}` in the box: {e}", p.display()))
}

fn mount(from: &Path, to: &Path, fstype: Option<&str>, flags: libc::c_ulong, data: Option<&str>) -> Result<(), String> {
    let (f, t) = (cstr(from)?, cstr(to)?);
    let fstype = fstype.map(|s| CString::new(s).unwrap_or_default());
    let data = data.map(|s| CString::new(s).unwrap_or_default());
    // SAFETY: every pointer is a NUL-terminated string alive for the call, or null.
    let r = unsafe {
        libc::mount(
            f.as_ptr(),
            t.as_ptr(),
            fstype.as_ref().map_or(std::ptr::null(), |s| s.as_ptr()),
            flags,
            data.as_ref().map_or(std::ptr::null(), |s| s.as_ptr().cast()),
        )
    };
    if r == 0 { Ok(()) } else { Err(os(&format!("mounting `{}`", to.display()))) }
}

/// Sets `attrs` on the mount at `p` and every mount under it.
fn set_attrs(p: &Path, attrs: u64) -> Result<(), String> {
    let path = cstr(p)?;
    let attr = MountAttr { attr_set: attrs, attr_clr: 0, propagation: 0, userns_fd: 0 };
    // SAFETY: a NUL-terminated path and a `mount_attr` of the kernel's size.
    let r = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            path.as_ptr(),
            libc::AT_RECURSIVE as libc::c_uint,
            &raw const attr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    if r == 0 {
        return Ok(());
    }
    if std::io::Error::last_os_error().raw_os_error() != Some(libc::ENOSYS) {
        return Err(os(&format!("`{}` read-only", p.display())));
    }
    // Before Linux 5.12: each mount at or under `p` remounted, keeping the flags it has.
    for m in mounts_under(p) {
        remount(&m, attrs)?;
    }
    Ok(())
}

/// The mount points at or under `p`, from the process's mount table.
fn mounts_under(p: &Path) -> Vec<PathBuf> {
    let table = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let mut out: Vec<PathBuf> = table
        .lines()
        .filter_map(|l| l.split(' ').nth(4))
        .map(|m| PathBuf::from(unescape(m)))
        .filter(|m| m.starts_with(p))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// A mount table's path: `\040` and the like are bytes in octal.
fn unescape(s: &str) -> OsString {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && let Ok(n) = u8::from_str_radix(std::str::from_utf8(&b[i + 1..i + 4]).unwrap_or("x"), 8)
        {
            out.push(n);
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    std::ffi::OsStr::from_bytes(&out).to_owned()
}

fn remount(p: &Path, attrs: u64) -> Result<(), String> {
    let path = cstr(p)?;
    // SAFETY: `st` is ours to fill.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::statvfs(path.as_ptr(), &raw mut st) } != 0 {
        return Err(os(&format!("`{}`", p.display())));
    }
    // What the mount has already must be kept (a mount from outside the namespace locks them).
    let mut flags = libc::MS_REMOUNT | libc::MS_BIND;
    for (has, flag) in [
        (libc::ST_RDONLY, libc::MS_RDONLY),
        (libc::ST_NOSUID, libc::MS_NOSUID),
        (libc::ST_NODEV, libc::MS_NODEV),
        (libc::ST_NOEXEC, libc::MS_NOEXEC),
        (libc::ST_NOATIME, libc::MS_NOATIME),
        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
        (libc::ST_RELATIME, libc::MS_RELATIME),
    ] {
        if st.f_flag & has != 0 {
            flags |= flag;
        }
    }
    for (attr, flag) in
        [(MOUNT_ATTR_RDONLY, libc::MS_RDONLY), (MOUNT_ATTR_NOSUID, libc::MS_NOSUID), (MOUNT_ATTR_NODEV, libc::MS_NODEV)]
    {
        if attrs & attr != 0 {
            flags |= flag;
        }
    }
    mount(Path::new("none"), p, None, flags, None)
}

/// The devices a box has, from the system's `/dev`.
const DEVICES: &[&str] = &["null", "zero", "full", "random", "urandom", "tty"];

/// One part of the view (see [`Mount`]).
fn apply(m: &Mount) -> Result<(), String> {
    match m {
        Mount::Bind { from, to, rw, may_miss } => {
            let src = under("/oldroot", from);
            let meta = match std::fs::metadata(&src) {
                Ok(meta) => meta,
                Err(_) if *may_miss => return Ok(()),
                Err(e) => return Err(format!("`{}`: {e}", from.display())),
            };
            let dst = under("/newroot", to);
            make(&dst, meta.is_dir())?;
            mount(&src, &dst, None, libc::MS_BIND | libc::MS_REC, None)?;
            let ro = if *rw { 0 } else { MOUNT_ATTR_RDONLY };
            set_attrs(&dst, ro | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)
        }
        Mount::Tmpfs(p) => {
            let dst = under("/newroot", p);
            make(&dst, true)?;
            mount(Path::new("tmpfs"), &dst, Some("tmpfs"), libc::MS_NOSUID | libc::MS_NODEV, Some("mode=0755"))
        }
        Mount::Symlink { target, at } => {
            let dst = under("/newroot", at);
            if let Some(parent) = dst.parent() {
                make(parent, true)?;
            }
            match std::os::unix::fs::symlink(target, &dst) {
                Ok(()) => Ok(()),
                Err(_) if std::fs::read_link(&dst).is_ok_and(|t| t == *target) => Ok(()),
                Err(e) => Err(format!("the link `{}` in the box: {e}", at.display())),
            }
        }
        Mount::Proc(p) => {
            let dst = under("/newroot", p);
            make(&dst, true)?;
            mount(Path::new("proc"), &dst, Some("proc"), libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC, None)?;
            // What of the kernel's state `/proc` would let the box's user write: read-only (as
            // root, the box's user is the system's root to files' owners, though it holds no
            // capability).
            for part in ["sys", "sysrq-trigger", "irq", "bus"] {
                let q = dst.join(part);
                if q.exists() {
                    mount(&q, &q, None, libc::MS_BIND | libc::MS_REC, None)?;
                    set_attrs(&q, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)?;
                }
            }
            Ok(())
        }
        Mount::Dev(p) => {
            let dst = under("/newroot", p);
            make(&dst, true)?;
            mount(Path::new("tmpfs"), &dst, Some("tmpfs"), libc::MS_NOSUID, Some("mode=0755"))?;
            for d in DEVICES {
                let (src, at) = (Path::new("/oldroot/dev").join(d), dst.join(d));
                if src.exists() {
                    make(&at, false)?;
                    // (A device node's own mount's flags hold: `nosuid` means nothing to it.)
                    mount(&src, &at, None, libc::MS_BIND, None)?;
                }
            }
            for (name, target) in [
                ("stdin", "/proc/self/fd/0"),
                ("stdout", "/proc/self/fd/1"),
                ("stderr", "/proc/self/fd/2"),
                ("fd", "/proc/self/fd"),
                ("core", "/proc/kcore"),
                ("ptmx", "pts/ptmx"),
            ] {
                std::os::unix::fs::symlink(target, dst.join(name)).map_err(|e| format!("/dev/{name}: {e}"))?;
            }
            make(&dst.join("shm"), true)?;
            make(&dst.join("pts"), true)?;
            mount(
                Path::new("devpts"),
                &dst.join("pts"),
                Some("devpts"),
                libc::MS_NOSUID | libc::MS_NOEXEC,
                Some("newinstance,ptmxmode=0666,mode=620"),
            )
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn mount_table_paths_are_unescaped() {
        assert_eq!(unescape(r"/a\040b"), OsString::from("/a b"));
        assert_eq!(unescape(r"/plain"), OsString::from("/plain"));
        assert_eq!(unescape(r"/end\"), OsString::from(r"/end\"));
    }

    #[test]
    fn under_keeps_the_path_below_the_base() {
        assert_eq!(under("/newroot", Path::new("/usr/bin")), PathBuf::from("/newroot/usr/bin"));
    }
}
