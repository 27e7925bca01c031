//! A project script's definition, pinned by a rule that runs it. A saved rule for `npm run
//! build` or `make test` allows what the script was when the person allowed it: once the file
//! that defines it (`package.json`, the `Makefile`, the `justfile`) changes, the rule no longer
//! applies and the call asks again. And it applies in that project alone.

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
    /// SHA-256 (hex) of its content when the rule was saved.
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

/// SHA-256 (hex) of a file's content now, if it can be read.
pub fn content_sha256(file: &Path) -> Option<String> {
    std::fs::read(file).ok().map(|b| crate::secret::sha256_hex(&b))
}

/// The pin for a rule that runs `words` in `cwd`: the definition's file and its hash now.
pub fn pin(words: &[&str], cwd: &Path) -> Option<ScriptPin> {
    let file = definition(words, cwd)?;
    let sha256 = content_sha256(&file)?;
    Some(ScriptPin { file: file.to_str()?.to_string(), sha256 })
}

/// Whether a pinned rule still applies to a command run in `cwd`: in the pinned file's folder,
/// with the file as it was.
pub fn holds(pin: &ScriptPin, cwd: Option<&str>) -> bool {
    let file = Path::new(&pin.file);
    let (Some(dir), Some(cwd)) = (file.parent(), cwd) else { return false };
    let same = |a: &Path, b: &Path| a == b || std::fs::canonicalize(a).ok() == std::fs::canonicalize(b).ok();
    same(dir, Path::new(cwd)) && content_sha256(file).as_deref() == Some(pin.sha256.as_str())
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
}
