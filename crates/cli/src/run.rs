//! `assent run PROPOSAL`: runs a command a rule allowed only confined, confined.
//!
//! A hook answers such an allow by rewriting the call to this command. What runs is what Assent
//! stored and decided, never the agent's text quoted once more: the approved payload's command
//! in its working folder, under the confinement the decision names. The decision's receipt is
//! checked first (signed by this Assent, for this proposal, approved, for exactly this payload,
//! naming the same confinement), so a tampered store or a proposal decided otherwise runs
//! nothing. Where the kernel cannot confine as the profile says, nothing runs.
//!
//! The hook leaves the proposal it was answered with in the home (`runs/ID.json`, the user's
//! alone), and the server its receipt keys (`keys.json`): `assent run` as the hook wrote it
//! takes those first, before any parsing of other commands or any request, and checks the
//! receipt all the same. Anything missing or not as it should be, and it asks the server.

use crate::client::{AgentAuth, Client};
use crate::home::Home;
use crate::{ExitError, exit};
use anyhow::{Context, Result};
use assent_receipt::{Expect, KeySet, verify};
use serde_json::Value;

/// The exit code when the command could not be run confined (as a shell says of a command it
/// cannot execute).
pub const CANNOT_CONFINE: u8 = 126;

/// What `assent run` runs: the approved command, its folder and its confinement.
#[derive(Debug, Clone, PartialEq)]
pub struct Approved {
    /// The command line, run by bash.
    pub command: String,
    /// The working folder.
    pub cwd: String,
    /// The confinement.
    pub profile: assent_confine::Profile,
    /// The hosts the box reaches (none: no network).
    pub hosts: Vec<String>,
}

fn refuse(message: String) -> anyhow::Error {
    ExitError::new(CANNOT_CONFINE, message).into()
}

/// What `p` (as the API returns it) approved to run confined, its receipt checked with `keys`
/// at `now`.
pub fn approved(p: &assent_core::Proposal, keys: &KeySet, now: i64) -> Result<Approved> {
    let id = &p.id;
    if p.kind != assent_core::payloads::KindName::ToolCall || p.status != assent_core::status::Status::Approved {
        return Err(refuse(format!("{id} is not an approved tool call (it is {} {})", p.kind, p.status.as_str())));
    }
    let d = p.decision.as_ref().ok_or_else(|| refuse(format!("{id} has no decision")))?;
    let Some(confine) = d.confine else {
        return Err(refuse(format!(
            "{id} was approved to run as the client runs it, not confined in a box: `assent run` runs only what was approved in one"
        )));
    };
    let approved = p.approved_payload.as_ref().unwrap_or(&p.payload);
    let receipt = d.receipt.as_deref().ok_or_else(|| refuse(format!("{id} has no receipt to check")))?;
    let expect = Expect { payload: Some(approved), audience: None, tool_call: None, approved: true };
    let claims = verify(receipt, keys, &expect, now)
        .map_err(|r| refuse(format!("{id}'s receipt is refused ({}): {r}", r.code())))?;
    if claims.jti != *id || claims.confine.as_deref() != Some(confine.as_str()) || claims.hosts != d.hosts {
        return Err(refuse(format!("{id}'s receipt is for another proposal or another box")));
    }
    let profile = assent_confine::Profile::parse(confine.as_str())
        .ok_or_else(|| refuse(format!("this `assent` does not know the confinement `{}`", confine.as_str())))?;
    let command = approved.pointer("/input/command").and_then(Value::as_str);
    let cwd = approved.get("cwd").and_then(Value::as_str);
    match (command, cwd) {
        (Some(c), Some(w)) => Ok(Approved { command: c.to_string(), cwd: w.to_string(), profile, hosts: claims.hosts }),
        _ => Err(refuse(format!("{id} has no command and working folder to run"))),
    }
}

fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64)
}

/// A proposal id as Assent makes them (`p_` and lower-case letters and digits): the only names
/// a ticket is looked for under.
fn ticket(home: &Home, id: &str) -> Option<std::path::PathBuf> {
    let ok = id.len() <= 64
        && id
            .strip_prefix("p_")
            .is_some_and(|r| !r.is_empty() && r.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()));
    ok.then(|| home.runs().join(format!("{id}.json")))
}

/// Leaves `p` (settled, allowed confined) for `assent run` (see the module's documentation);
/// one that cannot be written only costs the run a request.
pub fn leave_ticket(home: &Home, p: &assent_core::Proposal) {
    let Some(path) = ticket(home, &p.id) else { return };
    // Tickets of calls the client never ran go after an hour (the server looks for them).
    let _ = std::fs::create_dir_all(home.runs());
    if let Ok(body) = serde_json::to_string(p) {
        // Written in place and not synced: `assent run` starts after this process has ended,
        // and a ticket lost to a crash only costs the run a request.
        let _ = write_user_only(&path, body.as_bytes());
    }
}

