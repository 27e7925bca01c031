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
            Component::Prefix(_) | Component::RootDir => out.push(c.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(n) => out.push(n),
        }
    }
    if out.parent().is_none() {
        return Err(refuse("invalid_path", "the path names a folder, not a file"));
    }
    Ok(out)
}

/// The real location of `p`: its deepest existing ancestor with symlinks resolved, then the
/// rest. Refuses a target that is a symlink, a dangling symlink on the way, or a folder.
pub fn real(p: &Path) -> Result<PathBuf, CoreError> {
    if let Ok(m) = std::fs::symlink_metadata(p) {
        if m.file_type().is_symlink() {
            return Err(refuse(
                "path_is_symlink",
                format!("`{}` is a symbolic link; Assent does not write through links", p.display()),
            ));
        }
        if m.is_dir() {
            return Err(refuse("path_is_directory", format!("`{}` is a folder", p.display())));
        }
    }
    let mut existing = p.to_path_buf();
    let mut rest = Vec::new();
    while std::fs::symlink_metadata(&existing).is_err() {
        match (existing.file_name().map(|n| n.to_os_string()), existing.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => break,
        }
    }
    let mut out = std::fs::canonicalize(&existing)
        .map_err(|e| refuse("invalid_path", format!("cannot resolve `{}`: {e}", existing.display())))?;
    for n in rest.into_iter().rev() {
        out.push(n);
    }
    Ok(out)
}

/// The canonical form of a configured root (as written when it does not exist yet).
fn canon(root: &Path) -> PathBuf {
    std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf())
}

impl PathPolicy {
    /// Checks a proposed path for `agent`; returns the real path to write.
    pub fn check(&self, raw: &str, agent: &str) -> Result<PathBuf, CoreError> {
        let lex = lexical(raw)?;
        let real = real(&lex)?;
        for root in &self.protected {
            let c = canon(root);
            if real.starts_with(&c) || lex.starts_with(root) {
                return Err(refuse(
                    "protected_path",
                    format!("`{}` is under {}, which Assent never writes", real.display(), root.display()),
                ));
            }
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
            std::fs::write(outside.join("f"), "x").ok();
            std::os::unix::fs::symlink(outside.join("f"), root.join("link")).ok();
            assert_eq!(code(&root.join("link"), "a"), Some("path_is_symlink"));
        }
        assert_eq!(code(&root, "a"), Some("path_is_directory"));
    }
}
