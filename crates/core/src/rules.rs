//! Rules: what may run without asking and what is always refused, said once by the person.
//!
//! A rule has an effect (`allow`, `deny`, `ask`) and a match over what a proposal is: its
//! agent, kind, tool name (a glob), a tool's command prefix (whole words), a file path (a glob;
//! `**` crosses folders, `*` does not), an HTTP method and host, and a credential. Every field a
//! rule names must match. When a proposal arrives, the rules that match it are ranked:
//!
//! 1. the rule naming more fields wins;
//! 2. then the one whose command prefix has more words;
//! 3. then the one whose globs (tool, path) have more literal characters;
//! 4. then `deny` beats `ask` beats `allow`;
//! 5. then the rule made first.
//!
//! With no match the answer is `ask`. A rule never matches from its expiry on, to the
//! millisecond.
//!
//! A command prefix of an `allow` rule matches only one plain command: never a command that
//! chains or substitutes another one (`&&`, `||`, `;`, `|`, `&`, a newline, `$(...)`,
//! backticks, `<(...)`, `>(...)`), so `npm test && rm -rf ~` is not `npm test`, nor one that
//! starts with an assignment or a wrapper (`FOO=1 npm test`, `sudo npm test`). A command prefix
//! of a `deny` or `ask` rule matches if any one of the commands a line runs starts with it, seen
//! with and without leading assignments and wrappers (`nohup`, `sudo`, `env`, `timeout 10`, ...):
//! `deny rm` refuses `ls && rm -rf x`, `echo $(rm -rf x)` and `sudo rm x`.

use crate::time::Timestamp;
use globset::{Glob, GlobBuilder, GlobMatcher, GlobSet, GlobSetBuilder};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// What a rule does to a proposal it matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
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
    /// The leading words of the tool's command (`tool.call` with a `command` input).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<String>,
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
}

