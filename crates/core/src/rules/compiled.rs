//! A rule's match, compiled for its effect, and what it covers of each part of a proposal (each
//! command its line runs, each file a redirection writes, its path, what is opaque).

use super::builtin::{BOX, BUILD_TEST, READ_ONLY};
use super::patterns::{glob, literal_glob, literal_len, literal_prefix, path_glob};
use super::{BadRule, Confine, Effect, PathForm, RuleMatch, Subject, bad};
use crate::payloads::KindName;
use assent_commands::{Command, Line, PathArg, Prefix, Redirect};
use globset::{Glob, GlobMatcher};

/// A match, compiled for one effect.
#[derive(Debug, Clone)]
pub struct Compiled {
    pub(super) m: RuleMatch,
    pub(super) effect: Effect,
    pub(super) tool: Option<Glob>,
    pub(super) path: Option<Glob>,
    pub(super) tool_m: Option<GlobMatcher>,
    pub(super) path_m: Option<GlobMatcher>,
    /// The path glob as written, for a URL's path (none when it names files only: on a
    /// drive, in the home or the working folder).
    pub(super) url_m: Option<GlobMatcher>,
    /// The path glob is `./…`: relative to the working folder.
    pub(super) relative: bool,
    pub(super) prefix: Option<Prefix>,
    /// An exact rule's command, read once.
    pub(super) exact_line: Option<Line>,
    /// The path glob with `~/` expanded.
    pub(super) path_abs: Option<String>,
    pub(super) origin: bool,
    pub(super) read_only: bool,
    /// The built-in build-and-test rule.
    pub(super) build_test: bool,
    /// The built-in box rule.
    pub(super) boxed: bool,
}

/// One part of a proposal, decided on its own.
#[derive(Debug, Clone, Copy)]
pub(super) enum Part<'a> {
    /// A proposal with no command: all of it.
    Whole,
    /// A command its line runs.
    Command(&'a Command),
    /// A file a redirection writes.
    Redirect(&'a Redirect),
    /// What cannot be known of the line before it runs.
    Opaque,
}

pub(super) fn parts(s: &Subject) -> Vec<Part<'_>> {
    let Some(line) = &s.line else { return vec![Part::Whole] };
    let mut out: Vec<Part<'_>> = line.commands.iter().map(Part::Command).collect();
    out.extend(line.redirects.iter().map(Part::Redirect));
    if line.is_opaque() {
        out.push(Part::Opaque);
    }
    if out.is_empty() {
        out.push(Part::Whole);
    }
    out
}

