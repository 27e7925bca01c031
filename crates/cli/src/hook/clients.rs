//! What the hook knows of each client: its name, its tools that only read, its shell tool,
//! and how its own event reads in the names the rest of the hook uses.

use anyhow::{Context, Result};
use serde_json::{Value, json};

/// Claude Code's (and Codex's) tools that only read: not gated unless named with `--tools`.
pub const READ_ONLY: [&str; 11] = [
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

/// Gemini CLI's tools that only read, or change nothing but its own state (its to-do list, the
/// topic its system prompt has it set in every first turn, its plan mode on, its task tracker
/// read, a question to the person): not gated unless named with `--tools`. Its `web_fetch` is
/// gated (a fetch can carry data out), and so are `exit_plan_mode` (it widens what runs),
/// `save_memory` and the tracker's writes.
pub const GEMINI_READ_ONLY: [&str; 19] = [
    "read_file",
    "read_many_files",
    "list_directory",
    "glob",
    "grep_search",
    "search_file_content",
    "google_web_search",
    "write_todos",
    "update_topic",
    "list_background_processes",
    "read_background_output",
    "get_internal_docs",
    "enter_plan_mode",
    "tracker_get_task",
    "tracker_list_tasks",
    "tracker_visualize",
    "ask_user",
    "complete_task",
    "list_mcp_resources",
];

/// GitHub Copilot CLI's tools that only read (or list and read its own shells and agents): not
/// gated unless named with `--tools`.
pub const COPILOT_READ_ONLY: [&str; 8] =
    ["view", "glob", "grep", "read_bash", "list_bash", "list_agents", "read_agent", "fetch_copilot_cli_documentation"];

/// Cline's tools that only read (or ask the person a question, start a subagent whose own calls
/// come here): not gated unless named with `--tools`. Its `fetch_web_content` is gated.
pub const CLINE_READ_ONLY: [&str; 4] = ["read_files", "search_codebase", "ask_question", "spawn_agent"];

/// OpenCode's tools that only read (or keep its to-do list, load a skill, start a subagent
/// whose own calls come here): not gated unless named with `--tools`. Its `webfetch` is gated.
pub const OPENCODE_READ_ONLY: [&str; 8] = ["read", "glob", "grep", "list", "todowrite", "todoread", "skill", "task"];

/// Which agent runs the hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Agent {
    ClaudeCode,
    Codex,
    GeminiCli,
    CopilotCli,
    Opencode,
    Cline,
}

impl Agent {
    /// The client's name in a proposal's payload.
    pub(super) fn name(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "claude-code",
            Agent::Codex => "codex",
            Agent::GeminiCli => "gemini-cli",
            Agent::CopilotCli => "copilot-cli",
            Agent::Opencode => "opencode",
            Agent::Cline => "cline",
        }
    }

    /// Its tools that are not gated by default.
    pub(super) fn read_only(self) -> &'static [&'static str] {
        match self {
            Agent::GeminiCli => &GEMINI_READ_ONLY,
            Agent::CopilotCli => &COPILOT_READ_ONLY,
            Agent::Opencode => &OPENCODE_READ_ONLY,
            Agent::Cline => &CLINE_READ_ONLY,
            Agent::ClaudeCode | Agent::Codex => &READ_ONLY,
        }
    }

    /// The argument of its shell tool that names the folder the command runs in, if any.
    pub(super) fn work_dir_arg(self) -> Option<&'static str> {
        match self {
            Agent::GeminiCli => Some("dir_path"),
            Agent::Opencode => Some("workdir"),
            _ => None,
        }
    }
}

/// Whether the client can run this call confined: a shell tool whose command the hook's answer
/// can replace (Claude Code's Bash, Gemini CLI's run_shell_command, Copilot CLI's and OpenCode's
/// bash).
pub(super) fn confinable(client: Agent, tool: &str, input: &Value) -> bool {
    let shell = match client {
        Agent::ClaudeCode => tool == "Bash",
        Agent::GeminiCli => tool == "run_shell_command",
        Agent::CopilotCli | Agent::Opencode => tool == "bash",
        // Cline's `run_commands` runs a list: not one command a rule can confine.
        Agent::Codex | Agent::Cline => false,
    };
    shell && input.get("command").is_some_and(Value::is_string)
}

/// Copilot CLI's `preToolUse` event (`toolName`, `toolArgs`, `cwd`, `sessionId`), in the names
/// the other clients use.
pub(super) fn copilot_event(ev: &Value) -> Result<Value> {
    let tool = ev["toolName"].as_str().context("the hook event has no toolName (a Copilot CLI preToolUse event)")?;
    // Its arguments come as an object, or as their JSON text.
    let input = match &ev["toolArgs"] {
        Value::String(text) => serde_json::from_str(text).context("the event's toolArgs is not JSON")?,
        Value::Null => json!({}),
        args => args.clone(),
    };
    let mut out = json!({"hook_event_name": "CopilotPreToolUse", "tool_name": tool, "tool_input": input});
    for (from, to) in [("cwd", "cwd"), ("sessionId", "session_id")] {
        if let Some(v) = ev[from].as_str() {
            out[to] = json!(v);
        }
    }
    Ok(out)
}

/// OpenCode's `tool.execute.before`, as Assent's plugin hands it over (`tool`, `args`,
/// `directory`, `sessionID`, `callID`), in the names the other clients use. The call's id keys
/// the proposal, so a call filed again is found.
pub(super) fn opencode_event(ev: &Value) -> Result<Value> {
    let tool = ev["tool"].as_str().context("the hook event has no tool (an OpenCode call from Assent's plugin)")?;
    let input = match &ev["args"] {
        Value::Null => json!({}),
        args => args.clone(),
    };
    let mut out = json!({"hook_event_name": "OpencodeToolExecuteBefore", "tool_name": tool, "tool_input": input});
    for (from, to) in [("directory", "cwd"), ("sessionID", "session_id"), ("callID", "tool_use_id")] {
        if let Some(v) = ev[from].as_str() {
            out[to] = json!(v);
        }
    }
    Ok(out)
}

/// Cline's PreToolUse event (`tool_call` with its `id`, `name` and `input`; the workspace; the
/// task), in the names the other clients use.
pub(super) fn cline_event(ev: &Value) -> Result<Value> {
    let call = &ev["tool_call"];
    let tool = call["name"].as_str().context("the hook event has no tool_call.name (a Cline PreToolUse event)")?;
    let input = match &call["input"] {
        Value::Null => json!({}),
        input => input.clone(),
    };
    let mut out = json!({"hook_event_name": "ClinePreToolUse", "tool_name": tool, "tool_input": input});
    let cwd = ev.pointer("/workspaceInfo/rootPath").or_else(|| ev.pointer("/workspaceRoots/0"));
    for (value, to) in [(cwd, "cwd"), (ev.get("taskId"), "session_id"), (call.get("id"), "tool_use_id")] {
        if let Some(v) = value.and_then(Value::as_str) {
            out[to] = json!(v);
        }
    }
    Ok(out)
}
