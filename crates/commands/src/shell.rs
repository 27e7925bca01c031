//! A command line, parsed by a real shell parser and walked: every command it can run, through
//! lists, pipelines, subshells, groups, compound commands, functions, substitutions, here-
//! documents, wrappers (`sudo`, `env`, `timeout`, ...) and runners of other commands
//! (`bash -c`, `eval`, `xargs`, `find -exec`, `npx`, `watch`, `trap`).

use crate::classify::classify;
use crate::effects::Effects;
use crate::path;
use crate::table::table;
use crate::word::{Found, Tilde, Word, resolve};
use crate::{Command, Context, Line, PathArg, Redirect};
use brush_parser::ast;

/// The longest line read; a longer one is opaque.
pub const MAX_LEN: usize = 16 * 1024;
/// The most words read in a line (all commands, all depths); past it, opaque.
pub const MAX_WORDS: usize = 4_096;
/// How deep runners may nest (`bash -c "bash -c '…'"`); deeper is opaque.
pub const MAX_DEPTH: usize = 6;
/// The most nesting openers (`(`, `{`, `$(`, backticks, `if`, loops) a line may have before it
/// is parsed; more is opaque (the parser recurses on them).
pub const MAX_OPENERS: usize = 48;

/// Environment names that change what later commands are or do (the programs found, the
/// libraries loaded, the configuration read): assigning one makes the line opaque.
fn changes_programs(name: &str) -> bool {
    const EXACT: &[&str] = &[
        "PATH",
        "ENV",
        "BASH_ENV",
        "PROMPT_COMMAND",
        "PS4",
        "SHELLOPTS",
        "BASHOPTS",
        "GLOBIGNORE",
        "CDPATH",
        "HOME",
        "IFS",
        "PAGER",
        "EDITOR",
        "VISUAL",
        "BROWSER",
        "SSH_ASKPASS",
        "SUDO_ASKPASS",
        "XDG_CONFIG_HOME",
        "MAKEFLAGS",
        "RUSTC_WRAPPER",
        "RUSTC",
        "DOCKER_HOST",
        "KUBECONFIG",
        "SHELL",
        "TERMINAL",
        "FPATH",
        "ZDOTDIR",
    ];
    const PREFIXES: &[&str] = &[
        "LD_",
        "DYLD_",
        "GIT_",
        "NODE_",
        "NPM_CONFIG_",
        "npm_config_",
        "PYTHON",
        "PERL",
        "RUBY",
        "BASH_FUNC_",
        "CARGO_",
    ];
    EXACT.contains(&name) || PREFIXES.iter().any(|p| name.starts_with(p))
}

/// Environment names a command may be given without that being a change worth asking about.
fn harmless_env(name: &str) -> bool {
    const EXACT: &[&str] = &[
        "LANG",
        "LANGUAGE",
        "TZ",
        "NO_COLOR",
        "FORCE_COLOR",
        "CLICOLOR",
        "TERM",
        "COLUMNS",
        "LINES",
        "CI",
        "NODE_ENV",
        "RUST_BACKTRACE",
        "RUST_LOG",
        "DEBUG",
        "PYTHONUNBUFFERED",
        "PYTHONDONTWRITEBYTECODE",
        "COLORTERM",
    ];
    EXACT.contains(&name) || name.starts_with("LC_")
}

/// A wrapper: a program that runs the command after its own options.
struct Wrapper {
    /// Its options that take a value.
    values: &'static [&'static str],
    /// Positional words it takes before the command (`timeout 10`).
    positionals: usize,
    /// What it adds.
    adds: Effects,
}

fn wrapper(name: &str) -> Option<Wrapper> {
    let w = |values, positionals, adds| Some(Wrapper { values, positionals, adds });
    match name {
        "sudo" | "doas" => w(
            &[
                "-u",
                "-g",
                "-C",
                "-D",
                "-h",
                "-p",
                "-r",
                "-t",
                "-U",
                "-T",
                "--user",
                "--group",
                "--chdir",
                "--host",
                "--prompt",
                "--role",
                "--type",
                "--other-user",
                "--command-timeout",
                "--close-from",
            ],
            0,
            Effects::PRIVILEGE,
        ),
        "nice" => w(&["-n", "--adjustment"], 0, Effects::NONE),
        "ionice" => w(&["-c", "-n", "-t", "--class", "--classdata"], 0, Effects::NONE),
        "timeout" => w(&["-s", "-k", "--signal", "--kill-after"], 1, Effects::NONE),
        "nohup" | "noglob" | "builtin" | "unbuffer" | "caffeinate" | "catchsegv" => w(&[], 0, Effects::NONE),
        "time" => w(&["-f", "--format"], 0, Effects::NONE),
        "command" => w(&[], 0, Effects::NONE),
        "exec" => w(&["-a"], 0, Effects::NONE),
        "stdbuf" => w(&["-i", "-o", "-e", "--input", "--output", "--error"], 0, Effects::NONE),
        "setsid" => w(&[], 0, Effects::NONE),
        "taskset" => w(&[], 1, Effects::NONE),
        "chronic" | "ifne" | "pv" => w(&[], 0, Effects::NONE),
        _ => None,
    }
}

