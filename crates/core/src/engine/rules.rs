//! Rules in the engine: kept compiled in memory, consulted when a proposal arrives, changed by
//! the person only (each change logged), and derived from a decision ("allow similar").

use super::{Actor, Engine};
use crate::error::CoreError;
use crate::kinds::clip;
use crate::proposal::{Decision, Outcome, Proposal, RuleRef};
use crate::rules::{Candidate, Effect, Rule, RuleMatch, RuleSet, Subject, describe};
use crate::secret::{base32, random_bytes};
use crate::status::{Action, Status, next};
use crate::store::Transition;
use crate::time::Timestamp;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The longest a rule may last before it expires: one year (longer is "until removed").
pub const MAX_RULE_SECS: i64 = 366 * 24 * 3600;
/// The most rules one Assent keeps.
pub const MAX_RULES: usize = 10_000;
/// How many recent proposals the Rules page looks back over.
pub const HISTORY: u32 = 10_000;
/// Rules on one page of the list, unless asked otherwise.
pub const RULE_PAGE: u32 = 200;
/// The most rules one page holds.
pub const MAX_RULE_PAGE: u32 = 1_000;
const NOTE_MAX: usize = 1_000;
/// The id of the built-in read-only rule.
pub const BUILTIN_READ_ONLY_ID: &str = "r_builtin_read_only";

/// Body of `POST /v1/rules`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NewRule {
    /// What it does.
    pub effect: Effect,
    /// What it matches.
    #[serde(rename = "match", default)]
    pub matches: RuleMatch,
    /// Set to make an empty match mean every proposal.
    #[serde(default)]
    pub everything: bool,
    /// Seconds until it stops matching, 1 to 31,622,400 (none: until removed).
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(type = "number | null", optional))]
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 31622400))]
    pub expires_in: Option<i64>,
    /// A note (a denied proposal's reason).
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub note: Option<String>,
}

/// A rule with what the Rules page shows next to it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RuleView {
    /// The rule.
    #[serde(flatten)]
    pub rule: Rule,
    /// How many of the latest proposals (up to 10,000) it matches, whatever decided them.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub would_have_matched: u64,
    /// How many proposals of the last seven days it decided without asking anyone.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub saved_this_week: u64,
}

/// A page of the rules, for the Rules page.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RuleList {
    /// Oldest first.
    pub items: Vec<RuleView>,
    /// How many recent proposals `would_have_matched` looked at.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub recent: u64,
    /// How many rules are in force, on every page.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub total: u64,
    /// The `after` to ask for the next page; none on the last.
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub next_after: Option<i64>,
}

/// What the rules say about a proposal.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Verdict {
    /// `allow`, `deny` or `ask`.
    pub effect: Effect,
    /// The rule that decides; none when no rule matches (the answer is then `ask`).
    pub rule: Option<Rule>,
}

/// The rule "allow similar" would save, before it is saved.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Similar {
    /// Its match.
    #[serde(rename = "match")]
    pub matches: RuleMatch,
    /// It in plain words.
    pub description: String,
}

pub(super) fn invalid(code: &'static str, message: impl Into<String>) -> CoreError {
    CoreError::invalid(code, message)
}

fn new_rule_id() -> String {
    let mut id = String::from("r_");
    id.push_str(&base32(&random_bytes::<10>())[..12]);
    id
}

