//! What the box keeps between runs, this user's alone: a folder of the system's temporary
//! folder (`assent-NAME-UID`, mode 0700) that is never used when it is another user's or others
//! may write it. What is kept there only spares work (a copy of `/etc`'s named entries, what a
//! search of a project found): a run that cannot use it does the work again.

use std::path::PathBuf;

/// This user's folder `NAME` of the system's temporary folder, made if missing; none when it is
/// not this user's alone.
pub(crate) fn folder(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    // This process's user (the system call cannot fail).
    #[allow(unsafe_code)]
    // SAFETY: getuid takes nothing and only returns the caller's real user id.
    let uid = unsafe { libc::getuid() };
    let base = std::env::temp_dir().join(format!("assent-{name}-{uid}"));
    match std::fs::symlink_metadata(&base) {
        // Another user's, or not a folder: never used.
        Ok(m) if !m.is_dir() || m.uid() != uid || m.mode() & 0o022 != 0 => None,
        Ok(_) => Some(base),
        Err(_) => std::fs::DirBuilder::new().mode(0o700).create(&base).ok().map(|()| base),
    }
}

/// Removes what `base` holds but `keep` and the newest `newest` others (a run may be using one).
pub(crate) fn prune(base: &std::path::Path, keep: &std::path::Path, newest: usize) {
    let Ok(entries) = std::fs::read_dir(base) else { return };
    let mut old: Vec<(std::time::SystemTime, PathBuf)> = entries
        .flatten()
        .filter(|e| e.path() != keep)
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    old.sort();
    let n = old.len().saturating_sub(newest);
    for (_, p) in old.into_iter().take(n) {
        let _ = if p.is_dir() { std::fs::remove_dir_all(&p) } else { std::fs::remove_file(&p) };
    }
}