fn is_shell(name: &str) -> bool {
    matches!(name, "sh" | "bash" | "dash" | "zsh" | "ksh" | "mksh" | "ash" | "busybox" | "rbash")
}

/// A program's identity: `/bin/rm`, `/usr/bin/rm` and `rm` are `rm`. A path elsewhere (a
/// project's `./node_modules/.bin/jest`) keeps its path, so it is never taken for the program
/// of the same name; deny and ask rules also see its last part.
pub fn identity(program: &str) -> String {
    const SYSTEM: &[&str] = &[
        "/bin/",
        "/usr/bin/",
        "/usr/local/bin/",
        "/sbin/",
        "/usr/sbin/",
        "/usr/local/sbin/",
        "/opt/homebrew/bin/",
        "/usr/libexec/",
    ];
    if !program.contains('/') {
        return program.to_string();
    }
    let norm = path::normalize(program, Some("/")).unwrap_or_else(|| program.to_string());
    match SYSTEM.iter().find_map(|d| norm.strip_prefix(d)) {
        Some(rest) if !rest.contains('/') && !rest.is_empty() => rest.to_string(),
        _ => program.to_string(),
    }
}

pub(crate) struct Walker<'a> {
    ctx: &'a Context,
    pub(crate) line: Line,
    words: usize,
    /// The folder relative paths resolve against (a `cd` changes it; none once unknown).
    cwd: Option<String>,
    /// The text a here-document or here-string gives the command being read (inner none: not
    /// known until it runs).
    stdin: Option<Option<String>>,
}

fn count_openers(s: &str) -> usize {
    let mut n = s.chars().filter(|c| matches!(c, '(' | '{' | '`')).count();
    for kw in ["if", "while", "until", "for", "case", "select"] {
        n += s.split(|c: char| !c.is_ascii_alphanumeric() && c != '_').filter(|w| *w == kw).count();
    }
    n
}

