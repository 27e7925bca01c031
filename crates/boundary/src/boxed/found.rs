//! Finding a folder's executable configuration (`.git/config`, `package.json`, `Makefile`,
//! `.vscode`, `.claude`, ...): what a `workspace` box mounts read-only, and removes after if the
//! command created it; and its secrets (`.env`, keys), which a `read` box hides.

use crate::boxed::Error;
use std::path::{Path, PathBuf};

/// Folders not searched for executable configuration: dependencies and build output, which no
/// tool runs configuration from without the person asking (and which can hold a great many
/// files).
const NOT_SEARCHED: &[&str] = &[
    "node_modules",
    "target",
    ".venv",
    "venv",
    "__pycache__",
    ".tox",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    "dist",
    "build",
    "out",
    ".next",
    ".nuxt",
    ".gradle",
    ".cache",
    ".turbo",
    "coverage",
];

/// The most entries looked at when searching a folder for its executable configuration.
const MAX_SEARCHED: usize = 100_000;

/// What a box needs to know of its working folder before it is built.
#[derive(Debug, Default)]
pub(crate) struct Found {
    /// The executable configuration (`.git/config`, `package.json`, `Makefile`, `.vscode`,
    /// `.claude`, ...), each file or folder once (`workspace`: mounted read-only).
    pub(crate) executable: Vec<PathBuf>,
    /// The folders that are executable configuration by their place alone (`.git`), whose listed
    /// parts are among the first.
    pub(crate) anchors: Vec<PathBuf>,
    /// Files that hold secrets (`.env`, private keys: see [`assent_commands::secrets`];
    /// `read`: hidden).
    pub(crate) secrets: Vec<PathBuf>,
}

/// What one folder holds that a box needs to know, found by reading it (see [`Found`]); kept
/// between runs while the folder's modification time is as it was (see [`found`]).
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
struct Scan {
    /// The folder's change time (seconds, nanoseconds) and inode when it was read; zeros for
    /// one read within a second of a change, which is read again next time.
    changed: (i64, i64, u64),
    /// How many entries it holds.
    entries: usize,
    executable: Vec<PathBuf>,
    anchors: Vec<PathBuf>,
    secrets: Vec<PathBuf>,
    /// The folders in it to search in turn.
    below: Vec<PathBuf>,
}

/// Reads `dir` of `cwd` for what `wants_secrets` (`read`) or its executable configuration
/// (`workspace`) needs.
fn scan(cwd: &Path, dir: &Path, wants_secrets: bool) -> Scan {
    let mut f = Scan::default();
    let Ok(entries) = std::fs::read_dir(dir) else { return f };
    for e in entries.flatten() {
        f.entries += 1;
        let path = e.path();
        let Ok(t) = e.file_type() else { continue };
        let name = e.file_name();
        if wants_secrets {
            if t.is_file() && name.to_str().is_some_and(assent_commands::secrets::is_secret) {
                f.secrets.push(path);
            } else if t.is_dir() && !NOT_SEARCHED.iter().any(|n| name == *n) {
                f.below.push(path);
            }
            continue;
        }
        let rel = path.strip_prefix(cwd).unwrap_or(&path).to_string_lossy().into_owned();
        if t.is_dir() && assent_commands::executable::holds_listed(&rel) {
            f.anchors.push(path.clone());
            f.below.push(path);
            continue;
        }
        if assent_commands::executable::is_executable(&rel) {
            // A link is protected where it leads (a write through it lands there); one leading
            // out of the folder needs nothing: outside the folder is read-only.
            if t.is_symlink() {
                if let Ok(target) = std::fs::canonicalize(&path)
                    && target.starts_with(cwd)
                {
                    f.executable.push(target);
                }
            } else {
                f.executable.push(path);
            }
            continue;
        }
        if t.is_dir() && !NOT_SEARCHED.iter().any(|n| name == *n) {
            f.below.push(path);
        }
    }
    f
}

