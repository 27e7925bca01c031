//! The program table: what programs and their subcommands do, and what each option adds. Kept
//! as data (`programs.toml`, versioned, documented at its top), read once.
//!
//! An option the table does not list is `unknown`: it could do anything, so no rule covers it
//! unless the rule names it. A program the table does not list is known only by its name: no
//! option after an allowed prefix is covered, and the built-in read-only rule never allows it.

mod read;

use crate::effects::Effects;
use crate::opts::Spec;
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};

/// The table's source, embedded.
pub const SOURCE: &str = include_str!("../programs.toml");

/// What a program's operands (the words that are not options) are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Operands {
    /// Paths it reads.
    Read,
    /// Paths it writes (creates or changes).
    Write,
    /// Paths it deletes.
    Delete,
    /// Paths it reads, but the last one it writes (`cp a b`).
    Copy,
    /// Paths it moves: every one is written (`mv a b`).
    Move,
    /// The first is a pattern (unless an option gave one), the rest paths it reads (`grep`).
    Pattern,
    /// The first is a program the table's script checker reads (unless an option gave one),
    /// the rest paths it reads (`sed`, `awk`, `jq`).
    Script,
    /// Not paths: messages, names, refs, packages.
    Args,
}

/// What an option's value is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value {
    /// It takes none.
    None,
    /// A word that is not a path.
    Word,
    /// A path it reads.
    ReadPath,
    /// A path it writes.
    WritePath,
    /// The pattern or script (the operands are then all paths).
    Program,
    /// A word, only when joined to it (`--color` or `--color=auto`).
    Optional,
}

/// One option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Opt {
    /// What its value is.
    pub value: Value,
    /// What it adds to what the program does.
    pub raises: Effects,
}

/// A program or subcommand, read.
#[derive(Debug, Clone)]
pub struct Program {
    /// What it does with no option.
    pub does: Effects,
    /// Its operands.
    pub operands: Operands,
    /// Its options by name (`-n`, `--output`; find's `-name`).
    pub options: HashMap<String, Opt>,
    /// What an option not listed does (default `unknown`).
    pub other_options: Effects,
    /// `-5` (a count) is an option (`head -5`).
    pub numeric: bool,
    /// Operand patterns that raise (`+*` for a forced refspec).
    pub raise_operands: Vec<(String, Effects)>,
    /// The script checker (`sed`, `awk`, `jq`, `find`).
    pub script: Option<String>,
    /// Subcommands, when it has them; the global options are `options`.
    pub sub: Option<BTreeMap<String, Program>>,
    /// Options after which the rest are passed to something else (`--` of `npm run`).
    pub passes_rest: bool,
    /// The first operand ends its options: the rest are that program's or script's (`npx
    /// prettier --check`, `python x.py -v`).
    pub operand_ends_options: bool,
    /// Options that are one option spelt several ways (`-r`, `-R`, `--recursive`).
    pub same: Vec<Vec<String>>,
    /// With more operands than this, it does `more_operands` too (`git config KEY` reads,
    /// `git config KEY VALUE` writes).
    pub read_operands: Option<usize>,
    /// What more operands than `read_operands` add.
    pub more_operands: Effects,
    /// An expression after the paths (`find`'s tests and actions), by name; a word not in it
    /// is `unknown`.
    pub expression: Option<HashMap<String, Step>>,
    /// Options before the paths (`find -L`), with what each adds.
    pub before_paths: HashMap<String, Effects>,
    /// The hosts its network effect reaches when no option or operand names another (`npm
    /// install`: the npm registry; [`GIT_REMOTE`] for git's remote); empty: not known.
    pub reaches: Vec<String>,
}

/// In `reaches`: the host of the git remote the command names (or the branch's, or `origin`),
/// read from the repository's configuration.
pub const GIT_REMOTE: &str = "git-remote";

/// One test or action of an expression (`find -newer FILE`, `find -exec CMD ;`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// The words it takes after it, in order.
    pub takes: Vec<Value>,
    /// It runs the command that follows, up to `;` or `+`.
    pub command: bool,
    /// What it adds.
    pub raises: Effects,
}

/// A wrapper: a program that runs the command after its own options (`sudo`, `timeout`).
#[derive(Debug, Clone)]
pub struct Wrapper {
    /// Its options (any other makes the line opaque).
    pub(crate) opts: Spec,
    /// Its options that make it something other than a plain wrapper (a look-up, a list, an
    /// editor, a shell).
    pub(crate) not_plain: Vec<String>,
    /// Positional words it takes before the command (`timeout 10`).
    pub(crate) positionals: usize,
    /// What it adds.
    pub(crate) adds: Effects,
}

/// What one of the table's examples says of its line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expect {
    /// The built-in read-only rule allows it (`true`) or asks (`false`).
    Reads(bool),
    /// What its commands do, together.
    Effects(Effects),
}

impl std::fmt::Display for Expect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Expect::Reads(true) => f.write_str("allowed by the read-only rule"),
            Expect::Reads(false) => f.write_str("asked about by the read-only rule"),
            Expect::Effects(e) => write!(f, "`{e}`"),
        }
    }
}

/// A line the table says how to read, checked when the table loads.
#[derive(Debug, Clone)]
pub struct Example {
    /// The entry it belongs to (`program.find`).
    pub entry: String,
    /// The line, run in `/work/project` with the home `/home/user`.
    pub line: String,
    /// What it must be.
    pub expect: Expect,
}