impl<'a> Walker<'a> {
    pub(crate) fn new(ctx: &'a Context) -> Walker<'a> {
        Walker { ctx, line: Line::default(), words: 0, cwd: ctx.cwd.clone(), stdin: None }
    }

    pub(crate) fn opaque(&mut self, why: impl Into<String>) {
        let why = why.into();
        if self.line.opaque.len() < 8 && !self.line.opaque.contains(&why) {
            self.line.opaque.push(why);
        }
    }

    /// Reads a script's text at a runner depth.
    pub(crate) fn script(&mut self, text: &str, depth: usize) {
        if depth > MAX_DEPTH {
            self.opaque(format!("commands nested more than {MAX_DEPTH} deep"));
            return;
        }
        if text.len() > MAX_LEN {
            self.opaque(format!("a command longer than {} KiB", MAX_LEN / 1024));
            return;
        }
        if count_openers(text) > MAX_OPENERS {
            self.opaque(format!("more than {MAX_OPENERS} nested constructs"));
            return;
        }
        let opts = brush_parser::ParserOptions::default();
        let mut parser = brush_parser::Parser::new(std::io::Cursor::new(text.as_bytes()), &opts);
        match parser.parse_program() {
            Ok(p) => {
                for c in &p.complete_commands {
                    self.compound_list(c, depth);
                }
            }
            Err(e) => self.opaque(format!("the shell cannot read it ({e})")),
        }
    }

    fn compound_list(&mut self, l: &ast::CompoundList, depth: usize) {
        for item in &l.0 {
            self.and_or(&item.0, depth);
            if matches!(item.1, ast::SeparatorOperator::Async) {
                self.line.chained = true;
            }
        }
        if l.0.len() > 1 {
            self.line.chained = true;
        }
    }

    fn and_or(&mut self, l: &ast::AndOrList, depth: usize) {
        if !l.additional.is_empty() {
            self.line.chained = true;
        }
        self.pipeline(&l.first, depth);
        for a in &l.additional {
            match a {
                ast::AndOr::And(p) | ast::AndOr::Or(p) => self.pipeline(p, depth),
            }
        }
    }

    fn pipeline(&mut self, p: &ast::Pipeline, depth: usize) {
        if p.seq.len() > 1 {
            self.line.chained = true;
        }
        for c in &p.seq {
            self.command(c, depth);
        }
    }

    fn command(&mut self, c: &ast::Command, depth: usize) {
        match c {
            ast::Command::Simple(s) => self.simple(s, depth),
            ast::Command::Compound(cc, redirects) => {
                self.line.chained = true;
                // A `cd` inside a compound command may or may not have run after it.
                let before = self.cwd.clone();
                self.compound(cc, depth);
                if self.cwd != before {
                    self.cwd = None;
                }
                if let Some(r) = redirects {
                    for io in &r.0 {
                        self.redirect(io, depth, &mut Vec::new());
                    }
                }
            }
            ast::Command::Function(f) => {
                self.line.chained = true;
                let saved = self.cwd.clone();
                self.compound(&f.body.0, depth);
                self.cwd = saved;
                if let Some(r) = &f.body.1 {
                    for io in &r.0 {
                        self.redirect(io, depth, &mut Vec::new());
                    }
                }
            }
            ast::Command::ExtendedTest(t, redirects) => {
                self.line.chained = true;
                self.test_expr(&t.expr, depth);
                if let Some(r) = redirects {
                    for io in &r.0 {
                        self.redirect(io, depth, &mut Vec::new());
                    }
                }
            }
        }
    }

    fn test_expr(&mut self, e: &ast::ExtendedTestExpr, depth: usize) {
        match e {
            ast::ExtendedTestExpr::And(a, b) | ast::ExtendedTestExpr::Or(a, b) => {
                self.test_expr(a, depth);
                self.test_expr(b, depth);
            }
            ast::ExtendedTestExpr::Not(a) | ast::ExtendedTestExpr::Parenthesized(a) => self.test_expr(a, depth),
            ast::ExtendedTestExpr::UnaryTest(_, w) => {
                self.word(&w.value, depth);
            }
            ast::ExtendedTestExpr::BinaryTest(_, a, b) => {
                self.word(&a.value, depth);
                self.word(&b.value, depth);
            }
        }
    }

    fn compound(&mut self, cc: &ast::CompoundCommand, depth: usize) {
        match cc {
            ast::CompoundCommand::Arithmetic(a) => self.arithmetic(&a.expr.value),
            ast::CompoundCommand::ArithmeticForClause(f) => {
                for e in [&f.initializer, &f.condition, &f.updater].into_iter().flatten() {
                    self.arithmetic(&e.value);
                }
                self.compound_list(&f.body.list, depth);
            }
            ast::CompoundCommand::BraceGroup(b) => self.compound_list(&b.list, depth),
            ast::CompoundCommand::Subshell(s) => {
                let saved = self.cwd.clone();
                self.compound_list(&s.list, depth);
                self.cwd = saved;
            }
            ast::CompoundCommand::ForClause(f) => {
                for w in f.values.iter().flatten() {
                    self.word(&w.value, depth);
                }
                self.compound_list(&f.body.list, depth);
            }
            ast::CompoundCommand::CaseClause(c) => {
                self.word(&c.value.value, depth);
                for item in &c.cases {
                    for p in &item.patterns {
                        self.word(&p.value, depth);
                    }
                    if let Some(l) = &item.cmd {
                        self.compound_list(l, depth);
                    }
                }
            }
            ast::CompoundCommand::IfClause(i) => {
                self.compound_list(&i.condition, depth);
                self.compound_list(&i.then, depth);
                for e in i.elses.iter().flatten() {
                    if let Some(c) = &e.condition {
                        self.compound_list(c, depth);
                    }
                    self.compound_list(&e.body, depth);
                }
            }
            ast::CompoundCommand::WhileClause(w) | ast::CompoundCommand::UntilClause(w) => {
                self.compound_list(&w.0, depth);
                self.compound_list(&w.1.list, depth);
            }
            ast::CompoundCommand::Coprocess(c) => self.command(&c.body, depth),
        }
    }

    fn arithmetic(&mut self, text: &str) {
        if text.contains("$(") || text.contains('`') {
            self.opaque("a command substitution inside arithmetic");
        }
    }

    /// Reads a word, reading the commands it substitutes.
    fn word(&mut self, raw: &str, depth: usize) -> Word {
        self.words += 1;
        if self.words > MAX_WORDS {
            self.opaque(format!("more than {MAX_WORDS} words"));
            return Word::Unknown(raw.to_string());
        }
        let mut found = Found::default();
        let tilde = Tilde { home: self.ctx.home.as_deref(), cwd: self.cwd.as_deref() };
        let w = resolve(raw, &tilde, &mut found);
        if let Some(why) = found.opaque {
            self.opaque(why);
        }
        for s in found.substitutions {
            self.line.chained = true;
            let saved = self.cwd.clone();
            self.script(&s, depth + 1);
            self.cwd = saved;
        }
        w
    }

    /// The path a word names, as rules compare it.
    fn path_of(&self, w: &Word) -> PathArg {
        let cwd = self.cwd.as_deref();
        match w {
            Word::Lit(s) => match path::normalize(s, cwd) {
                Some(p) => PathArg::At(p),
                None => PathArg::Unknown(s.clone()),
            },
            Word::Glob(g) => {
                // The part before the first wildcard: where the names it expands to start.
                let cut = g.find(['*', '?', '[']).unwrap_or(g.len());
                let lit = &g[..cut];
                // The segment the wildcard is in, and those after it: one starting with `.` may
                // expand to `..` (bash before 5.2).
                let seg_start = lit.rfind('/').map_or(0, |i| i + 1);
                let wild = &g[seg_start..];
                if wild.contains("..") || wild.split('/').any(|seg| seg.starts_with('.')) || lit.contains("..") {
                    return PathArg::Unknown(g.clone());
                }
                let dir = match lit.rfind('/') {
                    Some(i) => &lit[..=i],
                    None => "",
                };
                let base =
                    if dir.is_empty() { Some(cwd.map(str::to_string)).flatten() } else { path::normalize(dir, cwd) };
                match base {
                    Some(b) => PathArg::Pattern { dir: b, pattern: g.clone() },
                    None => PathArg::Unknown(g.clone()),
                }
            }
            Word::Unknown(s) => PathArg::Unknown(s.clone()),
        }
    }

    fn redirect(&mut self, io: &ast::IoRedirect, depth: usize, reads: &mut Vec<Word>) {
        match io {
            ast::IoRedirect::File(_, kind, target) => match target {
                ast::IoFileRedirectTarget::Filename(w) => {
                    let word = self.word(&w.value, depth);
                    let writes = matches!(
                        kind,
                        ast::IoFileRedirectKind::Write
                            | ast::IoFileRedirectKind::Append
                            | ast::IoFileRedirectKind::Clobber
                            | ast::IoFileRedirectKind::ReadAndWrite
                    );
                    if writes {
                        self.write_redirect(&word);
                    } else {
                        reads.push(word);
                    }
                }
                ast::IoFileRedirectTarget::Fd(_) => {}
                ast::IoFileRedirectTarget::Duplicate(w) => {
                    let word = self.word(&w.value, depth);
                    let is_fd = word
                        .lit()
                        .is_some_and(|s| s == "-" || s.trim_end_matches('-').chars().all(|c| c.is_ascii_digit()));
                    if !is_fd {
                        // `>&file` writes the file.
                        self.write_redirect(&word);
                    }
                }
                ast::IoFileRedirectTarget::ProcessSubstitution(_, s) => {
                    self.line.chained = true;
                    let saved = self.cwd.clone();
                    self.compound_list(&s.list, depth);
                    self.cwd = saved;
                }
            },
            ast::IoRedirect::HereDocument(_, h) => {
                if h.requires_expansion {
                    let opts = brush_parser::ParserOptions::default();
                    match brush_parser::word::parse_heredoc(&h.doc.value, &opts) {
                        Ok(pieces) => {
                            for p in pieces {
                                if let brush_parser::word::WordPiece::CommandSubstitution(s)
                                | brush_parser::word::WordPiece::BackquotedCommandSubstitution(s) = p.piece
                                {
                                    self.line.chained = true;
                                    self.script(&s, depth + 1);
                                } else if let brush_parser::word::WordPiece::ParameterExpansion(_) = p.piece {
                                    let t = h.doc.value.get(p.start_index..p.end_index).unwrap_or("");
                                    if t.contains("$(") || t.contains('`') {
                                        self.opaque("a command substitution inside an expansion in a here-document");
                                    }
                                }
                            }
                        }
                        Err(_) => self.opaque("a here-document that does not parse"),
                    }
                }
                self.stdin = Some(if h.requires_expansion { None } else { Some(h.doc.value.clone()) });
            }
            ast::IoRedirect::HereString(_, w) => {
                let word = self.word(&w.value, depth);
                self.stdin = Some(word.lit().map(str::to_string));
            }
            ast::IoRedirect::OutputAndError(w, _) => {
                let word = self.word(&w.value, depth);
                self.write_redirect(&word);
            }
        }
    }

    fn write_redirect(&mut self, w: &Word) {
        const HARMLESS: &[&str] = &["/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"];
        if w.lit().is_some_and(|s| HARMLESS.contains(&s)) {
            return;
        }
        let p = self.path_of(w);
        self.line.redirects.push(Redirect { path: p, target: w.text().to_string() });
    }

    fn simple(&mut self, s: &ast::SimpleCommand, depth: usize) {
        let mut words: Vec<Word> = Vec::new();
        let mut env: Vec<String> = Vec::new();
        let mut reads: Vec<Word> = Vec::new();
        self.stdin = None;
        let items = s.prefix.iter().flat_map(|p| p.0.iter());
        for item in items {
            self.item(item, depth, &mut words, &mut env, &mut reads);
        }
        if let Some(w) = &s.word_or_name {
            let word = self.word(&w.value, depth);
            words.push(word);
        }
        for item in s.suffix.iter().flat_map(|p| p.0.iter()) {
            self.item(item, depth, &mut words, &mut env, &mut reads);
        }
        if words.is_empty() {
            // Assignments alone: they change what later commands do when they name programs.
            for name in &env {
                if changes_programs(name) && !harmless_env(name) {
                    self.opaque(format!("`{name}` is set, which changes what later commands run"));
                }
            }
            return;
        }
        let stdin = self.stdin.take();
        self.run(words, env, reads, Vec::new(), Effects::NONE, depth, stdin, false);
    }

    fn item(
        &mut self,
        item: &ast::CommandPrefixOrSuffixItem,
        depth: usize,
        words: &mut Vec<Word>,
        env: &mut Vec<String>,
        reads: &mut Vec<Word>,
    ) {
        match item {
            ast::CommandPrefixOrSuffixItem::IoRedirect(io) => self.redirect(io, depth, reads),
            ast::CommandPrefixOrSuffixItem::Word(w) => {
                let word = self.word(&w.value, depth);
                words.push(word);
            }
            ast::CommandPrefixOrSuffixItem::AssignmentWord(a, w) => {
                if words.is_empty() {
                    let name = match &a.name {
                        ast::AssignmentName::VariableName(n) | ast::AssignmentName::ArrayElementName(n, _) => n.clone(),
                    };
                    match &a.value {
                        ast::AssignmentValue::Scalar(v) => {
                            self.word(&v.value, depth);
                        }
                        ast::AssignmentValue::Array(vs) => {
                            for (k, v) in vs {
                                if let Some(k) = k {
                                    self.word(&k.value, depth);
                                }
                                self.word(&v.value, depth);
                            }
                        }
                    }
                    env.push(name);
                } else {
                    // `declare x=1`, `export PATH=…`: an argument of the command.
                    let word = self.word(&w.value, depth);
                    words.push(word);
                }
            }
            ast::CommandPrefixOrSuffixItem::ProcessSubstitution(_, s) => {
                self.line.chained = true;
                let saved = self.cwd.clone();
                self.compound_list(&s.list, depth);
                self.cwd = saved;
                words.push(Word::Unknown("<(…)".into()));
            }
        }
    }

    /// Runs a command given as words, seeing through wrappers and runners.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn run(
        &mut self,
        words: Vec<Word>,
        env: Vec<String>,
        reads: Vec<Word>,
        mut via: Vec<String>,
        mut adds: Effects,
        depth: usize,
        stdin: Option<Option<String>>,
        inner: bool,
    ) {
        if via.len() > 16 {
            self.opaque("too many wrappers");
            return;
        }
        for name in &env {
            if harmless_env(name) {
            } else if changes_programs(name) {
                adds |= Effects::EXEC | Effects::ENV;
                self.opaque(format!("`{name}` is set for the command, which changes what it runs"));
            } else {
                adds |= Effects::ENV;
            }
        }
        let Some(first) = words.first() else { return };
        let name = match first {
            Word::Lit(p) if !p.is_empty() => identity(p),
            other => {
                self.opaque(format!("the program `{}` is known only when the line runs", other.text()));
                self.push(Command {
                    program: None,
                    words: words.iter().map(|w| w.lit().map(str::to_string)).collect(),
                    named: 0,
                    effects: Effects::UNKNOWN | Effects::EXEC | adds,
                    reads: Vec::new(),
                    writes: Vec::new(),
                    via,
                    inner,
                    known: false,
                });
                return;
            }
        };
        let args = &words[1..];
        // Wrappers: the command after their options.
        if let Some(w) = wrapper(&name) {
            let mut i = 0;
            let mut positional = 0;
            while let Some(a) = args.get(i) {
                match a.lit() {
                    Some("--") => {
                        i += 1;
                        break;
                    }
                    Some(s) if s.starts_with('-') && s.len() > 1 => {
                        i += 1;
                        if w.values.contains(&s) {
                            i += 1;
                        }
                        if (name == "command" && matches!(s, "-v" | "-V"))
                            || (name == "sudo" && matches!(s, "-l" | "-e" | "-s" | "-i" | "-v" | "-k" | "-K"))
                        {
                            // A look-up, a list, an editor or a shell: not a plain wrapper.
                            adds |= Effects::UNKNOWN;
                        }
                    }
                    Some(_) if positional < w.positionals => {
                        positional += 1;
                        i += 1;
                    }
                    Some(_) => break,
                    None => {
                        // An option or the program, known only when it runs.
                        self.opaque(format!("`{}` runs a command known only when the line runs", name));
                        i += 1;
                        break;
                    }
                }
            }
            via.push(name.clone());
            let rest: Vec<Word> = args.get(i..).map(<[Word]>::to_vec).unwrap_or_default();
            if rest.is_empty() {
                if name == "sudo" && adds.any(Effects::UNKNOWN) {
                    self.opaque("`sudo` with a shell or an editor");
                }
                self.push_classified(&name, args, adds | w.adds, reads, via, inner);
                return;
            }
            return self.run(rest, Vec::new(), reads, via, adds | w.adds, depth, stdin, inner);
        }
        match name.as_str() {
            "env" => return self.env(args, reads, via, adds, depth, stdin, inner),
            "eval" => {
                self.line.chained = true;
                let mut text = Vec::new();
                for a in args {
                    match a.lit() {
                        Some(s) => text.push(s.to_string()),
                        None => {
                            self.opaque("`eval` of text known only when the line runs");
                            return self.push_opaque(&name, args, via, adds, inner);
                        }
                    }
                }
                return self.script(&text.join(" "), depth + 1);
            }
            "source" | "." => {
                self.opaque(format!("`{name}` runs the commands of a file"));
                return self.push_opaque(&name, args, via, adds, inner);
            }
            "trap" => {
                if let Some(s) = args.first() {
                    match s.lit() {
                        Some(t) if !t.starts_with('-') => self.script(t, depth + 1),
                        Some(_) => {}
                        None => self.opaque("`trap` with commands known only when the line runs"),
                    }
                }
                return self.push_classified(&name, &[], adds, reads, via, inner);
            }
            "watch" => {
                let mut i = 0;
                while let Some(s) = args.get(i).and_then(Word::lit) {
                    if !s.starts_with('-') {
                        break;
                    }
                    i += if matches!(s, "-n" | "--interval" | "-d" | "--differences" | "-g" | "-q" | "--chgexit")
                        && !matches!(s, "-d" | "--differences" | "-g" | "--chgexit")
                    {
                        2
                    } else {
                        1
                    };
                }
                let rest: Vec<String> =
                    args.get(i..).unwrap_or(&[]).iter().filter_map(|w| w.lit().map(str::to_string)).collect();
                if rest.len() != args.len().saturating_sub(i) {
                    self.opaque("`watch` of a command known only when the line runs");
                }
                self.line.chained = true;
                return self.script(&rest.join(" "), depth + 1);
            }
            "xargs" => return self.xargs(args, reads, via, adds, depth, inner),
            "cd" | "pushd" | "popd" => {
                let target = args.iter().find(|a| !a.lit().is_some_and(|s| s.starts_with('-')));
                let next = match (name.as_str(), target) {
                    ("popd", _) => None,
                    (_, None) => self.ctx.home.clone(),
                    (_, Some(t)) => match self.path_of(t) {
                        PathArg::At(p) => Some(p),
                        _ => None,
                    },
                };
                let reads: Vec<Word> = target.cloned().into_iter().collect();
                self.push_classified(&name, &[], adds, reads, via, inner);
                self.cwd = next;
                return;
            }
            "export" | "declare" | "typeset" | "local" | "readonly" => {
                for a in args {
                    let text = a.text();
                    let var = text.split_once('=').map_or(text, |(n, _)| n);
                    if changes_programs(var) {
                        self.opaque(format!("`{var}` is set, which changes what later commands run"));
                    }
                    if matches!(text, "-f" | "-F") && name != "local" {
                        // `export -f`: a function other shells will run.
                        adds |= Effects::EXEC;
                    }
                }
                return self.push_classified(&name, &[], adds, reads, via, inner);
            }
            "shopt" | "set" | "enable" | "alias" | "unalias" | "hash" => {
                if args.iter().any(|a| {
                    a.lit().is_none_or(|s| {
                        s.contains("expand_aliases")
                            || s.contains("-f") && name == "enable"
                            || name == "hash" && s == "-p"
                    })
                }) {
                    self.opaque(format!("`{name}` changes what later words run"));
                }
                return self.push_classified(&name, args, adds, reads, via, inner);
            }
            _ => {}
        }
        if is_shell(&name) {
            return self.shell(&name, args, reads, via, adds, depth, stdin, inner);
        }
        if matches!(name.as_str(), "npx" | "pnpx" | "bunx") || is_npm_exec(&name, args) {
            // The package it runs is a command too: deny and ask rules see it.
            let start = inner_start(&name, args);
            if let Some(rest) = start.and_then(|s| args.get(s..)).filter(|r| !r.is_empty()) {
                let saved = self.line.commands.len();
                self.run(rest.to_vec(), Vec::new(), Vec::new(), vec![name.clone()], adds, depth, None, true);
                for c in &mut self.line.commands[saved..] {
                    c.inner = true;
                }
            }
        }
        self.push_classified(&name, args, adds, reads, via, inner);
    }