impl Compiled {
    /// Compiles a match for an effect: its globs and its command's words.
    pub fn new(m: RuleMatch, effect: Effect) -> Result<Self, BadRule> {
        let tool = m.tool.as_deref().map(|t| glob(t, false)).transpose()?;
        let path_abs = m.path.as_deref().map(expand_home);
        let (relative, path) = match path_abs.as_deref() {
            None => (false, None),
            Some(p) => match p.strip_prefix("./") {
                Some(rest) => (true, Some(path_glob(rest)?)),
                None => (false, Some(path_glob(p)?)),
            },
        };
        let path_m = path.as_ref().map(Glob::compile_matcher);
        // Where paths compare as written (not Windows), a URL's glob is the path glob itself.
        let url_m = match m.path.as_deref() {
            Some(p) if p.starts_with('/') || p.starts_with("**") => match &path_m {
                Some(same) if !cfg!(windows) => Some(same.clone()),
                _ => Some(glob(p, true)?.compile_matcher()),
            },
            _ => None,
        };
        let exact_line = m
            .input
            .as_deref()
            .filter(|_| m.exact)
            .map(|i| assent_commands::analyze(i, &assent_commands::Context::default()));
        let prefix = match m.input.as_deref() {
            None => None,
            Some(_) if m.exact => None,
            Some(i) => Some(Prefix::parse(i).map_err(|e| bad("invalid_input", format!("`{i}`: {}", e.0)))?),
        };
        if effect == Effect::Allow && prefix.as_ref().is_some_and(|p| p.wrapper) {
            return Err(bad(
                "invalid_input",
                format!("`{}` runs another command: allow the command it runs", m.input.as_deref().unwrap_or("")),
            ));
        }
        if m.exact && m.input.as_deref().is_none_or(|i| i.trim().is_empty()) {
            return Err(bad("invalid_input", "`exact` goes with the whole command in `input`"));
        }
        let alone = effect == Effect::Allow && m.fields() == 1 && m.confine.is_none();
        let (read_only, build_test, boxed) = match m.builtin.as_deref() {
            None => (false, false, false),
            Some(READ_ONLY) if alone => (true, false, false),
            Some(BUILD_TEST) if alone => (false, true, false),
            Some(BOX) if alone => (false, false, true),
            Some(b) => {
                return Err(bad(
                    "invalid_match",
                    format!(
                        "no built-in rule `{b}` (there are `allow` `read_only`, `allow` `build_test` and `allow` `box`, alone)"
                    ),
                ));
            }
        };
        if let Some(pin) = &m.script {
            let hex =
                pin.sha256.len() == 64 && pin.sha256.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
            if effect != Effect::Allow || m.input.is_none() || !assent_commands::path::is_absolute(&pin.file) || !hex {
                return Err(bad(
                    "invalid_match",
                    "`script` pins an allowed command's project script: an absolute `file` and the `sha256` (hex) of its content",
                ));
            }
        }
        if m.confine.is_some() && effect != Effect::Allow {
            return Err(bad("invalid_match", "`confine` says how an allow runs a command: it goes with `allow` only"));
        }
        if !m.reaches.is_empty() {
            if m.confine.is_none() || m.input.is_none() {
                return Err(bad(
                    "invalid_match",
                    "`reaches` names the hosts the box of an allowed command reaches: it goes with `input` and `confine`",
                ));
            }
            if crate::confine::check_hosts(&m.reaches).as_ref() != Ok(&m.reaches) {
                return Err(bad(
                    "invalid_match",
                    "`reaches` is host names or `host:port`, in lower case, sorted, each once, at most 16",
                ));
            }
        }
        let origin = m.host.as_deref().is_some_and(|h| h.contains("://"));
        Ok(Compiled {
            tool_m: tool.as_ref().map(Glob::compile_matcher),
            path_m,
            url_m,
            m,
            effect,
            tool,
            path,
            relative,
            prefix,
            exact_line,
            path_abs,
            origin,
            read_only,
            build_test,
            boxed,
        })
    }

    /// The match it was compiled from.
    pub fn source(&self) -> &RuleMatch {
        &self.m
    }

    /// The hosts a box it allows in may reach: the box rule's, the package registries (the
    /// program table's `registries`); a rule of the person's, those it names (`reaches`).
    pub(super) fn grants_hosts(&self) -> impl Iterator<Item = &str> {
        let all: &[String] = if self.boxed { &assent_commands::table::table().registries } else { &self.m.reaches };
        all.iter().map(String::as_str)
    }

    /// Whether it is a built-in rule (read-only, build-and-test, box): the broadest allows,
    /// which need the session's folder.
    pub(super) fn is_builtin(&self) -> bool {
        self.read_only || self.build_test || self.boxed
    }

    /// How an allow runs what it covers: the built-in read-only rule always confined to `read`,
    /// the build-and-test one to `workspace`.
    pub fn confine(&self) -> Option<Confine> {
        if self.read_only {
            Some(Confine::Read)
        } else if self.build_test || self.boxed {
            Some(Confine::Workspace)
        } else {
            self.m.confine
        }
    }

    /// How specific it is: fields named, then command words, then literal glob characters
    /// (which of several allows is named as the one that decided).
    pub fn specificity(&self) -> (usize, usize, usize) {
        let lit = self.m.tool.as_deref().map_or(0, literal_len) + self.m.path.as_deref().map_or(0, literal_len);
        let words = if self.m.exact { usize::MAX } else { self.prefix.as_ref().map_or(0, |p| p.words.len()) };
        (self.m.fields(), words, lit)
    }

    fn fields_match(&self, s: &Subject) -> bool {
        let f = &s.facts;
        let eq = |want: &Option<String>, have: &Option<String>| match want {
            None => true,
            Some(w) => have.as_deref().is_some_and(|h| h.eq_ignore_ascii_case(w)),
        };
        let exact = |want: &Option<String>, have: Option<&str>| want.as_deref().is_none_or(|w| have == Some(w));
        exact(&self.m.agent, Some(&s.agent))
            && exact(&self.m.kind, Some(s.kind.as_str()))
            && eq(&self.m.method, &f.method)
            && if self.origin { eq(&self.m.host, &f.origin) } else { eq(&self.m.host, &f.host) }
            && exact(&self.m.credential, f.credential.as_deref())
    }