/// The decision a rule makes, as the transition that records it.
pub(super) fn rule_decision(
    c: &Candidate,
    confine: Option<crate::rules::Confine>,
    hosts: &[String],
    p: &Proposal,
    now: Timestamp,
) -> Option<Transition> {
    let (outcome, action) = match c.effect {
        Effect::Allow => (Outcome::Approve, Action::Approve),
        Effect::Deny => (Outcome::Reject, Action::Reject),
        Effect::Ask => return None,
    };
    let to = next(Status::Pending, action, p.class).ok()?;
    let description = describe(c.effect, c.compiled.source());
    let reason = match c.effect {
        Effect::Deny => Some(c.note.clone().unwrap_or_else(|| format!("refused by a rule: {description}"))),
        _ => None,
    };
    let confine = confine.filter(|_| outcome == Outcome::Approve);
    let hosts = if confine.is_some() { hosts.to_vec() } else { Vec::new() };
    let mut detail = serde_json::json!({
        "outcome": outcome,
        "reason": reason,
        "rule": c.id,
        "description": description,
    });
    if !hosts.is_empty() {
        detail["hosts"] = serde_json::json!(hosts);
    }
    Some(Transition {
        id: p.id.clone(),
        from: Status::Pending,
        to,
        decision: Some(Decision {
            outcome,
            reason,
            feedback: None,
            edited_payload: None,
            approved_sha256: (outcome == Outcome::Approve).then(|| p.payload.sha256()),
            by: "rule".into(),
            node: p.node.clone(),
            rule: Some(RuleRef { id: c.id.clone(), description }),
            confine,
            hosts,
            channel: crate::proposal::Channel::Rule,
            device: None,
            receipt: None,
            at: now,
        }),
        result: None,
        error: None,
        at: now,
        actor: "rule".into(),
        channel: crate::proposal::Channel::Rule,
        detail: Some(detail),
    })
}

fn candidate(r: &Rule) -> Result<Candidate, crate::rules::BadRule> {
    let mut c = Candidate::new(&r.id, r.effect, r.matches.clone())?;
    (c.expires_at, c.note) = (r.expires_at, r.note.clone());
    Ok(c)
}

fn compile(rules: &[Rule]) -> RuleSet {
    let mut cands = Vec::with_capacity(rules.len());
    for r in rules {
        match candidate(r) {
            Ok(c) => cands.push(c),
            Err(e) => tracing::error!(rule = %r.id, error = %e, "a stored rule no longer compiles; it is not applied"),
        }
    }
    set_of(cands)
}

fn set_of(cands: Vec<Candidate>) -> RuleSet {
    RuleSet::new(cands).unwrap_or_else(|e| {
        tracing::error!(error = %e, "the rules do not compile together; none is applied");
        RuleSet::default()
    })
}

/// The rules in force, compiled, at the rule log's position read before them.
pub(super) async fn load(store: &dyn crate::store::Records) -> Result<RuleSet, CoreError> {
    let seq = store.rule_seq().await?;
    Ok(compile(&store.rules().await?).at_seq(seq))
}

/// The rules in force, compiled, and the one-at-a-time order of changes to them: their own
/// state, kept here.
pub(crate) struct RuleBook {
    set: std::sync::RwLock<Arc<RuleSet>>,
    /// Rule changes one at a time, so each reload sees the latest.
    changes: tokio::sync::Mutex<()>,
}

impl RuleBook {
    pub(crate) fn new(set: RuleSet) -> RuleBook {
        RuleBook { set: std::sync::RwLock::new(Arc::new(set)), changes: tokio::sync::Mutex::new(()) }
    }

    fn current(&self) -> Arc<RuleSet> {
        self.set.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn put(&self, set: RuleSet) {
        *self.set.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(set);
    }

    /// Held while a change is made: one at a time.
    async fn one_at_a_time(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.changes.lock().await
    }
}

impl Engine {
    /// The rule set in force.
    pub(super) fn rule_set(&self) -> Arc<RuleSet> {
        self.inner.rules.current()
    }

    /// Reads the rules in force again from the store (another node changed them, or this one
    /// was out of touch), one change at a time with this node's own.
    pub(super) async fn reload_rules(&self) -> Result<(), CoreError> {
        let _one_at_a_time = self.inner.rules.one_at_a_time().await;
        self.reload_rules_locked().await
    }

    async fn reload_rules_locked(&self) -> Result<(), CoreError> {
        let set = load(self.inner.ledger.store()).await?;
        self.inner.rules.put(set);
        Ok(())
    }