impl RuleMatch {
    /// How many fields it names.
    pub fn fields(&self) -> usize {
        [&self.agent, &self.kind, &self.tool, &self.input, &self.path, &self.method, &self.host, &self.credential]
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
}

impl Facts {
    /// A tool call's facts from its name and input: the command (a string, or an argument list,
    /// `["bash", "-lc", "npm test"]` read as `npm test`) and a path input.
    pub fn of_tool_call(tool: &str, input: &serde_json::Value) -> Facts {
        let command = match input.get("command").or_else(|| input.get("cmd")) {
            Some(serde_json::Value::String(s)) => Some(s.clone()),
            Some(serde_json::Value::Array(a)) => {
                let words: Option<Vec<&str>> = a.iter().map(serde_json::Value::as_str).collect();
                words.and_then(|w| match w.as_slice() {
                    [sh, flag, script] if is_shell(sh) && matches!(*flag, "-c" | "-lc" | "-ic") => {
                        Some(script.to_string())
                    }
                    _ => shlex::try_join(w.iter().copied()).ok(),
                })
            }
            _ => None,
        };
        let path = ["file_path", "path", "notebook_path"]
            .iter()
            .find_map(|k| input.get(*k).and_then(serde_json::Value::as_str))
            .map(str::to_string);
        let url = input.get("url").and_then(serde_json::Value::as_str).and_then(|u| url::Url::parse(u).ok());
        let host = url.as_ref().and_then(|u| u.host_str()).map(|h| h.trim_end_matches('.').to_ascii_lowercase());
        let origin = url
            .as_ref()
            .and_then(|u| Some(format!("{}://{}:{}", u.scheme(), u.host_str()?, u.port_or_known_default()?)));
        Facts { tool: Some(tool.to_string()), command, path, host, origin, ..Default::default() }
    }
}

fn is_shell(s: &str) -> bool {
    let name = s.rsplit('/').next().unwrap_or(s);
    matches!(name, "sh" | "bash" | "zsh" | "dash")
}

/// What a proposal is, as rules see it, with its command read once.
#[derive(Debug, Clone, Default)]
pub struct Subject {
    /// The agent.
    pub agent: String,
    /// The kind.
    pub kind: String,
    /// What its payload says.
    pub facts: Facts,
    /// The command's words when it is one plain command (what `allow` prefixes see).
    plain: Option<Vec<String>>,
    /// Every command the line runs, with and without leading assignments and wrappers (what
    /// `deny` and `ask` prefixes see).
    parts: Vec<Vec<String>>,
}

impl Subject {
    /// A subject, its command split once.
    pub fn new(agent: impl Into<String>, kind: impl Into<String>, facts: Facts) -> Subject {
        let (plain, parts) = match facts.command.as_deref() {
            None => (None, Vec::new()),
            Some(c) => (command_words(c), every_command(c)),
        };
        Subject { agent: agent.into(), kind: kind.into(), facts, plain, parts }
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

/// A match, compiled for one effect.
#[derive(Debug, Clone)]
pub struct Compiled {
    m: RuleMatch,
    effect: Effect,
    tool: Option<Glob>,
    path: Option<Glob>,
    tool_m: Option<GlobMatcher>,
    path_m: Option<GlobMatcher>,
    words: Option<Vec<String>>,
    origin: bool,
}

fn glob(pattern: &str, literal_separator: bool) -> Result<Glob, BadRule> {
    GlobBuilder::new(pattern)
        .literal_separator(literal_separator)
        .build()
        .map_err(|e| bad("invalid_glob", format!("`{pattern}` is not a glob: {e}")))
}

/// Literal characters of a glob: what is left once its wildcards are taken out.
fn literal_len(pattern: &str) -> usize {
    let (mut n, mut class) = (0, false);
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        match c {
            '[' if !class => class = true,
            ']' if class => class = false,
            '\\' => {
                chars.next();
                n += 1;
            }
            '*' | '?' | '{' | '}' | ',' => {}
            _ if class => {}
            _ => n += 1,
        }
    }
    n
}

impl Compiled {
    /// Compiles a match for an effect: its globs and its command's words.
    pub fn new(m: RuleMatch, effect: Effect) -> Result<Self, BadRule> {
        let tool = m.tool.as_deref().map(|t| glob(t, false)).transpose()?;
        let path = m.path.as_deref().map(|p| glob(p, true)).transpose()?;
        let words = match m.input.as_deref() {
            None => None,
            Some(i) => Some(command_words(i).ok_or_else(|| {
                bad(
                    "invalid_input",
                    format!("`{i}` is not one plain command (no chaining, substitution or unclosed quotes)"),
                )
            })?),
        };
        if words.as_ref().is_some_and(Vec::is_empty) {
            return Err(bad("invalid_input", "a command prefix names at least one word"));
        }
        let origin = m.host.as_deref().is_some_and(|h| h.contains("://"));
        Ok(Compiled {
            tool_m: tool.as_ref().map(Glob::compile_matcher),
            path_m: path.as_ref().map(Glob::compile_matcher),
            m,
            effect,
            tool,
            path,
            words,
            origin,
        })
    }

    /// The match it was compiled from.
    pub fn source(&self) -> &RuleMatch {
        &self.m
    }

    /// How specific it is: fields named, then command words, then literal glob characters.
    pub fn specificity(&self) -> (usize, usize, usize) {
        let lit = self.m.tool.as_deref().map_or(0, literal_len) + self.m.path.as_deref().map_or(0, literal_len);
        (self.m.fields(), self.words.as_ref().map_or(0, Vec::len), lit)
    }

    /// Whether `s` matches every field named.
    pub fn matches(&self, s: &Subject) -> bool {
        let f = &s.facts;
        let eq = |want: &Option<String>, have: &Option<String>| match want {
            None => true,
            Some(w) => have.as_deref().is_some_and(|h| h.eq_ignore_ascii_case(w)),
        };
        let exact = |want: &Option<String>, have: Option<&str>| want.as_deref().is_none_or(|w| have == Some(w));
        // The cheap comparisons first, the globs last: most candidates fail early.
        exact(&self.m.agent, Some(&s.agent))
            && exact(&self.m.kind, Some(&s.kind))
            && eq(&self.m.method, &f.method)
            && if self.origin { eq(&self.m.host, &f.origin) } else { eq(&self.m.host, &f.host) }
            && exact(&self.m.credential, f.credential.as_deref())
            && (self.tool_m.is_none() || f.tool.is_some())
            && (self.path_m.is_none() || f.path.is_some())
            && self.words.as_ref().is_none_or(|w| self.command_matches(s, w))
            && self.tool_m.as_ref().is_none_or(|g| f.tool.as_deref().is_some_and(|t| g.is_match(t)))
            && self.path_m.as_ref().is_none_or(|g| f.path.as_deref().is_some_and(|p| g.is_match(p)))
    }