    fn push_opaque(&mut self, name: &str, args: &[Word], via: Vec<String>, adds: Effects, inner: bool) {
        let mut words = vec![Some(name.to_string())];
        words.extend(args.iter().map(|w| w.lit().map(str::to_string)));
        self.push(Command {
            program: Some(name.to_string()),
            words,
            named: 1,
            effects: Effects::UNKNOWN | Effects::EXEC | adds,
            reads: Vec::new(),
            writes: Vec::new(),
            via,
            inner,
            known: false,
        });
    }

    fn push_classified(
        &mut self,
        name: &str,
        args: &[Word],
        adds: Effects,
        reads: Vec<Word>,
        via: Vec<String>,
        inner: bool,
    ) {
        let c = classify(table(), name, args);
        let mut all_reads: Vec<PathArg> = reads.iter().map(|w| self.path_of(w)).collect();
        all_reads.extend(c.reads.iter().map(|w| self.path_of(w)));
        let writes = c.writes.iter().map(|w| self.path_of(w)).collect();
        for r in &c.runs {
            // `find -exec`: `{}` is each file found, anywhere below the paths searched.
            let cmd: Vec<Word> = r
                .iter()
                .map(|w| {
                    if w.lit().is_some_and(|s| s.contains("{}")) {
                        Word::Unknown(w.text().to_string())
                    } else {
                        w.clone()
                    }
                })
                .collect();
            let saved = self.cwd.clone();
            self.run(cmd, Vec::new(), Vec::new(), vec![name.to_string()], Effects::NONE, 0, None, false);
            self.cwd = saved;
        }
        self.push(Command {
            program: Some(name.to_string()),
            words: c.canonical,
            named: c.named,
            effects: c.effects | adds,
            reads: all_reads,
            writes,
            via,
            inner,
            known: c.known,
        });
    }

