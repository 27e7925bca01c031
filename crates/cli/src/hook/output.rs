//! What a hook prints: the verdict in the shape of the client's event, and the rewrite that
//! runs a call confined.

use super::{Agent, Event};
use crate::client::AgentAuth;
use crate::home::Home;
use assent_core::verdict::Verdict;
use serde_json::{Value, json};

/// How the hook tells the client to run a call confined: the call's input with its command
/// replaced by `assent run PROPOSAL`, which runs the command Assent stored (never text of the
/// agent's quoted again) under the confinement the decision and its receipt name.
#[derive(Debug, Clone)]
pub(super) struct Rewrite {
    /// `'/usr/bin/assent' --home '…'` (and `--token-file '…'` when the hook was given one).
    prefix: String,
    /// The call's input as the client sent it.
    input: Value,
    /// The tool called.
    tool: String,
}

/// The program a client runs for a hook or a confined run: `assent-run` beside this binary where
/// it is installed (it starts in a fraction of the time: it does nothing else), else this binary.
pub(super) fn program() -> std::path::PathBuf {
    let exe = std::env::current_exe().unwrap_or_else(|_| "assent".into());
    let light = exe.with_file_name(format!("{}{}", crate::run::RUNNER, std::env::consts::EXE_SUFFIX));
    if light.is_file() { light } else { exe }
}

impl Rewrite {
    /// The rewrite for this `assent`, its home and token, of `input`.
    pub(super) fn new(home: &Home, auth: &AgentAuth, tool: &str, input: Value) -> Rewrite {
        let exe = program();
        let quote = |p: &std::path::Path| {
            let s = p.to_string_lossy();
            shlex::try_quote(&s).map(|q| q.into_owned()).unwrap_or_else(|_| s.into_owned())
        };
        let mut prefix = format!("{} --home {}", quote(&exe), quote(&home.dir));
        if let Some(t) = &auth.token_file {
            prefix.push_str(&format!(" --token-file {}", quote(t)));
        }
        Rewrite { prefix, input, tool: tool.to_string() }
    }

    /// Whether the call is one of Cline's own tools that need an input (`run_commands`,
    /// `editor`): given one without it, Cline refuses the call and runs nothing.
    fn cline_needs_input(&self) -> bool {
        matches!(self.tool.as_str(), "run_commands" | "editor")
    }

    /// The input that runs `proposal` confined.
    fn input(&self, proposal: &str) -> Value {
        let mut i = self.input.clone();
        i["command"] = json!(format!("{} run {proposal}", self.prefix));
        i
    }
}

/// The output for a verdict, in the event's shape and for the client that asked.
/// Why a call runs in a box, as the client shows it (the model reads it too).
fn boxed_reason(proposal: &str, confine: assent_core::rules::Confine, by_rule: bool, hosts: &[String]) -> String {
    let who = if by_rule { "Allowed by a rule in Assent" } else { "Approved in Assent" };
    match hosts {
        [] => format!("{who}, to run in the {} box: {proposal}", confine.as_str()),
        _ => format!("{who}, to run in the {} box reaching {}: {proposal}", confine.as_str(), hosts.join(", ")),
    }
}

