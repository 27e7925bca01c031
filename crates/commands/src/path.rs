//! Paths as rules compare them: absolute, with `.`, `..`, `//` and a trailing `/` taken out, so
//! that `/proj/src/../../etc/passwd` is `/etc/passwd` and `~/./.ssh//id_rsa` is
//! `~/.ssh/id_rsa`; and the real path, with links resolved, for the checks that must see where a
//! path truly leads.

use std::path::{Component, Path, PathBuf};

/// The longest path the kernel takes (`PATH_MAX`, with its terminating NUL): a longer one names
/// no file, and rules read it as not known.
pub const MAX_PATH: usize = 4096;

/// `path` made absolute against `cwd` (when relative) and normalized lexically, as a POSIX
/// shell reads it (the command reader's paths, a URL's path); none when it is relative and
/// there is no working folder, longer than [`MAX_PATH`], or not valid.
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
    let parts = names(&joined, Some)?;
    Some(format!("/{}", parts.join("/")))
}

/// The names of a `/`-separated path, `.` and empty ones taken out and each `..` taking out the
/// one before it (never above the start); `name` says what each other name is (none: the path
/// is not valid).
fn names<'a>(path: &'a str, name: impl Fn(&'a str) -> Option<&'a str>) -> Option<Vec<&'a str>> {
    let mut parts = Vec::new();
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(name(s)?),
        }
    }
    Some(parts)
}

/// A path of this platform's files (a proposal's, a working folder, a rule's glob) as rules
/// compare it: [`normalize`] on Unix; on Windows a drive (`C:/…`) or a share
/// (`//server/share/…`) with `/` between the names, lower-cased as its case-insensitive disks
/// compare names, each name without the trailing dots and spaces Windows takes off
/// ([`windows::normalize`]).
pub fn native(path: &str, cwd: Option<&str>) -> Option<String> {
    if cfg!(windows) { windows::normalize(path, cwd).map(|p| windows::fold(&p)) } else { normalize(path, cwd) }
}

/// [`native`] as the platform writes it, the case kept: how a path is shown and stored (a tool
/// call's working folder); on Windows with `\\` between the names.
pub fn tidy(path: &str, cwd: Option<&str>) -> Option<String> {
    if cfg!(windows) { windows::normalize(path, cwd).map(|p| p.replace('/', "\\")) } else { normalize(path, cwd) }
}

/// Whether `path` is absolute as this platform writes its files' paths: `/…` on Unix; on
/// Windows a drive (`C:\…`, `C:/…`, `\\?\C:\…`) or a share (`\\server\share\…`), never `\…`
/// alone (the current drive's) nor `C:…` (that drive's current folder).
pub fn is_absolute(path: &str) -> bool {
    if cfg!(windows) { windows::root(&path.replace('\\', "/")).is_some() } else { path.starts_with('/') }
}

/// Windows paths as rules compare them, as plain text (so that every platform's tests read
/// them): [`normalize`] and [`is_absolute`] use these on Windows.
pub mod windows {
    use super::MAX_PATH;

    /// `path` made absolute against `cwd` and normalized: `\` read as `/`, the drive letter
    /// upper-cased, `.`, `..` and empty names taken out (never above the drive or the share),
    /// trailing dots and spaces taken off each name. None when relative with no working folder,
    /// rooted on no drive (`\x`, `C:x`), a device path (`\\.\…`), too long or not valid.
    pub fn normalize(path: &str, cwd: Option<&str>) -> Option<String> {
        if path.is_empty() || path.contains('\0') || path.len() >= MAX_PATH {
            return None;
        }
        let p = path.replace('\\', "/");
        let Some((root, rest)) = root(&p) else {
            if p.starts_with('/') || p.as_bytes().get(1) == Some(&b':') {
                return None;
            }
            let base = normalize(cwd?, None)?;
            return normalize(&format!("{base}/{p}"), None);
        };
        // A name of dots and spaces alone: what Windows makes of it is not worth guessing.
        let parts = super::names(&rest, |n| Some(n.trim_end_matches(['.', ' '])).filter(|n| !n.is_empty()))?;
        Some(format!("{root}/{}", parts.join("/")))
    }

    /// The root of a path written with `/`: `C:` for `C:/…` (and `//?/C:/…`), `//server/share`
    /// for a share (and `//?/UNC/server/share/…`), with the rest after it; none for any other.
    pub fn root(p: &str) -> Option<(String, String)> {
        let p = match p.strip_prefix("//?/") {
            Some(r) => r.strip_prefix("UNC/").map_or(r.to_string(), |unc| format!("//{unc}")),
            None => p.to_string(),
        };
        let b = p.as_bytes();
        if b.len() >= 3 && b[0].is_ascii_alphabetic() && b[1] == b':' && b[2] == b'/' {
            return Some((format!("{}:", (b[0] as char).to_ascii_uppercase()), p[3..].to_string()));
        }
        let unc = p.strip_prefix("//")?;
        let mut names = unc.splitn(3, '/');
        let (server, share) = (names.next()?, names.next()?);
        if server.is_empty() || share.is_empty() || server == "?" || server == "." {
            return None;
        }
        Some((format!("//{server}/{share}"), names.next().unwrap_or("").to_string()))
    }

