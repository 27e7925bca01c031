//! What a coding agent is told about its gated tool call: the bridge from a `tool.call`
//! proposal (as the API returns it) to the allow / deny / ask answers of agent permission
//! hooks and of the MCP permission prompt. Shared so that every door says the same thing.

use crate::proposal::Proposal;
use crate::status::Status;
use serde_json::Value;

/// What the person (or the lack of one) said about a tool call.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Go ahead, with the input to use when the person edited it.
    Allow(Option<Value>),
    /// Go ahead, but only in a box: a rule allowed the command, or a person approved it, to run
    /// in a box, so the client runs `assent run PROPOSAL`, which runs the approved command so (a
    /// client that cannot rewrite the call never gets this: it did not say it could).
    Confined {
        /// The proposal whose approved command runs.
        proposal: String,
        /// The box.
        confine: crate::rules::Confine,
        /// Whether a rule allowed it (else a person approved it).
        by_rule: bool,
        /// The hosts the box reaches (none: no network).
        hosts: Vec<String>,
    },
    /// Do not, and why.
    Deny(String),
    /// Nobody decided: let the client ask in its own way, and why.
    Ask(String),
}

pub use assent_agents::{RECEIPT_ARG, command_text};

/// A short title for a tool call: the tool and the first line of what it acts on.
pub fn tool_call_title(tool: &str, input: &Value) -> String {
    // Cline's `run_commands` names a list of commands; OpenCode's `edit` and `write` a `filePath`.
    let commands = || {
        let list: Vec<&str> = input.get("commands")?.as_array()?.iter().filter_map(Value::as_str).collect();
        (!list.is_empty()).then(|| list.join(" ; "))
    };
    let detail = input
        .get("command")
        .and_then(command_text)
        .or_else(commands)
        .or_else(|| {
            ["file_path", "filePath", "path", "url", "pattern", "notebook_path"]
                .iter()
                .find_map(|k| input.get(*k).and_then(Value::as_str).map(str::to_string))
        })
        .unwrap_or_default();
    let one_line: String = detail.lines().next().unwrap_or("").chars().take(120).collect();
    if one_line.is_empty() { tool.to_string() } else { format!("{tool}: {one_line}") }
}

