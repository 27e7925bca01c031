//! The real OpenCode (from the npm registry, installed into `.ci/opencode` on first use) runs
//! headless (`opencode run`) against a stand-in OpenAI-compatible model on loopback, with
//! Assent's plugin (`assent hook opencode --plugin`) in its user config: the scenarios every
//! agent's hook must pass ([`crate::agents`]).

use crate::agents::{self, Agent, Scene};
use crate::copilot_cli::openai_told;
use crate::harness::Server;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The OpenCode release the tests drive.
const OPENCODE: &str = "opencode-ai@1.18.33";

fn opencode() -> PathBuf {
    let works = |b: &Path| {
        let scratch = tempfile::tempdir().unwrap();
        Command::new(b).arg("--version").envs(xdg(scratch.path())).output().is_ok_and(|o| o.status.success())
    };
    crate::harness::npm_program("opencode", OPENCODE, "opencode", works)
}

/// Every folder OpenCode writes to, under `home` (it writes to the XDG folders, not under
/// HOME alone).
fn xdg(home: &Path) -> Vec<(&'static str, PathBuf)> {
    vec![
        ("HOME", home.to_path_buf()),
        ("XDG_CONFIG_HOME", home.join(".config")),
        ("XDG_DATA_HOME", home.join(".local/share")),
        ("XDG_CACHE_HOME", home.join(".cache")),
        ("XDG_STATE_HOME", home.join(".local/state")),
    ]
}

const OPENCODE_AGENT: Agent = Agent {
    name: "OpenCode",
    client: "opencode",
    shell: crate::copilot_cli::BASH,
    confines: true,
    runs_when_its_hook_dies: false,
    runs_when_its_hook_is_missing: false,
    model: agents::OPENAI_MODEL,
    told: openai_told,
    wire,
    run,
};

/// As docs/clients.md has it: the plugin `assent connect opencode` writes in the user's plugins
/// (what `assent hook opencode --plugin` prints); a provider for the stand-in model; OpenCode's own permissions all allow (so only
/// Assent decides).
fn wire(s: &Server, scene: &Scene, _: &str) {
    let config = scene.home.join(".config/opencode");
    agents::connect(s, scene, "opencode");
    assert!(config.join("plugin/assent.js").is_file());
    let settings = json!({
        "model": "standin/model",
        "provider": {"standin": {"npm": "@ai-sdk/openai-compatible", "name": "Stand-in",
            "options": {"baseURL": "{env:ASSENT_TEST_MODEL_URL}", "apiKey": "test-key"},
            "models": {"model": {"name": "Stand-in model", "tool_call": true}}}},
        "permission": {"bash": "allow", "edit": "allow", "external_directory": "allow"},
        "autoupdate": false, "share": "disabled",
    });
    std::fs::write(config.join("opencode.json"), settings.to_string()).unwrap();
}

/// `opencode run`, its folders in the scene's home.
fn run(_: &Server, scene: &Scene, model: &str) -> Command {
    let mut c = Command::new(opencode());
    c.args(["run", "--model", "standin/model", "run the command"])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .envs(xdg(&scene.home))
        .env("ASSENT_TEST_MODEL_URL", model)
        .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
        .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
        .env("OPENCODE_DISABLE_SHARE", "1")
        .env("OPENCODE_DISABLE_LSP_DOWNLOAD", "1")
        .env("OPENCODE_DISABLE_CLAUDE_CODE", "1");
    c
}

agents::agent_tests!(OPENCODE_AGENT);
