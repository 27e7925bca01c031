//! `assent hook claude-code`: a command hook for coding agents' permission prompts. (Being
//! built.)

use crate::home::Home;
use anyhow::Result;

/// The hooks.
#[derive(Debug, clap::Subcommand)]
pub enum HookCmd {
    /// Claude Code (and Codex) PreToolUse / PermissionRequest hooks.
    ClaudeCode,
}

/// Runs a hook.
pub async fn run(_home: &Home, _cmd: HookCmd) -> Result<()> {
    anyhow::bail!("not yet")
}
