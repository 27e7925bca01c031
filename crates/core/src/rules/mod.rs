//! Rules: what may run without asking and what is always refused, said once by the person.
//!
//! A rule has an effect (`allow`, `deny`, `ask`) and a match over what a proposal is: its
//! agent, kind, tool name (a glob), a tool's command (a prefix of whole words, or the exact
//! line), a path (a glob: absolute, or `./` for inside the working folder), an HTTP method,
//! host and credential. Every field a rule names must match.
//!
//! A command is read the way bash will run it (`assent_commands`): every command the line runs,
//! through quoting, wrappers, runners and substitutions, each redirection a file write, what
//! cannot be known before it runs opaque. Each of those is decided on its own:
//!
//! - a `deny` or `ask` prefix matches a command anywhere the line runs it (`/bin/rm`, `bash -c
//!   'rm x'`, `find -exec rm`, `git -C . push` for `git push`), and every opaque line;
//! - an `allow` prefix covers a command whose words start with it and whose further words do
//!   not raise what it does (`allow git push origin` never covers `--force`, `+main`,
//!   `--delete`); a redirection is covered only by a rule that allows writing its file; an
//!   opaque line is covered only by a rule that names no command;
//! - paths are normalized (`.`, `..`, `//`, `~`, relative to the working folder), and for
//!   `deny` and `ask` also matched by their real path; an `allow` never covers a path that
//!   leaves its glob through `..` or a link; `X/**` also covers the folder `X` for `deny`/`ask`.
//!
//! For each part, a `deny` or `ask` that matches wins over every `allow`, unless the allow lies
//! wholly inside it (`allow npm test` inside `deny npm`); among denies and asks, the narrower
//! wins, and `deny` at a tie. The proposal is denied if any part is, asked if any part is asked
//! or matched by no rule, and allowed only when every part is allowed.

mod builtin;
mod compiled;
mod globs;
mod inside;
mod patterns;
pub mod scripts;
mod set;
mod words;

pub use builtin::{builtin_box, builtin_build_test, builtin_read_only};
pub use compiled::Compiled;
pub use set::{Candidate, RuleSet, Ruling};
pub use words::{confinement_for, describe, similar};

pub use crate::confine::Confine;
use crate::time::Timestamp;
use assent_commands::{Context, Line};
pub use scripts::ScriptPin;
use serde::{Deserialize, Serialize};

/// What a rule does to a proposal it matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum Effect {
    /// Stored approved, without asking (ordered first: it yields to the others at a tie).
    Allow,
    /// Asked, as if there were no rule.
    Ask,
    /// Stored rejected, with the rule's note as the reason.
    Deny,
}

impl Effect {
    /// `allow`, `ask`, `deny`.
    pub fn as_str(self) -> &'static str {
        match self {
            Effect::Allow => "allow",
            Effect::Ask => "ask",
            Effect::Deny => "deny",
        }
    }
}

impl std::str::FromStr for Effect {
    type Err = ();
    fn from_str(s: &str) -> Result<Self, ()> {
        match s {
            "allow" => Ok(Effect::Allow),
            "ask" => Ok(Effect::Ask),
            "deny" => Ok(Effect::Deny),
            _ => Err(()),
        }
    }
}

/// What a rule matches; every field given must match.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RuleMatch {
    /// The agent's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The tool's name, a glob (`tool.call`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The leading words of the tool's command (`tool.call` with a `command` input), or with
    /// `exact`, the whole command.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<String>,
    /// `input` is the whole command line, exactly (what "allow similar" saves for a command
    /// that writes, deletes, pushes or runs code).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[cfg_attr(feature = "ts", ts(optional, as = "Option<bool>"))]
    pub exact: bool,
    /// A built-in rule (`read_only`: commands that only read inside the working folder).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub builtin: Option<String>,
    /// The file's path, a glob (file kinds, and a tool's `file_path`, `path` or
    /// `notebook_path` input).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The HTTP method.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// The HTTP host (`api.github.com`), or an origin (`https://api.github.com:443`): an
    /// `http.request`'s, or a tool's `url` input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// The credential's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credential: Option<String>,
    /// Not a field it matches: how an allow runs what it matches (confined to a profile). The
    /// built-in read-only rule is always confined to `read`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub confine: Option<Confine>,
    /// Not a field it matches: the hosts the box of a command it allows reaches (`github.com`
    /// for a push), through Assent's proxy; a command that would reach others is not allowed by
    /// it. With `confine` only. "Allow similar" sets it from the decision.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "ts", ts(as = "Option<Vec<String>>", optional))]
    pub reaches: Vec<String>,
    /// The project script an allow of a command runs (`npm run build`, `make test`), as it was
    /// when the rule was saved: the rule applies in that project only, and only while the file
    /// that defines the script is unchanged. "Allow similar" and the import set it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub script: Option<ScriptPin>,
}

