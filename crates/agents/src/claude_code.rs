//! Claude Code: `PreToolUse` (every call) or `PermissionRequest` (what it would prompt for)
//! command hooks in its settings, and `assent mcp` as an MCP server.

use crate::agent::{Agent, Answer, Call, Facts, Format, Places, RECEIPT_ARG, Rewrite, Wiring, boxed_reason};
use crate::check::{Check, hook_table, on_path, read_json};
use serde_json::{Value, json};
use std::path::Path;

/// Claude Code.
pub(crate) struct ClaudeCode;

/// Claude Code's (and Codex's) tools that only read: not gated unless named with `--tools`.
pub(crate) const READ_ONLY: [&str; 11] = [
    "Read",
    "Glob",
    "Grep",
    "LS",
    "NotebookRead",
    "WebSearch",
    "TodoRead",
    "TodoWrite",
    "BashOutput",
    "Task",
    "ExitPlanMode",
];

const NAME: &str = "claude code";

/// What Claude Code says of itself.
const FACTS: Facts = Facts {
    shell_tool: Some("Bash"),
    carries_receipt: true,
    ..Facts::new(
        "claude-code",
        "Claude Code",
        "Claude Code's hook",
        "Claude Code PreToolUse or PermissionRequest hooks",
        &READ_ONLY,
    )
};

impl Agent for ClaudeCode {
    fn facts(&self) -> &'static Facts {
        &FACTS
    }

    fn read(&self, ev: Value) -> Result<Call, String> {
        read_claude_event(ev)
    }

    fn answer(&self, call: &Call, answer: &Answer, rewrite: &Rewrite) -> Value {
        claude_shape(call.event, answer, rewrite)
    }

    fn wiring(&self, places: &Places, project: bool) -> Result<Wiring, String> {
        let dir = if project { places.cwd.join(".claude") } else { places.dir("CLAUDE_CONFIG_DIR", ".claude") };
        let entry = |line: &str, secs: u64| {
            json!({"matcher": "Bash|Edit|MultiEdit|Write|NotebookEdit|mcp__.*",
                "hooks": [{"type": "command", "command": line, "timeout": secs}]})
        };
        let format = Format::HookTable { event: "PreToolUse", entry, versioned: false };
        Ok(Wiring { file: dir.join("settings.json"), format, what: "the PreToolUse hook" })
    }

    fn check(&self, places: &Places) -> Check {
        check(places)
    }
}

/// A `PreToolUse` or `PermissionRequest` event (Claude Code's, and Codex's contract).
pub(crate) fn read_claude_event(ev: Value) -> Result<Call, String> {
    let event = match ev["hook_event_name"].as_str() {
        Some("PreToolUse") => "PreToolUse",
        Some("PermissionRequest") => "PermissionRequest",
        Some(other) => return Err(format!("assent hook answers PreToolUse and PermissionRequest events, not {other}")),
        None => return Err("the hook event has no hook_event_name".into()),
    };
    Ok(Call { event, ev })
}

/// The answer in the shape of Claude Code's `PreToolUse` and `PermissionRequest` hooks.
pub(crate) fn claude_shape(event: &str, answer: &Answer, rewrite: &Rewrite) -> Value {
    let pre = event == "PreToolUse";
    match answer {
        Answer::Boxed { proposal, profile, by_rule, hosts } if pre => json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse", "permissionDecision": "allow",
            "permissionDecisionReason": boxed_reason(proposal, profile, *by_rule, hosts),
            "updatedInput": rewrite.input(proposal)}}),
        Answer::Boxed { proposal, .. } => json!({"hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": {"behavior": "allow", "updatedInput": rewrite.input(proposal)}}}),
        Answer::Allow(input) if pre => {
            let mut o = json!({"hookEventName": "PreToolUse", "permissionDecision": "allow",
                "permissionDecisionReason": "Approved in Assent"});
            if let Some(i) = input {
                o["updatedInput"] = i.clone();
                o["permissionDecisionReason"] = json!(if i.get(RECEIPT_ARG).is_some() {
                    "Approved in Assent (its receipt handed to the tool)"
                } else {
                    "Approved in Assent with edits"
                });
            }
            json!({ "hookSpecificOutput": o })
        }
        Answer::Deny(why) if pre => json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": why}}),
        Answer::Ask(why) if pre => json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse", "permissionDecision": "ask", "permissionDecisionReason": why}}),
        Answer::Allow(input) => {
            let mut d = json!({"behavior": "allow"});
            if let Some(i) = input {
                d["updatedInput"] = i.clone();
            }
            json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": d}})
        }
        Answer::Deny(why) => json!({"hookSpecificOutput": {
            "hookEventName": "PermissionRequest", "decision": {"behavior": "deny", "message": why}}}),
        // This event has no "ask": saying nothing leaves the decision to the client's dialog.
        Answer::Ask(why) => json!({ "systemMessage": why }),
    }
}

