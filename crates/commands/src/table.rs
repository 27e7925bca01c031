//! The program table: what programs and their subcommands do, and what each option adds. Kept
//! as data (`programs.toml`, versioned, documented at its top), read once.
//!
//! An option the table does not list is `unknown`: it could do anything, so no rule covers it
//! unless the rule names it. A program the table does not list is known only by its name: no
//! option after an allowed prefix is covered, and the built-in read-only rule never allows it.

use crate::effects::Effects;
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};
use std::sync::LazyLock;

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

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawProgram {
    does: Option<String>,
    operands: Option<Operands>,
    #[serde(default)]
    options: String,
    other_options: Option<String>,
    #[serde(default)]
    numeric: bool,
    #[serde(default)]
    raise_operands: BTreeMap<String, String>,
    script: Option<String>,
    #[serde(default)]
    sub: BTreeMap<String, RawProgram>,
    #[serde(default)]
    alias: Vec<String>,
    #[serde(default)]
    passes_rest: bool,
    #[serde(default)]
    operand_ends_options: bool,
    #[serde(default)]
    same: Vec<String>,
    read_operands: Option<usize>,
    more_operands: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawEnvironment {
    #[serde(default)]
    changes_programs: String,
    #[serde(default)]
    changes_programs_prefixes: String,
    #[serde(default)]
    harmless: String,
    #[serde(default)]
    harmless_prefixes: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTable {
    version: u32,
    #[serde(default, rename = "build-and-test")]
    build_and_test: Vec<String>,
    #[serde(default)]
    environment: RawEnvironment,
    program: BTreeMap<String, RawProgram>,
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
    changes_programs: Names,
    harmless: Names,
}

/// Reads one token of the option language: `NAME`, `NAME=` (takes a word), `NAME=path`,
/// `NAME=out`, `NAME=program`, each optionally followed by `:effect+effect`.
fn option(token: &str) -> Result<(String, Opt), String> {
    let (head, raises) = match token.split_once(':') {
        Some((h, e)) if h.len() > 1 => (h, Effects::parse(e)?),
        _ => (token, Effects::NONE),
    };
    let (name, value) = match head.split_once('=') {
        None => (head, Value::None),
        Some((n, "")) => (n, Value::Word),
        Some((n, "path")) => (n, Value::ReadPath),
        Some((n, "out")) => (n, Value::WritePath),
        Some((n, "program")) => (n, Value::Program),
        Some((_, other)) => return Err(format!("`{token}`: no value kind `{other}`")),
    };
    if !(name.starts_with('-') || name.starts_with('+')) || name.len() < 2 {
        return Err(format!("`{token}` is not an option"));
    }
    let raises = if value == Value::WritePath { raises | Effects::WRITE } else { raises };
    Ok((name.to_string(), Opt { value, raises }))
}

fn program(name: &str, raw: &RawProgram, inherited: Option<&Program>) -> Result<Program, String> {
    let does = match &raw.does {
        Some(d) => Effects::parse(d).map_err(|e| format!("{name}: {e}"))?,
        None => inherited.map_or(Effects::UNKNOWN, |p| p.does),
    };
    let mut options = HashMap::new();
    for token in raw.options.split_whitespace() {
        let (n, o) = option(token).map_err(|e| format!("{name}: {e}"))?;
        match options.get(&n).copied() {
            None => {
                options.insert(n, o);
            }
            // Listed as a flag and as taking a word: the word is optional, and only joined.
            Some(prev) if (prev.value == Value::None) != (o.value == Value::None) => {
                let value = if prev.value == Value::None { o.value } else { prev.value };
                let value = if value == Value::Word { Value::Optional } else { value };
                options.insert(n, Opt { value, raises: prev.raises | o.raises });
            }
            Some(_) => return Err(format!("{name}: `{n}` is listed twice")),
        }
    }
    let other_options = match &raw.other_options {
        Some(o) => Effects::parse(o).map_err(|e| format!("{name}: {e}"))?,
        None => Effects::UNKNOWN,
    };
    let raise_operands = raw
        .raise_operands
        .iter()
        .map(|(k, v)| Effects::parse(v).map(|e| (k.clone(), e)).map_err(|e| format!("{name}: {e}")))
        .collect::<Result<_, _>>()?;
    let mut p = Program {
        does,
        operands: raw.operands.unwrap_or(Operands::Args),
        options,
        other_options,
        numeric: raw.numeric,
        raise_operands,
        script: raw.script.clone(),
        sub: None,
        passes_rest: raw.passes_rest,
        operand_ends_options: raw.operand_ends_options,
        same: raw.same.iter().map(|s| s.split_whitespace().map(str::to_string).collect()).collect(),
        read_operands: raw.read_operands,
        more_operands: match &raw.more_operands {
            Some(m) => Effects::parse(m).map_err(|e| format!("{name}: {e}"))?,
            None => Effects::NONE,
        },
    };
    if p.read_operands.is_some() == p.more_operands.is_empty() {
        return Err(format!("{name}: `read-operands` and `more-operands` go together"));
    }
    for set in &p.same {
        if let Some(o) = set.iter().find(|o| !p.options.contains_key(*o)) {
            return Err(format!("{name}: `same` names `{o}`, which is not among its options"));
        }
    }
    if !raw.sub.is_empty() {
        let mut subs = BTreeMap::new();
        for (s, r) in &raw.sub {
            let sp = program(&format!("{name} {s}"), r, None)?;
            for a in &r.alias {
                subs.insert(a.clone(), sp.clone());
            }
            subs.insert(s.clone(), sp);
        }
        p.sub = Some(subs);
    }
    Ok(p)
}

impl Table {
    /// Reads a table from its text.
    pub fn parse(text: &str) -> Result<Table, String> {
        let raw: RawTable = toml::from_str(text).map_err(|e| e.to_string())?;
        let mut programs = HashMap::new();
        let mut aliases = HashMap::new();
        for (name, r) in &raw.program {
            let p = program(name, r, None)?;
            for a in &r.alias {
                programs.insert(a.clone(), p.clone());
                aliases.insert(a.clone(), name.clone());
            }
            programs.insert(name.clone(), p);
        }
        let e = &raw.environment;
        Ok(Table {
            version: raw.version,
            programs,
            aliases,
            build_and_test: raw.build_and_test.clone(),
            changes_programs: Names::of(&e.changes_programs, &e.changes_programs_prefixes),
            harmless: Names::of(&e.harmless, &e.harmless_prefixes),
        })
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

/// The embedded table.
pub fn table() -> &'static Table {
    static TABLE: LazyLock<Table> = LazyLock::new(|| match Table::parse(SOURCE) {
        Ok(t) => t,
        // The embedded table is checked by a test; a broken one knows no program, which makes
        // every command unknown (asked), never allowed.
        Err(e) => {
            eprintln!("assent: the program table does not read: {e}");
            Table {
                version: 0,
                programs: HashMap::new(),
                aliases: HashMap::new(),
                build_and_test: Vec::new(),
                // With no table every assignment is a change: never fewer questions.
                changes_programs: Names { exact: Vec::new(), prefixes: vec![String::new()] },
                harmless: Names::default(),
            }
        }
    });
    &TABLE
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
