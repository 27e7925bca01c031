//! `assent hook CLIENT`: a command hook that puts a coding agent's tool calls in the inbox. It
//! reads the client's event on standard input ([`assent_agents`] knows each client's), files a
//! `tool.call` proposal (session and working folder kept; the tool-use id as idempotency key, so
//! a re-run hook does not file twice), and prints the decision in the client's shape.
//!
//! This is the hook's fast path, run in `assent-run` (it starts in a fraction of the whole
//! `assent`'s time): the call filed in one blocking exchange and answered when a rule decided it
//! at once, the call of nearly every hook ([`quick`]). A call that waits for the person is handed
//! to the whole `assent` (the command line's `hook`), which files the same call again under the
//! same key, finds it filed, waits up to a bound, and answers with [`answer`] and [`say`] as
//! here. When the wait ends undecided, or Assent is not running, the call goes back to the
//! client's own permission settings (or, for a client with none, is not run), and says why.
//!
//! The idempotency key is the tool-use id alone, and nothing the hook sends depends on its own
//! flags: the same event re-run (with another `--timeout`, say) gets the first proposal's answer.

use crate::home::{AgentAuth, Home};
use crate::program::program;
use crate::{ExitError, ticket};
use anyhow::{Context, Result};
use assent_agents::{Agent, Answer, Call, Rewrite};
use assent_client::{Gate, Gated};
use assent_core::verdict::Verdict;
use serde_json::Value;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub mod signals;
mod watch;

pub use watch::{WATCH_VAR, Watch};

/// `assent hook CLIENT`'s arguments.
#[derive(Debug, clap::Args)]
pub struct HookCmd {
    /// The client whose hook this is.
    #[arg(value_parser = client_names())]
    pub client: String,
    /// Print the file the client runs this hook from (OpenCode's plugin, Cline's hook file),
    /// with this binary's path, home and flags in it.
    #[arg(long = "print-file", visible_aliases = ["plugin", "script"])]
    pub print_file: bool,
    /// The hook's flags.
    #[command(flatten)]
    pub hook: HookArgs,
}

/// The clients' names, each with its line of help.
fn client_names() -> clap::builder::PossibleValuesParser {
    let all = assent_agents::all().iter();
    clap::builder::PossibleValuesParser::new(all.map(|a| clap::builder::PossibleValue::new(a.name()).help(a.about())))
}

/// Flags of a hook.
#[derive(Debug, Clone, clap::Args)]
pub struct HookArgs {
    /// Gate only these tools (comma-separated, e.g. Bash,Edit,Write). Default: every tool
    /// except the read-only ones (Read, Glob, Grep, LS, WebSearch, TodoWrite, ...).
    #[arg(long, value_delimiter = ',')]
    pub tools: Vec<String>,
    /// Never gate these tools (comma-separated), on top of the default read-only ones.
    #[arg(long, value_delimiter = ',')]
    pub skip: Vec<String>,
    /// Seconds to wait for the person before handing back to the client's own prompt. Keep it
    /// under the hook's timeout in the client's settings (60 s unless set there). Default 55,
    /// and for Cline, whose hooks have a fixed 120 s, 110 (at most, for Cline, too).
    #[arg(long)]
    pub timeout: Option<u64>,
    /// Which agent token to use.
    #[command(flatten)]
    pub auth: AgentAuth,
}

impl HookCmd {
    /// The client named.
    pub fn agent(&self) -> Result<&'static dyn Agent> {
        assent_agents::named(&self.client).with_context(|| format!("no client named `{}`", self.client))
    }
}

/// How long a hook's proposal lives if the hook itself dies without withdrawing it (a
/// constant, so that re-running the same event sends the same proposal).
pub const HOOK_EXPIRY_SECS: u64 = 3600;

/// How long a hook waits for the person unless told (under the 60 s most clients give a hook).
pub const DEFAULT_WAIT: u64 = 55;

/// The exit code of a hook that could not answer: 2, which Claude Code, Codex and Gemini CLI
/// read as "block this call" (on 1, Claude Code and Gemini CLI run it).
pub const FAILED: u8 = 2;