fn check(places: &Places) -> Check {
    let user = &places.user;
    let config_dir = places.dir("CLAUDE_CONFIG_DIR", ".claude");
    let cwd = &places.cwd;
    let settings = [
        config_dir.join("settings.json"),
        config_dir.join("settings.local.json"),
        cwd.join(".claude/settings.json"),
        cwd.join(".claude/settings.local.json"),
    ];
    let mcp_files = [user.join(".claude.json"), config_dir.join(".claude.json"), cwd.join(".mcp.json")];
    let mut found = Vec::new();
    let mut commands = Vec::new();
    let mut events = Vec::new();
    for file in &settings {
        for (event, cmd) in hook_commands(file) {
            found.push(format!("hook in {}", places.tilde(file)));
            commands.push(cmd);
            events.push(event);
        }
    }
    for file in &mcp_files {
        for cmd in mcp_commands(file) {
            found.push(format!("MCP server in {}", places.tilde(file)));
            commands.push(cmd);
        }
    }
    found.dedup();
    let installed = config_dir.exists() || user.join(".claude.json").exists() || on_path("claude").is_some();
    if found.is_empty() {
        return Check::unwired(
            NAME,
            installed,
            "no Assent hook or MCP server in its settings: its tool calls do not come to Assent",
            "assent connect claude-code (adds the PreToolUse hook to ~/.claude/settings.json; docs/clients.md: \"Claude Code: every tool call through the inbox\")",
        );
    }
    // The hook runs the named program: it has to be found.
    for cmd in &commands {
        let program = cmd.split_whitespace().next().unwrap_or("");
        let exists = if program.contains('/') { Path::new(program).exists() } else { on_path(program).is_some() };
        if !exists {
            return Check::problem(
                NAME,
                format!("{} runs `{program}`, which is not on the PATH", found.join(", ")),
                "install the `assent` command (the .deb does; from source: `cargo install --path .`) or write its full path in the settings",
            );
        }
    }
    // A `PermissionRequest` hook is asked only where Claude Code would prompt: in any mode but
    // `default`, that is little or nothing. The settings later in `settings` win.
    let mode = settings
        .iter()
        .rev()
        .find_map(|f| read_json(f).and_then(|v| v["permissions"]["defaultMode"].as_str().map(str::to_string)));
    if !events.iter().any(|e| e == "PreToolUse") && events.iter().any(|e| e == "PermissionRequest") {
        // `manual` is Claude Code's other name for `default`.
        let set = mode.as_deref().map(|m| if m == "manual" { "default" } else { m });
        if set != Some("default") {
            return Check::note(
                NAME,
                format!(
                    "{}: a PermissionRequest hook, and Claude Code's permission mode is {}",
                    found.join(", "),
                    mode_words(set)
                ),
                "make the hook a PreToolUse hook, or set \"permissions\": {\"defaultMode\": \"default\"} in the same settings (docs/clients.md: \"Which hook sees what\")",
            );
        }
    }
    Check::ok(NAME, found.join(", "))
}

/// A permission mode other than `default` (none: not set), what Claude Code asks a
/// `PermissionRequest` hook in it, and what becomes of the rest.
fn mode_words(set: Option<&str>) -> String {
    let (mode, asked, outcome) = match set {
        None => (
            "not set, so Claude Code chooses it (interactive sessions may start in `auto`)".to_string(),
            "nothing in `auto`",
            "those calls run without Assent",
        ),
        Some(m) => (
            format!("`{m}`"),
            match m {
                "auto" => "nothing: its classifier answers the prompts",
                "acceptEdits" => "no edits at all, nor commands that only touch files in its folder",
                "dontAsk" => "nothing: what it would prompt for is refused",
                "bypassPermissions" => "nothing",
                _ => "little or nothing",
            },
            if m == "dontAsk" { "those calls are refused without you" } else { "those calls run without Assent" },
        ),
    };
    format!("{mode}, in which it asks the hook {asked}; {outcome}")
}

/// The hook commands in a Claude Code settings file that run `assent hook`, each with its
/// event (`PreToolUse`, `PermissionRequest`).
fn hook_commands(file: &Path) -> Vec<(String, String)> {
    let Some(v) = read_json(file) else { return Vec::new() };
    hook_table(&v).into_iter().filter(|(_, cmd)| cmd.contains("assent") && cmd.contains(" hook")).collect()
}

/// The MCP server commands that run `assent mcp` (top level, and per project in ~/.claude.json).
fn mcp_commands(file: &Path) -> Vec<String> {
    let Some(v) = read_json(file) else { return Vec::new() };
    let mut tables = vec![&v["mcpServers"]];
    if let Some(projects) = v["projects"].as_object() {
        tables.extend(projects.values().map(|p| &p["mcpServers"]));
    }
    let mut out = Vec::new();
    for servers in tables.into_iter().filter_map(Value::as_object) {
        for s in servers.values() {
            let command = s["command"].as_str().unwrap_or("");
            let args: Vec<&str> = s["args"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
            if command.ends_with("assent") && args.first() == Some(&"mcp") {
                out.push(format!("{command} mcp"));
            }
        }
    }
    out
}
