//! A project script's definition, pinned by a rule that runs it. A saved rule for `npm run
//! build` or `make test` allows what the script was when the person allowed it: once the file
//! that defines it (`package.json`, the `Makefile`, the `justfile`) changes, or what it runs of
//! the project beside it (the makefiles it includes, the tools it names in `node_modules/.bin`
//! or `.venv/bin`), the rule no longer applies and the call asks again. And it applies in that
//! project alone.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The file that defines a project's scripts, and its content's hash when a rule was saved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ScriptPin {
    /// The file (absolute): `package.json`, a `Makefile`, a `justfile`.
    pub file: String,
    /// SHA-256 (hex) of its content when the rule was saved, with what it runs of the project
    /// beside it where it runs anything (the makefiles it includes, the tools its scripts name).
    pub sha256: String,
}

/// Package managers whose subcommands run the project's `package.json` scripts.
const PACKAGE_MANAGERS: [&str; 4] = ["npm", "pnpm", "yarn", "bun"];
/// Their subcommands that run a script (yarn also runs one named as its subcommand).
const RUNS_A_SCRIPT: [&str; 9] = ["run", "run-script", "rum", "urn", "test", "t", "tst", "start", "restart"];

/// The file in `cwd` that defines what `words` (a command's program and arguments) runs of the
/// project, if it runs a project script: the first that exists, as the tool looks for it.
pub fn definition(words: &[&str], cwd: &Path) -> Option<PathBuf> {
    let program = words.first()?.rsplit('/').next()?;
    let first = words.iter().skip(1).find(|w| !w.starts_with('-')).copied();
    let candidates: &[&str] = match program {
        p if PACKAGE_MANAGERS.contains(&p) && (p == "yarn" || first.is_some_and(|s| RUNS_A_SCRIPT.contains(&s))) => {
            &["package.json"]
        }
        "make" | "gmake" => &["GNUmakefile", "makefile", "Makefile"],
        "just" => &["justfile", "Justfile", ".justfile"],
        _ => return None,
    };
    candidates.iter().map(|f| cwd.join(f)).find(|p| p.is_file())
}

/// What a definition runs of its project beside its own text: the makefiles a makefile includes
/// by name, the files its commands name by a path in the project (`./build.sh`,
/// `node_modules/.bin/jest`, `.venv/bin/pytest`), and for `package.json` the tools its scripts
/// name that the project installed (`node_modules/.bin/X`, as npm runs a script's `X`), each as
/// the file it leads to.
fn runs(file: &Path, text: &str) -> Vec<PathBuf> {
    let Some(dir) = file.parent() else { return Vec::new() };
    let name = file.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let package = name == "package.json";
    let scripts: String = if package {
        let v: serde_json::Value = serde_json::from_str(text).unwrap_or_default();
        let all = v["scripts"].as_object().into_iter().flat_map(|o| o.values()).filter_map(|s| s.as_str());
        all.collect::<Vec<_>>().join("\n")
    } else {
        text.to_string()
    };
    let split = |t: &str| -> Vec<String> {
        t.split(|c: char| !(c.is_alphanumeric() || "._@/+-".contains(c))).map(str::to_string).collect()
    };
    let mut words: std::collections::BTreeSet<String> = split(&scripts).into_iter().collect();
    if name.to_ascii_lowercase().contains("makefile") {
        for line in text.lines().map(str::trim_start) {
            if let Some(rest) = ["include ", "-include ", "sinclude "].iter().find_map(|k| line.strip_prefix(k)) {
                words.extend(rest.split_whitespace().map(|w| format!("./{w}")));
            }
        }
    }
    let mut out: Vec<PathBuf> = Vec::new();
    for w in words.iter().filter(|w| !w.is_empty() && !w.contains("..") && !w.starts_with('/')) {
        let named = if let Some(rel) = w.strip_prefix("./") {
            Some(dir.join(rel))
        } else if w.starts_with("node_modules/.bin/") || w.starts_with(".venv/bin/") {
            Some(dir.join(w))
        } else if package && !w.contains('/') {
            Some(dir.join("node_modules/.bin").join(w))
        } else {
            None
        };
        if let Some(real) = named.and_then(|p| std::fs::canonicalize(p).ok())
            && real.is_file()
            && real != file
        {
            out.push(real);
        }
    }
    out.sort();
    out.dedup();
    out
}

/// SHA-256 (hex) of a definition now, if it can be read: of its content alone where it runs
/// nothing of the project beside it; else of its content and, for each file it runs (see
/// [`runs`]), its path, size, change time and inode (a change time no command can set back,
/// read without reading the file: a tool can be many megabytes, and the pin is checked at every
/// call).
pub fn fingerprint(file: &Path) -> Option<String> {
    let bytes = std::fs::read(file).ok()?;
    let extra = runs(file, &String::from_utf8_lossy(&bytes));
    if extra.is_empty() {
        return Some(crate::secret::sha256_hex(&bytes));
    }
    let mut all = bytes;
    for p in extra {
        let stamp = std::fs::metadata(&p).map(|m| stamp(&m)).unwrap_or_default();
        all.extend_from_slice(format!("\0{}\0{stamp}", p.display()).as_bytes());
    }
    Some(crate::secret::sha256_hex(&all))
}

/// A file's size, change time and inode, as text.
#[cfg(unix)]
fn stamp(m: &std::fs::Metadata) -> String {
    use std::os::unix::fs::MetadataExt;
    format!("{} {} {} {}", m.size(), m.ctime(), m.ctime_nsec(), m.ino())
}