/// A hook's call, read and checked.
pub struct Hook {
    /// The client.
    pub agent: &'static dyn Agent,
    /// The hook's flags.
    pub args: HookArgs,
    /// The call.
    pub call: Call,
}

impl Hook {
    /// How long the hook waits for the person, in seconds: under the client's own bound.
    pub fn wait(&self) -> u64 {
        wait(self.agent, &self.args)
    }

    /// The call as the hook gates it.
    pub fn gate(&self) -> Gate {
        let (agent, ev) = (self.agent, &self.call.ev);
        // What identifies the tool call (its session and its id), never the hook's own flags.
        let session = ev["session_id"].as_str().unwrap_or("-");
        let key =
            ev["tool_use_id"].as_str().map(|id| format!("hook:{}:{id}", assent_core::kinds::clip_pub(session, 80)));
        let input = self.call.input();
        let mut cwd = ev["cwd"].as_str().filter(|c| assent_commands::path::is_absolute(c)).map(PathBuf::from);
        // A shell that runs in a folder the call names (Gemini's `dir_path`, OpenCode's
        // `workdir`), under the session's: the folder the command's rules read it in. It must
        // resolve, through links, inside the session's folder: the folder is Assent's, not the
        // model's. One that leaves it is no folder rules vouch for (the call asks).
        if let Some(dir) =
            agent.folder_arg().and_then(|k| input.get(k)).and_then(Value::as_str).filter(|d| !d.is_empty())
        {
            cwd = cwd.and_then(|c| folder_inside(&c, dir));
        }
        Gate {
            tool: self.call.tool().to_string(),
            confinable: agent.confinable(self.call.tool(), &input),
            input,
            cwd: cwd.map(|c| c.display().to_string()),
            client: Some(agent.name().into()),
            permission_mode: ev["permission_mode"]
                .as_str()
                .filter(|m| assent_core::kinds::is_permission_mode(m))
                .map(str::to_string),
            session_id: ev["session_id"].as_str().map(str::to_string),
            idempotency_key: key,
            expires_in: HOOK_EXPIRY_SECS,
            wait: Duration::from_secs(self.wait()),
            carry_receipt: agent.carries_receipt(),
        }
    }
}

/// How long a hook of `agent` waits for the person, in seconds.
fn wait(agent: &dyn Agent, args: &HookArgs) -> u64 {
    let (default, most) = match agent.most_wait() {
        Some(most) => (most, most),
        None => (DEFAULT_WAIT, HOOK_EXPIRY_SECS - 60),
    };
    args.timeout.unwrap_or(default).min(most)
}

