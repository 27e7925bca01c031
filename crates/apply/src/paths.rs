//! Which paths an agent may propose to write. A path must be absolute; `.` and `..` are
//! resolved; the real location (symlinks in its folders resolved) must not be under a protected
//! root and, where the config names allowed roots for the agent, must be under one of them. A
//! target that is itself a symlink is refused: Assent never follows a symlink out of a root.

use assent_core::CoreError;
use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

/// The rules, from the config.
#[derive(Debug, Clone, Default)]
pub struct PathPolicy {
    /// Never written: Assent's home and database, keychain files, `~/.ssh`, the deny list.
    pub protected: Vec<PathBuf>,
    /// Per agent: the only folders it may write under (absent: anywhere not protected).
    pub allowed_roots: HashMap<String, Vec<PathBuf>>,
}

fn refuse(code: &'static str, message: impl Into<String>) -> CoreError {
    CoreError::invalid(code, message)
}

/// Resolves `.` and `..` without touching the file system.
pub fn lexical(raw: &str) -> Result<PathBuf, CoreError> {
    if raw.contains('\0') {
        return Err(refuse("invalid_path", "the path contains a NUL character"));
    }
    let p = Path::new(raw);
    if !p.is_absolute() {
        return Err(refuse("path_not_absolute", format!("`{raw}` is not an absolute path")));
    }
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::Prefix(prefix) => {
                windows_prefix(raw, prefix.kind())?;
                out.push(c.as_os_str())
            }
            Component::RootDir => out.push(c.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(n) => {
                #[cfg(windows)]
                if let Some(why) = crate::at::unsafe_name(n) {
                    return Err(refuse("invalid_path", format!("`{raw}` cannot be written: {why}")));
                }
                out.push(n)
            }
        }
    }
    if out.parent().is_none() {
        return Err(refuse("invalid_path", "the path names a folder, not a file"));
    }
    Ok(out)
}

/// On Windows, a path starts with a drive (`C:\`) or a share (`\\server\share\`). The
/// verbatim (`\\?\`) and device (`\\.\`) forms skip Windows' own reading of a name (a
/// trailing dot kept, `CON` a file) or reach devices: refused, with the form to use instead.
fn windows_prefix(raw: &str, kind: std::path::Prefix<'_>) -> Result<(), CoreError> {
    use std::path::Prefix;
    match kind {
        Prefix::Disk(_) | Prefix::UNC(..) => Ok(()),
        _ => Err(refuse(
            "invalid_path",
            format!(
                "`{raw}`: the `\\\\?\\` and `\\\\.\\` forms are not written to; name the file as `C:\\folder\\file`"
            ),
        )),
    }
}

/// The real location of `p`: its folder with every symlink resolved (as far as it exists),
/// then the file's own name, which is never followed. What the target is (a file, a link, a
/// folder, a device) is for the snapshot to find out, through the opened folder, and only
/// after the policy has allowed the path: an error must not tell an agent what exists in a
/// place it may not touch.
pub fn real(p: &Path) -> Result<PathBuf, CoreError> {
    let (Some(parent), Some(name)) = (p.parent(), p.file_name()) else {
        return Err(refuse("invalid_path", "the path names a folder, not a file"));
    };
    let mut existing = parent.to_path_buf();
    let mut rest = vec![name.to_os_string()];
    while std::fs::symlink_metadata(&existing).is_err() {
        match (existing.file_name().map(|n| n.to_os_string()), existing.parent()) {
            (Some(n), Some(up)) => {
                rest.push(n);
                existing = up.to_path_buf();
            }
            _ => break,
        }
    }
    // dunce: on Windows the drive form (`C:\x`) where it names the same file, rather than
    // the verbatim `\\?\C:\x` that the system's canonical form is; elsewhere the same.
    let mut out = dunce::canonicalize(&existing)
        .map_err(|_| refuse("invalid_path", format!("`{}` cannot be resolved to a real folder", existing.display())))?;
    for n in rest.into_iter().rev() {
        out.push(n);
    }
    Ok(out)
}

/// The canonical form of a configured root (as written when it does not exist yet).
fn canon(root: &Path) -> PathBuf {
    dunce::canonicalize(root).unwrap_or_else(|_| root.to_path_buf())
}