/// Turns a `tool.call` proposal (settled or still pending) into a verdict.
pub fn verdict_of(p: &Proposal) -> Verdict {
    let d = p.decision.as_ref();
    match p.status {
        Status::Approved => {
            if let Some(confine) = d.and_then(|d| d.confine) {
                let by_rule = d.is_some_and(|d| d.channel == crate::proposal::Channel::Rule);
                let hosts = d.map(|d| d.hosts.clone()).unwrap_or_default();
                return Verdict::Confined { proposal: p.id.clone(), confine, by_rule, hosts };
            }
            if d.is_none_or(|d| d.edited_payload.is_none()) {
                return Verdict::Allow(None);
            }
            // The person approved an edit: the edited input runs, or nothing does (never the
            // agent's own input in its place).
            match p.approved_input() {
                Some(input) => Verdict::Allow(Some(input)),
                None => Verdict::Deny(
                    "Approved in Assent with an edit that cannot be read here as a tool call: nothing runs; look at it in Assent".into(),
                ),
            }
        }
        Status::Rejected => Verdict::Deny(match d.and_then(|d| d.reason.as_deref()) {
            Some(r) => format!("Rejected in Assent: {r}"),
            None => "Rejected in Assent".into(),
        }),
        Status::Refined => Verdict::Deny(format!(
            "The person asks for changes in Assent: {}",
            d.and_then(|d| d.feedback.as_deref()).unwrap_or("(no feedback)")
        )),
        Status::Expired => Verdict::Ask("Nobody decided in Assent before the proposal expired".into()),
        Status::Withdrawn => Verdict::Ask("The proposal was withdrawn in Assent".into()),
        _ => Verdict::Ask("No decision in Assent in time".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A tool.call proposal as the API returns it, from the fields that matter here.
    fn proposal(status: &str, decision: Value, approved: Value) -> Proposal {
        let v = json!({"id": "p_1", "kind": "tool.call", "agent": "a", "payload": {"tool": "Bash", "input": {}},
            "preview": null, "status": status, "settled": true, "created_at": "1970-01-01T00:00:00.000Z",
            "updated_at": "1970-01-01T00:00:00.000Z", "expires_at": "1970-01-01T00:00:00.000Z",
            "decision": decision, "approved_payload": approved});
        serde_json::from_value(v).unwrap_or_else(|e| panic!("{e}"))
    }

    fn decision(extra: Value) -> Value {
        let mut d = json!({"outcome": "approve", "by": "owner", "channel": "app", "at": "1970-01-01T00:00:00.000Z"});
        if let (Some(d), Value::Object(e)) = (d.as_object_mut(), extra) {
            d.extend(e);
        }
        d
    }

    #[test]
    fn verdicts_from_proposals() {
        let approved = proposal("approved", decision(json!({})), json!({"tool": "Bash", "input": {}}));
        assert_eq!(verdict_of(&approved), Verdict::Allow(None));
        let edited = proposal(
            "approved",
            decision(json!({"edited_payload": {"tool": "Bash", "input": {"command": "ls"}}})),
            json!({"tool": "Bash", "input": {"command": "ls"}}),
        );
        assert_eq!(verdict_of(&edited), Verdict::Allow(Some(json!({"command": "ls"}))));
        // An edit that does not read as a call (a newer server's field, a damaged record): the
        // agent's own input never runs in its place.
        let unreadable = proposal(
            "approved",
            decision(json!({"edited_payload": {"tool": "Bash", "input": {"command": "ls"}, "later": 1}})),
            json!({"tool": "Bash", "input": {"command": "ls"}, "later": 1}),
        );
        assert!(matches!(verdict_of(&unreadable), Verdict::Deny(m) if m.contains("nothing runs")));
        let rejected = proposal("rejected", decision(json!({"outcome": "reject", "reason": "not now"})), Value::Null);
        assert_eq!(verdict_of(&rejected), Verdict::Deny("Rejected in Assent: not now".into()));
        let refined =
            proposal("refined", decision(json!({"outcome": "refine", "feedback": "use --dry-run"})), Value::Null);
        assert!(matches!(verdict_of(&refined), Verdict::Deny(m) if m.contains("use --dry-run")));
        assert!(matches!(verdict_of(&proposal("pending", Value::Null, Value::Null)), Verdict::Ask(_)));
        assert!(
            matches!(verdict_of(&proposal("expired", Value::Null, Value::Null)), Verdict::Ask(m) if m.contains("expired"))
        );
    }

    #[test]
    fn titles_say_what_the_call_does() {
        assert_eq!(tool_call_title("Bash", &json!({"command": "rm -rf build\necho done"})), "Bash: rm -rf build");
        assert_eq!(tool_call_title("Write", &json!({"file_path": "/tmp/x"})), "Write: /tmp/x");
        assert_eq!(tool_call_title("mcp__x__y", &json!({"n": 1})), "mcp__x__y");
        assert_eq!(
            tool_call_title("shell", &json!({"command": ["bash", "-lc", "git push --force origin main"]})),
            "shell: git push --force origin main"
        );
        assert_eq!(tool_call_title("shell", &json!({"command": ["ls", "-la"]})), "shell: ls -la");
        // Cline's list of commands, OpenCode's file path.
        assert_eq!(
            tool_call_title("run_commands", &json!({"commands": ["npm test", "ls"]})),
            "run_commands: npm test ; ls"
        );
        assert_eq!(tool_call_title("edit", &json!({"filePath": "/p/src/a.ts", "oldString": "x"})), "edit: /p/src/a.ts");
    }
}