    fn command_matches(&self, s: &Subject, prefix: &[String]) -> bool {
        match self.effect {
            Effect::Allow => s.plain.as_deref().is_some_and(|w| has_prefix(w, prefix)),
            Effect::Ask | Effect::Deny => s.parts.iter().any(|w| has_prefix(w, prefix)),
        }
    }
}

/// The words of one plain command, or none when it chains or substitutes another command (or
/// does not parse).
pub fn command_words(cmd: &str) -> Option<Vec<String>> {
    if chains(cmd) {
        return None;
    }
    shlex::split(cmd)
}

/// Where a command line runs more than one command: an operator outside quotes, a newline
/// anywhere, or a substitution outside single quotes. Calls `cut(at, len)` for each, in order;
/// stops at the first when `cut` returns false.
fn separators(cmd: &str, mut cut: impl FnMut(usize, usize) -> bool) {
    let (mut single, mut double, mut escaped) = (false, false, false);
    let mut prev = '\0';
    for (i, c) in cmd.char_indices() {
        if escaped {
            escaped = false;
            prev = c;
            continue;
        }
        let sep = match c {
            '\n' | '\r' => Some((i, 1)),
            '\\' if !single => {
                escaped = true;
                None
            }
            '\'' if !double => {
                single = !single;
                None
            }
            '"' if !single => {
                double = !double;
                None
            }
            '`' if !single => Some((i, 1)),
            '(' if !single && prev == '$' => Some((i - 1, 2)),
            '(' if !single && !double && (prev == '<' || prev == '>') => Some((i - 1, 2)),
            ')' if !single && !double => Some((i, 1)),
            ';' | '&' | '|' if !single && !double => Some((i, 1)),
            _ => None,
        };
        if let Some((at, len)) = sep
            && !cut(at, len)
        {
            return;
        }
        prev = c;
    }
}

/// Whether a command runs more than one command.
fn chains(cmd: &str) -> bool {
    let mut found = false;
    separators(cmd, |_, _| {
        found = true;
        false
    });
    found
}

/// Words a deny rule looks past at the start of a command.
const WRAPPERS: &[&str] = &[
    "nohup", "time", "command", "builtin", "exec", "noglob", "sudo", "doas", "env", "nice", "timeout", "stdbuf",
    "xargs",
];

fn is_assignment(w: &str) -> bool {
    match w.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit())
        }
        None => false,
    }
}

fn is_wrapper_argument(w: &str) -> bool {
    w.starts_with('-') || w.chars().next().is_some_and(|c| c.is_ascii_digit()) || is_assignment(w)
}

/// Every command a line runs, each with and without its leading assignments and wrappers.
fn every_command(cmd: &str) -> Vec<Vec<String>> {
    let mut pieces = Vec::new();
    let mut start = 0;
    separators(cmd, |at, len| {
        pieces.push(&cmd[start..at]);
        start = at + len;
        true
    });
    pieces.push(&cmd[start..]);
    let mut out = Vec::new();
    for piece in pieces {
        let words = shlex::split(piece).unwrap_or_else(|| {
            // A piece cut out of a quoted string: its words, quotes dropped.
            piece.split_whitespace().map(|w| w.replace(['"', '\''], "")).collect()
        });
        if words.is_empty() {
            continue;
        }
        let mut rest = &words[..];
        loop {
            match rest.first() {
                Some(w) if is_assignment(w) => rest = &rest[1..],
                Some(w) if WRAPPERS.contains(&w.rsplit('/').next().unwrap_or(w)) => {
                    rest = &rest[1..];
                    while rest.first().is_some_and(|w| is_wrapper_argument(w)) {
                        rest = &rest[1..];
                    }
                }
                _ => break,
            }
        }
        if rest.len() != words.len() && !rest.is_empty() {
            out.push(rest.to_vec());
        }
        out.push(words);
    }
    out
}

fn has_prefix(words: &[String], prefix: &[String]) -> bool {
    words.len() >= prefix.len() && words.iter().zip(prefix).all(|(a, b)| a == b)
}

/// One rule, compiled, with what it needs to be chosen.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// The rule's id.
    pub id: String,
    /// Its effect.
    pub effect: Effect,
    /// Its match.
    pub compiled: Compiled,
    /// When it stops matching.
    pub expires_at: Option<Timestamp>,
    /// Its note (a denied proposal's reason).
    pub note: Option<String>,
}

