//! What a command line does, as Assent's rules must see it.
//!
//! A rule that reads a command as a list of words can be made to allow what its owner never
//! meant: quoting hides a second command, a redirection writes a file, a wrapper or `bash -c`
//! hides the program. This crate reads a line the way bash will run it and says what it runs:
//!
//! - [`shell`]: the line parsed by brush's parser (a real POSIX/bash grammar), walked through
//!   every construct into the [`Command`]s it can run, seen through wrappers (`sudo`, `env`,
//!   `timeout`, ...) and runners (`bash -c`, `eval`, `xargs`, `find -exec`, `npx`); redirections
//!   become file writes; whatever cannot be known before it runs makes the line opaque.
//! - [`word`]: each word's value, every quoting form undone.
//! - [`table`] and `programs.toml`: what programs, subcommands and options do ([`Effects`]).
//! - [`classify`]: one command's words read against the table.
//! - [`path`] and [`host`]: paths and hosts as rules compare them.
//! - [`executable`] and `executable.toml`: files whose content tools run as code (a
//!   `Makefile`, `package.json`, `.git/config`), which no rule on files covers unless it names
//!   the file.
//! - [`secrets`]: files inside a project that hold secrets (`.env`, private keys, registry
//!   tokens), which no read a rule allows may touch.
//!
//! Every bound is fixed ([`shell::MAX_LEN`], [`shell::MAX_WORDS`], [`shell::MAX_DEPTH`],
//! [`shell::MAX_OPENERS`]): past one, the line is opaque, so an agent's input costs a bounded
//! amount whatever its size and shape.

pub mod classify;
pub mod effects;
pub mod executable;
pub mod host;
mod opts;
pub mod path;
pub mod reach;
pub mod secrets;
pub mod shell;
pub mod table;
pub mod word;

pub use effects::Effects;

/// Where a line runs.
#[derive(Debug, Clone, Default)]
pub struct Context {
    /// The working folder, absolute (relative paths resolve against it).
    pub cwd: Option<String>,
    /// The home folder (`~`).
    pub home: Option<String>,
}

/// A path a command touches, as rules compare it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathArg {
    /// Absolute and normalized.
    At(String),
    /// A glob bash expands: the folder its names start in (normalized) and the pattern.
    Pattern {
        /// The folder.
        dir: String,
        /// The pattern as written.
        pattern: String,
    },
    /// Not known before the line runs (a variable, a substitution, a glob that may climb).
    Unknown(String),
    /// A literal relative path with no working folder to resolve it: its name is known, its
    /// folder is not.
    Relative(String),
}

/// A file a redirection writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// The file.
    pub path: PathArg,
    /// As written.
    pub target: String,
}

/// One command a line runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    /// The program (`rm` for `/bin/rm`, `\rm`, `"rm"`); none when only known as it runs.
    pub program: Option<String>,
    /// The program, subcommands and the rest of its words, global options set aside (`git -C
    /// . push` is `git push`); `None` for a word known only as it runs.
    pub words: Vec<Option<String>>,
    /// How many leading words name the program and its subcommands.
    pub named: usize,
    /// What it does.
    pub effects: Effects,
    /// Paths it reads.
    pub reads: Vec<PathArg>,
    /// Paths it writes or deletes.
    pub writes: Vec<PathArg>,
    /// The wrappers and runners it was found inside (`sudo`, `bash`, `find`).
    pub via: Vec<String>,
    /// Run by another command whose rule covers it (`npx X`'s package): deny and ask rules see
    /// it; an allow of the outer command covers it.
    pub inner: bool,
    /// Whether the program table knows it.
    pub known: bool,
    /// The hosts it reaches, as its table entry names them (`registry.npmjs.org`,
    /// [`table::GIT_REMOTE`]), when nothing else in it names a host (no option or operand added
    /// the network, no wrapper); empty: none known. See [`Line::hosts`].
    pub reaches: Vec<String>,
}