/// Whether `path` is `root` or under it, comparing names without regard to case: on a
/// case-insensitive disk (macOS, Windows, or a Linux folder with casefolding) `~/.SSH` is
/// `~/.ssh`, and on a case-sensitive one refusing a look-alike costs nothing.
fn under(path: &Path, root: &Path) -> bool {
    let fold = |c: std::path::Component<'_>| c.as_os_str().to_string_lossy().to_lowercase();
    let mut p = path.components();
    root.components().all(|r| p.next().is_some_and(|c| fold(c) == fold(r)))
}

/// Device and inode of an existing file or folder (following links).
#[cfg(unix)]
fn identity(p: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()))
}

/// Volume serial number and file index of an existing file or folder (following links).
#[cfg(windows)]
fn identity(p: &Path) -> Option<(u64, u64)> {
    let h = winapi_util::Handle::from_path_any(p).ok()?;
    let info = winapi_util::file::information(&h).ok()?;
    Some((info.volume_serial_number(), info.file_index()))
}

impl PathPolicy {
    fn protected_root(&self, lex: &Path, real: Option<&Path>) -> Option<&PathBuf> {
        // The same folder under another name (case, a bind mount, a hard link): compare what
        // the file system says each existing folder on the way is.
        let on_the_way: Vec<(u64, u64)> =
            real.map(|r| r.ancestors().filter_map(identity).collect()).unwrap_or_default();
        self.protected.iter().find(|root| {
            under(lex, root)
                || real.is_some_and(|real| {
                    under(real, &canon(root)) || identity(root).is_some_and(|id| on_the_way.contains(&id))
                })
        })
    }

