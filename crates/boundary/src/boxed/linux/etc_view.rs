//! The box's `/etc` as one folder: a copy of the entries the box names (see `view.rs`), mounted
//! once instead of an entry at a time (each mount costs a box about a quarter of a millisecond).
//! The copy is made once and kept while the entries are as they were: a fingerprint of each
//! entry's kind, size and time names the copy, so a changed entry makes a new one. It is this
//! user's (mode 0700), in the system's temporary folder; what is in it is only what the box
//! shows anyway, so whoever writes it changes nothing but the box's own view.

use std::path::{Path, PathBuf};

/// The most entries copied of one folder of `/etc` (all of it, recursively).
const MAX_ENTRIES: usize = 20_000;
/// The most bytes copied in all.
const MAX_BYTES: u64 = 64 << 20;

/// The fingerprint of the entries `names` of `/etc` (kind, size, modification time of each, a
/// link followed), as hex.
fn fingerprint(names: &[String]) -> String {
    use std::hash::{Hash, Hasher};
    use std::os::unix::fs::MetadataExt;
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for n in names {
        n.hash(&mut h);
        if let Ok(m) = std::fs::metadata(Path::new("/etc").join(n)) {
            (m.is_dir(), m.size(), m.mtime(), m.mtime_nsec(), m.ino()).hash(&mut h);
        }
    }
    format!("{:016x}", h.finish())
}

/// Copies `from` to `to`: a file's content, a link as the same link, a folder with what it holds
/// (within the bounds); `follow` copies what a link names instead (the top-level entries, whose
/// links often lead outside what the box shows).
fn copy(from: &Path, to: &Path, follow: bool, budget: &mut (usize, u64)) -> std::io::Result<()> {
    let m = if follow { std::fs::metadata(from)? } else { std::fs::symlink_metadata(from)? };
    budget.0 += 1;
    if budget.0 > MAX_ENTRIES || budget.1 > MAX_BYTES {
        return Err(std::io::Error::other("too much to copy"));
    }
    if m.file_type().is_symlink() {
        std::os::unix::fs::symlink(std::fs::read_link(from)?, to)
    } else if m.is_dir() {
        std::fs::create_dir(to)?;
        for e in std::fs::read_dir(from)?.flatten() {
            // An unreadable entry (a secret in a named folder) is left out.
            let _ = copy(&e.path(), &to.join(e.file_name()), false, budget);
        }
        Ok(())
    } else if m.is_file() {
        budget.1 += m.len();
        std::fs::copy(from, to).map(|_| ())
    } else {
        Ok(())
    }
}

/// The folder to mount as the box's `/etc`, holding `names` (paths relative to `/etc`, such as
/// `ssl/certs`) and `mtab`; none when it cannot be made (the box then mounts each entry).
pub(crate) fn view(names: &[String]) -> Option<PathBuf> {
    let base = crate::boxed::kept::folder("etc")?;
    let made = base.join(fingerprint(names));
    if made.is_dir() {
        return Some(made);
    }
    let tmp = tempfile::Builder::new().prefix("new-").tempdir_in(&base).ok()?;
    let mut budget = (0, 0);
    for n in names {
        let from = Path::new("/etc").join(n);
        if !from.exists() {
            continue;
        }
        let to = tmp.path().join(n);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).ok()?;
        }
        let _ = copy(&from, &to, true, &mut budget);
    }
    std::os::unix::fs::symlink("/proc/self/mounts", tmp.path().join("mtab")).ok()?;
    let kept = tmp.keep();
    // Another run may have made the same copy meanwhile: either one is the view.
    if std::fs::rename(&kept, &made).is_err() {
        let _ = std::fs::remove_dir_all(&kept);
    }
    crate::boxed::kept::prune(&base, &made, 3);
    made.is_dir().then_some(made)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_view_holds_the_named_entries_alone_and_is_made_once() {
        let names = vec!["passwd".to_string(), "ld.so.conf.d".to_string(), "no-such-entry".to_string()];
        let v = view(&names).unwrap();
        assert!(v.join("passwd").is_file());
        assert_eq!(std::fs::read(v.join("passwd")).unwrap(), std::fs::read("/etc/passwd").unwrap());
        assert!(!v.join("shadow").exists() && !v.join("no-such-entry").exists());
        assert_eq!(std::fs::read_link(v.join("mtab")).unwrap(), Path::new("/proc/self/mounts"));
        assert_eq!(view(&names).unwrap(), v, "the same entries, the same copy");
    }
}