    fn tool_is(&self, name: &str) -> bool {
        self.tool_m.as_ref().is_none_or(|g| g.is_match(name))
    }

    /// Whether its tool glob takes in the proposal's tool (any, when it names none).
    fn takes_tool(&self, tool: Option<&str>) -> bool {
        self.tool_m.is_none() || tool.is_some_and(|t| self.tool_is(t))
    }

    /// The glob matched against an absolute path (relative globs: against its place inside
    /// the working folder).
    fn glob_hits(&self, g: &GlobMatcher, abs: &str, cwd: Option<&str>) -> Option<bool> {
        if self.relative {
            let cwd = cwd?;
            let cwd = cwd.trim_end_matches('/');
            if abs == cwd {
                return Some(g.is_match("."));
            }
            return Some(abs.strip_prefix(cwd).and_then(|r| r.strip_prefix('/')).is_some_and(|r| g.is_match(r)));
        }
        Some(g.is_match(abs) || (self.effect != Effect::Allow && self.folder_of_glob(abs)))
    }

    /// Whether the path glob, as written, takes in a URL's path (`X/**` also `X`, for deny and
    /// ask); one not known is taken in by deny and ask only; a glob that names files, none.
    fn url_hits(&self, path: Option<&str>) -> bool {
        let allow = self.effect == Effect::Allow;
        match (&self.url_m, path) {
            (None, _) => false,
            (Some(_), None) => !allow,
            (Some(g), Some(p)) => g.is_match(p) || (!allow && names_folder(self.m.path.as_deref(), p)),
        }
    }

    /// `X/**` also names the folder `X` itself (for deny and ask).
    fn folder_of_glob(&self, abs: &str) -> bool {
        names_folder(self.path_abs.as_deref(), abs)
    }

    /// Whether an allow's path glob may cover writing `abs` (and its real path `real`): not
    /// executable configuration (`package.json`, a `Makefile`, `.git/config`), unless the
    /// rule names that very file, without a wildcard.
    fn covers_writing(&self, abs: &str, real: Option<&str>, cwd: Option<&str>) -> bool {
        let executable = |p: &str| assent_commands::executable::is_executable(p);
        if !executable(abs) && !real.is_some_and(executable) {
            return true;
        }
        let Some(rule) = self.path_abs.as_deref().and_then(literal_glob) else { return false };
        let named = match (self.relative, rule.strip_prefix("./"), cwd) {
            (true, Some(rest), Some(c)) => assent_commands::path::native(rest, Some(c)),
            (true, _, _) => None,
            (false, _, _) => assent_commands::path::native(&rule, None),
        };
        named.as_deref() == Some(abs)
    }

    /// Whether an allow's path glob may cover a path a command or redirection writes.
    fn covers_write_arg(&self, s: &Subject, p: &PathArg, cwd: Option<&str>) -> bool {
        match p {
            PathArg::At(a) => self.covers_writing(a, s.real_of(a).as_deref(), cwd),
            PathArg::Pattern { dir, pattern } => {
                let name = pattern.rsplit('/').next().unwrap_or(pattern);
                self.covers_writing(&format!("{}/{}", dir.trim_end_matches('/'), name), None, cwd)
            }
            PathArg::Unknown(_) | PathArg::Relative(_) => false,
        }
    }

