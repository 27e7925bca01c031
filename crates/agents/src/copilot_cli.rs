//! GitHub Copilot CLI: a `preToolUse` hook in a hooks file of its own format (camel case:
//! `toolName`, `toolArgs`, `cwd`, `sessionId`). Copilot runs a call whose hook times out: keep
//! `--timeout` under `timeoutSec`.

use crate::agent::{Agent, Answer, Call, Facts, Format, Places, Rewrite, Wiring, boxed_reason, carry};
use crate::check::{Check, Hook, missing_program, on_path, read_json, too_little_time};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// Copilot CLI.
pub(crate) struct CopilotCli;

const NAME: &str = "copilot cli";

/// Copilot CLI's own default for a hook's timeout, in seconds.
const DEFAULT_TIMEOUT_SECS: u64 = 30;

/// GitHub Copilot CLI's tools that only read (or list and read its own shells and agents): not
/// gated unless named with `--tools`.
const READ_ONLY: [&str; 8] =
    ["view", "glob", "grep", "read_bash", "list_bash", "list_agents", "read_agent", "fetch_copilot_cli_documentation"];

/// What GitHub Copilot CLI says of itself.
const FACTS: Facts = Facts {
    shell_tool: Some("bash"),
    ..Facts::new(
        "copilot-cli",
        "GitHub Copilot CLI",
        "GitHub Copilot CLI's preToolUse hook",
        "GitHub Copilot CLI preToolUse hooks (\"preToolUse\" in a hooks file; keep --timeout under timeoutSec)",
        &READ_ONLY,
    )
};

impl Agent for CopilotCli {
    fn facts(&self) -> &'static Facts {
        &FACTS
    }

    fn read(&self, ev: Value) -> Result<Call, String> {
        let tool = ev["toolName"].as_str().ok_or("the hook event has no toolName (a Copilot CLI preToolUse event)")?;
        // Its arguments come as an object, or as their JSON text.
        let input = match &ev["toolArgs"] {
            Value::String(text) => {
                serde_json::from_str(text).map_err(|e| format!("the event's toolArgs is not JSON: {e}"))?
            }
            Value::Null => json!({}),
            args => args.clone(),
        };
        let mut out = json!({"hook_event_name": "preToolUse", "tool_name": tool, "tool_input": input});
        carry(&mut out, &[(ev.get("cwd"), "cwd"), (ev.get("sessionId"), "session_id")]);
        Ok(Call { event: "preToolUse", ev: out })
    }

    // Its own names; changed arguments replace the whole input. Its `ask` prompts in a terminal
    // and denies in a headless run.
    fn answer(&self, _call: &Call, answer: &Answer, rewrite: &Rewrite) -> Value {
        match answer {
            Answer::Allow(input) => {
                let mut o = json!({"permissionDecision": "allow", "permissionDecisionReason": "Approved in Assent"});
                if let Some(i) = input {
                    o["modifiedArgs"] = i.clone();
                    o["permissionDecisionReason"] = json!("Approved in Assent with edits");
                }
                o
            }
            Answer::Boxed { proposal, profile, by_rule, hosts } => json!({"permissionDecision": "allow",
                "permissionDecisionReason": boxed_reason(proposal, profile, *by_rule, hosts),
                "modifiedArgs": rewrite.input(proposal)}),
            Answer::Deny(why) => json!({"permissionDecision": "deny", "permissionDecisionReason": why}),
            Answer::Ask(why) => json!({"permissionDecision": "ask", "permissionDecisionReason": why}),
        }
    }

    fn wiring(&self, places: &Places, project: bool) -> Result<Wiring, String> {
        let file = if project {
            places.cwd.join(".github/hooks/assent.json")
        } else {
            places.dir("COPILOT_HOME", ".copilot").join("hooks/assent.json")
        };
        let entry = |line: &str, secs: u64| json!({"type": "command", "bash": line, "timeoutSec": secs});
        let format = Format::HookTable { event: "preToolUse", entry, versioned: true };
        Ok(Wiring { file, format, what: "the preToolUse hook" })
    }

    fn check(&self, places: &Places) -> Check {
        check(places)
    }
}

fn check(places: &Places) -> Check {
    let home = places.dir("COPILOT_HOME", ".copilot");
    let mut files: Vec<PathBuf> = std::fs::read_dir(home.join("hooks"))
        .map(|d| d.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "json")).collect())
        .unwrap_or_default();
    files.sort();
    files.extend([home.join("settings.json"), home.join("config.json")]);
    let hooks: Vec<Hook> = files.iter().flat_map(|f| copilot_hooks_in(f)).collect();
    if hooks.is_empty() {
        return Check::unwired(
            NAME,
            home.exists() || on_path("copilot").is_some(),
            "no Assent hook in its hooks: its tool calls do not come to Assent",
            "assent connect copilot-cli (writes ~/.copilot/hooks/assent.json; docs/clients.md: \"GitHub Copilot CLI\")",
        );
    }
    let found: Vec<String> = hooks.iter().map(|h| format!("hook in {}", places.tilde(&h.file))).collect();
    for h in &hooks {
        if let Some(c) = missing_program(NAME, "Copilot CLI", h, &found) {
            return c;
        }
        if let Some(c) = too_little_time(NAME, "Copilot CLI", h, &places.user, "\"timeoutSec\"", 1000) {
            return c;
        }
        if read_json(&h.file).is_some_and(|v| v["disableAllHooks"] == true) {
            let detail = format!("hooks are switched off in {}", places.tilde(&h.file));
            return Check::problem(NAME, detail, "remove \"disableAllHooks\"");
        }
    }
    Check::ok(NAME, found.join(", "))
}

/// The `assent hook copilot-cli` hooks of the preToolUse event in `file` (each an entry, or a
/// group of them under a matcher).
fn copilot_hooks_in(file: &Path) -> Vec<Hook> {
    let Some(v) = read_json(file) else { return Vec::new() };
    let entries = v["hooks"]["preToolUse"].as_array().cloned().unwrap_or_default();
    let flat = entries.iter().flat_map(|e| match e["hooks"].as_array() {
        Some(group) => group.iter().collect::<Vec<_>>(),
        None => vec![e],
    });
    flat.filter_map(|h| {
        let command = h["bash"].as_str().or_else(|| h["command"].as_str())?;
        let secs = h["timeoutSec"].as_u64().or_else(|| h["timeout"].as_u64()).unwrap_or(DEFAULT_TIMEOUT_SECS);
        (command.contains("assent") && command.contains("hook copilot-cli")).then(|| Hook {
            file: file.to_path_buf(),
            command: command.to_string(),
            timeout_ms: secs * 1000,
            name: None,
        })
    })
    .collect()
}
