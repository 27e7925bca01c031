//! What the rules would do: a new rule's match checked against the kinds it names, the rules
//! tried on a proposal an agent might make, the narrowest rule allowing proposals like one, and
//! the rules consulted as a proposal arrives.

use super::rules::{NewRule, Similar, Verdict, invalid};
use super::{Actor, Engine};
use crate::error::CoreError;
use crate::kinds::clip;
use crate::payloads::KindName;
use crate::proposal::{NewProposal, Proposal};
use crate::rules::{Candidate, Compiled, Effect, Facts, Rule, RuleMatch, Subject, describe};
use crate::time::Timestamp;

/// The rule that decides a proposal, with the box an allow runs it in and the hosts that box
/// reaches.
pub(super) type RuledBy = (Candidate, Option<crate::rules::Confine>, Vec<String>);

impl Engine {
    /// Checks a match and puts it in its stored form (method upper case, host lower case, an
    /// origin normalized).
    pub(super) fn check_match(&self, effect: Effect, m: RuleMatch) -> Result<RuleMatch, CoreError> {
        let mut m = m;
        let mismatch = |field: &str, kinds: &str| {
            invalid(
                "invalid_match",
                format!("`{field}` matches only {kinds}; this rule names kind `{}`", m.kind.as_deref().unwrap_or("")),
            )
        };
        // The kind it names, known here (`unknown_kind` otherwise).
        let kind = m.kind.as_deref().map(|k| self.inner.kinds.get(k).map(|k| k.name())).transpose()?;
        let kind_is = |ks: &[KindName]| kind.is_none_or(|k| ks.contains(&k));
        if let Some(a) = &m.agent {
            crate::names::validate_agent_name(a)?;
        }
        for (field, v) in [("tool", &m.tool), ("input", &m.input), ("path", &m.path)] {
            if v.as_deref()
                .is_some_and(|v| v.trim().is_empty() || v.chars().count() > 1000 || v.chars().any(char::is_control))
            {
                return Err(invalid(
                    "invalid_match",
                    format!("`{field}` is empty, too long or has control characters"),
                ));
            }
        }
        if (m.tool.is_some() || m.input.is_some()) && !kind_is(&[KindName::ToolCall]) {
            return Err(mismatch(if m.input.is_some() { "input" } else { "tool" }, KindName::ToolCall.as_str()));
        }
        if m.path.is_some() && !kind_is(&KindName::ALL) {
            return Err(mismatch("path", "file.write, file.delete, tool.call and http.request (its URL's path)"));
        }
        // On Windows `\\` separates names, as `/` does (a wildcard is escaped as `[*]`).
        if cfg!(windows) {
            m.path = m.path.as_ref().map(|p| p.replace('\\', "/"));
        }
        if let Some(p) = &m.path
            && !(assent_commands::path::is_absolute(p)
                || p.starts_with("**")
                || p.starts_with("./")
                || p.starts_with("~/"))
        {
            let absolute = if cfg!(windows) {
                "on a drive (`C:\\…`) or a share (`\\\\server\\share\\…`)"
            } else {
                "absolute (`/…`)"
            };
            return Err(invalid(
                "invalid_glob",
                format!(
                    "`{p}`: a path glob is {absolute}, in the home folder (`~/…`), inside the working folder (`./…`) or starts with `**`"
                ),
            ));
        }
        if let Some(p) = &m.path
            && p.split('/').any(|seg| seg == "..")
        {
            return Err(invalid("invalid_glob", format!("`{p}`: a path glob has no `..`")));
        }
        if m.builtin.is_some() && m.fields() != 1 {
            return Err(invalid("invalid_match", "a built-in rule names nothing else"));
        }
        if m.exact && m.input.is_none() {
            return Err(invalid("invalid_match", "`exact` goes with `input`, the whole command"));
        }
        for (field, present) in [("method", m.method.is_some()), ("credential", m.credential.is_some())] {
            if present && !kind_is(&[KindName::HttpRequest]) {
                return Err(mismatch(field, KindName::HttpRequest.as_str()));
            }
        }
        if m.host.is_some() && !kind_is(&[KindName::HttpRequest, KindName::ToolCall]) {
            return Err(mismatch("host", "http.request and tool.call (a tool's `url` input)"));
        }
        if let Some(x) = &m.method {
            let up = x.trim().to_ascii_uppercase();
            if up.is_empty() || up.len() > 20 || !up.chars().all(|c| c.is_ascii_uppercase()) {
                return Err(invalid("invalid_match", format!("`{}` is not an HTTP method", clip(x, 40))));
            }
            m.method = Some(up);
        }
        if let Some(h) = &m.host {
            m.host = Some(if h.contains("://") {
                crate::credentials::normalize_origin(h)?
            } else {
                match assent_commands::host::normalize(h) {
                    Some(n) if n.len() <= 253 => n,
                    _ => return Err(invalid("invalid_host", format!("`{}` is not a host name", clip(h, 80)))),
                }
            });
        }
        if let Some(c) = &m.credential
            && !self.credential_map().contains_key(c)
        {
            return Err(invalid("unknown_credential", format!("no credential `{}`", clip(c, 64))));
        }
        Compiled::new(m.clone(), effect).map_err(|e| invalid(e.code, e.message))?;
        Ok(m)
    }