    /// Checks a proposed path for `agent`; returns the real path to write.
    pub fn check(&self, raw: &str, agent: &str) -> Result<PathBuf, CoreError> {
        let lex = lexical(raw)?;
        let protected = |root: &PathBuf| {
            refuse(
                "protected_path",
                format!("`{}` is under {}, which Assent never writes", lex.display(), root.display()),
            )
        };
        // Before anything is looked up on disk: nothing about a protected place leaks.
        if let Some(root) = self.protected_root(&lex, None) {
            return Err(protected(root));
        }
        let real = real(&lex)?;
        if let Some(root) = self.protected_root(&lex, Some(&real)) {
            return Err(protected(root));
        }
        if let Some(roots) = self.allowed_roots.get(agent)
            && !roots.iter().any(|r| real.starts_with(canon(r)))
        {
            return Err(refuse(
                "outside_allowed_roots",
                format!(
                    "agent `{agent}` may write only under {}",
                    roots.iter().map(|r| r.display().to_string()).collect::<Vec<_>>().join(", ")
                ),
            ));
        }
        if real.to_str().is_none() {
            return Err(refuse("invalid_path", "the real path is not valid UTF-8"));
        }
        Ok(real)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(windows)]
    #[test]
    fn lexical_resolution_on_windows() {
        assert_eq!(lexical(r"C:\a\.\b\..\c").ok(), Some(PathBuf::from(r"C:\a\c")));
        assert_eq!(lexical(r"C:\..\..\Windows\x").ok(), Some(PathBuf::from(r"C:\Windows\x")));
        assert_eq!(lexical(r"\\server\share\d\f.txt").ok(), Some(PathBuf::from(r"\\server\share\d\f.txt")));
        for (raw, code) in [
            (r"C:relative\x", "path_not_absolute"),
            (r"\no-drive\x", "path_not_absolute"),
            (r"\\?\C:\x\f", "invalid_path"),
            (r"\\.\PhysicalDrive0\x", "invalid_path"),
            (r"\\?\GLOBALROOT\Device\x", "invalid_path"),
            (r"C:\x\f.txt:stream", "invalid_path"),
            (r"C:\x\f.txt::$DATA", "invalid_path"),
            (r"C:\x\CON", "invalid_path"),
            (r"C:\x\nul.txt", "invalid_path"),
            (r"C:\x\COM1\f", "invalid_path"),
            (r"C:\x\f.txt.", "invalid_path"),
            (r"C:\x\f.txt ", "invalid_path"),
        ] {
            assert_eq!(lexical(raw).err().map(|e| e.code()), Some(code), "{raw}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn lexical_resolution() {
        assert_eq!(lexical("/a/./b/../c").ok(), Some(PathBuf::from("/a/c")));
        assert_eq!(lexical("/../../etc/passwd").ok(), Some(PathBuf::from("/etc/passwd")));
        assert_eq!(lexical("relative/x").err().map(|e| e.code()), Some("path_not_absolute"));
        assert_eq!(lexical("/a\0b").err().map(|e| e.code()), Some("invalid_path"));
        assert_eq!(lexical("/").err().map(|e| e.code()), Some("invalid_path"));
    }

    #[test]
    fn protected_allowed_and_symlinks() {
        let t = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = t.path().join("project");
        let secret = t.path().join("secret");
        std::fs::create_dir_all(&root).ok();
        std::fs::create_dir_all(&secret).ok();
        let mut policy = PathPolicy { protected: vec![secret.clone()], ..Default::default() };
        policy.allowed_roots.insert("a".into(), vec![root.clone()]);
        let ok = policy.check(root.join("new/file.txt").to_str().unwrap_or(""), "a");
        assert!(ok.is_ok(), "{ok:?}");
        let code = |p: &Path, agent: &str| policy.check(p.to_str().unwrap_or(""), agent).err().map(|e| e.code());
        assert_eq!(code(&secret.join("x"), "b"), Some("protected_path"));
        assert_eq!(code(&root.join("../secret/x"), "b"), Some("protected_path"));
        assert_eq!(code(&t.path().join("elsewhere"), "a"), Some("outside_allowed_roots"));
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(&secret, root.join("escape")).ok();
            assert_eq!(code(&root.join("escape/x"), "a"), Some("protected_path"));
            let outside = t.path().join("outside");
            std::fs::create_dir_all(&outside).ok();
            std::os::unix::fs::symlink(&outside, root.join("out")).ok();
            assert_eq!(code(&root.join("out/x"), "a"), Some("outside_allowed_roots"));
            // A link as the target itself is not followed: the path stays the link's own.
            std::fs::write(outside.join("f"), "x").ok();
            std::os::unix::fs::symlink(outside.join("f"), root.join("link")).ok();
            let kept = policy.check(root.join("link").to_str().unwrap_or(""), "a").ok();
            assert_eq!(kept.as_deref().and_then(Path::file_name), Some(std::ffi::OsStr::new("link")));
            // Inside a protected folder, what exists there is never told.
            std::fs::create_dir_all(secret.join("dir")).ok();
            assert_eq!(code(&secret.join("dir"), "b"), Some("protected_path"));
            assert_eq!(code(&root.join("escape/dir"), "b"), Some("protected_path"));
        }
    }

    #[test]
    fn protected_names_are_compared_as_a_case_insensitive_disk_would() {
        let t = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let ssh = t.path().join(".ssh");
        std::fs::create_dir_all(&ssh).ok();
        let policy = PathPolicy { protected: vec![ssh.clone()], ..Default::default() };
        for p in [t.path().join(".SSH/authorized_keys"), t.path().join(".Ssh/x"), ssh.join("authorized_keys")] {
            let got = policy.check(p.to_str().unwrap_or(""), "a").err().map(|e| e.code());
            assert_eq!(got, Some("protected_path"), "{}", p.display());
        }
        assert!(policy.check(t.path().join(".sshx/y").to_str().unwrap_or(""), "a").is_ok());
    }

    #[cfg(unix)]
    #[test]
    fn a_protected_folder_reached_by_another_name_is_still_protected() {
        // A hard link to a file stands in for "the same inode under another name" (bind
        // mounts and casefolded folders need privileges a test does not have).
        let t = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let keys = t.path().join("keys");
        std::fs::write(&keys, "k").ok();
        std::fs::hard_link(&keys, t.path().join("alias")).ok();
        let policy = PathPolicy { protected: vec![keys], ..Default::default() };
        let got = policy.check(t.path().join("alias").to_str().unwrap_or(""), "a").err().map(|e| e.code());
        assert_eq!(got, Some("protected_path"));
    }
}
