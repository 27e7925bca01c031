//! A command line, parsed by a real shell parser and walked: every command it can run, through
//! lists, pipelines, subshells, groups, compound commands, functions, substitutions, here-
//! documents, wrappers (`sudo`, `env`, `timeout`, ...) and runners of other commands
//! (`bash -c`, `eval`, `xargs`, `find -exec`, `npx`, `watch`, `trap`).

//!
//! [`Walker`] walks the parser's tree (this module); `io` reads a simple command's words,
//! assignments and redirections; `run` sees through wrappers and runners and files each
//! command with what the program table says of it.

mod io;
mod run;
mod runners;

pub(crate) use run::Through;
pub use run::is_shell;

use crate::path;
use crate::table::Table;
use crate::word::{Found, Tilde, Word, resolve};
use crate::{Context, Line, PathArg};
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
    /// What programs do.
    table: &'a Table,
    pub(crate) line: Line,
    words: usize,
    /// The folder relative paths resolve against (a `cd` changes it; none once unknown).
    cwd: Option<String>,
    /// The text a here-document or here-string gives the command being read (inner none: not
    /// known until it runs).
    stdin: Option<Option<String>>,
}

fn count_openers(s: &str) -> usize {
    // `!` and `[` nest in conditional and arithmetic expressions (`[[ ! ! x ]]`, `$[$[1]]`), and
    // the parser recurses on each operator of a conditional (`[[ a && b && … ]]`) too.
    let mut n = s.chars().filter(|c| matches!(c, '(' | '{' | '`' | '[' | '!')).count();
    n += s.matches("&&").count() + s.matches("||").count();
    for kw in ["if", "while", "until", "for", "case", "select"] {
        n += s.split(|c: char| !c.is_ascii_alphanumeric() && c != '_').filter(|w| *w == kw).count();
    }
    n
}

impl<'a> Walker<'a> {
    pub(crate) fn new(ctx: &'a Context, table: &'a Table) -> Walker<'a> {
        Walker { ctx, table, line: Line::default(), words: 0, cwd: ctx.cwd.clone(), stdin: None }
    }

    /// [`Self::opaque`] for a shell that runs a file's commands (see [`crate::Line::opaque_files`]).
    pub(crate) fn opaque_file(&mut self, why: String) {
        if !self.line.opaque_files.contains(&why) {
            self.line.opaque_files.push(why.clone());
        }
        self.opaque(why);
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
                self.line.complex = true;
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
                self.line.complex = true;
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
                self.line.complex = true;
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
                self.line.complex = true;
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
        if found.ansi_c {
            self.line.complex = true;
        }
        for s in found.substitutions {
            self.line.complex = true;
            let saved = self.cwd.clone();
            self.script(&s, depth + 1);
            self.cwd = saved;
        }
        // A quoted `a[$(cmd)]` is text here, but a builtin that takes a variable's name (`test
        // -v`, `printf -v`, `read`, `declare`, `unset`, `[[ -v ]]`) evaluates its subscript.
        if w.lit().is_some_and(|l| l.contains('[') && (l.contains("$(") || l.contains('`'))) {
            self.opaque("a subscript that runs a command when a builtin evaluates it (`a[$(…)]`)");
        }
        w
    }

    /// The path a word names, as rules compare it.
    fn path_of(&self, w: &Word) -> PathArg {
        let cwd = self.cwd.as_deref();
        match w {
            Word::Lit(s) => match path::normalize(s, cwd) {
                // `..` after a link leads where the link's target's parent is, not where the
                // words say (`lnk/../secret`): the kernel's reading is the one that counts.
                Some(p) if std::path::Path::new(s).components().any(|c| c == std::path::Component::ParentDir) => {
                    let joined = if s.starts_with('/') { s.clone() } else { format!("{}/{s}", cwd.unwrap_or("")) };
                    match path::real(&joined) {
                        Some(physical) => PathArg::At(physical),
                        None => PathArg::At(p),
                    }
                }
                Some(p) => PathArg::At(p),
                None if cwd.is_none() && !s.starts_with('/') => PathArg::Relative(s.clone()),
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
}
