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

mod command;
mod set;
mod words;

pub use command::command_words;
pub use set::{Candidate, Compiled, RuleSet};
pub use words::{describe, similar};

use crate::time::Timestamp;
use command::every_command;
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
