//! The real Gemini CLI (from the npm registry, installed into `.ci/gemini` on first use) runs
//! headless (`gemini -p`) against a stand-in Gemini API on loopback, with Assent's BeforeTool
//! hook: the scenarios every agent's hook must pass ([`crate::agents`]).

use crate::agents::{self, Agent, Scene, Shell};
use crate::harness::{Server, npm_cli};
use serde_json::{Value, json};
use std::process::Command;

/// The Gemini CLI release the tests drive.
const GEMINI_CLI: &str = "@google/gemini-cli@0.61.0";

const GEMINI: Agent = Agent {
    name: "Gemini CLI",
    client: "gemini-cli",
    shell: Shell { tool: "run_shell_command", input: gemini_input },
    confines: true,
    runs_when_its_hook_dies: true,
    runs_when_its_hook_is_missing: false,
    model: ("gemini/fake_gemini.py", ""),
    told,
    wire,
    run,
};

/// The stand-in's shell call.
fn gemini_input(command: &str) -> Value {
    json!({"command": command})
}

/// What Gemini sent back of the call: its function response.
fn told(request: &Value) -> Option<String> {
    let contents = request["body"]["contents"].as_array()?;
    let parts = contents.iter().flat_map(|c| c["parts"].as_array().into_iter().flatten());
    parts.clone().find_map(|p| p.get("functionResponse").map(|f| f["response"].to_string()))
}

/// As docs/clients.md has it: the user's settings, and `assent connect gemini-cli` merging the
/// hook into them (every tool through it; it lets Gemini's read-only tools be).
fn wire(s: &Server, scene: &Scene, _: &str) {
    std::fs::create_dir_all(scene.home.join(".gemini")).unwrap();
    let settings = json!({
        "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": false}},
        "privacy": {"usageStatisticsEnabled": false}, "telemetry": {"enabled": false},
        "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
    });
    std::fs::write(scene.home.join(".gemini/settings.json"), settings.to_string()).unwrap();
    agents::connect(s, scene, "gemini-cli");
}

/// `gemini -p` with every tool on offer (`--approval-mode yolo`: Gemini's own prompt is off, so
/// only Assent stands between the model and the shell).
fn run(_: &Server, scene: &Scene, model: &str) -> Command {
    let mut c = Command::new(npm_cli("gemini", GEMINI_CLI, "gemini"));
    c.args(["-m", "gemini-2.5-flash", "-p", "run the command", "--approval-mode", "yolo"])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", &scene.home)
        .env("GOOGLE_GEMINI_BASE_URL", model)
        .env("GEMINI_API_KEY", "test-key");
    c
}

agents::agent_tests!(GEMINI);
