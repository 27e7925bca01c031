//! Rules compiled together into a set that finds the few rules a proposal can match, and the
//! decision: each part of a proposal (each command its line runs, each file a redirection
//! writes, its path) decided on its own, then the proposal.

use super::compiled::{Compiled, parts};
use super::globs::Globs;
use super::{BadRule, Confine, Effect, Subject, bad};
use crate::time::Timestamp;
use assent_commands::PathArg;
use globset::Glob;
use std::collections::HashMap;
use std::sync::Arc;

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
    /// Rule `id`'s match compiled for its effect, with no expiry and no note.
    pub fn new(id: &str, effect: Effect, m: super::RuleMatch) -> Result<Candidate, super::BadRule> {
        Ok(Candidate { id: id.into(), effect, compiled: Compiled::new(m, effect)?, expires_at: None, note: None })
    }

    fn live(&self, now: Timestamp) -> bool {
        self.expires_at.is_none_or(|e| now.0 < e.0)
    }
}

/// What the rules decide for a proposal.
#[derive(Debug, Clone)]
pub struct Ruling<'a> {
    /// `allow`, `deny` or `ask`.
    pub effect: Effect,
    /// The rule that decided (for `ask`: the ask rule, if one did; none when a part matched no
    /// rule).
    pub rule: Option<&'a Candidate>,
    /// For `allow`: the confinement the command runs under, the strictest of the allows that
    /// covered its parts (none: every one of them allows it unconfined).
    pub confine: Option<Confine>,
    /// For a confined `allow`: the hosts its box reaches, as the reader names them from the
    /// line, when the allows that covered it grant them all (the box rule: the package
    /// registries); empty: no network.
    pub hosts: Vec<String>,
}

/// Rules compiled together: a proposal is checked against the few rules that can match it
/// instead of against every rule in turn. Each rule is found through one field it requires, the
/// most telling it names: its command prefix's program, else its path (a glob set over
/// paths), else its agent, else its tool (a glob set over tool names: many rules name `Bash`),
/// else its kind.
#[derive(Debug, Default, Clone)]
pub struct RuleSet {
    rules: Vec<Arc<Candidate>>,
    by_word: HashMap<String, Vec<usize>>,
    /// Rules whose prefix names a wrapper (`sudo`): every command's wrappers are looked up too.
    word_rules: Vec<usize>,
    paths: Globs,
    path_rules: Vec<usize>,
    /// The deny and ask rules among `path_rules`: they also see paths not known.
    stop_path_rules: Vec<usize>,
    by_agent: HashMap<String, Vec<usize>>,
    tools: Globs,
    tool_rules: Vec<usize>,
    by_kind: HashMap<String, Vec<usize>>,
    rest: Vec<usize>,
    /// Whether it holds a rule other than the built-in read-only one.
    decides_without_cwd: bool,
    /// The position in the rule log it holds the rules of (see [`RuleSet::seq`]).
    seq: i64,
}

impl RuleSet {
    /// Compiles the set.
    pub fn new(rules: Vec<Candidate>) -> Result<RuleSet, BadRule> {
        Self::of(rules.into_iter().map(Arc::new).collect())
    }

    fn of(rules: Vec<Arc<Candidate>>) -> Result<RuleSet, BadRule> {
        let mut set = RuleSet::default();
        let (mut tools, mut paths) = (Vec::new(), Vec::new());
        for (i, r) in rules.iter().enumerate() {
            set.index(i, r, &mut tools, &mut paths);
        }
        set.tools = Globs::build(tools).map_err(bad_globs)?;
        set.paths = Globs::build(paths).map_err(bad_globs)?;
        set.rules = rules;
        Ok(set)
    }