    /// A path as a case-insensitive disk compares it.
    pub fn fold(p: &str) -> String {
        p.to_lowercase()
    }
}

/// The real path of an absolute, normalized path: its longest existing ancestor resolved
/// (links followed), the rest appended and normalized again. None when it cannot be read, or is
/// longer than [`MAX_PATH`].
///
/// The ancestor is found by bisection over the path's components (an ancestor that cannot be
/// resolved has none below it that can), so a path costs a few resolutions of itself, not one
/// per component.
pub fn real(path: &str) -> Option<String> {
    if path.len() >= MAX_PATH || !is_absolute(path) {
        return None;
    }
    // Most paths a command names exist: one resolution.
    if let Ok(r) = std::fs::canonicalize(path) {
        return native(r.to_str()?, None);
    }
    let parts: Vec<Component<'_>> = Path::new(path).components().collect();
    let prefix = |n: usize| -> PathBuf { parts[..n].iter().collect() };
    // The root (`/`; on Windows a drive or a share, then its `\`) always resolves.
    let root = parts.iter().take_while(|c| matches!(c, Component::Prefix(_) | Component::RootDir)).count();
    let (mut lo, mut hi) = (root, parts.len());
    let mut resolved = std::fs::canonicalize(prefix(root)).ok()?;
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
    native(full.to_str()?, None)
}

/// Whether `dir` can be a project's working folder, whose reads a rule may take as "inside the
/// folder": absolute, neither the root nor a top-level folder (`/tmp`, `/etc`, `/home`), not the
/// home folder or above it, and not a hidden folder of the home (`~/.ssh`, `~/.config`), where
/// reading everything would read secrets. `Err` says why not.
pub fn project_folder(dir: &str, home: Option<&str>) -> Result<(), String> {
    let Some(d) = native(dir, None) else {
        return Err(format!("the working folder `{dir}` is not an absolute path"));
    };
    let below_root = if cfg!(windows) { windows::root(&d).map(|(_, rest)| rest) } else { Some(d[1..].to_string()) };
    if !below_root.is_some_and(|r| r.contains('/')) {
        return Err(format!("`{d}` is the root or a top-level folder, not a project folder"));
    }
    if let Some(h) = home.and_then(|h| native(h, None)) {
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

/// Whether `path` (normalized) is `dir` or inside it (on Windows, whatever the case).
pub fn inside(path: &str, dir: &str) -> bool {
    if cfg!(windows) {
        let (path, dir) = (windows::fold(path), windows::fold(dir));
        return inside_as_written(&path, &dir);
    }
    inside_as_written(path, dir)
}

fn inside_as_written(path: &str, dir: &str) -> bool {
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
    fn windows_paths() {
        use windows::{fold, normalize as n, root};
        let cwd = Some(r"C:\Users\Ann\proj");
        for (given, want) in [
            (r"c:\Users\Ann\.ssh\id_rsa", Some("C:/Users/Ann/.ssh/id_rsa")),
            (r"C:\Users\Ann\proj\src\..\..\..\..\..\Windows", Some("C:/Windows")),
            ("C:/a//b/./c/", Some("C:/a/b/c")),
            (r"src\a.ts", Some("C:/Users/Ann/proj/src/a.ts")),
            (r".\", Some("C:/Users/Ann/proj")),
            (r"\\?\D:\data\x", Some("D:/data/x")),
            (r"\\server\share\a\..\..\..\b", Some("//server/share/b")),
            (r"\\?\UNC\server\share\b", Some("//server/share/b")),
            // What Windows itself takes off a name.
            (r"C:\x\secret.txt. . ", Some("C:/x/secret.txt")),
            (r"C:\x\...", None),
            // Rooted on no drive, a drive's own current folder, a device: not known.
            (r"\Windows\x", None),
            ("C:Windows", None),
            (r"\\.\PhysicalDrive0", None),
            (r"\\?\GLOBALROOT\x", None),
            ("", None),
        ] {
            assert_eq!(n(given, cwd).as_deref(), want, "{given}");
        }
        assert_eq!(n("src", None), None);
        assert_eq!(root("C:/x").map(|r| r.0).as_deref(), Some("C:"));
        assert_eq!(fold("C:/Users/ANN/.SSH"), "c:/users/ann/.ssh");
        // Compared whatever the case, on Windows.
        assert_eq!(inside("c:/users/ann/proj/a", "C:/Users/Ann/proj"), cfg!(windows));
        assert!(inside_as_written("C:/a/b", "C:/"));
        assert!(!inside_as_written("C:/ab", "C:/a"));
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
