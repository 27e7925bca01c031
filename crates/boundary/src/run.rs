//! `assent-run`'s own work. A client starts it for each hook and for each call a hook rewrote to
//! run in a box (`assent-run --home HOME [--token-file F] run ID`), so it does only what needs
//! no more than this crate, and hands anything else, with the same arguments, to the whole
//! `assent` beside it (in the same process):
//!
//! - `run ID` with a good ticket ([`crate::ticket`]): the approved command, run in its box
//!   ([`crate::boxed`]); a read with no hosts becomes the box in this very process;
//! - `hook CLIENT`: the hook's fast path ([`crate::hook::quick`]).

use crate::exit::{self, ExitError};
use crate::home::Home;
use crate::hook::{self, HookCmd, Quick};
use crate::ticket::{self, Approved};
use crate::{Confine, boxed};
use anyhow::{Context, Result};
use clap::Parser;
use std::ffi::OsString;
use std::path::PathBuf;

/// The exit code when the command could not be run confined (as a shell says of a command it
/// cannot execute).
pub const CANNOT_CONFINE: u8 = 126;

fn refuse(message: String) -> anyhow::Error {
    ExitError::new(CANNOT_CONFINE, message).into()
}

/// `assent-run`'s entry point; the exit code. What it wrote to standard output is flushed (it
/// starts without Rust's runtime, which would).
pub fn main() -> u8 {
    let args: Vec<OsString> = std::env::args_os().collect();
    let code = if let Some(result) = quick(&args) {
        exit::code(result)
    } else if let Some((home, cmd)) = hook_only(&args) {
        // A hook: answered here when a rule decides the call at once. A client's signal to give
        // up waits from now until the whole `assent`, should the call be handed to it, listens.
        hook::signals::hold();
        match Home::resolve(home) {
            Ok(home) => match hook::quick(&home, cmd) {
                Quick::Answered(result) => exit::code(result),
                Quick::HandOver(input, watch) => {
                    assent_core::crash::pause("hook-handover");
                    exit::code(hand_over(&args, Some(input), Some((hook::WATCH_VAR, watch.to_var()))))
                }
            },
            Err(e) => exit::code(Err(e)),
        }
    } else {
        exit::code(hand_over(&args, None, None))
    };
    match std::io::Write::flush(&mut std::io::stdout()) {
        Ok(()) => code,
        Err(_) => exit::ERROR,
    }
}

/// `assent [--home DIR] hook ...` alone: a hook runs before every tool call, and building the
/// whole command line's parser was a fifth of its start.
#[derive(Debug, Parser)]
#[command(name = "assent")]
struct HookOnly {
    #[arg(long, global = true, value_name = "DIR")]
    home: Option<PathBuf>,
    #[command(subcommand)]
    command: HookOnlyCommand,
}

#[derive(Debug, clap::Subcommand)]
enum HookOnlyCommand {
    Hook(HookCmd),
}

/// `args` as a hook's command line (its home and the hook), parsed by the hook's parser alone;
/// none when they are anything else (help included), which the whole parser then reads and
/// answers.
pub fn hook_only(args: &[OsString]) -> Option<(Option<PathBuf>, HookCmd)> {
    if !args.iter().skip(1).any(|a| a == "hook") {
        return None;
    }
    let h = HookOnly::try_parse_from(args).ok()?;
    let HookOnlyCommand::Hook(cmd) = h.command;
    Some((h.home, cmd))
}

/// `assent --home HOME [--token-file F] run ID`, the command as the hook rewrites a call: run
/// from the ticket the hook left, before the rest of the command line is parsed and without a
/// request. None when `args` are not that command, or there is no good ticket (the command is
/// then parsed and run as any other).
pub fn quick(args: &[OsString]) -> Option<Result<()>> {
    let words: Vec<&str> = args.iter().skip(1).map(|a| a.to_str()).collect::<Option<_>>()?;
    let (home, id) = match words.as_slice() {
        ["--home", home, "run", id] | ["--home", home, "--token-file", _, "run", id] => (*home, *id),
        _ => return None,
    };
    let home = Home { dir: home.into() };
    // A read becomes the command, in this process (which has this one thread): nothing waits on
    // it, nothing is cleaned up after it (nearly every ticket is for a read).
    let a = ticket::claim(&home, id)?;
    // (A box that reaches hosts needs this process for its proxy.)
    if a.profile == Confine::Read && a.hosts.is_empty() {
        let spec = boxed::Spec { profile: a.profile, cwd: a.cwd.into(), argv: bash(a.command), hosts: Vec::new() };
        return Some(Err(refuse(format!("{id} not run: {}", boxed::exec(&spec)))));
    }
    Some(execute(id, a))
}

/// The same arguments to the whole `assent` beside this binary, in this process (which asks the
/// server, or says what is wrong), with `input` as its standard input when this process read its
/// own already, and `var` set in its environment.
pub fn hand_over(args: &[OsString], input: Option<String>, var: Option<(&str, String)>) -> Result<()> {
    let exe = std::env::current_exe().context("where this binary is")?;
    let full = exe.with_file_name(format!("assent{}", std::env::consts::EXE_SUFFIX));
    let mut c = std::process::Command::new(&full);
    c.args(args.iter().skip(1));
    if let Some((k, v)) = var {
        c.env(k, v);
    }
    if let Some(input) = input {
        // A file with no name, read from its start: a pipe's buffer might not hold it all.
        use std::io::{Seek, Write};
        let mut f = tempfile::tempfile().context("a file for the hook's event")?;
        f.write_all(input.as_bytes()).and_then(|()| f.rewind()).context("a file for the hook's event")?;
        c.stdin(f);
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        let e = c.exec();
        Err(refuse(format!("nothing run: `{}` could not be started: {e}", full.display())))
    }
    #[cfg(not(unix))]
    {
        let status = c.status().map_err(|e| refuse(format!("nothing run: `{}`: {e}", full.display())))?;
        match status.code() {
            Some(0) => Ok(()),
            c => Err(ExitError::new(c.and_then(|c| u8::try_from(c).ok()).unwrap_or(exit::ERROR), "").into()),
        }
    }
}

/// The command line as bash runs it.
fn bash(command: String) -> Vec<OsString> {
    vec!["bash".into(), "-c".into(), command.into()]
}

/// What `p` approved to run confined, as [`ticket::approved`] says, refused with the exit code
/// of a command that cannot run confined.
pub fn approved(p: &assent_core::Proposal, keys: &assent_receipt::KeySet) -> Result<Approved> {
    ticket::approved(p, keys, ticket::now()).map_err(|r| refuse(r.0))
}

/// Runs what `id` approved, in its box; exits with the command's code.
pub fn execute(id: &str, a: Approved) -> Result<()> {
    let spec = boxed::Spec { profile: a.profile, cwd: a.cwd.into(), argv: bash(a.command), hosts: a.hosts };
    let status = boxed::run(&spec).map_err(|e| refuse(format!("{id} not run: {e}")))?;
    match status.code() {
        Some(0) => Ok(()),
        Some(c) => Err(ExitError::new(u8::try_from(c).unwrap_or(exit::ERROR), "").into()),
        None => {
            // Ended by a signal: the shell's code for it, 128 + its number.
            #[cfg(unix)]
            let code = u8::try_from(128 + std::os::unix::process::ExitStatusExt::signal(&status).unwrap_or(0))
                .unwrap_or(exit::ERROR);
            #[cfg(not(unix))]
            let code = exit::ERROR;
            Err(ExitError::new(code, "").into())
        }
    }
}