impl Candidate {
    fn live(&self, now: Timestamp) -> bool {
        self.expires_at.is_none_or(|e| now.0 < e.0)
    }

    fn rank(&self) -> ((usize, usize, usize), Effect) {
        (self.compiled.specificity(), self.effect)
    }
}

/// Rules compiled together: a proposal is checked against the few rules that can match it,
/// found through a glob set over tool names, one over paths, and an index of command prefixes
/// by their first word, instead of against every rule in turn.
#[derive(Debug, Default)]
pub struct RuleSet {
    rules: Vec<Candidate>,
    tools: GlobSet,
    tool_rules: Vec<usize>,
    paths: GlobSet,
    path_rules: Vec<usize>,
    by_word: HashMap<String, Vec<usize>>,
    rest: Vec<usize>,
}

impl RuleSet {
    /// Compiles the set.
    pub fn new(rules: Vec<Candidate>) -> Result<RuleSet, BadRule> {
        let (mut tools, mut paths) = (GlobSetBuilder::new(), GlobSetBuilder::new());
        let mut set = RuleSet::default();
        for (i, r) in rules.iter().enumerate() {
            let c = &r.compiled;
            if let Some(w) = c.words.as_ref().and_then(|w| w.first()) {
                set.by_word.entry(w.clone()).or_default().push(i);
            } else if let Some(g) = &c.tool {
                tools.add(g.clone());
                set.tool_rules.push(i);
            } else if let Some(g) = &c.path {
                paths.add(g.clone());
                set.path_rules.push(i);
            } else {
                set.rest.push(i);
            }
        }
        let built = |b: GlobSetBuilder| b.build().map_err(|e| bad("invalid_glob", format!("the rules' globs: {e}")));
        set.tools = built(tools)?;
        set.paths = built(paths)?;
        set.rules = rules;
        Ok(set)
    }