impl Command {
    /// Whether it only reads, and only inside `dir`: known to the table, every word known before
    /// it runs, its words only reading, nothing written, every path it reads inside `dir` (real
    /// paths found by `real`).
    pub fn only_reads_inside(&self, dir: &str, real: &dyn Fn(&str) -> Option<String>) -> bool {
        self.known
            // Every word known before it runs: `echo $TOKEN` prints what the environment holds.
            && self.words.iter().all(Option::is_some)
            && self.effects.only_reads()
            && self.writes.is_empty()
            && self.reads.iter().all(|r| path_inside_by(r, dir, real) && !names_secret(r))
    }
}

/// Whether `p` names a file that holds secrets ([`secrets`]): a read of it is no read a rule
/// allows without the person, inside the folder or not.
fn names_secret(p: &PathArg) -> bool {
    match p {
        PathArg::At(path) | PathArg::Relative(path) => secrets::is_secret(path),
        PathArg::Pattern { pattern, .. } => secrets::is_secret(pattern),
        PathArg::Unknown(_) => false,
    }
}

/// A line, read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Line {
    /// Every command it can run, in order.
    pub commands: Vec<Command>,
    /// Files its redirections write.
    pub redirects: Vec<Redirect>,
    /// Why it cannot be fully known before it runs (empty: it can).
    pub opaque: Vec<String>,
    /// Those of `opaque` that are only a file's commands run by a shell (`bash test.sh`,
    /// `source env.sh`): unknown as a program's code is, not text made as the line runs.
    pub opaque_files: Vec<String>,
    /// Whether it is more than one plain command (lists, pipes, substitutions, compounds).
    pub chained: bool,
    /// Whether it is more than plain commands joined by `&&`, `||`, `;`, `|` or newlines: a
    /// subshell, group, `&`, loop, conditional, function, substitution, `$'…'` quoting, or a
    /// command run by another (`bash -c`, `eval`, `watch`, `trap`). Deny and ask rules read
    /// through all of it; an allow that names a command covers only a line that is not.
    pub complex: bool,
}

impl Line {
    /// A line known to be opaque, for `why`, without reading it (one too long to read).
    pub fn opaque(why: impl Into<String>) -> Line {
        Line { opaque: vec![why.into()], ..Line::default() }
    }

    /// The line with every path it touches taken as not known: where a shell's paths cannot be
    /// compared with the platform's (on Windows, bash maps `/c/…` and `/usr/…` as it is set up
    /// to), so that a path rule that refuses takes in a command that names any path, and one
    /// that allows, none.
    pub fn without_paths(mut self) -> Line {
        let forget = |p: &mut PathArg| {
            let text = match p {
                PathArg::At(a) | PathArg::Unknown(a) | PathArg::Relative(a) => a.clone(),
                PathArg::Pattern { pattern, .. } => pattern.clone(),
            };
            *p = PathArg::Unknown(text);
        };
        for c in &mut self.commands {
            c.reads.iter_mut().chain(c.writes.iter_mut()).for_each(forget);
        }
        self.redirects.iter_mut().for_each(|r| forget(&mut r.path));
        self
    }

    /// Whether anything in it is known only when it runs.
    pub fn is_opaque(&self) -> bool {
        !self.opaque.is_empty()
    }

    /// Whether it only reads, and only inside `dir`: known programs whose words only read,
    /// every path they read inside `dir` (lexically and by its real path), no redirection
    /// writing a file, nothing opaque. What the built-in read-only rule allows.
    pub fn only_reads_inside(&self, dir: &str) -> bool {
        self.only_reads_inside_by(dir, &path::real)
    }

    /// [`Line::only_reads_inside`], with real paths found by `real`.
    pub fn only_reads_inside_by(&self, dir: &str, real: &dyn Fn(&str) -> Option<String>) -> bool {
        self.is_simple()
            && self.redirects.is_empty()
            && !self.commands.is_empty()
            && self.commands.iter().all(|c| c.only_reads_inside(dir, real))
    }