impl RuleMatch {
    /// How many fields it names.
    pub fn fields(&self) -> usize {
        [
            &self.agent,
            &self.kind,
            &self.tool,
            &self.input,
            &self.path,
            &self.method,
            &self.host,
            &self.credential,
            &self.builtin,
        ]
        .iter()
        .filter(|f| f.is_some())
        .count()
    }

    /// Whether it names nothing (it matches every proposal).
    pub fn is_empty(&self) -> bool {
        self.fields() == 0
    }
}

/// What a proposal's payload says that rules can match, as its kind reads it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Facts {
    /// The tool (`tool.call`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The tool's command line (`tool.call` with a `command` input).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// The file's path (file kinds; a tool's path input).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The HTTP method a server acts on (an override header included), upper case.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// The HTTP host, lower case.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// The HTTP origin, `scheme://host:port`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    /// The credential.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credential: Option<String>,
    /// The command as an argument list, when it was given as one (each element one word).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub argv: Option<Vec<String>>,
    /// The session's working folder (a tool call's `cwd`), absolute.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The command was longer than rules read (`command` holds its start): it is opaque.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub oversized: bool,
    /// The client runs an allowed command confined when told to (`assent run`): a hook that
    /// rewrites the call says so. Only then can a rule that confines allow it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub confinable: bool,
}

/// A list of commands, each run on its own, as one line of them (one a line), when that line runs
/// exactly those commands: each a string that parses whole by itself (no quote, substitution or
/// compound command left open, nothing to continue on the next line) and holds no here-document
/// (which would read the lines after it as its text) and no line continuation. Else none.
fn commands_line(list: &[serde_json::Value]) -> Option<serde_json::Value> {
    let items: Vec<&str> = list.iter().map(serde_json::Value::as_str).collect::<Option<_>>()?;
    let whole = |c: &&str| {
        !c.trim().is_empty()
            && !c.contains("<<")
            && !c.lines().any(|l| l.ends_with('\\'))
            && !assent_commands::analyze(c, &assent_commands::Context::default()).is_opaque()
    };
    (!items.is_empty() && items.iter().all(whole)).then(|| serde_json::Value::String(items.join("\n")))
}

impl Facts {
    /// A tool call's facts from its name and input: the command (a string, or an argument list,
    /// `["bash", "-lc", "npm test"]` read as `npm test`) and a path input.
    pub fn of_tool_call(tool: &str, input: &serde_json::Value) -> Facts {
        let mut argv = None;
        let mut oversized = false;
        // Cline's `run_commands` sends `commands`, a list each run on its own: read as one line
        // of them all (so a rule allows it only when it allows every command in it), when none
        // can reach into the next; else no command rules read, and the call asks.
        let listed = input.get("commands").and_then(serde_json::Value::as_array).and_then(|a| commands_line(a));
        let command = match input.get("command").or_else(|| input.get("cmd")).or(listed.as_ref()) {
            Some(serde_json::Value::String(s)) if s.len() > MAX_COMMAND => {
                oversized = true;
                Some(start_of(s))
            }
            Some(serde_json::Value::String(s)) => Some(s.clone()),
            Some(serde_json::Value::Array(a)) => {
                let words: Option<Vec<String>> = a.iter().map(|v| v.as_str().map(str::to_string)).collect();
                words.map(|w| {
                    let shown = match w.as_slice() {
                        [sh, flag, script]
                            if assent_commands::shell::is_shell(&assent_commands::shell::identity(sh))
                                && matches!(flag.as_str(), "-c" | "-lc" | "-ic") =>
                        {
                            script.clone()
                        }
                        _ => shlex::try_join(w.iter().map(String::as_str)).unwrap_or_else(|_| w.join(" ")),
                    };
                    argv = Some(w);
                    shown
                })
            }
            _ => None,
        };
        let path = ["file_path", "path", "notebook_path"]
            .iter()
            .find_map(|k| input.get(*k).and_then(serde_json::Value::as_str))
            .map(str::to_string);
        let url = input.get("url").and_then(serde_json::Value::as_str).and_then(|u| url::Url::parse(u).ok());
        let host = url.as_ref().and_then(assent_commands::host::of_url);
        let origin = url.as_ref().and_then(origin_of);
        // A command longer than rules read is opaque whatever it says: only its start is kept,
        // so an agent's 4 MiB line is not copied again for the rules (nor stored twice).
        let (command, argv) = match (command, argv) {
            (Some(c), Some(a)) if a.iter().map(String::len).sum::<usize>() > MAX_COMMAND => {
                oversized = true;
                (Some(start_of(&c)), None)
            }
            other => other,
        };
        Facts { tool: Some(tool.to_string()), command, argv, path, host, origin, oversized, ..Default::default() }
    }
}