    /// Whether the path glob takes in a path: for allow, the path and its real path must both
    /// be inside; for deny and ask, either, and a path not known matches.
    fn path_hits(&self, s: &Subject, p: &PathArg, cwd: Option<&str>) -> bool {
        let Some(g) = &self.path_m else { return true };
        let allow = self.effect == Effect::Allow;
        match p {
            PathArg::At(a) => {
                let real = s.real_of(a);
                let lex = self.glob_hits(g, a, cwd);
                let via_real = real.as_deref().and_then(|r| self.glob_hits(g, r, cwd));
                if allow {
                    lex == Some(true) && via_real.unwrap_or(true)
                } else {
                    lex != Some(false) || via_real == Some(true)
                }
            }
            PathArg::Pattern { dir, pattern } => {
                let name = pattern.rsplit('/').next().unwrap_or(pattern);
                let full = format!("{}/{}", dir.trim_end_matches('/'), name);
                if allow {
                    self.glob_hits(g, &full, cwd) == Some(true)
                } else {
                    // Any name it may expand to: the two literal prefixes overlap.
                    let rule = self.path_abs.as_deref().unwrap_or_default();
                    let (a, b) = (literal_prefix(rule), literal_prefix(&full));
                    a.starts_with(b) || b.starts_with(a) || self.glob_hits(g, &full, cwd) != Some(false)
                }
            }
            PathArg::Unknown(_) => !allow,
            // No working folder: its folder could be any, but not its name. A deny or ask
            // whose glob could never end in that name does not decide it (the call asks).
            PathArg::Relative(rel) => !allow && !s.relative_off.get() && self.may_end_in(rel),
        }
    }

    /// Whether this rule's path glob could take in some path ending in `rel` (relative, its
    /// folder unknown): its last name could be `rel`'s, or it spans folders (`**`).
    fn may_end_in(&self, rel: &str) -> bool {
        let Some(rule) = self.path_abs.as_deref() else { return true };
        let name = rel.trim_end_matches('/').rsplit('/').next().unwrap_or_default();
        if name.is_empty() || name == "." || name == ".." {
            return true;
        }
        let last = rule.trim_end_matches('/').rsplit('/').next().unwrap_or(rule);
        if last.contains("**") {
            return true;
        }
        globset::GlobBuilder::new(last)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .map_or(true, |g| g.compile_matcher().is_match(name))
    }

    fn subject_path_hits(&self, pf: &PathForm, cwd: Option<&str>, writes: bool) -> bool {
        let Some(g) = &self.path_m else { return true };
        if pf.url {
            return self.url_hits(pf.lexical.as_deref());
        }
        let Some(lex) = &pf.lexical else { return self.effect != Effect::Allow };
        let l = self.glob_hits(g, lex, cwd);
        let r = pf.real.as_deref().and_then(|r| self.glob_hits(g, r, cwd));
        if self.effect == Effect::Allow {
            l == Some(true) && r.unwrap_or(true) && (!writes || self.covers_writing(lex, pf.real.as_deref(), cwd))
        } else {
            l != Some(false) || r == Some(true)
        }
    }

    /// Whether it applies to one part of `s`.
    pub(super) fn applies(&self, s: &Subject, part: Part<'_>) -> bool {
        if !self.fields_match(s) {
            return false;
        }
        // A pinned project script: in its project, while its definition is unchanged.
        if let Some(pin) = &self.m.script
            && !super::scripts::holds(pin, s.facts.cwd.as_deref())
        {
            return false;
        }
        let f = &s.facts;
        let cwd = f.cwd.as_deref();
        let allow = self.effect == Effect::Allow;
        let tool = f.tool.as_deref();
        if self.boxed {
            return match part {
                Part::Command(c) => super::builtin::box_covers(s, c),
                Part::Redirect(_) => super::builtin::box_covers_redirect(s),
                Part::Opaque => super::builtin::box_covers_opaque(s),
                _ => false,
            };
        }
        if self.build_test || self.read_only {
            return match part {
                Part::Command(c) => super::builtin::covers(self.read_only, s, c),
                _ => false,
            };
        }
        if self.m.exact {
            // A command too long to read was kept only in part: no exact rule is it.
            let same = !f.oversized
                && self.m.input.as_deref() == f.command.as_deref().map(str::trim)
                && tool.is_some_and(|t| self.tool_is(t));
            return same && self.path_m.is_none();
        }
        match part {
            Part::Whole => {
                self.prefix.is_none()
                    && self.takes_tool(tool)
                    && (self.path_m.is_none()
                        || s.path.as_ref().is_some_and(|p| self.subject_path_hits(p, cwd, writes_its_path(s))))
            }
            Part::Opaque => {
                self.takes_tool(tool) && if allow { self.prefix.is_none() && self.path_m.is_none() } else { true }
            }
            Part::Command(c) => self.command_applies(s, c),
            Part::Redirect(r) => self.redirect_applies(s, r),
        }
    }