pub(super) fn output(client: Agent, event: Event, v: &Verdict, rewrite: &Rewrite) -> Value {
    match (event, v) {
        // Gemini CLI: a decision and a reason; a changed call replaces the whole input. It has
        // no way back to its own prompt (its `ask` waits for ever headless): not run.
        (Event::BeforeTool, Verdict::Allow(None)) => json!({"decision": "allow", "reason": "Approved in Assent"}),
        (Event::BeforeTool, Verdict::Allow(Some(input))) => json!({"decision": "allow",
            "reason": "Approved in Assent with edits",
            "hookSpecificOutput": {"hookEventName": "BeforeTool", "tool_input": input}}),
        (Event::BeforeTool, Verdict::Confined { proposal, confine, by_rule, hosts }) => json!({"decision": "allow",
            "reason": boxed_reason(proposal, *confine, *by_rule, hosts),
            "hookSpecificOutput": {"hookEventName": "BeforeTool", "tool_input": rewrite.input(proposal)}}),
        (Event::BeforeTool, Verdict::Deny(why) | Verdict::Ask(why)) => json!({"decision": "deny", "reason": why}),
        // Copilot CLI: its own names; changed arguments replace the whole input. Its `ask`
        // prompts in a terminal and denies in a headless run.
        (Event::CopilotPreToolUse, Verdict::Allow(input)) => {
            let mut o = json!({"permissionDecision": "allow", "permissionDecisionReason": "Approved in Assent"});
            if let Some(i) = input {
                o["modifiedArgs"] = i.clone();
                o["permissionDecisionReason"] = json!("Approved in Assent with edits");
            }
            o
        }
        (Event::CopilotPreToolUse, Verdict::Confined { proposal, confine, by_rule, hosts }) => {
            json!({"permissionDecision": "allow",
            "permissionDecisionReason": boxed_reason(proposal, *confine, *by_rule, hosts),
            "modifiedArgs": rewrite.input(proposal)})
        }
        (Event::CopilotPreToolUse, Verdict::Deny(why)) => {
            json!({"permissionDecision": "deny", "permissionDecisionReason": why})
        }
        (Event::CopilotPreToolUse, Verdict::Ask(why)) => {
            json!({"permissionDecision": "ask", "permissionDecisionReason": why})
        }
        // OpenCode, through Assent's plugin: it throws what is not allowed (the model reads the
        // reason) and runs with the arguments given. It has no prompt to hand back to: not run.
        (Event::OpencodeBefore, Verdict::Allow(None)) => json!({"decision": "allow"}),
        (Event::OpencodeBefore, Verdict::Allow(Some(input))) => json!({"decision": "allow", "args": input}),
        (Event::OpencodeBefore, Verdict::Confined { proposal, .. }) => {
            json!({"decision": "allow", "args": rewrite.input(proposal)})
        }
        (Event::OpencodeBefore, Verdict::Deny(why) | Verdict::Ask(why)) => json!({"decision": "deny", "reason": why}),
        // Cline: allowed calls run with the input given. It has no way to refuse one call with a
        // reason the model reads: its own tools that need an input are given one that is not
        // (nothing runs) and the reason as context; any other call stops the task (`cancel`).
        // It has no prompt to hand back to: not run.
        (Event::ClinePreToolUse, Verdict::Allow(None)) => json!({"cancel": false}),
        (Event::ClinePreToolUse, Verdict::Allow(Some(input))) => json!({"overrideInput": input}),
        (Event::ClinePreToolUse, Verdict::Deny(why) | Verdict::Ask(why)) if rewrite.cline_needs_input() => {
            json!({"overrideInput": {"refused_in_assent": why}, "contextModification": why})
        }
        (Event::ClinePreToolUse, Verdict::Deny(why) | Verdict::Ask(why)) => {
            json!({"cancel": true, "errorMessage": why})
        }
        (Event::ClinePreToolUse, Verdict::Confined { proposal, .. }) => {
            json!({"cancel": true, "errorMessage": format!("{proposal} was allowed only in a box, which Cline cannot run")})
        }
        // Codex cannot run a rewritten call (and never says it can confine): it asks.
        (_, Verdict::Confined { proposal, .. }) if client == Agent::Codex => json!({ "systemMessage":
            format!("Assent allowed {proposal} only confined, which Codex cannot run; it asks you instead") }),
        (Event::PreToolUse, Verdict::Confined { proposal, confine, by_rule, hosts }) => json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse", "permissionDecision": "allow",
            "permissionDecisionReason": boxed_reason(proposal, *confine, *by_rule, hosts),
            "updatedInput": rewrite.input(proposal)}}),
        (Event::PermissionRequest, Verdict::Confined { proposal, .. }) => json!({"hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": {"behavior": "allow", "updatedInput": rewrite.input(proposal)}}}),
        // Codex fails closed on an answer that changes the call: the edit goes back as words.
        (Event::PermissionRequest, Verdict::Allow(Some(edited))) if client == Agent::Codex => {
            let call = edited
                .get("command")
                .and_then(assent_core::verdict::command_text)
                .unwrap_or_else(|| edited.to_string());
            json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "deny",
                "message": format!("The person approved this only as edited in Assent. Run this instead: {call}")}}})
        }
        (Event::PreToolUse, Verdict::Allow(input)) => {
            let mut o = json!({"hookEventName": "PreToolUse", "permissionDecision": "allow",
                "permissionDecisionReason": "Approved in Assent"});
            if let Some(i) = input {
                o["updatedInput"] = i.clone();
                o["permissionDecisionReason"] = json!(if i.get(assent_client::RECEIPT_ARG).is_some() {
                    "Approved in Assent (its receipt handed to the tool)"
                } else {
                    "Approved in Assent with edits"
                });
            }
            json!({ "hookSpecificOutput": o })
        }
        (Event::PreToolUse, Verdict::Deny(why)) => json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": why}}),
        (Event::PreToolUse, Verdict::Ask(why)) => json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse", "permissionDecision": "ask", "permissionDecisionReason": why}}),
        (Event::PermissionRequest, Verdict::Allow(input)) => {
            let mut d = json!({"behavior": "allow"});
            if let Some(i) = input {
                d["updatedInput"] = i.clone();
            }
            json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": d}})
        }
        (Event::PermissionRequest, Verdict::Deny(why)) => json!({"hookSpecificOutput": {
            "hookEventName": "PermissionRequest", "decision": {"behavior": "deny", "message": why}}}),
        // This event has no "ask": saying nothing leaves the decision to the client's dialog.
        (Event::PermissionRequest, Verdict::Ask(why)) => json!({ "systemMessage": why }),
    }
}
