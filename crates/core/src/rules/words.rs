//! Rules in plain words, and the rule "allow similar" derives from a proposal.

use super::{Confine, Effect, RuleMatch, Subject};
use crate::payloads::KindName;

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
    if let Some(b) = m.builtin.as_deref() {
        let verb = if effect == Effect::Allow { "allow" } else { "match" };
        let what = match b {
            "box" => {
                "any command that stays in the working folder's box (run in the `workspace` box: it writes inside the folder only, never its executable configuration, with no network but a package registry an install needs, no process outside and no secrets from the environment); deleting, forcing or rewriting (`rm`, `git reset --hard`, `git clean`, a rebase), any other host, publishing and privilege still ask"
            }
            "build_test" => {
                "builds and tests (built in: `npm test`, `cargo test`, `pytest`, `make`, ...), run confined so that they write only inside the working folder, never its executable configuration (`.git`, `package.json`, a `Makefile`), with no network and no secrets from the environment"
            }
            _ => {
                "commands that only read, inside the working folder, run confined so that they can do nothing more (built in: `ls`, `cat README.md`, `git status`, `grep -rn x src`; the kernel keeps them from writing, reading outside the folder, the network and the environment's secrets)"
            }
        };
        return format!("{verb} {what}");
    }
    if let Some(i) = &m.input {
        if m.exact {
            what.push(format!("run exactly {}", code(i)));
        } else {
            let more = match assent_commands::Prefix::parse(i) {
                Ok(p) if effect == Effect::Allow => {
                    let raised: Vec<&str> =
                        ["write", "delete", "force", "network", "publish", "exec", "privilege", "relocate"]
                            .into_iter()
                            .filter(|w| !p.effects.words().contains(w))
                            .collect();
                    if raised.is_empty() || !p.known {
                        if p.known { String::new() } else { " (no further options)".to_string() }
                    } else {
                        format!(" (not when more words {})", raised_words(&raised))
                    }
                }
                _ => String::new(),
            };
            what.push(format!("run {}{more}", code(&format!("{i} …"))));
        }
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
        let verb = match m.kind.as_deref().and_then(KindName::parse) {
            Some(KindName::FileWrite) => "write files matching",
            Some(KindName::FileDelete) => "delete files matching",
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
        && !(KindName::parse(k) == Some(KindName::ToolCall) && m.tool.is_some())
    {
        what.insert(0, format!("propose {k}"));
    }
    if what.is_empty() {
        what.push("do anything".to_string());
    }
    let action = what.join(" ");
    // An allow of commands says how they run: confined by the kernel, or as the client runs
    // them (a rule only the person writes).
    let mut confined = match (m.confine, effect, m.input.is_some()) {
        (Some(c), Effect::Allow, _) if m.reaches.is_empty() => format!(", confined ({})", c.as_str()),
        (Some(c), Effect::Allow, _) => format!(", confined ({}, reaching {})", c.as_str(), m.reaches.join(", ")),
        (None, Effect::Allow, true) => ", unconfined".to_string(),
        _ => String::new(),
    };
    if let Some(pin) = &m.script {
        confined.push_str(&format!(", while {} is as it was", code(&pin.file)));
    }
    match effect {
        Effect::Allow => format!("allow {who} to {action}{confined}"),
        Effect::Ask => format!("always ask before {who} may {action}"),
        Effect::Deny => format!("refuse to let {who} {action}"),
    }
}

fn raised_words(r: &[&str]) -> String {
    fn phrase(w: &str) -> &str {
        match w {
            "write" => "write files",
            "delete" => "delete",
            "force" => "force or rewrite",
            "network" => "reach the network",
            "publish" => "publish or push",
            "exec" => "run code",
            "privilege" => "take privileges",
            "relocate" => "act on another folder",
            other => other,
        }
    }
    let parts: Vec<&str> = r.iter().map(|w| phrase(w)).collect();
    match parts.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        Some((last, _)) => (*last).to_string(),
        None => String::new(),
    }
}