    /// Whether it applies to a command of the line (its words, its paths, the tool that ran it).
    fn command_applies(&self, s: &Subject, c: &Command) -> bool {
        let cwd = s.facts.cwd.as_deref();
        let allow = self.effect == Effect::Allow;
        let tool = s.facts.tool.as_deref();
        let words_ok = match &self.prefix {
            None => true,
            // An allow naming a command covers it only in a simple line (plain commands
            // joined by `&&`, `||`, `;`, `|`): never through a subshell, `&`, a loop,
            // a substitution or `bash -c`.
            Some(p) if allow => s.line.as_ref().is_some_and(assent_commands::Line::is_simple) && p.covers(c),
            Some(p) => p.matches(c),
        };
        if !words_ok {
            return false;
        }
        match &self.path_m {
            None => self.takes_tool(tool),
            // An allow names a command to cover one: a path alone allows files, never
            // the commands that touch them (`allow /w/**` never allows `rm -rf /w/x`).
            Some(_) if allow => {
                self.prefix.is_some()
                    && self.takes_tool(tool)
                    && c.reads.iter().chain(&c.writes).all(|p| self.path_hits(s, p, cwd))
                    && c.writes.iter().all(|p| self.covers_write_arg(s, p, cwd))
            }
            Some(_) => {
                // A path rule sees a command's reads as a `Read` and its writes as a
                // `Write`/`Edit`, besides the tool that ran it.
                let as_tool = tool.is_some_and(|t| self.tool_is(t));
                let reads = c.reads.iter().any(|p| self.path_hits(s, p, cwd)) && (as_tool || self.tool_is("Read"));
                let writes = c.writes.iter().any(|p| self.path_hits(s, p, cwd))
                    && (as_tool || self.tool_is("Write") || self.tool_is("Edit"));
                reads || writes
            }
        }
    }

    /// Whether it applies to a file a redirection of the line writes.
    fn redirect_applies(&self, s: &Subject, r: &Redirect) -> bool {
        let cwd = s.facts.cwd.as_deref();
        let allow = self.effect == Effect::Allow;
        let tool = s.facts.tool.as_deref();
        if self.prefix.is_some() {
            return false;
        }
        let kind_ok = covers_redirects(self.m.kind.as_deref());
        let tool_ok = self.tool_m.is_none()
            || tool.is_some_and(|t| self.tool_is(t))
            || self.tool_is("Write")
            || self.tool_is("Edit");
        match &self.path_m {
            // A redirection's file is allowed only by a rule that names files.
            None => !allow && kind_ok && tool_ok,
            Some(_) => {
                kind_ok
                    && tool_ok
                    && self.path_hits(s, &r.path, cwd)
                    && (!allow || self.covers_write_arg(s, &r.path, cwd))
            }
        }
    }

    /// Whether it matches `s`: a deny or ask, any part of it; an allow, every part (it alone
    /// would allow it).
    pub fn matches(&self, s: &Subject) -> bool {
        let mut all = parts(s).into_iter();
        if self.effect == Effect::Allow { all.all(|p| self.applies(s, p)) } else { all.any(|p| self.applies(s, p)) }
    }
}

/// Whether a proposal's own path is one it writes (or deletes): every path but a reading
/// tool's.
fn writes_its_path(s: &Subject) -> bool {
    !matches!(s.facts.tool.as_deref(), Some("Read" | "NotebookRead" | "Glob" | "Grep" | "LS"))
}

/// Whether `glob` is `X/**` with `X` the path `p` (the folder it also names).
fn names_folder(glob: Option<&str>, p: &str) -> bool {
    glob.and_then(|g| g.strip_suffix("/**")) == Some(p)
}

/// A rule's path glob as paths are compared: `~/` expanded, and on Windows lower-cased (as
/// [`assent_commands::path::native`] writes the paths it is matched against).
fn expand_home(p: &str) -> String {
    let p = match (super::in_home(p), super::home()) {
        (Some(rest), Some(h)) => format!("{}/{rest}", h.trim_end_matches('/')),
        _ => p.to_string(),
    };
    if cfg!(windows) { assent_commands::path::windows::fold(&p) } else { p }
}

/// Whether a rule naming `kind` may cover a file a redirection writes (a command's, so a tool
/// call's, or a file write's).
fn covers_redirects(kind: Option<&str>) -> bool {
    kind.is_none_or(|k| matches!(KindName::parse(k), Some(KindName::ToolCall | KindName::FileWrite)))
}