    /// What its commands do, together.
    pub fn effects(&self) -> Effects {
        self.commands.iter().fold(Effects::NONE, |a, c| a | c.effects)
    }

    /// Whether it is plain commands joined by `&&`, `||`, `;`, `|` or newlines, and nothing
    /// in it is opaque: what an allow that names a command can cover.
    pub fn is_simple(&self) -> bool {
        !self.complex && !self.is_opaque()
    }

    /// Whether it is one plain command with no redirection.
    pub fn is_plain(&self) -> bool {
        !self.chained
            && self.redirects.is_empty()
            && !self.is_opaque()
            && self.commands.iter().filter(|c| !c.inner).count() == 1
    }
}

/// Reads a command line.
pub fn analyze(line: &str, ctx: &Context) -> Line {
    analyze_by(table::table(), line, ctx)
}

/// Reads a command line with `table`'s knowledge of programs.
fn analyze_by(table: &table::Table, line: &str, ctx: &Context) -> Line {
    let mut w = shell::Walker::new(ctx, table);
    w.script(line, 0);
    w.line
}

/// The folder and home the table's examples run in.
const EXAMPLES_CWD: &str = "/work/project";

/// Checks every example of `t` (`examples.reads`, `examples.asks`, `examples.effects` of each
/// entry of `programs.toml`): each line read with `t`, in [`EXAMPLES_CWD`], paths compared as
/// written. Names every example that does not hold.
pub fn check_examples(t: &table::Table) -> Result<(), String> {
    let ctx = Context { cwd: Some(EXAMPLES_CWD.into()), home: Some("/home/user".into()) };
    let wrong: Vec<String> = t
        .examples
        .iter()
        .filter_map(|ex| {
            let line = analyze_by(t, &ex.line, &ctx);
            let got = match ex.expect {
                table::Expect::Reads(_) => table::Expect::Reads(line.only_reads_inside_by(EXAMPLES_CWD, &|_| None)),
                table::Expect::Effects(_) => table::Expect::Effects(line.effects()),
            };
            (got != ex.expect).then(|| format!("{}: `{}` is {got}, not {}", ex.entry, ex.line, ex.expect))
        })
        .collect();
    if wrong.is_empty() { Ok(()) } else { Err(wrong.join("; ")) }
}

/// The table as the reader uses it: read, and its examples checked. One that does not read,
/// or whose examples do not hold, is taken as a table that knows no program (every command
/// asked, never allowed), and says so on standard error.
pub(crate) fn checked(read: Result<table::Table, String>) -> table::Table {
    match read.and_then(|t| check_examples(&t).map(|()| t)) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("assent: the program table is not used, every command will be asked about: {e}");
            table::Table::none()
        }
    }
}

/// Reads a command given as an argument list (`["bash", "-lc", "npm test"]`, `["rm", "x"]`):
/// each element one word, as `execve` receives them.
pub fn analyze_argv(argv: &[String], ctx: &Context) -> Line {
    let mut w = shell::Walker::new(ctx, table::table());
    let total: usize = argv.iter().map(String::len).sum();
    if total > shell::MAX_LEN || argv.len() > shell::MAX_WORDS {
        w.opaque(format!("a command longer than {} KiB", shell::MAX_LEN / 1024));
        return w.line;
    }
    let words: Vec<word::Word> = argv.iter().map(|a| word::Word::Lit(a.clone())).collect();
    if !words.is_empty() {
        w.run(words, Vec::new(), shell::Through::default());
    }
    w.line
}

/// A rule's command prefix, read as the commands it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prefix {
    /// Its words, global options set aside, as a command's `words`.
    pub words: Vec<String>,
    /// How many name the program and its subcommands.
    pub named: usize,
    /// What a command with these words alone does.
    pub effects: Effects,
    /// Whether the table knows its program.
    pub known: bool,
    /// It names a wrapper alone (`sudo`): it matches every command run through it.
    pub wrapper: bool,
}

