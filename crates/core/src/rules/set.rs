//! Matches compiled, and compiled together into a set that finds the few rules a proposal can
//! match.

use super::command::{command_words, has_prefix};
use super::{BadRule, Effect, RuleMatch, Subject, bad};
use crate::time::Timestamp;
use globset::{Glob, GlobBuilder, GlobMatcher, GlobSet, GlobSetBuilder};
use std::collections::HashMap;

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

/// Rules compiled together: a proposal is checked against the few rules that can match it
/// instead of against every rule in turn. Each rule is found through one field it requires, the
/// most telling it names: its command prefix's first word, else its path (a glob set over
/// paths), else its agent, else its tool (a glob set over tool names: many rules name `Bash`),
/// else its kind.
#[derive(Debug, Default)]
pub struct RuleSet {
    rules: Vec<Candidate>,
    by_word: HashMap<String, Vec<usize>>,
    paths: GlobSet,
    path_rules: Vec<usize>,
    by_agent: HashMap<String, Vec<usize>>,
    tools: GlobSet,
    tool_rules: Vec<usize>,
    by_kind: HashMap<String, Vec<usize>>,
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
            } else if let Some(g) = &c.path {
                paths.add(g.clone());
                set.path_rules.push(i);
            } else if let Some(a) = &c.m.agent {
                set.by_agent.entry(a.clone()).or_default().push(i);
            } else if let Some(g) = &c.tool {
                tools.add(g.clone());
                set.tool_rules.push(i);
            } else if let Some(k) = &c.m.kind {
                set.by_kind.entry(k.clone()).or_default().push(i);
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
        for (bucket, key) in [(&self.by_agent, &s.agent), (&self.by_kind, &s.kind)] {
            if let Some(rs) = bucket.get(key) {
                maybe.extend_from_slice(rs);
            }
        }
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