impl Program {
    /// `o` as this program's option parser reads it: itself when listed, else the one long
    /// option it is a unique prefix of (`--recur` for `--recursive`, as getopt_long and git
    /// accept), else itself.
    pub fn full_option(&self, o: &str) -> String {
        if self.options.contains_key(o) || !o.starts_with("--") || o.len() < 4 {
            return o.to_string();
        }
        let mut hits = self.options.keys().filter(|k| k.starts_with("--") && k.starts_with(o));
        match (hits.next(), hits.next()) {
            (Some(h), None) => h.clone(),
            _ => o.to_string(),
        }
    }

    /// Every spelling of the option `o` (itself included).
    pub fn spellings(&self, o: &str) -> Vec<String> {
        match self.same.iter().find(|s| s.iter().any(|x| x == o)) {
            Some(s) => s.clone(),
            None => vec![o.to_string()],
        }
    }
}

/// Names and name prefixes, from a line of the table.
#[derive(Debug, Default)]
struct Names {
    exact: Vec<String>,
    prefixes: Vec<String>,
}

impl Names {
    fn of(exact: &str, prefixes: &str) -> Names {
        let words = |s: &str| s.split_whitespace().map(str::to_string).collect();
        Names { exact: words(exact), prefixes: words(prefixes) }
    }

    fn contains(&self, name: &str) -> bool {
        self.exact.iter().any(|e| e == name) || self.prefixes.iter().any(|p| name.starts_with(p.as_str()))
    }
}

/// The table: programs by name.
#[derive(Debug)]
pub struct Table {
    /// Its version (`version` at the top of the file).
    pub version: u32,
    programs: HashMap<String, Program>,
    /// Each other name of a program, and the program's own (`unlink` → `rm`).
    aliases: HashMap<String, String>,
    /// The command prefixes the built-in build-and-test rule covers (`npm test`, `make`).
    pub build_and_test: Vec<String>,
    /// The public package registries (`registry.npmjs.org`, `pypi.org`, …): hosts the built-in
    /// box rule lets a command reach without asking when the reader says it reaches only them.
    pub registries: Vec<String>,
    changes_programs: Names,
    harmless: Names,
    wrappers: HashMap<String, Wrapper>,
    runners: HashMap<String, Spec>,
    shells: Names,
    package_runners: Names,
    package_managers: Names,
    /// Its examples, each checked when the table loads (`crate::table`).
    pub examples: Vec<Example>,
}

impl Table {
    /// Reads a table from its text.
    pub fn parse(text: &str) -> Result<Table, String> {
        read::table(text)
    }

    /// A table that knows no program: what a table that does not read, or whose examples do
    /// not hold, is taken as. Every command is then unknown (asked), never allowed.
    pub fn none() -> Table {
        Table {
            version: 0,
            programs: HashMap::new(),
            aliases: HashMap::new(),
            build_and_test: Vec::new(),
            registries: Vec::new(),
            // With no table every assignment is a change: never fewer questions.
            changes_programs: Names { exact: Vec::new(), prefixes: vec![String::new()] },
            harmless: Names::default(),
            wrappers: HashMap::new(),
            runners: HashMap::new(),
            shells: Names::default(),
            package_runners: Names::default(),
            package_managers: Names::default(),
            examples: Vec::new(),
        }
    }

    /// The wrapper called `name`.
    pub fn wrapper(&self, name: &str) -> Option<&Wrapper> {
        self.wrappers.get(name)
    }

    /// The options of the runner called `name` (`env`, `xargs`, `trap`); with a table that
    /// does not list it, none are known.
    pub(crate) fn runner(&self, name: &str) -> &Spec {
        static NONE: Spec = Spec { flags: Vec::new(), values: Vec::new(), optional: Vec::new(), numeric: false };
        self.runners.get(name).unwrap_or(&NONE)
    }

    /// Whether a program is a POSIX-like shell (its `-c` runs a script).
    pub fn is_shell(&self, name: &str) -> bool {
        self.shells.contains(name)
    }

    /// Whether a program runs a package's command (`npx`).
    pub fn is_package_runner(&self, name: &str) -> bool {
        self.package_runners.contains(name)
    }

    /// Whether a program is a package manager that runs a package's command through `exec`.
    pub fn is_package_manager(&self, name: &str) -> bool {
        self.package_managers.contains(name)
    }

    /// Whether setting this environment name changes what later commands are or do.
    pub fn changes_programs(&self, name: &str) -> bool {
        self.changes_programs.contains(name) && !self.harmless.contains(name)
    }

    /// Whether a command may be given this environment name without it counting as a change.
    pub fn harmless_env(&self, name: &str) -> bool {
        self.harmless.contains(name)
    }

    /// The program called `name`.
    pub fn get(&self, name: &str) -> Option<&Program> {
        self.programs.get(name)
    }

    /// A program's own name for one of its names (`rm` for `unlink`).
    pub fn canonical<'a>(&'a self, name: &'a str) -> &'a str {
        self.aliases.get(name).map_or(name, String::as_str)
    }

    /// Every program's name.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.programs.keys().map(String::as_str)
    }
}

/// Whether an operand matches a pattern of `raise-operands`: `+*` (starts with `+`), `:*`,
/// `*:` (ends with `:`), or a literal word.
pub fn operand_matches(pattern: &str, word: &str) -> bool {
    if let Some(prefix) = pattern.strip_suffix('*') {
        word.starts_with(prefix)
    } else if let Some(suffix) = pattern.strip_prefix('*') {
        word.ends_with(suffix)
    } else {
        word == pattern
    }
}

/// The embedded table, read once, its examples checked ([`crate::checked`]).
pub fn table() -> &'static Table {
    static TABLE: std::sync::LazyLock<Table> = std::sync::LazyLock::new(|| crate::checked(Table::parse(SOURCE)));
    &TABLE
}