    /// What the rules in force say about a proposal `agent` might make (`req` as it would be
    /// posted). Nothing is stored; the kind validates the payload as it would on posting.
    pub async fn test_rules(&self, agent: &str, mut req: NewProposal) -> Result<Verdict, CoreError> {
        crate::names::validate_agent_name(agent)?;
        super::envelope::envelope(&mut req, &self.inner.config)?;
        let kind = self.inner.kinds.get(&req.kind)?.clone();
        let prepared = self.prepare(&kind, agent, req.payload).await?;
        let mut subject = Subject::new(agent, kind.name(), kind.facts(&prepared.payload));
        subject.can_confine.retain(|c| self.inner.config.can_confine.contains(c));
        subject.within_work_roots(&self.inner.config.work_roots);
        let set = self.rule_set();
        let Some(c) = set.decide(&subject, self.now()) else {
            return Ok(Verdict { effect: Effect::Ask, rule: None });
        };
        let (effect, id) = (c.effect, c.id.clone());
        Ok(Verdict { effect, rule: self.inner.ledger.store().rule(&id).await? })
    }

    /// What rules see of a stored proposal (its approved payload when the person edited it).
    fn subject_of(&self, p: &Proposal) -> Result<Subject, CoreError> {
        let kind = self.inner.kinds.of(p.kind)?;
        let payload = p.decision.as_ref().and_then(|d| d.edited_payload.as_ref()).unwrap_or(&p.payload);
        if p.pruned_at.is_some() {
            return Err(CoreError::InvalidState {
                message: format!("proposal `{}` is past the retention; its content was pruned", clip(&p.id, 80)),
            });
        }
        let typed = payload.of(p.kind).map_err(|message| CoreError::InvalidState { message })?;
        Ok(Subject::new(p.agent.clone(), p.kind, kind.facts(&typed)))
    }

    /// The rule "allow similar" would make from a proposal, in words, without saving it.
    pub async fn similar(&self, id: &str) -> Result<Similar, CoreError> {
        let p = self.get(&super::Principal::Owner, id).await?;
        let m = self.similar_match(&p)?;
        Ok(Similar { description: describe(Effect::Allow, &m), matches: m })
    }

    /// The match "allow similar" saves for `p`, or why there is none (`no_similar_rule`); a
    /// command that runs a project script pins the script's definition as it is now.
    pub(super) fn similar_match(&self, p: &Proposal) -> Result<RuleMatch, CoreError> {
        let subject = self.subject_of(p)?;
        let mut m = crate::rules::similar(&subject).map_err(|why| CoreError::invalid("no_similar_rule", why))?;
        if m.input.is_some()
            && let (Some(cwd), Some(line)) = (subject.facts.cwd.as_deref(), subject.line.as_ref())
            && let [only] = line.commands.as_slice()
        {
            let words: Option<Vec<&str>> = only.words.iter().map(|w| w.as_deref()).collect();
            m.script = words.and_then(|w| crate::rules::scripts::pin(&w, std::path::Path::new(cwd)));
        }
        Ok(m)
    }

    /// Saves the "allow similar" rule of a proposal the person just approved.
    pub(super) async fn allow_similar(
        &self,
        actor: &Actor,
        p: &Proposal,
        expires_in: Option<i64>,
    ) -> Result<Rule, CoreError> {
        let mut m = self.similar_match(p)?;
        // The hosts the person let it reach, where they chose others than the reader's.
        if let Some(d) = p.decision.as_ref().filter(|d| d.confine.is_some() && !m.reaches.is_empty()) {
            m.reaches.clone_from(&d.hosts);
        }
        let note = Some(format!("allowed like proposal {}", p.id));
        self.add_rule(actor, NewRule { effect: Effect::Allow, matches: m, everything: false, expires_in, note }).await
    }

    /// The facts of a prepared payload, the rule that decides it now, if any, with the
    /// confinement an allow runs it under with the hosts its box reaches, and the rule log's position the rules that decided
    /// are at.
    pub(super) fn consult(
        &self,
        agent: &str,
        kind: &dyn crate::kinds::Kind,
        payload: &crate::payloads::Payload,
        now: Timestamp,
    ) -> (Facts, Option<RuledBy>, i64) {
        let facts = kind.facts(payload);
        let set = self.rule_set();
        if !set.may_decide(&facts) {
            return (facts, None, set.seq());
        }
        let mut subject = Subject::new(agent, kind.name(), facts);
        subject.can_confine.retain(|c| self.inner.config.can_confine.contains(c));
        subject.within_work_roots(&self.inner.config.work_roots);
        let ruling = set.rule(&subject, now);
        let winner = ruling.rule.map(|c| (c.clone(), ruling.confine, ruling.hosts));
        (subject.facts, winner, set.seq())
    }
}