/// The confinement a rule Assent saves for the person ("allow similar", an imported allow)
/// runs a command with `effects` under: `read` for one that only reads, `workspace` for any
/// other. None where no confinement lets it work (it reaches the network, publishes, takes
/// privileges): why, in words. Such a rule is the person's own to write, unconfined.
pub fn confinement_for(effects: assent_commands::Effects) -> Result<Confine, String> {
    use assent_commands::Effects as E;
    let beyond = E::NETWORK.union(E::PUBLISH).union(E::PRIVILEGE);
    if effects.any(beyond) {
        let raised: Vec<&str> =
            effects.words().into_iter().filter(|w| ["network", "publish", "privilege"].contains(w)).collect();
        return Err(format!(
            "it would {}, which no confinement allows; a rule that lets it run unconfined is yours to write (`assent rule add`, or the Rules page)",
            raised_words(&raised)
        ));
    }
    Ok(if effects.only_reads() { Confine::Read } else { Confine::Workspace })
}

/// The narrowest useful rule allowing what a proposal does again, never wider than what was
/// approved: this agent and kind; for a command that only reads, its program and subcommands
/// with every operand inside the working folder (`./**`), confined to `read`; for any other
/// command, or a line that is not one plain command, the command exactly as approved, confined
/// to `workspace` (or `read` if it only reads); a file's folder (not below it), or for
/// executable configuration that file alone; an HTTP call's origin, method, credential and the
/// folder of its path. A command no confinement lets work (see [`confinement_for`]) has none:
/// why, in words.
pub fn similar(s: &Subject) -> Result<RuleMatch, String> {
    let f = &s.facts;
    let mut m = RuleMatch { agent: Some(s.agent.clone()), kind: Some(s.kind.to_string()), ..Default::default() };
    m.tool = f.tool.as_deref().map(globset::escape);
    if let (Some(line), Some(cmd)) = (&s.line, &f.command) {
        let effects = line.commands.iter().fold(assent_commands::Effects::NONE, |e, c| e.union(c.effects));
        let writes = line.commands.iter().any(|c| !c.writes.is_empty());
        let effects = if writes { effects.union(assent_commands::Effects::WRITE) } else { effects };
        // A command that reaches the network (a push, an install) is boxed reaching the hosts
        // the reader names for it, and only as approved; one whose hosts it cannot name, or
        // that takes privileges, gets no rule.
        let hosts = assent_commands::reach::hosts(line, f.cwd.as_deref()).filter(|h| !h.is_empty());
        let networked = effects.any(assent_commands::Effects::NETWORK.union(assent_commands::Effects::PUBLISH));
        let confine = match hosts {
            Some(h) if networked && !effects.any(assent_commands::Effects::PRIVILEGE) => {
                m.reaches = h;
                Ok(Confine::Workspace)
            }
            _ => confinement_for(effects),
        };
        m.confine = Some(confine.map_err(|why| format!("No rule for similar commands: {why}."))?);
        let reading = line.is_plain()
            && f.cwd.is_some()
            && line
                .commands
                .iter()
                .find(|c| !c.inner)
                .is_some_and(|c| c.known && c.effects.only_reads() && c.writes.is_empty() && c.via.is_empty());
        let named = line.commands.iter().find(|c| !c.inner).and_then(|c| {
            let words: Option<Vec<&str>> = c.words.iter().take(c.named).map(|w| w.as_deref()).collect();
            words.and_then(|w| shlex::try_join(w).ok())
        });
        match named {
            Some(prefix) if reading && f.argv.is_none() && m.reaches.is_empty() => {
                m.input = Some(prefix);
                m.path = Some("./**".into());
            }
            _ => {
                m.input = Some(cmd.trim().to_string());
                m.exact = true;
            }
        }
        return Ok(m);
    }
    if s.kind == KindName::HttpRequest {
        m.host = f.origin.clone().or_else(|| f.host.clone());
        m.method = f.method.clone();
        m.credential = f.credential.clone();
        if let Some(p) = &f.path
            && let Some((dir, _)) = p.rsplit_once('/')
        {
            m.path = Some(format!("{}/*", globset::escape(dir)));
        }
        return Ok(m);
    }
    // A file: its folder, not below it (a rule on files never covers writing executable
    // configuration it does not name); executable configuration itself, that one file, so an
    // approved edit of `package.json` never allows one of the `Makefile` beside it.
    if let Some(p) = s.path.as_ref().and_then(|p| p.lexical.as_deref()) {
        m.path = Some(match p.rsplit_once('/') {
            Some((dir, _)) if !assent_commands::executable::is_executable(p) => {
                format!("{}/*", globset::escape(dir))
            }
            _ => globset::escape(p),
        });
    }
    m.method = f.method.clone();
    m.host = f.host.clone();
    m.credential = f.credential.clone();
    Ok(m)
}
