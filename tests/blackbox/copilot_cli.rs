//! The real GitHub Copilot CLI (from the npm registry, installed into `.ci/copilot` on first
//! use) runs headless (`copilot -p`) against a stand-in OpenAI-compatible model on loopback (its
//! own-model mode), with Assent's preToolUse hook: the scenarios every agent's hook must pass
//! ([`crate::agents`]).

use crate::agents::{self, Agent, Scene, Shell};
use crate::harness::{Server, npm_cli};
use serde_json::{Value, json};
use std::process::Command;

/// The Copilot CLI release the tests drive.
const COPILOT_CLI: &str = "@github/copilot@1.0.102";

const COPILOT: Agent = Agent {
    name: "Copilot CLI",
    client: "copilot-cli",
    shell: BASH,
    confines: true,
    runs_when_its_hook_dies: false,
    runs_when_its_hook_is_missing: false,
    model: agents::OPENAI_MODEL,
    told: openai_told,
    wire,
    run,
};

/// A `bash` tool: Copilot CLI's, and OpenCode's.
pub(crate) const BASH: Shell = Shell { tool: "bash", input: bash_input };

/// The stand-in's `bash` call.
fn bash_input(command: &str) -> Value {
    json!({"command": command, "description": "run it"})
}

/// What an agent speaking OpenAI's chat completions sent back of the call: the tool message.
pub(crate) fn openai_told(request: &Value) -> Option<String> {
    let messages = request["body"]["messages"].as_array()?;
    messages.iter().find(|m| m["role"] == "tool").map(|m| m["content"].to_string())
}

/// As docs/clients.md has it: a user hook, its wait under its `timeoutSec`, written by
/// `assent connect copilot-cli`.
fn wire(s: &Server, scene: &Scene, _: &str) {
    agents::connect(s, scene, "copilot-cli");
}

/// `copilot -p` in its own-model mode. No `--allow-all-tools`: only the hook allows.
fn run(_: &Server, scene: &Scene, model: &str) -> Command {
    let mut c = Command::new(npm_cli("copilot", COPILOT_CLI, "copilot"));
    c.args(["-p", "run the command"])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", &scene.home)
        .env("COPILOT_HOME", scene.home.join(".copilot"))
        .env("COPILOT_OFFLINE", "true")
        .env("COPILOT_AUTO_UPDATE", "false")
        .env("COPILOT_PROVIDER_BASE_URL", model)
        .env("COPILOT_PROVIDER_API_KEY", "test-key")
        .env("COPILOT_MODEL", "gpt-4.1");
    c
}

agents::agent_tests!(COPILOT);
