//! The real GitHub Copilot CLI (from the npm registry, installed into `.ci/copilot` on first
//! use) runs headless (`copilot -p`) against a stand-in OpenAI-compatible model on loopback (its
//! own-model mode), with Assent's preToolUse hook: the scenarios every agent's hook must pass
//! ([`crate::agents`]).

use crate::agents::{self, Agent, Scene};
use crate::harness::Server;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The Copilot CLI release the tests drive.
const COPILOT_CLI: &str = "@github/copilot@1.0.102";

fn copilot() -> PathBuf {
    let works = |b: &Path| Command::new(b).arg("--version").output().is_ok_and(|o| o.status.success());
    crate::harness::npm_program("copilot", COPILOT_CLI, "copilot", works)
}

const COPILOT: Agent = Agent {
    name: "Copilot CLI",
    client: "copilot-cli",
    shell: "bash",
    shell_input: bash_input,
    confines: true,
    model: ("agents/fake_openai.py", "/v1"),
    told: openai_told,
    wire,
    run,
};

/// The stand-in's `bash` call.
pub(crate) fn bash_input(command: &str) -> Value {
    json!({"command": command, "description": "run it"})
}

/// What an agent speaking OpenAI's chat completions sent back of the call: the tool message.
pub(crate) fn openai_told(request: &Value) -> Option<String> {
    let messages = request["body"]["messages"].as_array()?;
    messages.iter().find(|m| m["role"] == "tool").map(|m| m["content"].to_string())
}

/// As docs/clients.md has it: a user hook, its wait under its `timeoutSec`.
fn wire(_: &Server, scene: &Scene, hook: &str) {
    std::fs::create_dir_all(scene.home.join(".copilot/hooks")).unwrap();
    let hooks = json!({"version": 1, "hooks": {"preToolUse": [{"type": "command", "bash": hook, "timeoutSec": 60}]}});
    std::fs::write(scene.home.join(".copilot/hooks/assent.json"), hooks.to_string()).unwrap();
}

/// `copilot -p` in its own-model mode. No `--allow-all-tools`: only the hook allows.
fn run(_: &Server, scene: &Scene, model: &str) -> Command {
    let mut c = Command::new(copilot());
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
