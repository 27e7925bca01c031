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

/// The built-in box rule's name in a match (`"builtin": "box"`): off unless the person adds it.
/// A command that stays in the `workspace` box runs without asking, but what the reader
/// nominates as destructive inside the folder, or needs what no box gives.
pub const BOX: &str = "box";

/// The built-in box rule's match.
pub fn builtin_box() -> RuleMatch {
    RuleMatch { builtin: Some(BOX.into()), ..Default::default() }
}

/// What the box rule never lets run without the person: what the box cannot make harmless
/// (deleting, forcing, rewriting inside the folder: `rm -r`, `git reset --hard`, `git clean`,
/// `git branch -D`, `git checkout -- .`, `git restore`, `git stash drop`/`pop`, `git reflog
/// expire`, `git commit --amend`, a rebase: each as the program table says) and what it cannot give
/// (publishing, privilege), each as the reader names it. The network asks too, but for the
/// package registries ([`box_reaches`]).
const BOX_ASKS: assent_commands::Effects = assent_commands::Effects::DELETE
    .union(assent_commands::Effects::FORCE)
    .union(assent_commands::Effects::PUBLISH)
    .union(assent_commands::Effects::PRIVILEGE);

/// Whether the box rule lets `c` reach what it reaches: nothing, or only public package
/// registries (`npm install`, `npx prettier`, `pip install`, `cargo fetch`), each named by the
/// reader from the program table with nothing in the command naming another host. The box
/// then reaches those alone, through Assent's proxy.
fn box_reaches(s: &Subject, c: &Command) -> bool {
    if !c.effects.any(assent_commands::Effects::NETWORK) {
        return true;
    }
    let registries = &assent_commands::table::table().registries;
    // A command another runs (`npx … npm install`) is its runner's to fetch for: not reached.
    !c.inner
        && assent_commands::reach::command_hosts(c, s.facts.cwd.as_deref())
            .is_some_and(|hs| !hs.is_empty() && hs.iter().all(|h| registries.contains(h)))
}

/// Whether the box rule covers a command of `s`'s line: run in a project folder inside the
/// declared work roots (the box is built around it), and doing nothing of [`BOX_ASKS`]. The box
/// keeps everything else in the folder; a line the reader cannot know in full asks (its unknown
/// part is no command the rule covers).
pub(super) fn box_covers(s: &Subject, c: &Command) -> bool {
    in_a_project(s).is_some()
        && c.program.is_some()
        && !c.effects.any(BOX_ASKS)
        && box_reaches(s, c)
        && !inline_program(c)
}

/// Interpreters that take a program's text on the command line.
const INTERPRETERS: &[&str] =
    &["node", "nodejs", "deno", "bun", "python", "python3", "perl", "ruby", "php", "lua", "Rscript", "osascript"];

/// An interpreter given its program as a word (`node -e …`, `python3 -c …`, `perl -e …`): text
/// the reader cannot read, which may delete or rewrite inside the folder as freely as `rm`. A
/// program in a file (`python3 test.py`) is held as any program is.
fn inline_program(c: &Command) -> bool {
    let Some(p) = c.program.as_deref() else { return false };
    let base = p.rsplit('/').next().unwrap_or(p);
    let interpreter = INTERPRETERS.iter().any(|i| {
        base == *i || base.strip_prefix(i).is_some_and(|v| v.chars().all(|ch| ch.is_ascii_digit() || ch == '.'))
    });
    interpreter
        && c.words.iter().skip(1).flatten().any(|w| {
            matches!(w.as_str(), "-e" | "-c" | "-E" | "-p" | "-r" | "--eval" | "--print" | "eval")
                || (w.starts_with('-') && !w.starts_with("--") && w.len() > 2 && (w.ends_with('e') || w.ends_with('c')))
        })
}

/// Whether the box rule covers what of `s`'s line is unknown before it runs: only a shell running
/// a file's commands (`bash test.sh`), which the box holds as it holds `python3 test.py`; never
/// text made as the line runs (`eval "$X"`, a program named by a variable), which could be
/// anything the rule asks for.
pub(super) fn box_covers_opaque(s: &Subject) -> bool {
    in_a_project(s).is_some()
        && s.line.as_ref().is_some_and(|l| !l.opaque.is_empty() && l.opaque.iter().all(|w| l.opaque_files.contains(w)))
}

/// Whether a redirection of `s`'s line is one the box rule covers: its write lands in the box.
pub(super) fn box_covers_redirect(s: &Subject) -> bool {
    in_a_project(s).is_some()
}

/// The session's folder when a built-in rule may cover a command run in it: inside the
/// declared work roots, and a project's (a working folder of `/`, the home or `~/.ssh` makes
/// nothing "inside").
fn in_a_project(s: &Subject) -> Option<&str> {
    let dir = s.facts.cwd.as_deref().filter(|_| s.in_work_roots)?;
    assent_commands::path::project_folder(dir, s.home.as_deref()).is_ok().then_some(dir)
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
    let Some(dir) = in_a_project(s) else { return false };
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