    /// Puts this node's own change in force, logged at `seq`: `change` makes the new set from
    /// the one in force (a rule added is the only one compiled and filed). When the log moved
    /// on from the set in force by more than this change (another node changed the rules
    /// meanwhile), every rule is read again.
    async fn swap_rules(&self, seq: i64, change: impl FnOnce(&RuleSet) -> Result<RuleSet, crate::rules::BadRule>) {
        let old = self.rule_set();
        if seq == old.seq() + 1 {
            match change(&old) {
                Ok(set) => {
                    self.inner.rules.put(set.at_seq(seq));
                    return;
                }
                Err(e) => tracing::error!(error = %e, "the rules do not compile together; reading them again"),
            }
        }
        if let Err(e) = self.reload_rules_locked().await {
            // The set in force is older than the log: the store refuses its decisions, so none
            // is made by a rule no longer in force; the next change reloads it.
            tracing::warn!(error = %e, "could not read the rules again after changing one");
        }
    }

    /// The person adds a rule. Refused (422, stable codes): an `allow` that matches everything
    /// without `everything: true`; `everything` with a match; bad globs, unknown kinds or
    /// credentials, fields that do not apply to the kind named; expiries out of range.
    pub async fn add_rule(&self, actor: &Actor, req: NewRule) -> Result<Rule, CoreError> {
        let m = self.check_match(req.effect, req.matches)?;
        if req.everything && !m.is_empty() {
            return Err(invalid("invalid_match", "`everything: true` goes with an empty match"));
        }
        if m.is_empty() && req.effect == Effect::Allow && !req.everything {
            return Err(invalid(
                "too_broad",
                "this rule would allow every proposal of every agent; name what it matches, or say `\"everything\": true`",
            ));
        }
        let now = self.now();
        let expires_at = match req.expires_in {
            None => None,
            Some(s) if (1..=MAX_RULE_SECS).contains(&s) => Some(now.plus_secs(s as u64)),
            Some(s) => {
                return Err(invalid(
                    "invalid_expiry",
                    format!(
                        "`expires_in` is {s}; it is between 1 and {MAX_RULE_SECS} seconds (leave it out: until removed)"
                    ),
                ));
            }
        };
        let note = match req.note {
            Some(n) if n.chars().count() > NOTE_MAX || n.chars().any(|c| c.is_control() && c != '\n') => {
                return Err(invalid(
                    "invalid_field",
                    format!("`note` is longer than {NOTE_MAX} characters or has control characters"),
                ));
            }
            Some(n) if n.trim().is_empty() => None,
            other => other,
        };
        let _one_at_a_time = self.inner.rules.one_at_a_time().await;
        if self.rule_set().len() >= MAX_RULES {
            return Err(CoreError::TooMany {
                code: "too_many_rules",
                message: format!("Assent keeps at most {MAX_RULES} rules; remove some first"),
            });
        }
        let rule = Rule {
            id: new_rule_id(),
            effect: req.effect,
            description: describe(req.effect, &m),
            matches: m,
            everything: req.everything,
            note,
            created_by: actor.by.clone(),
            node: self.inner.config.node.clone(),
            created_channel: actor.channel,
            created_at: now,
            expires_at,
            matched: 0,
        };
        let compiled = candidate(&rule).map_err(|e| invalid(e.code, e.message))?;
        let seq = self.inner.ledger.store().add_rule(rule.clone()).await?;
        self.swap_rules(seq, |s| s.with(compiled)).await;
        self.inner.ledger.rules_changed(rule.id.clone());
        Ok(rule)
    }

    /// The person removes a rule.
    pub async fn remove_rule(&self, actor: &Actor, id: &str) -> Result<Rule, CoreError> {
        let _one_at_a_time = self.inner.rules.one_at_a_time().await;
        let removed = self.inner.ledger.store().remove_rule(id, &actor.by, actor.channel, self.now()).await?;
        let (rule, seq) = removed.ok_or_else(|| CoreError::NotFound(format!("no rule `{}`", clip(id, 80))))?;
        self.swap_rules(seq, |s| s.without(|c| c.id == rule.id)).await;
        self.inner.ledger.rules_changed(rule.id.clone());
        Ok(rule)
    }