/// The longest command rules read; a longer one is opaque.
const MAX_COMMAND: usize = assent_commands::shell::MAX_LEN;

/// The start of a command too long to read (what is kept to show and match exactly).
fn start_of(s: &str) -> String {
    let mut end = MAX_COMMAND.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_string()
}

/// A folder as rules compare it: absolute and normalized (none when relative).
pub fn normalize_folder(p: &str) -> Option<String> {
    assent_commands::path::native(p, None).filter(|_| assent_commands::path::is_absolute(p))
}

/// A URL's origin as rules see it: `scheme://host:port`, the host normalized.
pub fn origin_of(u: &url::Url) -> Option<String> {
    Some(format!("{}://{}:{}", u.scheme(), assent_commands::host::of_url(u)?, u.port_or_known_default()?))
}

/// A path as rules compare it: normalized, and where it exists, its real path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PathForm {
    /// Absolute and normalized; none when relative with no working folder.
    pub(crate) lexical: Option<String>,
    /// Links resolved, when it (or a parent) exists.
    pub(crate) real: Option<String>,
    /// As given.
    pub(crate) given: String,
    /// A URL's path (an `http.request`'s), compared as written on every platform.
    pub(crate) url: bool,
}

/// What a proposal is, as rules see it, with its command read once.
#[derive(Debug, Clone)]
pub struct Subject {
    /// The agent.
    pub agent: String,
    /// The kind.
    pub kind: crate::payloads::KindName,
    /// What its payload says.
    pub facts: Facts,
    /// Its command, read (tool calls with a command).
    pub(crate) line: Option<Line>,
    /// Its path, normalized.
    pub(crate) path: Option<PathForm>,
    /// The real path of every path its command touches and of its working folder, found once
    /// (each rule compares them).
    reals: std::collections::HashMap<String, Option<String>>,
    /// The confinements its command can run under: the client said it runs one so (and there
    /// is a command), and the host can confine so (the engine keeps only those). A rule that
    /// confines applies only under one of these.
    pub can_confine: Vec<Confine>,
    /// Whether its working folder lies in one of the person's work roots (true when none are
    /// declared); the built-in rules allow nothing outside them.
    pub in_work_roots: bool,
    /// The home folder, as rules compare it, read once ([`home`]).
    pub(crate) home: Option<String>,
    /// While set, a relative path with no working folder to resolve it takes in no path rule:
    /// how the rule set tells a deny that refuses only through such a path (which then asks).
    pub(crate) relative_off: std::cell::Cell<bool>,
}

/// Whether a tool runs PowerShell lines (Claude Code's `PowerShell` tool).
fn is_powershell(tool: &str) -> bool {
    ["PowerShell", "pwsh"].iter().any(|t| tool.eq_ignore_ascii_case(t))
}

/// The home folder as rules compare it (`HOME`; on Windows `USERPROFILE`).
pub(crate) fn home() -> Option<String> {
    let var = if cfg!(windows) { "USERPROFILE" } else { "HOME" };
    std::env::var(var).ok().as_deref().and_then(normalize_folder)
}

/// What follows `~/` (on Windows also `~\\`): a path in the home folder.
pub(crate) fn in_home(p: &str) -> Option<&str> {
    p.strip_prefix("~/").or_else(|| p.strip_prefix("~\\").filter(|_| cfg!(windows)))
}