    fn push(&mut self, c: Command) {
        if self.line.commands.len() >= 512 {
            self.opaque("more than 512 commands");
            return;
        }
        self.line.commands.push(c);
    }

    #[allow(clippy::too_many_arguments)]
    fn env(
        &mut self,
        args: &[Word],
        reads: Vec<Word>,
        mut via: Vec<String>,
        mut adds: Effects,
        depth: usize,
        stdin: Option<Option<String>>,
        inner: bool,
    ) {
        let mut i = 0;
        let mut env = Vec::new();
        while let Some(a) = args.get(i) {
            let Some(s) = a.lit() else {
                self.opaque("`env` with words known only when the line runs");
                return self.push_opaque("env", args, via, adds, inner);
            };
            if s == "--" {
                i += 1;
                break;
            }
            if matches!(s, "-u" | "--unset" | "-C" | "--chdir") {
                if matches!(s, "-C" | "--chdir") {
                    adds |= Effects::RELOCATE;
                }
                i += 2;
                continue;
            }
            if matches!(s, "-S" | "--split-string") || s.starts_with("-S") || s.starts_with("--split-string=") {
                self.opaque("`env -S` splits a string into a command");
                return self.push_opaque("env", args, via, adds, inner);
            }
            if s.starts_with('-') && s.len() > 1 {
                i += 1;
                continue;
            }
            if let Some((n, _)) = s.split_once('=') {
                env.push(n.to_string());
                i += 1;
                continue;
            }
            break;
        }
        via.push("env".into());
        let rest: Vec<Word> = args.get(i..).map(<[Word]>::to_vec).unwrap_or_default();
        if rest.is_empty() {
            return self.push_classified("printenv", &[], adds, reads, via, inner);
        }
        self.run(rest, env, reads, via, adds, depth, stdin, inner)
    }

