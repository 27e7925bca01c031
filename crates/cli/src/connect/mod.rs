//! `assent connect CLIENT`: one command wires a coding agent (or an MCP client's server) to
//! Assent. It merges Assent's hook into the client's own settings, user-wide or for the project
//! in this folder, keeping everything that was there (comments included: JSON with comments is
//! edited as a concrete syntax tree, TOML with `toml_edit`), writes a backup of a file it
//! changes first, changes nothing when the hook is there already, and `--undo` takes out exactly
//! what it put in. `assent doctor` then checks the result, and its fix lines name this command.

mod edit;

use crate::home::Home;
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};

/// `assent connect`'s arguments.
#[derive(Debug, clap::Args)]
pub struct ConnectArgs {
    /// The client: claude-code, codex, gemini-cli, copilot-cli, opencode, cline, or mcp (an MCP
    /// client's server put behind `assent mcp proxy`: with --config and --server).
    #[arg(value_parser = ["claude-code", "codex", "gemini-cli", "copilot-cli", "opencode", "cline", "mcp"])]
    pub client: String,
    /// The project's settings in this folder, not the user's (Claude Code, Gemini CLI, Copilot
    /// CLI, OpenCode).
    #[arg(long)]
    pub project: bool,
    /// Take Assent's hook (or proxy) out again, leaving the rest as it is.
    #[arg(long)]
    pub undo: bool,
    /// Seconds the hook waits for you (it is given 10 more by the client); default 590, and
    /// for Cline, whose hooks get 120 s, 110.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=3500))]
    pub timeout: Option<u64>,
    /// mcp: the client's settings file that lists its MCP servers (`mcpServers`: Claude
    /// Desktop's, Cursor's, a project's `.mcp.json`, ...).
    #[arg(long, required_if_eq("client", "mcp"), value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// mcp: the server in that file to put behind the proxy.
    #[arg(long, required_if_eq("client", "mcp"), value_name = "NAME")]
    pub server: Option<String>,
}

/// What one run did to one file.
enum Done {
    /// Written (a backup of what was there beside it, if anything was).
    Changed { backup: Option<PathBuf> },
    /// Removed: the file was Assent's alone.
    Removed,
    /// Nothing to do.
    Unchanged,
}

/// Runs `assent connect`.
pub fn run(home: &Home, a: ConnectArgs) -> Result<()> {
    let user = dirs::home_dir().context("no home folder (set HOME)")?;
    let cwd = std::env::current_dir().context("this folder")?;
    let wait = a.timeout;
    let (file, done, what) = match a.client.as_str() {
        "mcp" => {
            let (file, server) = (a.config.clone().unwrap_or_default(), a.server.clone().unwrap_or_default());
            let done = edit::json_file(&file, |doc| edit::mcp_server(doc, home, &server, a.undo))?;
            (file, done, format!("the MCP server `{server}` behind `assent mcp proxy`"))
        }
        "codex" => {
            if a.project {
                bail!("Codex reads its hooks from ~/.codex/config.toml alone: leave out --project");
            }
            let base = std::env::var_os("CODEX_HOME").map(PathBuf::from).unwrap_or_else(|| user.join(".codex"));
            let file = base.join("config.toml");
            let line = crate::hook::wiring(home, "codex", Some(wait.unwrap_or(590))).0;
            let done = edit::toml_file(&file, |doc| edit::codex(doc, &line, wait.unwrap_or(590) + 10, a.undo))?;
            (file, done, "the PermissionRequest hook (trust it when Codex asks)".to_string())
        }
        "claude-code" | "gemini-cli" => {
            let (dir, event) = if a.client == "claude-code" {
                let user_dir =
                    std::env::var_os("CLAUDE_CONFIG_DIR").map(PathBuf::from).unwrap_or_else(|| user.join(".claude"));
                (if a.project { cwd.join(".claude") } else { user_dir }, "PreToolUse")
            } else {
                let base = std::env::var_os("GEMINI_CLI_HOME").map(PathBuf::from).unwrap_or_else(|| user.clone());
                (if a.project { cwd.join(".gemini") } else { base.join(".gemini") }, "BeforeTool")
            };
            let file = dir.join("settings.json");
            let secs = wait.unwrap_or(590);
            let line = crate::hook::wiring(home, &a.client, Some(secs)).0;
            let done = edit::json_file(&file, |doc| edit::hook_group(doc, &a.client, event, &line, secs + 10, a.undo))?;
            (file, done, format!("the {event} hook"))
        }
        "copilot-cli" => {
            let base = std::env::var_os("COPILOT_HOME").map(PathBuf::from).unwrap_or_else(|| user.join(".copilot"));
            let file = if a.project { cwd.join(".github/hooks/assent.json") } else { base.join("hooks/assent.json") };
            let secs = wait.unwrap_or(590);
            let line = crate::hook::wiring(home, "copilot-cli", Some(secs)).0;
            let done = edit::json_file(&file, |doc| edit::copilot(doc, &line, secs + 10, a.undo))?;
            (file, done, "the preToolUse hook".to_string())
        }
        client => {
            // OpenCode's plugin and Cline's hook file: files of Assent's own.
            let file = match (client, a.project) {
                ("opencode", false) => std::env::var_os("XDG_CONFIG_HOME")
                    .map(PathBuf::from)
                    .unwrap_or_else(|| user.join(".config"))
                    .join("opencode/plugin/assent.js"),
                ("opencode", true) => cwd.join(".opencode/plugin/assent.js"),
                (_, false) => std::env::var_os("CLINE_DIR")
                    .map(PathBuf::from)
                    .unwrap_or_else(|| user.join(".cline"))
                    .join("hooks/PreToolUse"),
                (_, true) => bail!("Cline reads its hooks from ~/.cline/hooks alone: leave out --project"),
            };
            let text = crate::hook::wiring(home, client, wait).1.unwrap_or_default();
            let what = if client == "opencode" { "Assent's plugin" } else { "the PreToolUse hook file" };
            (file.clone(), edit::own_file(&file, &text, a.undo)?, what.to_string())
        }
    };
    say(&a.client, &file, &user, &done, &what, a.undo);
    Ok(())
}

fn say(client: &str, file: &Path, user: &Path, done: &Done, what: &str, undo: bool) {
    let shown = match file.strip_prefix(user) {
        Ok(rest) => format!("~/{}", rest.display()),
        Err(_) => file.display().to_string(),
    };
    match (done, undo) {
        (Done::Unchanged, false) => println!("{client}: {what} is in {shown} already; nothing changed"),
        (Done::Unchanged, true) => println!("{client}: no Assent wiring in {shown}; nothing changed"),
        (Done::Removed, _) => println!("{client}: removed {shown} ({what})"),
        (Done::Changed { backup }, _) => {
            let verb = if undo { "took out" } else { "added" };
            match backup {
                Some(b) => println!("{client}: {verb} {what} in {shown} (what was there: {})", b.display()),
                None => println!("{client}: {verb} {what} in {shown}"),
            }
        }
    }
}
