//! What the core's bash test (`crates/core/tests/bash.rs`) and the black-box tests share: the
//! ways an agent deletes a file by `rm`, and git run in a scratch project.

use std::path::Path;
use std::process::{Command, Stdio};

/// Ways to delete README.md (or `src`) by `rm`: plain, forced, by its path, escaped, quoted, and
/// through `bash -c`.
pub const RM_FORMS: &[&str] =
    &["rm README.md", "rm -rf src", "/bin/rm README.md", "\\rm README.md", "r''m README.md", "bash -c 'rm README.md'"];

/// Command lines: `before`, the [`RM_FORMS`], then `after`.
pub fn around_rm_forms(before: &[&'static str], after: &[&'static str]) -> Vec<&'static str> {
    [before, RM_FORMS, after].concat()
}

/// Runs `git ARGS` in `dir` with `home` as its home and no system configuration, its output
/// discarded; the test fails unless git succeeds.
pub fn git(dir: &Path, home: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("HOME", home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    assert!(status.is_ok_and(|s| s.success()), "git {args:?}");
}