    fn xargs(
        &mut self,
        args: &[Word],
        reads: Vec<Word>,
        mut via: Vec<String>,
        adds: Effects,
        depth: usize,
        inner: bool,
    ) {
        const VALUES: &[&str] = &[
            "-n",
            "-L",
            "-I",
            "-d",
            "-P",
            "-s",
            "-a",
            "-E",
            "-e",
            "--max-args",
            "--max-lines",
            "--delimiter",
            "--max-procs",
            "--max-chars",
            "--arg-file",
            "--eof",
            "--replace",
        ];
        let mut i = 0;
        let mut extra_reads = reads;
        while let Some(a) = args.get(i) {
            let Some(s) = a.lit() else { break };
            if s == "--" {
                i += 1;
                break;
            }
            if !s.starts_with('-') || s.len() == 1 {
                break;
            }
            if matches!(s, "-a" | "--arg-file")
                && let Some(f) = args.get(i + 1)
            {
                extra_reads.push(f.clone());
            }
            i += if VALUES.contains(&s) { 2 } else { 1 };
        }
        via.push("xargs".into());
        let mut rest: Vec<Word> = args.get(i..).map(<[Word]>::to_vec).unwrap_or_default();
        if rest.is_empty() {
            rest.push(Word::Lit("echo".into()));
        }
        // The words it reads from its input are more arguments, unknown.
        rest.push(Word::Unknown("…".into()));
        self.line.chained = true;
        self.run(rest, Vec::new(), extra_reads, via, adds, depth, None, inner)
    }