/// Writes `path` (readable by this user alone), replacing what it held.
fn write_user_only(path: &std::path::Path, body: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    assent_secrets::owner::open_private(path)?.write_all(body)
}

/// What the ticket the hook left for `id` approved, its receipt checked with the keys the
/// server wrote; none if anything is missing or not as it should be. The ticket is used once:
/// renamed to `ID.used` at once (removing a file just written can take a millisecond, on a disk
/// mounted with `discard` say), and removed by the server.
fn from_ticket(home: &Home, id: &str) -> Option<Approved> {
    let path = ticket(home, id)?;
    let text = std::fs::read(&path).ok()?;
    std::fs::rename(&path, path.with_extension("used")).ok()?;
    let p: assent_core::Proposal = serde_json::from_slice(&text).ok()?;
    let jwks: Value = serde_json::from_slice(&std::fs::read(home.keys_json()).ok()?).ok()?;
    let keys = KeySet::from_json(&jwks).ok()?;
    (p.id == id).then(|| approved(&p, &keys, now()).ok()).flatten()
}

/// `assent --home HOME [--token-file F] run ID`, the command as the hook rewrites a call: run
/// from the ticket the hook left, before the rest of the command line is parsed and without a
/// request. None when `args` are not that command, or there is no good ticket (the command is
/// then parsed and run as any other).
pub fn quick(args: &[std::ffi::OsString]) -> Option<Result<()>> {
    let words: Vec<&str> = args.iter().skip(1).map(|a| a.to_str()).collect::<Option<_>>()?;
    let (home, id) = match words.as_slice() {
        ["--home", home, "run", id] | ["--home", home, "--token-file", _, "run", id] => (*home, *id),
        _ => return None,
    };
    let home = Home { dir: home.into() };
    // A read becomes the command, in this process (which has this one thread): nothing waits on
    // it, nothing is cleaned up after it (nearly every ticket is for a read).
    let a = from_ticket(&home, id)?;
    // (A box that reaches hosts needs this process for its proxy.)
    if a.profile == assent_confine::Profile::Read && a.hosts.is_empty() {
        let spec =
            assent_confine::Spec { profile: a.profile, cwd: a.cwd.into(), argv: bash(a.command), hosts: Vec::new() };
        return Some(Err(refuse(format!("{id} not run: {}", assent_confine::exec(&spec)))));
    }
    Some(execute(id, a))
}

/// The small binary that runs what a hook rewrote: `assent-run --home HOME [--token-file F] run
/// ID`, the same arguments as `assent`'s. It runs from the ticket, and hands anything else to
/// the `assent` beside it.
pub const RUNNER: &str = "assent-run";

/// What `assent-run` could not do itself (no good ticket, a hook to wait in): the same
/// arguments to the full `assent` beside it, in this process (which asks the server, or says
/// what is wrong), with `input` as its standard input when this process read its own already,
/// and `var` set in its environment.
pub fn hand_over(args: &[std::ffi::OsString], input: Option<String>, var: Option<(&str, String)>) -> Result<()> {
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

/// Runs `assent run ID`: exits with the command's code.
pub async fn run(home: &Home, id: &str, auth: &AgentAuth) -> Result<()> {
    let a = match from_ticket(home, id) {
        Some(a) => a,
        None => {
            let client = Client::agent(home, auth)?;
            // The proposal and the keys that sign its receipt, at once.
            let (p, jwks) = tokio::join!(client.api.get(id), client.call(reqwest::Method::GET, "/keys", None, &[]));
            let (p, jwks) = (p.map_err(|e| client.failed(e))?, jwks?);
            let keys = KeySet::from_json(&jwks).map_err(|e| anyhow::anyhow!("the server's key set: {e}"))?;
            approved(&p, &keys, now())?
        }
    };
    let id = id.to_string();
    tokio::task::spawn_blocking(move || execute(&id, a)).await.context("the confined run stopped")?
}

/// The command line as bash runs it.
fn bash(command: String) -> Vec<std::ffi::OsString> {
    vec!["bash".into(), "-c".into(), command.into()]
}

/// Runs what `id` approved, confined; exits with the command's code.
fn execute(id: &str, a: Approved) -> Result<()> {
    let spec = assent_confine::Spec { profile: a.profile, cwd: a.cwd.into(), argv: bash(a.command), hosts: a.hosts };
    let status = assent_confine::run(&spec).map_err(|e| refuse(format!("{id} not run: {e}")))?;
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
