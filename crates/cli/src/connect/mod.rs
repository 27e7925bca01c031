//! `assent connect CLIENT`: one command wires a coding agent (or an MCP client's server) to
//! Assent. It merges Assent's hook into the client's own settings, user-wide or for the project
//! in this folder, keeping everything that was there (comments included: JSON with comments is
//! edited as a concrete syntax tree, TOML with `toml_edit`), writes a backup of a file it
//! changes first, changes nothing when the hook is there already, and `--undo` takes out exactly
//! what it put in. `assent doctor` then checks the result, and its fix lines name this command.

mod edit;

use crate::home::Home;
use anyhow::{Context, Result};
use assent_agents::Format;
use std::path::{Path, PathBuf};

/// `assent connect`'s arguments.
#[derive(Debug, clap::Args)]
pub struct ConnectArgs {
    /// The client: claude-code, codex, gemini-cli, copilot-cli, opencode, cline, or mcp (an MCP
    /// client's server put behind `assent mcp proxy`: with --config and --server).
    #[arg(value_parser = clients())]
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

/// The clients `assent connect` wires: every agent client, and `mcp`.
fn clients() -> clap::builder::PossibleValuesParser {
    let names = assent_agents::all().iter().map(|a| a.name()).chain(["mcp"]);
    clap::builder::PossibleValuesParser::new(names)
}

/// Runs `assent connect`.
pub fn run(home: &Home, a: ConnectArgs) -> Result<()> {
    let places = assent_agents::Places::here().context("no home folder (set HOME)")?;
    if a.client == "mcp" {
        let (file, server) = (a.config.clone().unwrap_or_default(), a.server.clone().unwrap_or_default());
        let done = edit::json_file(&file, |doc| edit::mcp_server(doc, home, &server, a.undo))?;
        let what = format!("the MCP server `{server}` behind `assent mcp proxy`");
        say(&a.client, &file, &places.user, &done, &what, a.undo);
        return Ok(());
    }
    let agent = assent_agents::named(&a.client).with_context(|| format!("no client named `{}`", a.client))?;
    let wiring = agent.wiring(&places, a.project).map_err(anyhow::Error::msg)?;
    // A hook in the client's settings waits 590 s unless told (the client's own bound where it
    // has one) and is given 10 more by the client; a file of Assent's own waits the client's own
    // default unless told.
    let secs = a.timeout.unwrap_or(590);
    let wait = if matches!(wiring.format, Format::OwnFile) { a.timeout } else { Some(secs) };
    let (line, file_text) = assent_boundary::hook::wiring(home, agent, wait);
    let done = match wiring.format {
        Format::HookTable { event, entry, versioned } => edit::json_file(&wiring.file, |doc| {
            edit::hook_table(doc, agent.name(), event, &line, entry(&line, secs + 10), versioned, a.undo)
        })?,
        Format::CodexToml => edit::toml_file(&wiring.file, |doc| edit::codex(doc, &line, secs + 10, a.undo))?,
        Format::OwnFile => edit::own_file(&wiring.file, &file_text.unwrap_or_default(), a.undo)?,
    };
    say(&a.client, &wiring.file, &places.user, &done, wiring.what, a.undo);
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
