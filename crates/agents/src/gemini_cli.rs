//! Gemini CLI: a `BeforeTool` hook in its settings. Gemini runs a call whose hook fails, times
//! out or answers nothing it reads, so this hook answers every call (a deny when nobody
//! decided) and exits 2 (Gemini blocks the call) on any error; a hook given less time than it
//! waits for the person lets calls through unseen.

use crate::agent::{Agent, Answer, Call, Facts, Format, Places, Rewrite, Wiring, boxed_reason};
use crate::check::{Check, Hook, missing_program, on_path, read_json, too_little_time, when_killed};
use serde_json::{Value, json};
use std::path::Path;

/// Gemini CLI.
pub(crate) struct GeminiCli;

const NAME: &str = "gemini cli";

/// Gemini CLI's own default for a hook's timeout, in milliseconds.
const DEFAULT_HOOK_TIMEOUT_MS: u64 = 60_000;

/// Gemini CLI's tools that only read, or change nothing but its own state (its to-do list, the
/// topic its system prompt has it set in every first turn, its plan mode on, its task tracker
/// read, a question to the person): not gated unless named with `--tools`. Its `web_fetch` is
/// gated (a fetch can carry data out), and so are `exit_plan_mode` (it widens what runs),
/// `save_memory` and the tracker's writes.
const READ_ONLY: [&str; 19] = [
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

/// What Gemini CLI says of itself.
const FACTS: Facts = Facts {
    shell_tool: Some("run_shell_command"),
    folder_arg: Some("dir_path"),
    // Its `ask` waits for ever in a headless run: a call nobody decided is not run.
    hands_back: false,
    ..Facts::new(
        "gemini-cli",
        "Gemini CLI",
        "Gemini CLI's BeforeTool hook",
        "Gemini CLI BeforeTool hooks (every call answered: a deny when nobody decided; keep --timeout under the hook's timeout)",
        &READ_ONLY,
    )
};

impl Agent for GeminiCli {
    fn facts(&self) -> &'static Facts {
        &FACTS
    }

    fn read(&self, ev: Value) -> Result<Call, String> {
        match ev["hook_event_name"].as_str() {
            Some("BeforeTool") => Ok(Call { event: "BeforeTool", ev }),
            Some(other) => Err(format!("assent hook gemini-cli answers BeforeTool events, not {other}")),
            None => Err("the hook event has no hook_event_name".into()),
        }
    }

    // A decision and a reason; a changed call replaces the whole input.
    fn answer(&self, _call: &Call, answer: &Answer, rewrite: &Rewrite) -> Value {
        match answer {
            Answer::Allow(None) => json!({"decision": "allow", "reason": "Approved in Assent"}),
            Answer::Allow(Some(input)) => json!({"decision": "allow", "reason": "Approved in Assent with edits",
                "hookSpecificOutput": {"hookEventName": "BeforeTool", "tool_input": input}}),
            Answer::Boxed { proposal, profile, by_rule, hosts } => json!({"decision": "allow",
                "reason": boxed_reason(proposal, profile, *by_rule, hosts),
                "hookSpecificOutput": {"hookEventName": "BeforeTool", "tool_input": rewrite.input(proposal)}}),
            Answer::Deny(why) | Answer::Ask(why) => json!({"decision": "deny", "reason": why}),
        }
    }

    fn wiring(&self, places: &Places, project: bool) -> Result<Wiring, String> {
        let base = (places.env)("GEMINI_CLI_HOME").unwrap_or_else(|| places.user.clone());
        let dir = if project { places.cwd.join(".gemini") } else { base.join(".gemini") };
        let entry = |line: &str, secs: u64| json!({"matcher": "", "hooks": [{"name": "assent", "type": "command", "command": line, "timeout": secs * 1000}]});
        let format = Format::HookTable { event: "BeforeTool", entry, versioned: false };
        Ok(Wiring { file: dir.join("settings.json"), format, what: "the BeforeTool hook" })
    }

    fn check(&self, places: &Places) -> Check {
        check(places)
    }
}

fn check(places: &Places) -> Check {
    let user = &places.user;
    let base = (places.env)("GEMINI_CLI_HOME").unwrap_or_else(|| user.clone());
    let cwd = &places.cwd;
    let user_settings = base.join(".gemini/settings.json");
    let project_settings = cwd.join(".gemini/settings.json");
    let mut hooks = hooks_in(&user_settings);
    // In the home folder itself, the project's settings are the user's.
    let project_settings = (project_settings != user_settings).then_some(project_settings);
    if let Some(p) = &project_settings {
        hooks.extend(hooks_in(p));
    }
    let installed = base.join(".gemini").exists() || on_path("gemini").is_some();
    if hooks.is_empty() {
        return Check::unwired(
            NAME,
            installed,
            "no Assent hook in its settings: its tool calls do not come to Assent",
            "assent connect gemini-cli (adds the BeforeTool hook to ~/.gemini/settings.json; docs/clients.md: \"Gemini CLI\")",
        );
    }
    let found: Vec<String> = hooks.iter().map(|h| format!("hook in {}", places.tilde(&h.file))).collect();
    for h in &hooks {
        if let Some(c) = missing_program(NAME, "Gemini CLI", h, &found) {
            return c;
        }
        if let Some(c) = too_little_time(NAME, "Gemini CLI", h, user, "\"timeout\" (milliseconds)", 1) {
            return c;
        }
        if let Some(why) = switched_off(&h.file, h.name.as_deref()) {
            return Check::problem(
                NAME,
                format!("the hook in {} is {why}", places.tilde(&h.file)),
                "remove that setting",
            );
        }
    }
    if hooks.iter().all(|h| Some(&h.file) == project_settings.as_ref()) {
        return Check::note(
            NAME,
            format!(
                "{}: a project's hooks run only in a folder Gemini CLI trusts (and never with --skip-trust)",
                found.join(", ")
            ),
            "put the hook in ~/.gemini/settings.json",
        );
    }
    Check::ok(NAME, format!("{}; {}", found.join(", "), when_killed("Gemini CLI")))
}

/// The `assent hook gemini-cli` hooks of the BeforeTool event in `file`.
fn hooks_in(file: &Path) -> Vec<Hook> {
    let Some(v) = read_json(file) else { return Vec::new() };
    let groups = v["hooks"]["BeforeTool"].as_array().cloned().unwrap_or_default();
    groups
        .iter()
        .filter_map(|g| g["hooks"].as_array())
        .flatten()
        .filter_map(|h| {
            let command = h["command"].as_str()?;
            (command.contains("assent") && command.contains("hook gemini-cli")).then(|| Hook {
                file: file.to_path_buf(),
                command: command.to_string(),
                timeout_ms: h["timeout"].as_u64().unwrap_or(DEFAULT_HOOK_TIMEOUT_MS),
                name: h["name"].as_str().map(str::to_string),
            })
        })
        .collect()
}

/// Why the hooks in `file` do not run, if a setting there turns them off.
fn switched_off(file: &Path, name: Option<&str>) -> Option<String> {
    let v = read_json(file)?;
    let config = &v["hooksConfig"];
    if config["enabled"] == false {
        return Some("switched off (\"hooksConfig\": {\"enabled\": false})".into());
    }
    let disabled = config["disabled"].as_array()?;
    let name = name?;
    disabled
        .iter()
        .any(|d| d == name)
        .then(|| format!("switched off by name (\"hooksConfig\": {{\"disabled\": [\"{name}\"]}})"))
}
