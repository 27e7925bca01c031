//! Paths as rules compare them: absolute, with `.`, `..`, `//` and a trailing `/` taken out, so
//! that `/proj/src/../../etc/passwd` is `/etc/passwd` and `~/./.ssh//id_rsa` is
//! `~/.ssh/id_rsa`; and the real path, with links resolved, for the checks that must see where a
//! path truly leads.

use std::path::{Component, Path, PathBuf};

/// The longest path the kernel takes (`PATH_MAX`, with its terminating NUL): a longer one names
/// no file, and rules read it as not known.
pub const MAX_PATH: usize = 4096;

/// `path` made absolute against `cwd` (when relative) and normalized lexically; none when it is
/// relative and there is no working folder, longer than [`MAX_PATH`], or not valid.
pub fn normalize(path: &str, cwd: Option<&str>) -> Option<String> {
    if path.is_empty() || path.contains('\0') || path.len() >= MAX_PATH {
        return None;
    }
    let joined = if path.starts_with('/') {
        path.to_string()
    } else {
        let base = cwd.filter(|c| c.starts_with('/'))?;
        format!("{base}/{path}")
    };
    let mut parts: Vec<&str> = Vec::new();
    for seg in joined.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    Some(format!("/{}", parts.join("/")))
}

/// The real path of an absolute, normalized path: its longest existing ancestor resolved
/// (links followed), the rest appended and normalized again. None when it cannot be read, or is
/// longer than [`MAX_PATH`].
///
/// The ancestor is found by bisection over the path's components (an ancestor that cannot be
/// resolved has none below it that can), so a path costs a few resolutions of itself, not one
/// per component.
pub fn real(path: &str) -> Option<String> {
    if path.len() >= MAX_PATH || !path.starts_with('/') {
        return None;
    }
    // Most paths a command names exist: one resolution.
    if let Ok(r) = std::fs::canonicalize(path) {
        return normalize(r.to_str()?, None);
    }
    let parts: Vec<Component<'_>> = Path::new(path).components().collect();
    let prefix = |n: usize| -> PathBuf { parts[..n].iter().collect() };
    // parts[0] is the root, which always resolves.
    let (mut lo, mut hi) = (1, parts.len());
    let mut resolved = std::fs::canonicalize("/").ok()?;
    while lo <= hi {
        let mid = lo + (hi - lo) / 2;
        match std::fs::canonicalize(prefix(mid)) {
            Ok(r) => {
                resolved = r;
                lo = mid + 1;
            }
            Err(_) => hi = mid - 1,
        }
    }
    // The last prefix that resolved was the first lo - 1 components (to `resolved`); the rest
    // are appended as written.
    let mut full = resolved;
    for c in &parts[lo - 1..] {
        full.push(c);
    }
    normalize(full.to_str()?, None)
}

/// Whether `dir` can be a project's working folder, whose reads a rule may take as "inside the
/// folder": absolute, neither the root nor a top-level folder (`/tmp`, `/etc`, `/home`), not the
/// home folder or above it, and not a hidden folder of the home (`~/.ssh`, `~/.config`), where
/// reading everything would read secrets. `Err` says why not.
pub fn project_folder(dir: &str, home: Option<&str>) -> Result<(), String> {
    let Some(d) = normalize(dir, None) else {
        return Err(format!("the working folder `{dir}` is not an absolute path"));
    };
    if d.matches('/').count() < 2 {
        return Err(format!("`{d}` is the root or a top-level folder, not a project folder"));
    }
    if let Some(h) = home.and_then(|h| normalize(h, None)) {
        if inside(&h, &d) {
            return Err(format!("`{d}` holds the home folder, not a project folder"));
        }
        if let Some(rest) = d.strip_prefix(&h).and_then(|r| r.strip_prefix('/'))
            && rest.starts_with('.')
        {
            return Err(format!("`{d}` is a hidden folder of the home, not a project folder"));
        }
    }
    Ok(())
}

/// Whether `path` (normalized) is `dir` or inside it.
pub fn inside(path: &str, dir: &str) -> bool {
    let dir = dir.trim_end_matches('/');
    dir.is_empty() || path == dir || path.strip_prefix(dir).is_some_and(|r| r.starts_with('/'))
}

/// Whether a path has a component that is not normal (used to refuse what normalization would
/// have to guess).
pub fn has_parent_ref(path: &str) -> bool {
    Path::new(path).components().any(|c| matches!(c, Component::ParentDir))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexical() {
        let n = |p: &str| normalize(p, Some("/w/proj"));
        assert_eq!(n("/proj/src/../../../etc/passwd").as_deref(), Some("/etc/passwd"));
        assert_eq!(n("/home/u/./.ssh//id_rsa").as_deref(), Some("/home/u/.ssh/id_rsa"));
        assert_eq!(n("/home/u/.ssh/").as_deref(), Some("/home/u/.ssh"));
        assert_eq!(n("src/a.ts").as_deref(), Some("/w/proj/src/a.ts"));
        assert_eq!(n("./").as_deref(), Some("/w/proj"));
        assert_eq!(n("..").as_deref(), Some("/w"));
        assert_eq!(normalize("src", None), None);
        assert!(inside("/w/proj/a", "/w/proj"));
        assert!(inside("/w/proj", "/w/proj/"));
        assert!(!inside("/w/project", "/w/proj"));
    }

    #[test]
    fn project_folders() {
        let home = Some("/home/ann");
        for bad in
            ["/", "/home", "/home/ann", "/home/ann/", "/etc", "/tmp", "/home/ann/.ssh", "/home/ann/.config/x", "x"]
        {
            assert!(project_folder(bad, home).is_err(), "{bad}");
        }
        for good in ["/home/ann/src/app", "/home/ann/app", "/tmp/x", "/srv/work/app", "/home/annex/app"] {
            assert_eq!(project_folder(good, home), Ok(()), "{good}");
        }
    }

    #[test]
    fn a_path_past_the_kernels_limit_is_not_known_and_costs_little() {
        let long = format!("/{}", "a/".repeat(2_000_000));
        let t = std::time::Instant::now();
        assert_eq!(normalize(&long, None), None);
        assert_eq!(real(&long), None);
        let deep = format!("/nonexistent{}", "/b".repeat(2000));
        assert!(real(&deep).is_some_and(|r| r.ends_with("/b/b")));
        assert!(t.elapsed() < std::time::Duration::from_millis(500), "{:?}", t.elapsed());
    }

    #[test]
    fn links_are_followed() {
        let Ok(d) = tempfile::tempdir() else { return };
        let base = d.path().canonicalize().unwrap_or_default();
        let _ = std::fs::create_dir(base.join("secret"));
        let _ = std::os::unix::fs::symlink(base.join("secret"), base.join("link"));
        let via = format!("{}/link/key", base.display());
        assert_eq!(real(&via), Some(format!("{}/secret/key", base.display())));
    }
}
