//! The built-in rules: read-only (on unless the person removes it) and build-and-test (off
//! unless the person adds it), and what each covers of a command.

use super::RuleMatch;
use super::Subject;
use assent_commands::{Command, Line, Prefix};

/// The built-in rule's name in a match (`"builtin": "read_only"`).
pub const READ_ONLY: &str = "read_only";

/// The built-in read-only rule's match.
pub fn builtin_read_only() -> RuleMatch {
    RuleMatch { builtin: Some(READ_ONLY.into()), ..Default::default() }
}

/// The built-in build-and-test rule's name in a match (`"builtin": "build_test"`): off unless
/// the person adds it.
pub const BUILD_TEST: &str = "build_test";

/// The built-in build-and-test rule's match.
pub fn builtin_build_test() -> RuleMatch {
    RuleMatch { builtin: Some(BUILD_TEST.into()), ..Default::default() }
}

/// The commands the build-and-test rule covers (the program table's `build-and-test`), read
/// once.
fn build_and_test() -> &'static [Prefix] {
    static PREFIXES: std::sync::LazyLock<Vec<Prefix>> = std::sync::LazyLock::new(|| {
        assent_commands::table::table().build_and_test.iter().filter_map(|t| Prefix::parse(t).ok()).collect()
    });
    &PREFIXES
}

/// Whether a built-in rule (`read_only`, else build-and-test) covers a command of `s`'s line:
/// in a simple line, run in a project folder inside the declared work roots, not run by another
/// command, and touching nothing outside that folder (read-only: reading only).
pub(super) fn covers(read_only: bool, s: &Subject, c: &Command) -> bool {
    let Some(dir) = s.facts.cwd.as_deref().filter(|_| s.in_work_roots) else { return false };
    // A working folder of `/`, the home or `~/.ssh` makes nothing "inside".
    if assent_commands::path::project_folder(dir, s.home.as_deref()).is_err() {
        return false;
    }
    let real = |p: &str| s.real_of(p);
    let simple = s.line.as_ref().is_some_and(Line::is_simple) && !c.inner;
    if read_only {
        simple && c.only_reads_inside(dir, &real)
    } else {
        simple
            && build_and_test().iter().any(|p| p.covers(c))
            && c.reads.iter().chain(&c.writes).all(|p| assent_commands::path_inside_by(p, dir, &real))
    }
}
