//! Paths as rules compare them: absolute, with `.`, `..`, `//` and a trailing `/` taken out, so
//! that `/proj/src/../../etc/passwd` is `/etc/passwd` and `~/./.ssh//id_rsa` is
//! `~/.ssh/id_rsa`; and the real path, with links resolved, for the checks that must see where a
//! path truly leads.

use std::path::{Component, Path, PathBuf};

/// `path` made absolute against `cwd` (when relative) and normalized lexically; none when it is
/// relative and there is no working folder, or not valid.
pub fn normalize(path: &str, cwd: Option<&str>) -> Option<String> {
    if path.is_empty() || path.contains('\0') {
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
/// (links followed), the rest appended and normalized again. None when it cannot be read.
pub fn real(path: &str) -> Option<String> {
    let p = Path::new(path);
    let mut existing = p.to_path_buf();
    let mut rest: Vec<std::ffi::OsString> = Vec::new();
    // Bounded by the path's depth.
    loop {
        match std::fs::canonicalize(&existing) {
            Ok(resolved) => {
                let mut full: PathBuf = resolved;
                for r in rest.iter().rev() {
                    full.push(r);
                }
                return normalize(full.to_str()?, None);
            }
            Err(_) => {
                let name = existing.file_name()?.to_os_string();
                rest.push(name);
                if !existing.pop() {
                    return None;
                }
            }
        }
    }
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
    fn links_are_followed() {
        let Ok(d) = tempfile::tempdir() else { return };
        let base = d.path().canonicalize().unwrap_or_default();
        let _ = std::fs::create_dir(base.join("secret"));
        let _ = std::os::unix::fs::symlink(base.join("secret"), base.join("link"));
        let via = format!("{}/link/key", base.display());
        assert_eq!(real(&via), Some(format!("{}/secret/key", base.display())));
    }
}