impl Subject {
    /// A subject, its command read and its path normalized once.
    pub fn new(agent: impl Into<String>, kind: crate::payloads::KindName, mut facts: Facts) -> Subject {
        // On Windows the working folder is compared as its paths are: lower-cased.
        if cfg!(windows) {
            facts.cwd = facts.cwd.map(|c| assent_commands::path::native(&c, None).unwrap_or(c));
        }
        let ctx = Context { cwd: facts.cwd.clone(), home: home() };
        let line = match (&facts.argv, &facts.command) {
            _ if facts.oversized => Some(assent_commands::Line::opaque(format!(
                "a command longer than {} KiB",
                assent_commands::shell::MAX_LEN / 1024
            ))),
            // Claude Code's PowerShell tool (on Windows): its lines are PowerShell's, which the
            // reader does not read (`;`, quoting, `--%` and aliases differ from bash's).
            (_, Some(_)) if facts.tool.as_deref().is_some_and(is_powershell) => {
                Some(assent_commands::Line::opaque("a PowerShell line, which Assent does not read"))
            }
            (Some(argv), _) => Some(assent_commands::analyze_argv(argv, &ctx)),
            (None, Some(c)) => Some(assent_commands::analyze(c, &ctx)),
            _ => None,
        };
        // A command's paths are the shell's: on Windows not comparable with the rules' own.
        let line = if cfg!(windows) { line.map(assent_commands::Line::without_paths) } else { line };
        let path = facts.path.as_ref().map(|p| {
            if kind == crate::payloads::KindName::HttpRequest {
                let lexical = assent_commands::path::normalize(p, None);
                return PathForm { lexical, real: None, given: p.clone(), url: true };
            }
            let expanded = match (in_home(p), &ctx.home) {
                (Some(rest), Some(h)) => format!("{h}/{rest}"),
                _ => p.clone(),
            };
            let lexical = assent_commands::path::native(&expanded, ctx.cwd.as_deref());
            let real = lexical.as_deref().and_then(assent_commands::path::real);
            PathForm { lexical, real, given: p.clone(), url: false }
        });
        let mut reals = std::collections::HashMap::new();
        let touched = line.iter().flat_map(|l| {
            let of_commands = l.commands.iter().flat_map(|c| c.reads.iter().chain(&c.writes));
            of_commands.chain(l.redirects.iter().map(|r| &r.path))
        });
        for p in touched {
            if let assent_commands::PathArg::At(a) | assent_commands::PathArg::Pattern { dir: a, .. } = p {
                reals.entry(a.clone()).or_insert_with(|| assent_commands::path::real(a));
            }
        }
        if let Some(c) = &ctx.cwd {
            reals.entry(c.clone()).or_insert_with(|| assent_commands::path::real(c));
        }
        let can_confine = if facts.confinable && line.is_some() { Confine::ALL.to_vec() } else { Vec::new() };
        Subject {
            agent: agent.into(),
            kind,
            facts,
            line,
            path,
            reals,
            can_confine,
            in_work_roots: true,
            home: ctx.home,
            relative_off: std::cell::Cell::new(false),
        }
    }

    /// The real path of a path it touches (found once, when it was read).
    pub(crate) fn real_of(&self, p: &str) -> Option<String> {
        match self.reals.get(p) {
            Some(r) => r.clone(),
            None => assent_commands::path::real(p),
        }
    }

    /// Its command, read.
    pub fn line(&self) -> Option<&Line> {
        self.line.as_ref()
    }

    /// Takes `roots` as the person's work roots: its working folder must lie in one of them,
    /// by its path and by its real path (none declared: any).
    pub fn within_work_roots(&mut self, roots: &[String]) {
        if roots.is_empty() {
            return;
        }
        let Some(cwd) = self.facts.cwd.clone() else { return };
        let real = self.real_of(&cwd);
        let inside = |p: &str| roots.iter().any(|r| assent_commands::path::inside(p, r));
        self.in_work_roots = inside(&cwd) && real.as_deref().is_none_or(inside);
    }
}

/// Why a rule cannot be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct BadRule {
    /// Stable code (`invalid_glob`, `invalid_input`, `invalid_match`, ...).
    pub code: &'static str,
    /// What is wrong.
    pub message: String,
}

fn bad(code: &'static str, message: impl Into<String>) -> BadRule {
    BadRule { code, message: message.into() }
}

/// A rule as it is kept and shown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Rule {
    /// Its id (`r_...`).
    pub id: String,
    /// What it does.
    pub effect: Effect,
    /// What it matches.
    #[serde(rename = "match")]
    pub matches: RuleMatch,
    /// Set when it deliberately matches every proposal.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub everything: bool,
    /// The person's note (a denied proposal's reason).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The rule in plain words.
    pub description: String,
    /// Who made it (`owner`, or the person's name on a team store).
    pub created_by: String,
    /// The node (Assent server) it was made on, on a team store.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub node: Option<String>,
    /// Through which channel.
    pub created_channel: crate::proposal::Channel,
    /// When.
    pub created_at: Timestamp,
    /// When it stops matching (none: until removed).
    pub expires_at: Option<Timestamp>,
    /// How many proposals it decided or sent to the inbox (the winning rule only).
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub matched: u64,
}

/// One entry of the rule log: a rule added or removed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RuleLogEntry {
    /// Position in the log.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub seq: i64,
    /// The rule.
    pub rule_id: String,
    /// `added` or `removed`.
    pub event: String,
    /// Who.
    pub actor: String,
    /// Through which channel.
    pub channel: crate::proposal::Channel,
    /// When.
    pub at: Timestamp,
    /// The rule as it was.
    pub rule: Rule,
}

#[cfg(test)]
mod tests;