    /// Puts the built-in read-only rule in force on a home that never had it: once, so that a
    /// person who removed it (turned it off) keeps it off. Removing it is logged like any rule.
    pub(super) async fn seed_builtin_rules(&self) {
        let store = self.inner.ledger.store();
        match store.rule(BUILTIN_READ_ONLY_ID).await {
            Ok(Some(_)) => return,
            Ok(None) => {}
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the rules to put the built-in read-only rule in force");
                return;
            }
        }
        let mut after = 0;
        loop {
            let Ok(page) = store.rule_log_after(after, 1000).await else { return };
            if page.iter().any(|e| e.rule_id == BUILTIN_READ_ONLY_ID) {
                return;
            }
            match page.last() {
                Some(last) => after = last.seq,
                None => break,
            }
        }
        let m = crate::rules::builtin_read_only();
        let rule = Rule {
            id: BUILTIN_READ_ONLY_ID.into(),
            effect: Effect::Allow,
            description: describe(Effect::Allow, &m),
            matches: m,
            everything: false,
            note: Some("built in; remove it to turn it off".into()),
            created_by: "assent".into(),
            node: self.inner.config.node.clone(),
            created_channel: crate::proposal::Channel::System,
            created_at: self.now(),
            expires_at: None,
            matched: 0,
        };
        let _one_at_a_time = self.inner.rules.one_at_a_time().await;
        let Ok(compiled) = candidate(&rule) else { return };
        match self.inner.ledger.store().add_rule(rule).await {
            Ok(seq) => self.swap_rules(seq, |s| s.with(compiled)).await,
            // Another node of a team put it in force first.
            Err(e) => tracing::debug!(error = %e, "the built-in read-only rule was not added"),
        }
    }

    /// A page of the rules, oldest first, each with how many of the latest proposals it would
    /// have matched and how many prompts it saved this week. `after` is the previous page's
    /// `next_after` (none: the first page); `limit` is clamped to 1..=[`MAX_RULE_PAGE`].
    pub async fn rules(&self, after: Option<i64>, limit: Option<u32>) -> Result<RuleList, CoreError> {
        let limit = limit.unwrap_or(RULE_PAGE).clamp(1, MAX_RULE_PAGE);
        let mut page = self.inner.ledger.store().rules_after(after.unwrap_or(0).max(0), limit + 1).await?;
        let next_after = (page.len() > limit as usize).then(|| page[limit as usize - 1].0);
        page.truncate(limit as usize);
        let recent = self.inner.ledger.store().recent_facts(HISTORY).await?;
        let week_ago = Timestamp(self.now().0 - 7 * 24 * 3600 * 1000);
        let saved: std::collections::HashMap<String, u64> =
            self.inner.ledger.store().rule_decisions_since(week_ago).await?.into_iter().collect();
        // Only this page's rules (compiled already, in the set in force) look at the proposals.
        let ids: std::collections::HashSet<&str> = page.iter().map(|(_, r)| r.id.as_str()).collect();
        let in_force = self.rule_set();
        let set = in_force.only(|c| ids.contains(c.id.as_str())).unwrap_or_default();
        let mut counts = std::collections::HashMap::<&str, u64>::new();
        if !set.is_empty() {
            for (agent, kind, facts) in recent.iter() {
                let s = Subject::new(agent.clone(), *kind, facts.clone());
                for i in set.matching(&s) {
                    *counts.entry(set.rules()[i].id.as_str()).or_default() += 1;
                }
            }
        }
        let items = page
            .iter()
            .map(|(_, r)| RuleView {
                would_have_matched: counts.get(r.id.as_str()).copied().unwrap_or(0),
                saved_this_week: saved.get(&r.id).copied().unwrap_or(0),
                rule: r.clone(),
            })
            .collect();
        Ok(RuleList { items, recent: recent.len() as u64, total: in_force.len() as u64, next_after })
    }

    /// The rule log after `after_seq` (for export).
    pub async fn rule_log_after(
        &self,
        after_seq: i64,
        limit: u32,
    ) -> Result<Vec<crate::rules::RuleLogEntry>, CoreError> {
        self.inner.ledger.store().rule_log_after(after_seq, limit).await
    }
}