    #[allow(clippy::too_many_arguments)]
    fn shell(
        &mut self,
        name: &str,
        args: &[Word],
        reads: Vec<Word>,
        via: Vec<String>,
        adds: Effects,
        depth: usize,
        stdin: Option<Option<String>>,
        inner: bool,
    ) {
        let mut i = 0;
        let mut script_from_c = false;
        while let Some(a) = args.get(i) {
            let Some(s) = a.lit() else {
                self.opaque(format!("`{name}` with words known only when the line runs"));
                return self.push_opaque(name, args, via, adds, inner);
            };
            if s == "--" {
                i += 1;
                break;
            }
            if s.starts_with("--") {
                i += 1;
                continue;
            }
            if (s.starts_with('-') || s.starts_with('+')) && s.len() > 1 {
                i += 1;
                if s.contains('c') && s.starts_with('-') {
                    script_from_c = true;
                }
                if s.contains('o') || s.contains('O') {
                    // `-o name`, `-O shopt`.
                    i += 1;
                }
                continue;
            }
            break;
        }
        let mut via = via;
        via.push(name.to_string());
        if script_from_c {
            match args.get(i) {
                Some(Word::Lit(text)) => {
                    self.line.chained = true;
                    let saved = self.cwd.clone();
                    let first = self.line.commands.len();
                    self.script(text, depth + 1);
                    self.cwd = saved;
                    // What wraps the shell applies to what it runs.
                    for c in self.line.commands.iter_mut().skip(first) {
                        c.effects |= adds;
                        let mut v = via.clone();
                        v.append(&mut c.via);
                        c.via = v;
                    }
                }
                _ => {
                    self.opaque(format!("`{name} -c` with a script known only when the line runs"));
                    self.push_opaque(name, args, via, adds, inner);
                }
            }
            return;
        }
        match (args.get(i), stdin) {
            (None, Some(Some(text))) => {
                self.line.chained = true;
                self.script(&text, depth + 1);
            }
            (None, _) => {
                self.opaque(format!("`{name}` runs commands from its input"));
                self.push_opaque(name, args, via, adds, inner);
            }
            (Some(_), _) => {
                self.opaque(format!("`{name}` runs the commands of a file"));
                let _ = reads;
                self.push_opaque(name, args, via, adds, inner);
            }
        }
    }
}

fn is_npm_exec(name: &str, args: &[Word]) -> bool {
    matches!(name, "npm" | "pnpm" | "yarn" | "bun")
        && args
            .iter()
            .find(|a| !a.lit().is_some_and(|s| s.starts_with('-')))
            .and_then(Word::lit)
            .is_some_and(|s| matches!(s, "exec" | "x" | "dlx"))
}

/// Where the command a package runner runs starts in its words.
fn inner_start(name: &str, args: &[Word]) -> Option<usize> {
    let mut i = 0;
    if !matches!(name, "npx" | "pnpx" | "bunx") {
        // Past `exec` / `dlx`.
        i = args.iter().position(|a| a.lit().is_some_and(|s| matches!(s, "exec" | "x" | "dlx")))? + 1;
    }
    while let Some(a) = args.get(i) {
        match a.lit() {
            Some("--") => return Some(i + 1),
            Some(s) if s.starts_with('-') => i += if matches!(s, "-p" | "--package" | "-c" | "--call") { 2 } else { 1 },
            _ => return Some(i),
        }
    }
    None
}
