//! Rules: what may run without asking and what is always refused, said once by the person.
//!
//! A rule has an effect (`allow`, `deny`, `ask`) and a match over what a proposal is: its
//! agent, kind, tool name (a glob), a tool's command prefix (whole words), a file path (a glob;
//! `**` crosses folders, `*` does not), an HTTP method and host, and a credential. When a
//! proposal arrives, the most specific matching rule wins (the one naming the most of those);
//! at equal specificity `deny` beats `ask` beats `allow`; with no match the answer is `ask`.
//! A rule never matches after its expiry, to the millisecond.
//!
//! A command prefix never matches a command that chains or substitutes another one (`&&`,
//! `||`, `;`, `|`, `&`, a newline, `$(...)`, backticks, `<(...)`, `>(...)`): `npm test && rm -rf
//! ~` is not `npm test`.

use crate::time::Timestamp;
use globset::{Glob, GlobBuilder, GlobMatcher};
use serde::{Deserialize, Serialize};

/// What a rule does to a proposal it matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
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
    /// The file's path, a glob (file kinds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The HTTP method.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// The HTTP host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// The credential's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credential: Option<String>,
}

impl RuleMatch {
    /// How many fields it names: the more, the more specific.
    pub fn specificity(&self) -> usize {
        [&self.agent, &self.kind, &self.tool, &self.input, &self.path, &self.method, &self.host, &self.credential]
            .iter()
            .filter(|f| f.is_some())
            .count()
    }
}

/// What a proposal is, as rules see it (from its validated, normalized payload).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Subject {
    /// The agent.
    pub agent: String,
    /// The kind.
    pub kind: String,
    /// The tool (`tool.call`).
    pub tool: Option<String>,
    /// The tool's command, as one string (`tool.call`).
    pub command: Option<String>,
    /// The file's path (file kinds).
    pub path: Option<String>,
    /// The HTTP method (the effective one, an override header included).
    pub method: Option<String>,
    /// The HTTP host.
    pub host: Option<String>,
    /// The credential.
    pub credential: Option<String>,
}

/// Why a match cannot be compiled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct BadMatch {
    /// Stable code (`invalid_glob`, `invalid_input`).
    pub code: &'static str,
    /// What is wrong.
    pub message: String,
}

/// A match, compiled.
#[derive(Debug, Clone)]
pub struct Compiled {
    m: RuleMatch,
    tool: Option<GlobMatcher>,
    path: Option<GlobMatcher>,
    words: Option<Vec<String>>,
}

fn glob(pattern: &str, literal_separator: bool) -> Result<GlobMatcher, BadMatch> {
    let g: Result<Glob, _> = GlobBuilder::new(pattern).literal_separator(literal_separator).build();
    g.map(|g| g.compile_matcher())
        .map_err(|e| BadMatch { code: "invalid_glob", message: format!("`{pattern}` is not a glob: {e}") })
}

impl Compiled {
    /// Compiles a match: its globs and its command's words.
    pub fn new(m: RuleMatch) -> Result<Self, BadMatch> {
        let tool = m.tool.as_deref().map(|t| glob(t, false)).transpose()?;
        let path = m.path.as_deref().map(|p| glob(p, true)).transpose()?;
        let words = match m.input.as_deref() {
            None => None,
            Some(i) => Some(command_words(i).ok_or_else(|| BadMatch {
                code: "invalid_input",
                message: format!("`{i}` is not one plain command (no chaining, substitution or unclosed quotes)"),
            })?),
        };
        if words.as_ref().is_some_and(Vec::is_empty) {
            return Err(BadMatch { code: "invalid_input", message: "a command prefix names at least one word".into() });
        }
        Ok(Compiled { m, tool, path, words })
    }

    /// The match it was compiled from.
    pub fn source(&self) -> &RuleMatch {
        &self.m
    }

    /// Whether `s` matches every field named.
    pub fn matches(&self, s: &Subject) -> bool {
        let eq = |want: &Option<String>, have: &Option<String>| match want {
            None => true,
            Some(w) => have.as_deref().is_some_and(|h| h.eq_ignore_ascii_case(w)),
        };
        let exact = |want: &Option<String>, have: &str| want.as_deref().is_none_or(|w| w == have);
        exact(&self.m.agent, &s.agent)
            && exact(&self.m.kind, &s.kind)
            && self.tool.as_ref().is_none_or(|g| s.tool.as_deref().is_some_and(|t| g.is_match(t)))
            && self.path.as_ref().is_none_or(|g| s.path.as_deref().is_some_and(|p| g.is_match(p)))
            && self.words.as_ref().is_none_or(|w| s.command.as_deref().is_some_and(|c| has_prefix(c, w)))
            && eq(&self.m.method, &s.method)
            && eq(&self.m.host, &s.host)
            && exact(&self.m.credential, s.credential.as_deref().unwrap_or("\u{0}"))
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

/// Whether a command runs more than one command: an operator outside quotes, a newline
/// anywhere, or a substitution outside single quotes.
fn chains(cmd: &str) -> bool {
    let (mut single, mut double, mut escaped) = (false, false, false);
    let mut prev = '\0';
    for c in cmd.chars() {
        if c == '\n' || c == '\r' {
            return true;
        }
        if escaped {
            escaped = false;
            prev = c;
            continue;
        }
        match c {
            '\\' if !single => escaped = true,
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '`' if !single => return true,
            '(' if !single && prev == '$' => return true,
            '(' if !single && !double && (prev == '<' || prev == '>') => return true,
            ';' | '&' | '|' if !single && !double => return true,
            _ => {}
        }
        prev = c;
    }
    false
}

fn has_prefix(cmd: &str, prefix: &[String]) -> bool {
    command_words(cmd).is_some_and(|w| w.len() >= prefix.len() && w.iter().zip(prefix).all(|(a, b)| a == b))
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
}

/// The rule that decides for `s` at `now`: the most specific match, `deny` over `ask` over
/// `allow` at a tie; none when nothing matches (the answer is then `ask`).
pub fn decide<'a>(rules: &'a [Candidate], s: &Subject, now: Timestamp) -> Option<&'a Candidate> {
    rules
        .iter()
        .filter(|r| r.expires_at.is_none_or(|e| now.0 < e.0))
        .filter(|r| r.compiled.matches(s))
        .max_by_key(|r| (r.compiled.source().specificity(), r.effect))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(id: &str, effect: Effect, m: RuleMatch) -> Candidate {
        Candidate {
            id: id.into(),
            effect,
            compiled: Compiled::new(m).unwrap_or_else(|e| panic!("{e}")),
            expires_at: None,
        }
    }