/// A folder's change time and inode. The change time, not the modification time: an entry made,
/// removed or renamed in the folder changes both, but only the modification time can be set
/// back (`touch -d`), by a command that would hide a secret from the next search.
fn changed(dir: &Path) -> Option<(i64, i64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::symlink_metadata(dir).ok()?;
    m.is_dir().then(|| (m.ctime(), m.ctime_nsec(), m.ino()))
}

/// What `profile` needs of `cwd` (see [`Found`]): for `workspace` its executable
/// configuration, for `read` its secrets.
///
/// Every folder of the project is looked at each time, but one is read again only when its
/// change time (see [`changed`]) is not what it was at a run before (an entry made, removed or
/// renamed in it changes it), so a large project costs a box a `stat` per folder rather than a read of every
/// file. What was found is kept in this user's own folder of the system's temporary folder
/// (see `kept.rs`), named by the folder, the profile and this binary; a folder that changed in
/// the second before it was read is read again next time (a time can be as coarse as a
/// clock tick), and a run that cannot use what was kept reads everything.
pub(crate) fn found(cwd: &Path, profile: crate::boxed::Confine) -> Result<Found, Error> {
    let wants_secrets = profile == crate::boxed::Confine::Read;
    let kept_at = kept_file(cwd, profile);
    let mut before: std::collections::HashMap<PathBuf, Scan> =
        kept_at.as_deref().and_then(|k| serde_json::from_slice(&std::fs::read(k).ok()?).ok()).unwrap_or_default();
    let started = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
    let mut now = std::collections::HashMap::new();
    let mut fresh = false;
    let mut f = Found::default();
    let mut seen = 0;
    let mut stack = vec![cwd.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Some(t) = changed(&dir) else { continue };
        let s = match before.remove(&dir) {
            Some(s) if s.changed == t => s,
            _ => {
                fresh = true;
                let mut s = scan(cwd, &dir, wants_secrets);
                s.changed = if t.0 >= started - 1 { (0, 0, 0) } else { t };
                s
            }
        };
        seen += s.entries;
        if seen > MAX_SEARCHED {
            return Err(Error::Folder(format!(
                "`{}` holds more than {MAX_SEARCHED} files outside its dependencies and build output: too many to build its box",
                cwd.display()
            )));
        }
        f.executable.extend(s.executable.iter().cloned());
        f.anchors.extend(s.anchors.iter().cloned());
        f.secrets.extend(s.secrets.iter().cloned());
        stack.extend(s.below.iter().cloned());
        now.insert(dir, s);
    }
    for v in [&mut f.executable, &mut f.anchors, &mut f.secrets] {
        v.sort();
        v.dedup();
    }
    // Kept again only when something was read anew or is gone.
    if let Some(k) = kept_at.filter(|_| fresh || !before.is_empty()) {
        keep(&k, &now);
    }
    Ok(f)
}

/// Where what a search of `cwd` for `profile` found is kept (see [`found`]): named by the
/// folder, the profile and this binary (its size and time: another build reads anew).
fn kept_file(cwd: &Path, profile: crate::boxed::Confine) -> Option<PathBuf> {
    use std::hash::{Hash, Hasher};
    use std::os::unix::fs::MetadataExt;
    let exe = std::fs::metadata(std::env::current_exe().ok()?).ok()?;
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (cwd, profile.as_str(), exe.size(), exe.mtime(), exe.mtime_nsec(), exe.ino()).hash(&mut h);
    Some(crate::boxed::kept::folder("found")?.join(format!("{:016x}.json", h.finish())))
}

/// Keeps `scans` at `file`, whole or not at all.
fn keep(file: &Path, scans: &std::collections::HashMap<PathBuf, Scan>) {
    let Some(base) = file.parent() else { return };
    let Ok(text) = serde_json::to_vec(scans) else { return };
    let Ok(mut tmp) = tempfile::NamedTempFile::new_in(base) else { return };
    if std::io::Write::write_all(&mut tmp, &text).is_ok() && tmp.persist(file).is_ok() {
        crate::boxed::kept::prune(base, file, 256);
    }
}

