//! Finding a folder's executable configuration (`.git/config`, `package.json`, `Makefile`,
//! `.vscode`, `.claude`, ...): what a `workspace` box mounts read-only, and removes after if the
//! command created it; and its secrets (`.env`, keys), which a `read` box hides.

use crate::Error;
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

/// What `profile` needs of `cwd` (see [`Found`]): for `workspace` its executable
/// configuration, for `read` its secrets.
pub(crate) fn found(cwd: &Path, profile: crate::Profile) -> Result<Found, Error> {
    let wants_secrets = profile == crate::Profile::Read;
    let mut f = Found::default();
    let mut seen = 0;
    let mut stack = vec![cwd.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for e in entries.flatten() {
            seen += 1;
            if seen > MAX_SEARCHED {
                return Err(Error::Folder(format!(
                    "`{}` holds more than {MAX_SEARCHED} files outside its dependencies and build output: too many to build its box",
                    cwd.display()
                )));
            }
            let path = e.path();
            let Ok(t) = e.file_type() else { continue };
            let name = e.file_name();
            if wants_secrets {
                if t.is_file() && name.to_str().is_some_and(assent_commands::secrets::is_secret) {
                    f.secrets.push(path);
                } else if t.is_dir() && !NOT_SEARCHED.iter().any(|n| name == *n) {
                    stack.push(path);
                }
                continue;
            }
            let rel = path.strip_prefix(cwd).unwrap_or(&path).to_string_lossy().into_owned();
            if t.is_dir() && assent_commands::executable::holds_listed(&rel) {
                f.anchors.push(path.clone());
                stack.push(path);
                continue;
            }
            if assent_commands::executable::is_executable(&rel) {
                // A link is protected where it leads (a write through it lands there); one
                // leading out of the folder needs nothing: outside the folder is read-only.
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
                stack.push(path);
            }
        }
    }
    for v in [&mut f.executable, &mut f.anchors, &mut f.secrets] {
        v.sort();
        v.dedup();
    }
    Ok(f)
}