    fn bash(cmd: &str) -> Subject {
        Subject {
            agent: "default".into(),
            kind: "tool.call".into(),
            tool: Some("Bash".into()),
            command: Some(cmd.into()),
            ..Default::default()
        }
    }

    #[test]
    fn a_command_prefix_matches_whole_words_of_one_plain_command() {
        let r = [rule("r1", Effect::Allow, RuleMatch { input: Some("npm test".into()), ..Default::default() })];
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
        ];
        for (cmd, want) in cases {
            assert_eq!(decide(&r, &bash(cmd), Timestamp(0)).is_some(), want, "{cmd:?}");
        }
    }

    #[test]
    fn the_most_specific_rule_wins_and_deny_wins_a_tie() {
        let any_bash = RuleMatch { tool: Some("Bash".into()), ..Default::default() };
        let npm = RuleMatch { tool: Some("Bash".into()), input: Some("npm".into()), ..Default::default() };
        let rules = [
            rule("deny-bash", Effect::Deny, any_bash.clone()),
            rule("allow-npm", Effect::Allow, npm.clone()),
            rule("ask-bash", Effect::Ask, any_bash.clone()),
        ];
        let pick = |cmd: &str| decide(&rules, &bash(cmd), Timestamp(0)).map(|r| r.id.clone());
        assert_eq!(pick("npm test").as_deref(), Some("allow-npm"), "more specific wins");
        assert_eq!(pick("ls").as_deref(), Some("deny-bash"), "deny beats ask at a tie");
        let tie = [rule("a", Effect::Allow, npm.clone()), rule("q", Effect::Ask, npm)];
        assert_eq!(decide(&tie, &bash("npm i"), Timestamp(0)).map(|r| r.id.as_str()), Some("q"));
        assert!(decide(&rules, &Subject { kind: "file.write".into(), ..Default::default() }, Timestamp(0)).is_none());
    }

    #[test]
    fn path_globs_cross_folders_only_with_two_stars() {
        let m = |p: &str| RuleMatch { path: Some(p.into()), ..Default::default() };
        let file = |p: &str| Subject { kind: "file.write".into(), path: Some(p.into()), ..Default::default() };
        let one = [rule("r", Effect::Allow, m("/w/src/*.rs"))];
        assert!(decide(&one, &file("/w/src/a.rs"), Timestamp(0)).is_some());
        assert!(decide(&one, &file("/w/src/deep/a.rs"), Timestamp(0)).is_none());
        let deep = [rule("r", Effect::Allow, m("/w/src/**"))];
        assert!(decide(&deep, &file("/w/src/deep/a.rs"), Timestamp(0)).is_some());
        assert!(decide(&deep, &file("/w/other/a.rs"), Timestamp(0)).is_none());
        assert_eq!(Compiled::new(m("/w/[")).err().map(|e| e.code), Some("invalid_glob"));
    }

    #[test]
    fn an_expired_rule_stops_matching_at_its_expiry() {
        let mut r = rule("r", Effect::Allow, RuleMatch { tool: Some("Bash".into()), ..Default::default() });
        r.expires_at = Some(Timestamp(10_000));
        let rules = [r];
        assert!(decide(&rules, &bash("ls"), Timestamp(9_999)).is_some());
        assert!(decide(&rules, &bash("ls"), Timestamp(10_000)).is_none());
    }

    #[test]
    fn hosts_methods_and_credentials_match_exactly() {
        let m = RuleMatch {
            method: Some("GET".into()),
            host: Some("api.github.com".into()),
            credential: Some("gh".into()),
            ..Default::default()
        };
        let rules = [rule("r", Effect::Allow, m)];
        let req = |method: &str, host: &str, cred: Option<&str>| Subject {
            kind: "http.request".into(),
            method: Some(method.into()),
            host: Some(host.into()),
            credential: cred.map(str::to_string),
            ..Default::default()
        };
        assert!(decide(&rules, &req("GET", "API.github.com", Some("gh")), Timestamp(0)).is_some());
        assert!(decide(&rules, &req("POST", "api.github.com", Some("gh")), Timestamp(0)).is_none());
        assert!(decide(&rules, &req("GET", "api.github.com.evil.example", Some("gh")), Timestamp(0)).is_none());
        assert!(decide(&rules, &req("GET", "api.github.com", None), Timestamp(0)).is_none());
        let chained = Compiled::new(RuleMatch { input: Some("npm test && rm".into()), ..Default::default() });
        assert_eq!(chained.err().map(|e| e.code), Some("invalid_input"));
    }
}
