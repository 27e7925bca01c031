//! Executable configuration: files whose content some tool runs as code (`package.json`'s
//! scripts, a `Makefile`, `.git/config` and `.git/hooks`, `build.rs`, `conftest.py`, `.envrc`,
//! CI workflows, an editor's tasks). Editing one is running code later, so a rule that allows
//! edits never covers one unless it names the file itself.
//!
//! Kept as data (`executable.toml`), each entry with paths it must match and must not, checked
//! when the list loads: the list cannot drift from what it means.

use serde::Deserialize;
use std::sync::LazyLock;

/// The list's source, embedded.
pub const SOURCE: &str = include_str!("../executable.toml");

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[allow(dead_code)]
    version: u32,
    entry: Vec<Entry>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct Entry {
    #[allow(dead_code)]
    why: String,
    #[serde(default)]
    names: Vec<String>,
    #[serde(default)]
    itself: Vec<String>,
    #[serde(default)]
    paths: Vec<String>,
    #[serde(rename = "match")]
    matches: Vec<String>,
    not_match: Vec<String>,
}

/// The list, read.
#[derive(Debug)]
pub struct Executable {
    /// Names of files and folders that are executable configuration wherever they are.
    names: std::collections::HashSet<String>,
    /// Names that are executable configuration themselves (a file's content, a folder's
    /// place) but not for what a folder of that name holds: `.git` (a `gitdir:` file, or the
    /// folder whose config and hooks are listed one by one).
    itself: std::collections::HashSet<String>,
    /// Path patterns (split in names; `*` one name, a last `**` any depth) below any folder.
    paths: Vec<Vec<String>>,
}

impl Executable {
    /// Reads and checks a list: every entry's `match` paths match the whole list, and its
    /// `not-match` paths do not.
    pub fn parse(text: &str) -> Result<Executable, String> {
        let file: File = toml::from_str(text).map_err(|e| format!("executable.toml: {e}"))?;
        let mut x = Executable { names: Default::default(), itself: Default::default(), paths: Vec::new() };
        for e in &file.entry {
            x.names.extend(e.names.iter().cloned());
            x.itself.extend(e.itself.iter().cloned());
            for p in &e.paths {
                let parts: Vec<String> = p.split('/').map(str::to_string).collect();
                if parts.iter().enumerate().any(|(i, s)| s == "**" && i + 1 != parts.len()) {
                    return Err(format!("executable.toml: `**` ends a pattern (`{p}`)"));
                }
                x.paths.push(parts);
            }
        }
        for e in &file.entry {
            if let Some(m) = e.matches.iter().find(|m| !x.is_executable(m)) {
                return Err(format!("executable.toml: `{m}` must be executable configuration ({})", e.why));
            }
            if let Some(m) = e.not_match.iter().find(|m| x.is_executable(m)) {
                return Err(format!("executable.toml: `{m}` must not be executable configuration ({})", e.why));
            }
        }
        Ok(x)
    }

    /// Whether `path` (absolute or relative, normalized) is executable configuration, or lies
    /// in a folder that is.
    pub fn is_executable(&self, path: &str) -> bool {
        let last = path.rsplit('/').find(|s| !s.is_empty());
        last.is_some_and(|p| self.itself.contains(p)) || self.is_executable_inside(path)
    }

    /// Whether a folder at `path` is executable configuration by its place alone, what it holds
    /// being listed one by one (`.git`): a confined run keeps it where it is and searches it.
    pub fn holds_listed(&self, path: &str) -> bool {
        let last = path.rsplit('/').find(|s| !s.is_empty());
        last.is_some_and(|p| self.itself.contains(p)) && !self.is_executable_inside(path)
    }

    /// Whether `path` is executable configuration by a name or pattern that covers what a folder
    /// of that name holds.
    fn is_executable_inside(&self, path: &str) -> bool {
        let parts: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
        parts.iter().any(|p| self.names.contains(*p))
            || self.paths.iter().any(|pat| (0..parts.len()).any(|start| matches_at(pat, &parts[start..])))
    }
}

/// Whether `pat` matches `parts` from their start to their end.
fn matches_at(pat: &[String], parts: &[&str]) -> bool {
    match pat.split_first() {
        None => parts.is_empty(),
        Some((p, _)) if p == "**" => !parts.is_empty(),
        Some((p, rest)) => {
            parts.split_first().is_some_and(|(first, others)| (p == "*" || p == first) && matches_at(rest, others))
        }
    }
}

static LIST: LazyLock<Executable> = LazyLock::new(|| match Executable::parse(SOURCE) {
    Ok(x) => x,
    // The embedded list is checked by the tests; a broken one takes everything for code.
    Err(e) => {
        eprintln!("{e}");
        Executable { names: Default::default(), itself: Default::default(), paths: vec![vec!["**".to_string()]] }
    }
});

/// Whether `path` is executable configuration (see the module's documentation).
pub fn is_executable(path: &str) -> bool {
    LIST.is_executable(path)
}

/// Whether a folder at `path` is executable configuration by its place alone (`.git`), what
/// it holds listed one by one (see [`Executable::holds_listed`]).
pub fn holds_listed(path: &str) -> bool {
    LIST.holds_listed(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_list_reads_and_keeps_its_examples() {
        let x = Executable::parse(SOURCE).unwrap_or_else(|e| panic!("{e}"));
        for p in ["/w/proj/.git/config", "/w/proj/.git/hooks/pre-push", "/w/proj/package.json", "/w/p/.envrc"] {
            assert!(x.is_executable(p), "{p}");
        }
        for p in ["/w/proj/src/app.ts", "/w/proj/README.md", "/w/proj/.gitignore", "/w/proj/package-lock.json"] {
            assert!(!x.is_executable(p), "{p}");
        }
    }

    #[test]
    fn a_list_whose_examples_disagree_is_refused() {
        let bad = r#"version = 1
[[entry]]
why = "x"
names = ["Makefile"]
match = ["makefile"]
not-match = []
"#;
        assert!(Executable::parse(bad).is_err_and(|e| e.contains("`makefile` must be")));
        let bad = r#"version = 1
[[entry]]
why = "x"
paths = [".github/**"]
match = [".github/workflows/a.yml"]
not-match = [".github/CODEOWNERS"]
"#;
        assert!(Executable::parse(bad).is_err_and(|e| e.contains("must not")));
    }
}