    /// Files the rule at position `i` under the one field it is found by (its globs gathered
    /// in `tools` and `paths`).
    fn index(&mut self, i: usize, r: &Candidate, tools: &mut Vec<(Glob, usize)>, paths: &mut Vec<(Glob, usize)>) {
        let c = &r.compiled;
        self.decides_without_cwd |= !c.is_builtin();
        if let Some(w) = c.prefix.as_ref().and_then(|p| p.words.first()) {
            self.by_word.entry(w.clone()).or_default().push(i);
            self.word_rules.push(i);
        } else if let Some(g) = c.path.as_ref().filter(|_| !c.relative) {
            paths.push((g.clone(), self.path_rules.len()));
            self.path_rules.push(i);
            if c.effect != Effect::Allow {
                self.stop_path_rules.push(i);
            }
        } else if c.path.is_some() {
            // Relative to the working folder: looked at for every proposal.
            self.rest.push(i);
        } else if let Some(a) = &c.m.agent {
            self.by_agent.entry(a.clone()).or_default().push(i);
        } else if let Some(g) = &c.tool {
            tools.push((g.clone(), self.tool_rules.len()));
            self.tool_rules.push(i);
        } else if let Some(k) = &c.m.kind {
            self.by_kind.entry(k.clone()).or_default().push(i);
        } else {
            self.rest.push(i);
        }
    }

    /// The set with `c` added last: only `c` is compiled and filed, and of the glob sets only
    /// the last chunk is built again, so adding a rule costs the same with ten rules or ten
    /// thousand.
    pub fn with(&self, c: Candidate) -> Result<RuleSet, BadRule> {
        let mut set = self.clone();
        let (mut tools, mut paths) = (Vec::new(), Vec::new());
        set.index(set.rules.len(), &c, &mut tools, &mut paths);
        for (g, at) in tools {
            set.tools.push(g, at).map_err(bad_globs)?;
        }
        for (g, at) in paths {
            set.paths.push(g, at).map_err(bad_globs)?;
        }
        set.rules.push(Arc::new(c));
        Ok(set)
    }

    /// The set without the rules `gone` names, filed again from those kept (none compiled
    /// again).
    pub fn without(&self, gone: impl Fn(&Candidate) -> bool) -> Result<RuleSet, BadRule> {
        Ok(Self::of(self.rules.iter().filter(|c| !gone(c)).cloned().collect())?.at_seq(self.seq))
    }

    /// The set of the rules `keep` names only (a page of them), in their order.
    pub fn only(&self, keep: impl Fn(&Candidate) -> bool) -> Result<RuleSet, BadRule> {
        Ok(Self::of(self.rules.iter().filter(|c| keep(c)).cloned().collect())?.at_seq(self.seq))
    }

    /// The set, said to hold the rules of the rule log up to `seq`.
    pub fn at_seq(mut self, seq: i64) -> RuleSet {
        self.seq = seq;
        self
    }

    /// The position in the rule log whose rules it holds: a decision it makes is written only
    /// while the log is still there (the store checks, in the same transaction).
    pub fn seq(&self) -> i64 {
        self.seq
    }

