//! Rules in plain words, and the rule "allow similar" derives from a proposal.

use super::{Effect, RuleMatch, Subject};

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
