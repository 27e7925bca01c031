//! # assent-cli
//!
//! The `assent` command. `serve` hosts the engine and the API headless ([`serve`]); every
//! other command is a client of the running server ([`client`], [`commands`]), so decisions
//! made here wake waiting agents at once and reach the desktop inbox as events.
//!
//! Exit codes (see [`exit`]): 0 success (or approved / applied), 1 error, 2 usage, 3 no server
//! running, 4 rejected, 5 refined, 6 expired or withdrawn, 7 failed, 8 still pending.

mod args;
pub mod claude_rules;
pub mod client;
pub mod commands;
pub mod connect;
pub mod doctor;
pub mod hook;
mod input;
pub mod output;
pub mod propose;
mod proxy_credential;
pub mod receipt;
pub mod remote;
pub mod rules;
pub mod run;
pub mod serve;
pub mod store;

/// The home directory and the settings live in [`assent_host`], shared with the desktop app.
pub use assent_host::{config, home};

pub use args::{AgentCmd, Cli, Command, CredentialCmd};
use clap::{CommandFactory, Parser};
use home::Home;
use std::process::ExitCode;

/// Installs the TLS provider every HTTP client in Assent uses (call once, early).
pub fn install_tls_provider() {
    assent_apply::install_tls_provider();
}

pub use assent_boundary::exit::{self, ExitError};

fn init_tracing(serve: bool) {
    let default = if serve { "info" } else { "warn" };
    let filter = tracing_subscriber::EnvFilter::try_from_env("ASSENT_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        // Colour only for a person at a terminal: an MCP client or a hook runner passes stderr
        // on to a log or another terminal, where escape codes are noise.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()) && std::env::var_os("NO_COLOR").is_none())
        // A log that cannot be written (a full disk) is dropped, never a panic.
        .log_internal_errors(false)
        .with_target(false)
        .try_init();
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    // These two describe the command line itself and need no home.
    match &cli.command {
        Command::Completions { shell } => {
            let mut text = Vec::new();
            clap_complete::generate(*shell, &mut Cli::command(), "assent", &mut text);
            return Ok(std::io::Write::write_all(&mut std::io::stdout(), &text)?);
        }
        Command::Man { dir: Some(dir) } => {
            std::fs::create_dir_all(dir)?;
            clap_mangen::generate_to(Cli::command(), dir)?;
            return Ok(());
        }
        Command::Man { dir: None } => {
            let mut text = Vec::new();
            clap_mangen::Man::new(Cli::command()).render(&mut text)?;
            return Ok(std::io::Write::write_all(&mut std::io::stdout(), &text)?);
        }
        _ => {}
    }
    let home = Home::resolve(cli.home)?;
    match cli.command {
        Command::Completions { .. } | Command::Man { .. } => Ok(()),
        Command::Doctor { json } => doctor::run(&home, json).await,
        Command::Connect(a) => connect::run(&home, a),
        Command::Serve(a) => serve::run(home, a).await,
        Command::Propose(a) => propose::propose(&home, a).await,
        Command::Wait { id, timeout, receipt, json, auth } => {
            propose::wait(&home, &id, timeout, propose::Print::of(json, receipt), &auth).await
        }
        Command::List(a) => commands::list(&home, a).await,
        Command::Show { id, json, auth } => commands::show(&home, &id, json, &auth).await,
        Command::Approve { targets, reason, edits, allow_similar, for_, seen, run, hosts, no_network, json } => {
            let similar = allow_similar.then_some(for_);
            let hosts = if no_network { Some(Vec::new()) } else { (!hosts.is_empty()).then_some(hosts) };
            let d =
                commands::Decide { outcome: "approve", reason, feedback: None, edits, similar, seen, run, hosts, json };
            commands::decide_many(&home, targets, d).await
        }
        Command::Reject { targets, reason, seen, json } => {
            let d = commands::Decide {
                outcome: "reject",
                reason: Some(reason),
                feedback: None,
                edits: None,
                similar: None,
                seen,
                run: None,
                hosts: None,
                json,
            };
            commands::decide_many(&home, targets, d).await
        }
        Command::Withdraw { id, json, auth } => commands::withdraw(&home, &id, json, &auth).await,
        Command::Refine { id, feedback, json } => {
            let d = commands::Decide {
                outcome: "refine",
                reason: None,
                feedback: Some(feedback),
                edits: None,
                similar: None,
                seen: None,
                run: None,
                hosts: None,
                json,
            };
            commands::decide(&home, &id, d).await
        }
        Command::Agent(cmd) => commands::agent(&home, cmd).await,
        Command::Retry { id, json } => commands::retry(&home, &id, json).await,
        Command::Mcp { proxy: Some(args::McpCmd::Proxy(p)), auth } => {
            let h = home.clone();
            let token: assent_mcp::Resolve<String> = std::sync::Arc::new(move || client::agent_token(&h, &auth).ok());
            let credential = p.credential.clone();
            let mut options = p.options()?;
            if let (Some(name), assent_mcp::proxy::Upstream::Url { url, headers }) = (credential, &mut options.upstream)
            {
                headers.push(proxy_credential::header(&home, &name, url).await?);
            }
            let ended = assent_mcp::proxy::run(client::endpoint(&home), token, options).await;
            // Ends now: the runtime would otherwise wait on its reader of standard input (a
            // blocking read) until the client wrote again, though the server ended.
            ended?;
            use std::io::Write;
            let _ = std::io::stdout().flush();
            std::process::exit(0)
        }
        Command::Mcp { proxy: None, auth } => {
            // Started before Assent ever ran in this home, it starts anyway: the tools answer
            // that Assent is not running until it is (the token is looked for on each call).
            let h = home.clone();
            let token: assent_mcp::Resolve<String> = std::sync::Arc::new(move || client::agent_token(&h, &auth).ok());
            assent_mcp::run(client::endpoint(&home), token).await
        }
        Command::Hook(cmd) => hook::run(&home, cmd).await,
        Command::Export { output } => commands::export(&home, output).await,
        Command::Credential(cmd) => commands::credential(&home, cmd).await,
        Command::Rule(cmd) => rules::run(&home, cmd).await,
        Command::Store(cmd) => store::run(&home, cmd).await,
        Command::Remote(cmd) => remote::run(&home, cmd).await,
        Command::Receipt(cmd) => receipt::run(&home, cmd).await,
        Command::Run { id, auth } => run::run(&home, &id, &auth).await,
    }
}

/// The `assent` binary's entry point.
pub fn main() -> ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // A call the hook rewrote to `assent run`: straight from the ticket it left.
    if let Some(result) = assent_boundary::run::quick(&args) {
        return finish(result);
    }
    let cli = assent_boundary::run::hook_only(&args)
        .map(|(home, cmd)| Cli { home, command: Command::Hook(cmd) })
        .unwrap_or_else(Cli::parse);
    assent_apply::install_tls_provider();
    init_tracing(matches!(cli.command, Command::Serve(_)));
    // A hook or a run is one short exchange, started once per tool call: no worker threads.
    let mut builder = match cli.command {
        Command::Hook(_) | Command::Run { .. } => tokio::runtime::Builder::new_current_thread(),
        _ => tokio::runtime::Builder::new_multi_thread(),
    };
    let rt = match builder.enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("assent: cannot start the async runtime: {e}");
            return ExitCode::from(exit::ERROR);
        }
    };
    finish(rt.block_on(run(cli)))
}