/// Removes what of executable configuration appeared in `cwd` during a run (the box's processes
/// are all gone by then: nothing writes after this).
pub(crate) fn remove_created(cwd: &Path, before: &[PathBuf]) {
    let after = found(cwd, crate::Confine::Workspace).map(|f| f.executable).unwrap_or_default();
    for p in after.iter().filter(|p| !before.contains(p)) {
        let removed = if p.is_dir() && !p.is_symlink() { std::fs::remove_dir_all(p) } else { std::fs::remove_file(p) };
        match removed {
            Ok(()) => eprintln!(
                "assent run: removed {}: the boxed command created executable configuration, which it may not leave behind",
                p.display()
            ),
            Err(e) => {
                eprintln!("assent run: the boxed command created {}, which could not be removed: {e}", p.display())
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::boxed::Confine;

    /// A project whose folders changed more than two seconds ago, so that what a search finds in
    /// them is kept.
    fn settled_project() -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        for dir in ["src/deep", "config", ".git/hooks"] {
            std::fs::create_dir_all(d.path().join(dir)).unwrap();
        }
        std::fs::write(d.path().join("config/.env"), "TOKEN=1").unwrap();
        std::fs::write(d.path().join("package.json"), "{}").unwrap();
        std::fs::write(d.path().join("src/deep/a.ts"), "x").unwrap();
        std::thread::sleep(std::time::Duration::from_millis(2100));
        d
    }

    #[test]
    fn what_was_kept_is_used_only_while_each_folder_is_as_it_was() {
        let d = settled_project();
        let cwd = d.path().canonicalize().unwrap();
        let first = found(&cwd, Confine::Read).unwrap();
        assert_eq!(first.secrets, vec![cwd.join("config/.env")]);
        let kept = kept_file(&cwd, Confine::Read).unwrap();
        assert!(kept.is_file(), "nothing kept");
        // Kept: the same answer without reading the folders again.
        let modified = std::fs::metadata(&kept).unwrap().modified().unwrap();
        assert_eq!(found(&cwd, Confine::Read).unwrap().secrets, first.secrets);
        assert_eq!(std::fs::metadata(&kept).unwrap().modified().unwrap(), modified, "kept again with nothing new");
        // A secret made later is found, even where its folder's modification time is set back
        // to what was kept (`touch -d`): the change time cannot be.
        let deep = cwd.join("src/deep");
        let old = std::fs::metadata(&deep).unwrap().modified().unwrap();
        std::fs::write(deep.join("id_rsa"), "KEY").unwrap();
        std::fs::File::open(&deep).unwrap().set_modified(old).unwrap();
        assert_eq!(std::fs::metadata(&deep).unwrap().modified().unwrap(), old);
        assert_eq!(found(&cwd, Confine::Read).unwrap().secrets, vec![cwd.join("config/.env"), deep.join("id_rsa")]);
        // One removed is gone; a folder removed with what it held too.
        std::fs::remove_dir_all(cwd.join("config")).unwrap();
        assert_eq!(found(&cwd, Confine::Read).unwrap().secrets, vec![deep.join("id_rsa")]);
        // The workspace search is kept apart, and finds the executable configuration.
        let w = found(&cwd, Confine::Workspace).unwrap();
        assert!(w.executable.contains(&cwd.join("package.json")), "{w:?}");
        assert_ne!(kept_file(&cwd, Confine::Workspace), Some(kept));
    }

    #[test]
    fn a_folder_read_as_it_changed_is_read_again() {
        let d = tempfile::tempdir().unwrap();
        let cwd = d.path().canonicalize().unwrap();
        std::fs::create_dir_all(cwd.join("a")).unwrap();
        assert!(found(&cwd, Confine::Read).unwrap().secrets.is_empty());
        // In the same clock tick as the search that read it: kept as not to be trusted.
        std::fs::write(cwd.join("a/.env"), "TOKEN=1").unwrap();
        assert_eq!(found(&cwd, Confine::Read).unwrap().secrets, vec![cwd.join("a/.env")]);
    }
}