/// Why a prefix cannot be a rule's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadPrefix(pub String);

impl Prefix {
    /// Reads a rule's prefix: one plain command, every word known.
    pub fn parse(text: &str) -> Result<Prefix, BadPrefix> {
        let line = analyze(text, &Context::default());
        if line.is_opaque() {
            return Err(BadPrefix(format!("it cannot be known before it runs ({})", line.opaque.join("; "))));
        }
        if !line.is_plain() {
            return Err(BadPrefix("it is not one plain command (no chaining, substitution or redirection)".into()));
        }
        let Some(c) = line.commands.into_iter().find(|c| !c.inner) else {
            return Err(BadPrefix("a command prefix names at least one word".into()));
        };
        if !c.via.is_empty() && c.program.as_deref() == c.via.first().map(String::as_str) && c.words.len() == 1 {
            // A wrapper alone (`sudo`): every command run through it.
            return Ok(Prefix { words: c.via, named: 1, effects: c.effects, known: c.known, wrapper: true });
        }
        if !c.via.is_empty() {
            return Err(BadPrefix(format!(
                "it starts with `{}`, which runs another command: name the command it runs",
                c.via.join(" ")
            )));
        }
        let words: Option<Vec<String>> = c.words.into_iter().collect();
        let words = words.ok_or_else(|| BadPrefix("a word of it is known only when it runs".into()))?;
        Ok(Prefix { words, named: c.named, effects: c.effects, known: c.known, wrapper: false })
    }

    /// Whether a deny or ask rule with this prefix matches `c`: the program and subcommands
    /// it names, and every option and operand it names, in any order and form (`rm -rf` matches
    /// `rm -r -f x`). An opaque command matches every prefix.
    pub fn matches(&self, c: &Command) -> bool {
        let Some(program) = &c.program else { return true };
        if self.wrapper {
            return self.words.first().is_some_and(|w| c.via.contains(w) || w == program);
        }
        let base = program.rsplit('/').next().unwrap_or(program);
        let first = self.words.first().map(String::as_str);
        // The program by any of its names (`unlink` is `rm`).
        let t = table::table();
        let same = |a: &str| first.is_some_and(|f| t.canonical(f) == t.canonical(a));
        if !same(program) && !same(base) {
            return false;
        }
        let entry = first.and_then(|f| t.get(f));
        // A subcommand the table does not know may be any (a git alias, npm's `publi` for
        // `publish`): a rule naming a subcommand matches it.
        if c.known && c.named < self.named && c.effects.any(Effects::UNKNOWN) && entry.is_some_and(|p| p.sub.is_some())
        {
            return true;
        }
        let named_ok =
            (1..self.named).all(|i| c.words.get(i).and_then(Option::as_deref) == Some(self.words[i].as_str()));
        if !named_ok {
            return false;
        }
        // The program or subcommand the prefix names, as the table has it.
        let mut p = entry;
        for w in self.words.iter().take(self.named).skip(1) {
            p = p.and_then(|x| x.sub.as_ref()).and_then(|s| s.get(w));
        }
        let (want_opts, want_ops) = split_rest(self.words.iter().skip(self.named.max(1)).map(|s| Some(s.as_str())));
        let (have_opts, have_ops) = split_rest(c.words.iter().skip(self.named.max(1)).map(Option::as_deref));
        let have_opts: Vec<String> = match p {
            Some(p) => have_opts.iter().map(|o| p.full_option(o)).collect(),
            None => have_opts,
        };
        // A word known only as it runs, or a glob, may be any word.
        let any = |h: &Option<String>| h.as_deref().is_none_or(|s| s.contains(['*', '?', '[']));
        let has_option = |o: &String| match p {
            None => have_opts.contains(o),
            Some(p) => {
                let o = p.full_option(o);
                // Any spelling of it, or any option or operand that does what it does
                // (`deny git push --force` matches `-f`, `+main`, `--force-with-lease`).
                // An abbreviation of any spelling of it, ambiguous or not (for a deny, it may
                // be the one the program picks).
                p.spellings(&o).iter().any(|s| {
                    have_opts
                        .iter()
                        .any(|h| h == s || (h.len() > 3 && h.starts_with("--") && s.starts_with(h.as_str())))
                }) || p.options.get(&o).is_some_and(|x| !x.raises.is_empty() && x.raises.within(c.effects))
            }
        };
        if !want_opts.iter().all(|o| has_option(o) || have_ops.iter().any(any)) {
            return false;
        }
        // Operands in order.
        let mut it = have_ops.iter();
        want_ops.iter().all(|w| it.any(|h| any(h) || h == w))
    }