/// A file's size and modification time, as text (Windows keeps no change time a program reads
/// as simply).
#[cfg(not(unix))]
fn stamp(m: &std::fs::Metadata) -> String {
    format!("{} {:?}", m.len(), m.modified().ok())
}

/// The pin for a rule that runs `words` in `cwd`: the definition's file and its fingerprint now.
pub fn pin(words: &[&str], cwd: &Path) -> Option<ScriptPin> {
    let file = definition(words, cwd)?;
    let sha256 = fingerprint(&file)?;
    Some(ScriptPin { file: file.to_str()?.to_string(), sha256 })
}

/// Whether a pinned rule still applies to a command run in `cwd`: in the pinned file's folder,
/// with the file as it was.
pub fn holds(pin: &ScriptPin, cwd: Option<&str>) -> bool {
    let file = Path::new(&pin.file);
    let (Some(dir), Some(cwd)) = (file.parent(), cwd) else { return false };
    let same = |a: &Path, b: &Path| a == b || std::fs::canonicalize(a).ok() == std::fs::canonicalize(b).ok();
    same(dir, Path::new(cwd)) && fingerprint(file).as_deref() == Some(pin.sha256.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pin_holds_in_its_project_while_the_definition_is_unchanged() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let proj = dir.path();
        std::fs::write(proj.join("package.json"), r#"{"scripts": {"build": "tsc"}}"#).unwrap_or_default();
        std::fs::write(proj.join("Makefile"), "test:\n\ttrue\n").unwrap_or_default();
        for (words, file) in [
            (vec!["npm", "run", "build"], Some("package.json")),
            (vec!["npm", "test"], Some("package.json")),
            (vec!["yarn", "build"], Some("package.json")),
            (vec!["/usr/bin/make", "test"], Some("Makefile")),
            (vec!["npm", "install"], None),
            (vec!["cargo", "test"], None),
            (vec!["just", "x"], None),
        ] {
            assert_eq!(definition(&words, proj), file.map(|f| proj.join(f)), "{words:?}");
        }
        let pin = pin(&["npm", "run", "build"], proj).unwrap_or_else(|| panic!("a pin"));
        let here = proj.to_str().unwrap_or_default();
        assert!(holds(&pin, Some(here)));
        assert!(!holds(&pin, Some("/elsewhere")), "another project");
        assert!(!holds(&pin, None));
        std::fs::write(proj.join("package.json"), r#"{"scripts": {"build": "rm -rf ~"}}"#).unwrap_or_default();
        assert!(!holds(&pin, Some(here)), "the script's definition changed");
    }

    /// What a script runs of the project beside its definition is pinned with it: an included
    /// makefile, a tool in `node_modules/.bin` a script names (a link to the package's file), one
    /// in `.venv/bin`, a script file; rewriting any of them makes the rule ask again, and so does
    /// a rewrite that keeps the size and sets the modification time back.
    #[test]
    #[cfg(unix)]
    fn what_a_script_runs_of_the_project_is_pinned_with_it() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let proj = dir.path().canonicalize().unwrap_or_else(|e| panic!("{e}"));
        let here = proj.to_str().unwrap_or_default().to_string();
        let write = |rel: &str, text: &str| {
            let p = proj.join(rel);
            std::fs::create_dir_all(p.parent().unwrap_or(&proj)).unwrap_or_default();
            std::fs::write(p, text).unwrap_or_default();
        };
        write("package.json", r#"{"scripts": {"test": "jest --ci && ./scripts/check.sh"}}"#);
        write("node_modules/jest/bin/jest.js", "run tests");
        std::fs::create_dir_all(proj.join("node_modules/.bin")).unwrap_or_default();
        std::os::unix::fs::symlink("../jest/bin/jest.js", proj.join("node_modules/.bin/jest")).unwrap_or_default();
        write("scripts/check.sh", "echo ok");
        write("Makefile", "include rules.mk\ntest:\n\t.venv/bin/pytest\n");
        write("rules.mk", "X = 1\n");
        write(".venv/bin/pytest", "#!python");
        for (words, changed) in [
            (vec!["npm", "test"], "node_modules/jest/bin/jest.js"),
            (vec!["npm", "test"], "scripts/check.sh"),
            (vec!["make", "test"], "rules.mk"),
            (vec!["make", "test"], ".venv/bin/pytest"),
        ] {
            let pin = pin(&words, &proj).unwrap_or_else(|| panic!("a pin"));
            assert!(holds(&pin, Some(&here)), "{words:?}");
            let p = proj.join(changed);
            let (before, modified) =
                (std::fs::read(&p).unwrap_or_default(), std::fs::metadata(&p).and_then(|m| m.modified()));
            let same_size: String = "Z".repeat(before.len());
            std::fs::write(&p, same_size).unwrap_or_default();
            if let Ok(m) = modified {
                let _ = std::fs::File::options().write(true).open(&p).and_then(|f| f.set_modified(m));
            }
            assert!(!holds(&pin, Some(&here)), "{words:?}: {changed} was rewritten");
            std::fs::write(&p, before).unwrap_or_default();
        }
        // A definition that runs nothing of the project keeps the plain hash of its content.
        write("justfile", "x:\n\techo hi\n");
        let plain = pin(&["just", "x"], &proj).unwrap_or_else(|| panic!("a pin"));
        assert_eq!(plain.sha256, crate::secret::sha256_hex(b"x:\n\techo hi\n"));
    }
}