/// The exit code for how a command ended, its error said on standard error.
fn finish(result: anyhow::Result<()>) -> ExitCode {
    ExitCode::from(exit::code(result))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use assent_boundary::run::hook_only;

    /// The hook's own parser reads a hook's command line as the whole parser does, and leaves
    /// everything else to it.
    #[test]
    fn the_hook_parser_agrees_with_the_whole_one() {
        let os = |a: &[&str]| a.iter().map(std::ffi::OsString::from).collect::<Vec<_>>();
        for line in [
            &["assent", "hook", "claude-code"][..],
            &["assent", "--home", "/h", "hook", "claude-code", "--timeout", "590"],
            &["assent", "hook", "codex", "--tools", "Bash,Edit", "--skip", "Read", "--token-file", "/t"],
            &["assent", "--home", "/h", "hook", "claude-code", "--token-file", "/t", "--timeout", "5"],
        ] {
            let (home, cmd) = hook_only(&os(line)).unwrap_or_else(|| panic!("{line:?} not read as a hook"));
            let quick = Cli { home, command: Command::Hook(cmd) };
            let whole = Cli::try_parse_from(os(line)).unwrap();
            assert_eq!(format!("{quick:?}"), format!("{whole:?}"), "{line:?}");
        }
        for other in [
            &["assent", "hook", "--help"][..],
            &["assent", "hook", "claude-code", "--no-such-flag"],
            &["assent", "propose", "--title", "hook"],
            &["assent", "list"],
        ] {
            assert!(hook_only(&os(other)).is_none(), "{other:?}");
        }
    }
}