    /// Whether an allow rule with this prefix covers `c`: its words start with the prefix's,
    /// every word known, and the words after the prefix do not raise what it does beyond what
    /// the prefix's own words do (for a program the table does not know: no option after it).
    pub fn covers(&self, c: &Command) -> bool {
        let Some(program) = &c.program else { return false };
        if self.wrapper {
            return false;
        }
        if !c.known && c.program.as_deref().is_some_and(|p| p.contains('/')) && self.words.first() != Some(program) {
            return false;
        }
        if c.words.len() < self.words.len() {
            return false;
        }
        if !self.words.iter().zip(&c.words).all(|(w, h)| h.as_deref() == Some(w.as_str())) {
            return false;
        }
        let rest = &c.words[self.words.len()..];
        if rest.iter().any(Option::is_none) {
            return false;
        }
        // A program or subcommand the table does not know: no option after the prefix.
        if (!c.known || c.effects.any(Effects::UNKNOWN)) && rest.iter().flatten().any(|w| w.starts_with('-')) {
            return false;
        }
        c.effects.within(self.effects)
    }
}

/// Options (clusters taken apart) and operands of a command's words after its name.
fn split_rest<'a>(words: impl Iterator<Item = Option<&'a str>>) -> (Vec<String>, Vec<Option<String>>) {
    let (mut opts, mut ops) = (Vec::new(), Vec::new());
    let mut end = false;
    for w in words {
        match w {
            Some("--") if !end => end = true,
            Some(s) if !end && s.starts_with("--") => opts.push(s.split('=').next().unwrap_or(s).to_string()),
            Some(s) if !end && s.starts_with('-') && s.len() > 1 => {
                if s[1..].chars().all(|c| c.is_ascii_alphabetic()) {
                    opts.extend(s[1..].chars().map(|c| format!("-{c}")));
                } else {
                    opts.push(s.to_string());
                }
            }
            other => ops.push(other.map(str::to_string)),
        }
    }
    (opts, ops)
}

/// Whether a path is inside `dir`, lexically and, where it exists, by its real path (links
/// resolved): a path that leaves through `..` or a link is not.
pub fn path_inside(p: &PathArg, dir: &str) -> bool {
    path_inside_by(p, dir, &path::real)
}

/// [`path_inside`], with real paths found by `real` (a caller that already resolved them).
pub fn path_inside_by(p: &PathArg, dir: &str, real: &dyn Fn(&str) -> Option<String>) -> bool {
    let at = match p {
        PathArg::At(a) => a.as_str(),
        PathArg::Pattern { dir: d, .. } => d.as_str(),
        PathArg::Unknown(_) | PathArg::Relative(_) => return false,
    };
    if !path::inside(at, dir) {
        return false;
    }
    let real_dir = real(dir).unwrap_or_else(|| dir.to_string());
    match real(at) {
        Some(r) => path::inside(&r, &real_dir),
        None => true,
    }
}

#[cfg(test)]
mod tests;