/// The folder `dir` names (relative to the session's folder `session`, or absolute), resolved
/// through links, when it is the session's folder or inside it; none otherwise (or when it does
/// not exist).
fn folder_inside(session: &Path, dir: &str) -> Option<PathBuf> {
    // Windows answers with its verbatim form (`\\?\C:\...`): the path as the client writes it.
    let plain = |p: PathBuf| match p.to_str().and_then(|s| s.strip_prefix(r"\\?\")) {
        Some(rest) if cfg!(windows) => PathBuf::from(rest),
        _ => p,
    };
    let real = plain(std::fs::canonicalize(session.join(dir)).ok()?);
    let base = plain(std::fs::canonicalize(session).unwrap_or_else(|_| session.to_path_buf()));
    real.starts_with(&base).then_some(real)
}

/// Whether the hook gates `tool`: named with `--tools`, or not one of the client's tools that
/// only read, and not skipped.
fn gated(agent: &dyn Agent, tool: &str, args: &HookArgs) -> bool {
    if args.skip.iter().any(|s| s == tool) {
        return false;
    }
    if !args.tools.is_empty() {
        return args.tools.iter().any(|t| t == tool);
    }
    !agent.read_only().contains(&tool)
}

/// The call the event `raw` asks about; none when the hook lets it be (a tool it does not gate).
pub fn read(cmd: HookCmd, raw: &str) -> Result<Option<Hook>> {
    let agent = cmd.agent()?;
    let ev: Value = serde_json::from_str(raw).context("the hook event on standard input is not JSON")?;
    let call = agent.read(ev).map_err(anyhow::Error::msg)?;
    if !gated(agent, call.tool(), &cmd.hook) {
        // Not ours to gate: no output leaves the client's normal behaviour.
        return Ok(None);
    }
    anyhow::ensure!(!call.tool().is_empty(), "the hook event has no tool_name");
    Ok(Some(Hook { agent, args: cmd.hook, call }))
}

/// The event on standard input.
pub fn stdin() -> Result<String> {
    let mut raw = String::new();
    std::io::stdin().read_to_string(&mut raw).context("cannot read the hook event from standard input")?;
    Ok(raw)
}

/// The verdict for how gating ended; a confined allow leaves its ticket for the run.
pub fn answer(home: &Home, hook: &Hook, gated: Gated) -> Verdict {
    let agent = hook.agent;
    let back = |why: String| Verdict::Ask(assent_agents::check::handed_back(agent.hands_back(), &why));
    match gated {
        Gated::Decided { verdict, proposal, .. } => {
            if matches!(verdict, Verdict::Confined { .. }) && agent.runs_rewritten() {
                // What the run needs, left where it finds it without asking again.
                ticket::leave(home, &proposal);
            }
            verdict
        }
        Gated::NotRunning(_) => not_running(agent, home),
        Gated::Refused(e) => back(format!("Assent refused the proposal ({e})")),
        Gated::Stopped { id } => back(format!("Interrupted while waiting in Assent (proposal {id} withdrawn)")),
        Gated::TimedOut { id } => {
            back(format!("No decision in Assent within {} s (proposal {id} withdrawn)", hook.wait()))
        }
        Gated::Lost { id, .. } => back(format!("Lost contact with Assent while waiting on {id}")),
    }
}

/// The verdict when no server runs for `home`.
pub fn not_running(agent: &dyn Agent, home: &Home) -> Verdict {
    let why = format!("Assent is not running (home {}), so no person saw this call", home.dir.display());
    Verdict::Ask(assent_agents::check::handed_back(agent.hands_back(), &why))
}

/// The answer without waiting, from one blocking exchange: a call a rule decided at once. None
/// for anything else, which the whole hook then answers.
fn at_once(home: &Home, hook: &Hook) -> Option<Verdict> {
    let g = hook.gate();
    // Filed again by the whole hook, the call must be found as the same one.
    let key = g.idempotency_key.clone()?;
    let ep = home.endpoint()?;
    let token = crate::home::agent_token(home, &hook.args.auth).ok()?;
    let mut server = assent_client::loopback::Loopback::connect(&ep, Duration::from_secs(3)).ok()?;
    let (body, wants_receipt) = g.body();
    let auth = format!("Bearer {token}");
    let headers = [("authorization", auth.as_str()), ("assent-client", "cli"), ("idempotency-key", key.as_str())];
    let a = server.send("POST", "/v1/proposals", &headers, Some(&serde_json::to_vec(&body).ok()?)).ok()?;
    let p: assent_core::Proposal = serde_json::from_slice(&a.body).ok().filter(|_| (200..300).contains(&a.status))?;
    p.settled.then(|| answer(home, hook, assent_client::decided(&body, wants_receipt, p)))
}

/// The client's answer for a verdict, in its shape (one JSON line).
pub fn written(home: &Home, hook: &Hook, verdict: &Verdict) -> Value {
    let answer = match verdict {
        Verdict::Allow(input) => Answer::Allow(input.clone()),
        Verdict::Confined { proposal, confine, by_rule, hosts } => Answer::Boxed {
            proposal: proposal.clone(),
            profile: confine.as_str(),
            by_rule: *by_rule,
            hosts: hosts.clone(),
        },
        Verdict::Deny(why) => Answer::Deny(why.clone()),
        Verdict::Ask(why) => Answer::Ask(why.clone()),
    };
    hook.agent.answer(&hook.call, &answer, &rewrite(home, &hook.args.auth, hook.call.input()))
}

/// Prints the answer to the hook's call: one JSON line.
pub fn say(home: &Home, hook: &Hook, verdict: &Verdict) {
    println!("{}", written(home, hook, verdict));
}

/// `w` quoted for a shell.
fn quote(w: &str) -> String {
    shlex::try_quote(w).map(|q| q.into_owned()).unwrap_or_else(|_| w.to_string())
}

/// The rewrite that runs a call (`input`) confined, with this program, its home and token.
fn rewrite(home: &Home, auth: &AgentAuth, input: Value) -> Rewrite {
    let mut prefix = format!("{} --home {}", quote(&program().to_string_lossy()), quote(&home.dir.to_string_lossy()));
    if let Some(t) = &auth.token_file {
        prefix.push_str(&format!(" --token-file {}", quote(&t.to_string_lossy())));
    }
    Rewrite { prefix, input }
}

/// The file a client runs this hook from, when `cmd` asks for it (`--print-file`).
pub fn printed(home: &Home, cmd: &HookCmd) -> Option<Result<String>> {
    if !cmd.print_file {
        return None;
    }
    Some(cmd.agent().and_then(|agent| {
        let argv = hook_argv(home, agent, wait(agent, &cmd.hook), &cmd.hook);
        agent.hook_file(&argv).with_context(|| {
            format!(
                "{} runs no file of Assent's: its settings name the hook (assent connect {})",
                agent.title(),
                agent.name()
            )
        })
    }))
}

/// What `assent connect` writes for `agent`: the hook's command line, quoted for a shell, and
/// the file the client runs it from (OpenCode's plugin, Cline's hook file), waiting `wait`
/// seconds (the client's default when none).
pub fn wiring(home: &Home, agent: &dyn Agent, wait_secs: Option<u64>) -> (String, Option<String>) {
    let args =
        HookArgs { tools: Vec::new(), skip: Vec::new(), timeout: wait_secs, auth: AgentAuth { token_file: None } };
    let argv = hook_argv(home, agent, wait(agent, &args), &args);
    let line: Vec<String> = argv.iter().map(|w| quote(w)).collect();
    (line.join(" "), agent.hook_file(&argv))
}

/// The command line that runs this hook as this binary (`assent-run` beside it where it is
/// installed), in this home, with these flags.
fn hook_argv(home: &Home, agent: &dyn Agent, wait: u64, args: &HookArgs) -> Vec<String> {
    let mut argv = vec![program().display().to_string(), "--home".into(), home.dir.display().to_string()];
    if let Some(t) = &args.auth.token_file {
        argv.extend(["--token-file".into(), t.display().to_string()]);
    }
    argv.extend(["hook".into(), agent.name().into(), "--timeout".into(), wait.to_string()]);
    for (flag, list) in [("--tools", &args.tools), ("--skip", &args.skip)] {
        if !list.is_empty() {
            argv.extend([flag.to_string(), list.join(",")]);
        }
    }
    argv
}

/// A hook's failure, as the exit code that blocks the call.
pub fn closed(r: Result<()>) -> Result<()> {
    r.map_err(|e| ExitError::new(FAILED, format!("{e:#}")).into())
}

/// How `assent-run` answered a hook (see [`quick`]).
pub enum Quick {
    /// Answered (or failed, said).
    Answered(Result<()>),
    /// For the whole `assent` to answer, with the event read from standard input and the
    /// client as it was before the call was filed.
    HandOver(String, Watch),
}

/// A hook in `assent-run`: the call filed in one blocking exchange, and answered when a rule
/// decided it at once (the call of nearly every hook). Anything else (a call that waits for
/// the person, no tool-use id, a refusal to word, no server) is handed to the whole `assent`,
/// which files the same call again under the same key and finds it filed.
pub fn quick(home: &Home, cmd: HookCmd) -> Quick {
    if let Some(file) = printed(home, &cmd) {
        return Quick::Answered(file.map(|f| print!("{f}")));
    }
    let watch = Watch::here();
    let raw = match stdin() {
        Ok(r) => r,
        Err(e) => return Quick::Answered(closed(Err(e))),
    };
    let hook = match read(cmd, &raw) {
        Ok(Some(hook)) => hook,
        Ok(None) => return Quick::Answered(Ok(())),
        Err(e) => return Quick::Answered(closed(Err(e))),
    };
    match at_once(home, &hook) {
        Some(verdict) => {
            say(home, &hook, &verdict);
            Quick::Answered(Ok(()))
        }
        None => Quick::HandOver(raw, watch),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
