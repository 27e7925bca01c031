//! Finding a folder's executable configuration (`.git/config`, `package.json`, `Makefile`,
//! `.vscode`, ...): what a `workspace` run mounts read-only, and removes after if the command
//! created it.

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

/// The executable configuration in `cwd` (`.git/config`, `package.json`, `Makefile`,
/// `.vscode`, ...), each file or folder once; and the folders that are executable configuration
/// by their place alone (`.git`), whose listed parts are among the first.
pub(crate) fn executable_configuration(cwd: &Path) -> Result<(Vec<PathBuf>, Vec<PathBuf>), Error> {
    let mut found = Vec::new();
    let mut anchors = Vec::new();
    let mut seen = 0;
    let mut stack = vec![cwd.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for e in entries.flatten() {
            seen += 1;
            if seen > MAX_SEARCHED {
                return Err(Error::Folder(format!(
                    "`{}` holds more than {MAX_SEARCHED} files outside its dependencies and build output: too many to find its executable configuration",
                    cwd.display()
                )));
            }
            let path = e.path();
            let rel = path.strip_prefix(cwd).unwrap_or(&path).to_string_lossy().into_owned();
            let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
            if is_dir && assent_commands::executable::holds_listed(&rel) {
                anchors.push(path.clone());
                stack.push(path);
                continue;
            }
            if assent_commands::executable::is_executable(&rel) {
                // A link is protected where it leads (a write through it lands there); one
                // leading out of the folder needs nothing: Landlock keeps writes in the folder.
                if e.file_type().is_ok_and(|t| t.is_symlink()) {
                    if let Ok(target) = std::fs::canonicalize(&path)
                        && target.starts_with(cwd)
                    {
                        found.push(target);
                    }
                } else {
                    found.push(path);
                }
                continue;
            }
            let name = e.file_name();
            if is_dir && !NOT_SEARCHED.iter().any(|n| name == *n) {
                stack.push(path);
            }
        }
    }
    found.sort();
    found.dedup();
    anchors.sort();
    Ok((found, anchors))
}