    /// How many rules it holds.
    pub fn len(&self) -> usize {
        self.rules.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The rules, in the order given.
    pub fn rules(&self) -> &[Candidate] {
        &self.rules
    }

    /// Positions of every rule that matches `s`, expired or not, each once.
    pub fn matching(&self, s: &Subject) -> Vec<usize> {
        let mut maybe: Vec<usize> = self.rest.clone();
        if let Some(t) = &s.facts.tool {
            maybe.extend(self.tools.matches(t).into_iter().map(|i| self.tool_rules[i]));
        }
        if let Some(p) = &s.facts.path {
            maybe.extend(self.paths.matches(p).into_iter().map(|i| self.path_rules[i]));
        }
        if !self.by_word.is_empty() {
            let firsts = s.plain.iter().chain(&s.parts).filter_map(|w| w.first());
            for w in firsts {
                if let Some(rs) = self.by_word.get(w) {
                    maybe.extend_from_slice(rs);
                }
            }
        }
        maybe.sort_unstable();
        maybe.dedup();
        maybe.retain(|&i| self.rules[i].compiled.matches(s));
        maybe
    }

    /// The rule that decides for `s` at `now` (see the module's ranking); none when nothing
    /// matches (the answer is then `ask`).
    pub fn decide(&self, s: &Subject, now: Timestamp) -> Option<&Candidate> {
        self.matching(s).into_iter().map(|i| &self.rules[i]).filter(|r| r.live(now)).fold(
            None,
            |best: Option<&Candidate>, r| match best {
                Some(b) if b.rank() >= r.rank() => Some(b),
                _ => Some(r),
            },
        )
    }
}

/// A rule as it is kept and shown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
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
    /// Who made it (`owner`).
    pub created_by: String,
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

fn code(s: &str) -> String {
    format!("`{}`", s.replace('`', "'"))
}

/// A rule in plain words: "allow agent default to run `npm test …` (tool Bash)".
pub fn describe(effect: Effect, m: &RuleMatch) -> String {
    let who = match &m.agent {
        Some(a) => format!("agent {a}"),
        None => "any agent".to_string(),
    };
    let mut what = Vec::new();
    if let Some(i) = &m.input {
        what.push(format!("run {}", code(&format!("{i} …"))));
    }
    if let Some(t) = &m.tool {
        let glob = t.contains(['*', '?', '[', '{']);
        what.push(if m.input.is_some() {
            format!("with tool {}", code(t))
        } else if glob {
            format!("call tools matching {}", code(t))
        } else {
            format!("call tool {}", code(t))
        });
    }
    if let Some(p) = &m.path {
        let verb = match m.kind.as_deref() {
            Some("file.write") => "write files matching",
            Some("file.delete") => "delete files matching",
            _ if m.tool.is_some() || m.input.is_some() => "on files matching",
            _ => "write or delete files matching",
        };
        what.push(format!("{verb} {}", code(p)));
    }
    if m.tool.is_some() && m.method.is_none() {
        if let Some(h) = &m.host {
            what.push(format!("for {h}"));
        }
    } else if m.method.is_some() || m.host.is_some() {
        let method = m.method.as_deref().map(|x| format!("{} ", x.to_ascii_uppercase())).unwrap_or_default();
        let to = m.host.as_deref().map(|h| format!(" to {h}")).unwrap_or_default();
        what.push(format!("send {method}requests{to}"));
    }
    if let Some(c) = &m.credential {
        what.push(format!("with credential {}", code(c)));
    }
    let kind_only = what.is_empty();
    if let Some(k) = &m.kind
        && (kind_only || (m.path.is_none() && m.method.is_none() && m.host.is_none() && m.input.is_none()))
        && !(k == "tool.call" && m.tool.is_some())
    {
        what.insert(0, format!("propose {k}"));
    }
    if what.is_empty() {
        what.push("do anything".to_string());
    }
    let action = what.join(" ");
    match effect {
        Effect::Allow => format!("allow {who} to {action}"),
        Effect::Ask => format!("always ask before {who} may {action}"),
        Effect::Deny => format!("refuse to let {who} {action}"),
    }
}

/// The narrowest useful rule allowing what a proposal does again: this agent and kind; a
/// tool's name and, for a command, its leading words (up to three that are not options, or the
/// whole command when it has only one such word); a file's folder (not below it); an HTTP
/// method, host and credential.
pub fn similar(s: &Subject) -> RuleMatch {
    let f = &s.facts;
    let mut m = RuleMatch { agent: Some(s.agent.clone()), kind: Some(s.kind.clone()), ..Default::default() };
    m.tool = f.tool.as_deref().map(globset::escape);
    if let Some(words) = &s.plain {
        let lead: Vec<&String> = words.iter().take_while(|w| !w.starts_with('-')).take(3).collect();
        let chosen: Vec<&String> = if lead.len() <= 1 { words.iter().collect() } else { lead };
        if let Ok(joined) = shlex::try_join(chosen.iter().map(|w| w.as_str())) {
            m.input = Some(joined);
        }
    }
    if let Some(p) = &f.path
        && let Some((dir, _)) = p.rsplit_once('/')
    {
        m.path = Some(format!("{}/*", globset::escape(if dir.is_empty() { "" } else { dir })));
    }
    m.method = f.method.clone();
    m.host = f.host.clone();
    m.credential = f.credential.clone();
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(id: &str, effect: Effect, m: RuleMatch) -> Candidate {
        Candidate {
            id: id.into(),
            effect,
            compiled: Compiled::new(m, effect).unwrap_or_else(|e| panic!("{e}")),
            expires_at: None,
            note: None,
        }
    }

    fn set(rules: Vec<Candidate>) -> RuleSet {
        RuleSet::new(rules).unwrap_or_else(|e| panic!("{e}"))
    }

    fn bash(cmd: &str) -> Subject {
        Subject::new(
            "default",
            "tool.call",
            Facts { tool: Some("Bash".into()), command: Some(cmd.into()), ..Default::default() },
        )
    }

    fn input(i: &str) -> RuleMatch {
        RuleMatch { input: Some(i.into()), ..Default::default() }
    }

    fn pick<'a>(rules: &'a RuleSet, s: &Subject) -> Option<&'a str> {
        rules.decide(s, Timestamp(0)).map(|r| r.id.as_str())
    }

    #[test]
    fn an_allowed_command_prefix_matches_whole_words_of_one_plain_command() {
        let r = set(vec![rule("r1", Effect::Allow, input("npm test"))]);
        let cases = [
            ("npm test", true),
            ("npm test -- --watch", true),
            ("npm  test", true),
            ("npm testing", false),
            ("npm", false),
            ("npm test && rm -rf ~", false),
            ("npm test || true", false),
            ("npm test; rm x", false),
            ("npm test | sh", false),
            ("npm test & rm x", false),
            ("npm test\nrm x", false),
            ("npm test $(rm x)", false),
            ("npm test `rm x`", false),
            ("npm test <(rm x)", false),
            ("npm test \"$(rm x)\"", false),
            ("npm test 'a;b'", true),
            ("npm test '$(x)'", true),
            ("npm test \"unclosed", false),
            ("FOO=1 npm test", false),
            ("sudo npm test", false),
        ];
        for (cmd, want) in cases {
            assert_eq!(pick(&r, &bash(cmd)).is_some(), want, "{cmd:?}");
        }
    }

    #[test]
    fn a_denied_command_prefix_matches_any_command_a_line_runs() {
        let r = set(vec![rule("no-rm", Effect::Deny, input("rm"))]);
        let cases = [
            ("rm -rf x", true),
            ("ls && rm -rf x", true),
            ("ls; rm x", true),
            ("ls | xargs rm", true),
            ("echo $(rm -rf x)", true),
            ("echo \"$(rm -rf x)\"", true),
            ("echo `rm x`", true),
            ("sudo rm x", true),
            ("FOO=1 rm x", true),
            ("nohup rm x &", true),
            ("timeout 10 rm x", true),
            ("/usr/bin/env -i rm x", true),
            ("ls\nrm x", true),
            ("git rm x", false),
            ("echo 'rm x'", false),
            ("rmdir x", false),
        ];
        for (cmd, want) in cases {
            assert_eq!(pick(&r, &bash(cmd)).is_some(), want, "{cmd:?}");
        }
        let sudo = set(vec![rule("no-sudo", Effect::Ask, input("sudo"))]);
        assert!(pick(&sudo, &bash("sudo rm x")).is_some(), "a wrapper can itself be denied");
    }

    #[test]
    fn the_ranking_table() {
        let m = |tool: Option<&str>, inp: Option<&str>, path: Option<&str>, agent: Option<&str>| RuleMatch {
            tool: tool.map(str::to_string),
            input: inp.map(str::to_string),
            path: path.map(str::to_string),
            agent: agent.map(str::to_string),
            ..Default::default()
        };
        let rules = set(vec![
            rule("allow-bash", Effect::Allow, m(Some("Bash"), None, None, None)),
            rule("ask-bash", Effect::Ask, m(Some("Bash"), None, None, None)),
            rule("deny-bash-rm", Effect::Deny, m(Some("Bash"), Some("rm"), None, None)),
            rule("deny-npm", Effect::Deny, m(Some("Bash"), Some("npm"), None, None)),
            rule("allow-npm-test", Effect::Allow, m(Some("Bash"), Some("npm test"), None, None)),
            rule("allow-default-git", Effect::Allow, m(Some("Bash"), Some("git"), None, Some("default"))),
            rule("deny-git-push", Effect::Deny, m(Some("Bash"), Some("git push"), None, None)),
            rule("deny-w", Effect::Deny, m(None, None, Some("/w/**"), None)),
            rule("allow-w-src", Effect::Allow, m(None, None, Some("/w/src/**"), None)),
            rule("ask-tmp", Effect::Ask, m(None, None, Some("/tmp/**"), None)),
            rule("allow-tmp", Effect::Allow, m(None, None, Some("/tmp/**"), None)),
        ]);
        let file = |p: &str| Subject::new("a", "file.write", Facts { path: Some(p.into()), ..Default::default() });
        let cases: [(Subject, Option<&str>); 12] = [
            // Two fields (tool, input) beat one (tool).
            (bash("rm -rf x"), Some("deny-bash-rm")),
            // Same fields: ask beats allow.
            (bash("ls"), Some("ask-bash")),
            // Same fields, more words: `npm test` beats `npm`.
            (bash("npm test"), Some("allow-npm-test")),
            (bash("npm publish"), Some("deny-npm")),
            // Three fields (agent, tool, input) beat two, whatever the effect.
            (bash("git push"), Some("allow-default-git")),
            (Subject::new("other", "tool.call", bash("git push").facts), Some("deny-git-push")),
            // A chained command never meets an allow prefix; both denies match it, and at a full
            // tie the rule made first wins.
            (bash("npm test && rm x"), Some("deny-bash-rm")),
            (bash("ls && rm x"), Some("deny-bash-rm")),
            // Paths: more literal characters win.
            (file("/w/src/a.rs"), Some("allow-w-src")),
            (file("/w/b.rs"), Some("deny-w")),
            (file("/tmp/x"), Some("ask-tmp")),
            (file("/home/x"), None),
        ];
        for (s, want) in cases {
            assert_eq!(pick(&rules, &s), want, "{:?} {:?}", s.facts.command, s.facts.path);
        }
    }

    #[test]
    fn path_globs_cross_folders_only_with_two_stars() {
        let m = |p: &str| RuleMatch { path: Some(p.into()), ..Default::default() };
        let file = |p: &str| Subject::new("a", "file.write", Facts { path: Some(p.into()), ..Default::default() });
        let one = set(vec![rule("r", Effect::Allow, m("/w/src/*.rs"))]);
        assert!(pick(&one, &file("/w/src/a.rs")).is_some());
        assert!(pick(&one, &file("/w/src/deep/a.rs")).is_none());
        let deep = set(vec![rule("r", Effect::Allow, m("/w/src/**"))]);
        assert!(pick(&deep, &file("/w/src/deep/a.rs")).is_some());
        assert!(pick(&deep, &file("/w/other/a.rs")).is_none());
        assert_eq!(Compiled::new(m("/w/["), Effect::Allow).err().map(|e| e.code), Some("invalid_glob"));
    }

    #[test]
    fn an_expired_rule_stops_matching_at_its_expiry() {
        let mut r = rule("r", Effect::Allow, RuleMatch { tool: Some("Bash".into()), ..Default::default() });
        r.expires_at = Some(Timestamp(10_000));
        let rules = set(vec![r]);
        assert!(rules.decide(&bash("ls"), Timestamp(9_999)).is_some());
        assert!(rules.decide(&bash("ls"), Timestamp(10_000)).is_none());
        assert_eq!(rules.matching(&bash("ls")), vec![0], "matching ignores expiry");
    }

    #[test]
    fn hosts_methods_and_credentials_match_exactly() {
        let m = RuleMatch {
            method: Some("GET".into()),
            host: Some("api.github.com".into()),
            credential: Some("gh".into()),
            ..Default::default()
        };
        let rules = set(vec![rule("r", Effect::Allow, m)]);
        let req = |method: &str, host: &str, cred: Option<&str>| {
            let facts = Facts {
                method: Some(method.into()),
                host: Some(host.into()),
                origin: Some(format!("https://{host}:443")),
                credential: cred.map(str::to_string),
                ..Default::default()
            };
            Subject::new("a", "http.request", facts)
        };
        assert!(pick(&rules, &req("GET", "API.github.com", Some("gh"))).is_some());
        assert!(pick(&rules, &req("POST", "api.github.com", Some("gh"))).is_none());
        assert!(pick(&rules, &req("GET", "api.github.com.evil.example", Some("gh"))).is_none());
        assert!(pick(&rules, &req("GET", "api.github.com", None)).is_none());
        let by_origin = RuleMatch { host: Some("https://api.github.com:443".into()), ..Default::default() };
        let rules = set(vec![rule("o", Effect::Allow, by_origin)]);
        assert!(pick(&rules, &req("GET", "api.github.com", None)).is_some());
        let chained = Compiled::new(input("npm test && rm"), Effect::Deny);
        assert_eq!(chained.err().map(|e| e.code), Some("invalid_input"));
    }

    #[test]
    fn the_set_finds_the_same_rules_as_checking_each() {
        let mut rules = Vec::new();
        for i in 0..300 {
            let m = match i % 5 {
                0 => RuleMatch { tool: Some(format!("tool{i}")), ..Default::default() },
                1 => RuleMatch { tool: Some("mcp__*".into()), agent: Some(format!("a{i}")), ..Default::default() },
                2 => RuleMatch { input: Some(format!("cmd{} sub", i % 7)), ..Default::default() },
                3 => RuleMatch { path: Some(format!("/w/{}/**", i % 4)), ..Default::default() },
                _ => RuleMatch {
                    kind: Some("http.request".into()),
                    host: Some(format!("h{}", i % 3)),
                    ..Default::default()
                },
            };
            rules.push(rule(&format!("r{i}"), [Effect::Allow, Effect::Deny][i % 2], m));
        }
        let all = set(rules.clone());
        let subjects = [
            bash("cmd3 sub x"),
            bash("ls && cmd2 sub"),
            Subject::new("a1", "tool.call", Facts { tool: Some("mcp__x".into()), ..Default::default() }),
            Subject::new("a", "tool.call", Facts { tool: Some("tool10".into()), ..Default::default() }),
            Subject::new("a", "file.write", Facts { path: Some("/w/2/x/y".into()), ..Default::default() }),
            Subject::new("a", "http.request", Facts { host: Some("h1".into()), ..Default::default() }),
        ];
        for s in &subjects {
            let slow: Vec<usize> = (0..rules.len()).filter(|&i| rules[i].compiled.matches(s)).collect();
            assert!(!slow.is_empty());
            assert_eq!(all.matching(s), slow);
        }
    }

    #[test]
    fn descriptions_say_the_rule_in_words() {
        let m = RuleMatch {
            agent: Some("default".into()),
            tool: Some("Bash".into()),
            input: Some("npm test".into()),
            ..Default::default()
        };
        assert_eq!(describe(Effect::Allow, &m), "allow agent default to run `npm test …` with tool `Bash`");
        let http = RuleMatch { method: Some("post".into()), host: Some("api.github.com".into()), ..Default::default() };
        assert_eq!(describe(Effect::Deny, &http), "refuse to let any agent send POST requests to api.github.com");
        let path = RuleMatch { kind: Some("file.write".into()), path: Some("/w/src/**".into()), ..Default::default() };
        assert_eq!(describe(Effect::Ask, &path), "always ask before any agent may write files matching `/w/src/**`");
        assert_eq!(describe(Effect::Allow, &RuleMatch::default()), "allow any agent to do anything");
        let kind = RuleMatch { kind: Some("file.delete".into()), ..Default::default() };
        assert_eq!(describe(Effect::Deny, &kind), "refuse to let any agent propose file.delete");
    }

    #[test]
    fn allow_similar_is_narrow() {
        let s = bash("npm test -- --watch");
        let m = similar(&s);
        assert_eq!(m.input.as_deref(), Some("npm test"));
        assert_eq!((m.agent.as_deref(), m.tool.as_deref()), (Some("default"), Some("Bash")));
        assert_eq!(similar(&bash("rm -rf build")).input.as_deref(), Some("rm -rf build"));
        assert_eq!(similar(&bash("git commit -m 'a b'")).input.as_deref(), Some("git commit"));
        assert_eq!(similar(&bash("ls && rm x")).input, None, "a chained command gets no prefix");
        let f = Subject::new("a", "file.write", Facts { path: Some("/w/sr[c]/a.rs".into()), ..Default::default() });
        let m = similar(&f);
        assert_eq!(m.path.as_deref(), Some("/w/sr[[]c[]]/*"));
        let rules = set(vec![rule("s", Effect::Allow, m)]);
        assert!(pick(&rules, &f).is_some());
        let sibling =
            Subject::new("a", "file.write", Facts { path: Some("/w/sr[c]/b.rs".into()), ..Default::default() });
        let deeper =
            Subject::new("a", "file.write", Facts { path: Some("/w/sr[c]/d/b.rs".into()), ..Default::default() });
        assert!(pick(&rules, &sibling).is_some());
        assert!(pick(&rules, &deeper).is_none());
    }

    #[test]
    fn tool_call_facts_read_commands_and_paths() {
        let f = Facts::of_tool_call("Bash", &serde_json::json!({"command": "npm test", "description": "x"}));
        assert_eq!(f.command.as_deref(), Some("npm test"));
        let f = Facts::of_tool_call("shell", &serde_json::json!({"command": ["bash", "-lc", "npm test"]}));
        assert_eq!(f.command.as_deref(), Some("npm test"));
        let f = Facts::of_tool_call("shell", &serde_json::json!({"command": ["ls", "-la", "a b"]}));
        assert_eq!(f.command.as_deref(), Some("ls -la 'a b'"));
        let f = Facts::of_tool_call("Edit", &serde_json::json!({"file_path": "/w/a.rs"}));
        assert_eq!(f.path.as_deref(), Some("/w/a.rs"));
        let f =
            Facts::of_tool_call("WebFetch", &serde_json::json!({"url": "https://Docs.Example.com./a", "prompt": "x"}));
        assert_eq!(f.host.as_deref(), Some("docs.example.com"));
    }
}
