//! The real Cline CLI (from the npm registry, installed into `.ci/cline` on first use) runs
//! headless (`cline --json`) against a stand-in OpenAI-compatible model on loopback, with
//! Assent's PreToolUse hook file (`assent hook cline --script`): the scenarios every agent's
//! hook must pass ([`crate::agents`]).

use crate::agents::{self, Agent, Scene, Shell};
use crate::harness::{Server, npm_cli};
use serde_json::{Value, json};
use std::process::Command;

/// The Cline release the tests drive.
const CLINE: &str = "cline@3.0.65";

const CLINE_AGENT: Agent = Agent {
    name: "Cline",
    client: "cline",
    shell: Shell { tool: "run_commands", input: commands_input },
    confines: false,
    runs_when_its_hook_dies: true,
    runs_when_its_hook_is_missing: true,
    model: agents::OPENAI_MODEL,
    told,
    wire,
    run,
};

/// The stand-in's `run_commands` call.
fn commands_input(command: &str) -> Value {
    json!({"commands": [command]})
}

/// What Cline told the model of its call: the tool message, and any context a hook added.
fn told(request: &Value) -> Option<String> {
    let messages = request["body"]["messages"].as_array()?;
    let at = messages.iter().position(|m| m["role"] == "tool")?;
    Some(messages[at..].iter().map(|m| m["content"].to_string()).collect::<Vec<_>>().join("\n"))
}

/// As docs/clients.md has it: the hook file `assent connect cline` writes in Cline's hooks
/// folder (what `assent hook cline --script` prints).
fn wire(s: &Server, scene: &Scene, _: &str) {
    agents::connect(s, scene, "cline");
}

/// `cline --json` with the task, in the process itself (no background hub: a hook run by a hub
/// would outlive the `cline` killed), its provider the stand-in model.
fn run(_: &Server, scene: &Scene, model: &str) -> Command {
    let settings = scene.home.join(".cline/data/settings");
    std::fs::create_dir_all(&settings).unwrap();
    let providers = json!({"version": 1, "lastUsedProvider": "openai-compatible", "modes": {},
        "providers": {"openai-compatible": {"settings": {"provider": "openai-compatible", "apiKey": "test-key",
            "model": "standin", "baseUrl": model}, "updatedAt": "2026-01-01T00:00:00.000Z", "tokenSource": "manual"}}});
    std::fs::write(settings.join("providers.json"), providers.to_string()).unwrap();
    let mut c = Command::new(npm_cli("cline", CLINE, "cline"));
    c.arg("--json")
        .arg("-c")
        .arg(&scene.work)
        .arg("run the command")
        .stdin(std::process::Stdio::null())
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", &scene.home)
        .env("CLINE_DIR", scene.home.join(".cline"))
        .env("CLINE_SESSION_BACKEND_MODE", "local");
    c
}

agents::agent_tests!(CLINE_AGENT);