    /// How many rules it holds.
    pub fn len(&self) -> usize {
        self.rules.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// Whether any rule could decide a proposal with these facts: none can when the set is
    /// empty, or holds only the built-in read-only rule and there is no working folder (its
    /// command is then not read at all).
    pub fn may_decide(&self, f: &super::Facts) -> bool {
        f.cwd.is_some() || self.decides_without_cwd
    }

    /// The rules, in the order given.
    pub fn rules(&self) -> &[Arc<Candidate>] {
        &self.rules
    }

    /// Rules that may apply to `s`, each once.
    fn maybe(&self, s: &Subject) -> Vec<usize> {
        let mut maybe: Vec<usize> = self.rest.clone();
        for (bucket, key) in [(&self.by_agent, s.agent.as_str()), (&self.by_kind, s.kind.as_str())] {
            if let Some(rs) = bucket.get(key) {
                maybe.extend_from_slice(rs);
            }
        }
        if let Some(t) = &s.facts.tool {
            maybe.extend(self.tools.matches(t).into_iter().map(|i| self.tool_rules[i]));
        }
        // The paths it touches, each also by its real path; whether some are not known.
        let mut queries: Vec<String> = Vec::new();
        let mut unknown = false;
        if let Some(pf) = &s.path {
            queries.extend(pf.lexical.iter().chain(&pf.real).cloned());
            unknown |= pf.lexical.is_none();
        }
        if let Some(line) = &s.line {
            unknown |= line.is_opaque();
            let touched = line.commands.iter().flat_map(|c| c.reads.iter().chain(&c.writes));
            for p in touched.chain(line.redirects.iter().map(|r| &r.path)) {
                match p {
                    PathArg::At(a) => {
                        queries.extend(s.real_of(a));
                        queries.push(a.clone());
                    }
                    PathArg::Pattern { .. } | PathArg::Unknown(_) | PathArg::Relative(_) => unknown = true,
                }
            }
        }
        for q in &queries {
            // `X/**` names the folder `X` too (for deny and ask).
            for q in [q.clone(), format!("{}/-", q.trim_end_matches('/'))] {
                maybe.extend(self.paths.matches(&q).into_iter().map(|i| self.path_rules[i]));
            }
        }
        if unknown {
            maybe.extend_from_slice(&self.stop_path_rules);
        }
        if let Some(line) = &s.line {
            if line.is_opaque() || line.commands.iter().any(|c| c.program.is_none()) {
                maybe.extend_from_slice(&self.word_rules);
            } else {
                for c in &line.commands {
                    let names = c.program.iter().chain(&c.via);
                    for n in names {
                        let base = n.rsplit('/').next().unwrap_or(n);
                        for k in [n.as_str(), base] {
                            if let Some(rs) = self.by_word.get(k) {
                                maybe.extend_from_slice(rs);
                            }
                        }
                    }
                }
            }
        }
        maybe.sort_unstable();
        maybe.dedup();
        maybe
    }

    /// Positions of every rule that matches `s`, expired or not, each once.
    pub fn matching(&self, s: &Subject) -> Vec<usize> {
        let mut m = self.maybe(s);
        m.retain(|&i| self.rules[i].compiled.matches(s));
        m
    }

    /// What the rules decide for `s` at `now`; none when a part matches no rule and nothing
    /// else decides (the answer is then `ask`, with no rule).
    pub fn decide(&self, s: &Subject, now: Timestamp) -> Option<&Candidate> {
        self.rule(s, now).rule
    }

    /// The ruling for `s` at `now`.
    pub fn rule(&self, s: &Subject, now: Timestamp) -> Ruling<'_> {
        // An allow that confines applies only to a command that can run confined.
        let usable = |r: &Candidate| {
            r.effect != Effect::Allow || r.compiled.confine().is_none_or(|c| s.can_confine.contains(&c))
        };
        let live: Vec<&Candidate> =
            self.maybe(s).into_iter().map(|i| self.rules[i].as_ref()).filter(|r| r.live(now) && usable(r)).collect();
        let mut allowed_by: Option<&Candidate> = None;
        let mut confine: Option<Confine> = None;
        let mut granted: Vec<&str> = Vec::new();
        let mut asked: Option<Ruling<'_>> = None;
        for part in parts(s) {
            let here: Vec<&Candidate> = live.iter().copied().filter(|r| r.compiled.applies(s, part)).collect();
            let stops: Vec<&Candidate> = here.iter().copied().filter(|r| r.effect != Effect::Allow).collect();
            let allows: Vec<&Candidate> = here.iter().copied().filter(|r| r.effect == Effect::Allow).collect();
            fn narrowest_allow<'c>(among: &[&'c Candidate]) -> Option<&'c Candidate> {
                among.iter().copied().max_by(|a, b| {
                    a.compiled.specificity().cmp(&b.compiled.specificity()).then_with(|| b.id.cmp(&a.id))
                })
            }
            if stops.is_empty() {
                match narrowest_allow(&allows) {
                    Some(a) => {
                        confine = confine.max(a.compiled.confine());
                        // Each allow that covers the part grants its hosts (the person's own
                        // rule naming a new remote beside "allow similar"'s for the old one).
                        granted.extend(allows.iter().flat_map(|r| r.compiled.grants_hosts()));
                        // The allow named is the most specific one of the most telling part.
                        if allowed_by.is_none_or(|b| {
                            !a.compiled.is_builtin()
                                && (b.compiled.is_builtin() || b.compiled.specificity() < a.compiled.specificity())
                        }) {
                            allowed_by = Some(a);
                        }
                    }
                    None => {
                        asked.get_or_insert(Ruling {
                            effect: Effect::Ask,
                            rule: None,
                            confine: None,
                            hosts: Vec::new(),
                        });
                    }
                }
                continue;
            }
            // An allow wins over the denies and asks only when it lies strictly inside each.
            let inner_allow: Vec<&Candidate> = allows
                .iter()
                .copied()
                .filter(|a| stops.iter().all(|d| a.compiled.inside(&d.compiled) && !d.compiled.inside(&a.compiled)))
                .collect();
            if let Some(a) = narrowest_allow(&inner_allow) {
                confine = confine.max(a.compiled.confine());
                granted.extend(inner_allow.iter().flat_map(|r| r.compiled.grants_hosts()));
                if allowed_by.is_none_or(|b| b.compiled.specificity() < a.compiled.specificity()) {
                    allowed_by = Some(a);
                }
                continue;
            }
            // Among denies and asks: the narrowest (one strictly inside every other), else deny.
            let narrowest = stops.iter().copied().find(|d| {
                stops.iter().all(|o| {
                    std::ptr::eq(*o, *d) || (d.compiled.inside(&o.compiled) && !o.compiled.inside(&d.compiled))
                })
            });
            let winner = narrowest.unwrap_or_else(|| {
                stops
                    .iter()
                    .copied()
                    .max_by(|a, b| {
                        a.effect
                            .cmp(&b.effect)
                            .then(a.compiled.specificity().cmp(&b.compiled.specificity()))
                            .then_with(|| b.id.cmp(&a.id))
                    })
                    .unwrap_or(stops[0])
            });
            if winner.effect == Effect::Deny && !refuses_only_through_a_relative_path(winner, s, part) {
                return Ruling { effect: Effect::Deny, rule: Some(winner), confine: None, hosts: Vec::new() };
            }
            if asked.as_ref().is_none_or(|a| a.rule.is_none()) {
                asked = Some(Ruling { effect: Effect::Ask, rule: Some(winner), confine: None, hosts: Vec::new() });
            }
        }
        if let Some(a) = asked {
            return a;
        }
        match allowed_by {
            Some(a) => {
                // A boxed line that reaches the network, allowed by rules that grant hosts, runs
                // only where they grant every host it reaches (as the reader names them): else it
                // asks. Allowed by rules that grant none (`go test`, by the build-and-test rule),
                // it runs with no network, as its rule says.
                let needs = |line: &assent_commands::Line| {
                    line.commands.iter().any(|c| !c.inner && c.effects.any(assent_commands::Effects::NETWORK))
                };
                let hosts = match (confine, &s.line) {
                    (Some(_), Some(line)) if !granted.is_empty() && needs(line) => {
                        match assent_commands::reach::hosts(line, s.facts.cwd.as_deref()) {
                            Some(hs) if hs.iter().all(|h| granted.contains(&h.as_str())) => hs,
                            _ => return Ruling { effect: Effect::Ask, rule: None, confine: None, hosts: Vec::new() },
                        }
                    }
                    _ => Vec::new(),
                };
                Ruling { effect: Effect::Allow, rule: Some(a), confine, hosts }
            }
            None => Ruling { effect: Effect::Ask, rule: None, confine: None, hosts: Vec::new() },
        }
    }
}

/// Whether `deny` takes in `part` only through a relative path with no working folder to
/// resolve it (the MCP permission prompt reports none): its folder could be any, so the rule
/// does not refuse, and the call asks.
fn refuses_only_through_a_relative_path(deny: &Candidate, s: &Subject, part: super::compiled::Part<'_>) -> bool {
    let relative = s.line.as_ref().is_some_and(|l| {
        let touched = l.commands.iter().flat_map(|c| c.reads.iter().chain(&c.writes));
        touched.chain(l.redirects.iter().map(|r| &r.path)).any(|p| matches!(p, PathArg::Relative(_)))
    });
    if !relative {
        return false;
    }
    s.relative_off.set(true);
    let still = deny.compiled.applies(s, part);
    s.relative_off.set(false);
    !still
}

fn bad_globs(e: globset::Error) -> BadRule {
    bad("invalid_glob", format!("the rules' globs: {e}"))
}
