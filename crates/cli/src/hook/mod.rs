//! `assent hook claude-code`: a command hook that puts a coding agent's tool calls in the
//! inbox. It reads a `PreToolUse` or `PermissionRequest` event on standard input (Claude Code;
//! OpenAI Codex uses the same `PermissionRequest` contract), files a `tool.call` proposal
//! (session and working folder kept; the tool-use id as idempotency key, so a re-run hook does
//! not file twice), waits for the person up to a bound, and prints the decision in that event's
//! output shape. When the wait ends undecided, or Assent is not running, it hands the call back
//! to the client's own permission settings (`ask`: a prompt in the terminal, a denial in a
//! headless run) and says why; an undecided proposal is withdrawn so the inbox does not keep a
//! question nobody is waiting for, and so is one whose hook is interrupted (SIGINT, SIGTERM,
//! SIGHUP: the client gave up on the call).
//!
//! The idempotency key is the tool-use id alone, and nothing the hook sends depends on its own
//! flags: the same event re-run (with another `--timeout`, say) gets the first proposal's answer.

use crate::client::{AgentAuth, Client};
use crate::home::Home;
use anyhow::{Context, Result, bail};
use assent_client::{Gate, Gated, gate};
use assent_core::verdict::Verdict;
use serde_json::{Value, json};
use std::io::Read;
use std::time::Duration;

mod clients;
mod output;
mod watch;

use clients::{Agent, confinable};
pub use clients::{COPILOT_READ_ONLY, GEMINI_READ_ONLY, OPENCODE_READ_ONLY, READ_ONLY};
use output::{Rewrite, output};
pub use watch::{WATCH_VAR, Watch};

/// The hooks.
#[derive(Debug, clap::Subcommand)]
pub enum HookCmd {
    /// Claude Code PreToolUse or PermissionRequest hooks.
    ClaudeCode(HookArgs),
    /// OpenAI Codex PermissionRequest hooks. Codex refuses an answer that changes the call, so
    /// an approval with edits is answered as a denial that tells the model the edited call to
    /// run instead (which comes back here as a new request).
    Codex(HookArgs),
    /// Gemini CLI BeforeTool hooks. Gemini runs a call whose hook fails, times out or answers
    /// nothing it reads, so this hook answers every call (a deny when nobody decided) and exits
    /// 2 (Gemini blocks the call) on any error; keep `--timeout` under the hook's `timeout`.
    GeminiCli(HookArgs),
    /// GitHub Copilot CLI preToolUse hooks (its own event format: `"preToolUse"` in a hooks
    /// file). Copilot runs a call whose hook times out: keep `--timeout` under `timeoutSec`.
    CopilotCli(HookArgs),
    /// OpenCode, through Assent's plugin (`assent hook opencode --plugin` prints it), which runs
    /// this hook before every tool call and does what it answers.
    Opencode(OpencodeArgs),
    /// Cline's PreToolUse hook (`assent hook cline --script` prints the hook file). Cline runs a
    /// call whose hook takes more than 120 s, so this hook waits at most 110 s.
    Cline(ClineArgs),
}

/// `assent hook cline`'s flags.
#[derive(Debug, clap::Args)]
pub struct ClineArgs {
    /// Print the hook file that runs this hook (save it as ~/.cline/hooks/PreToolUse), with this
    /// binary's path, home and flags in it.
    #[arg(long)]
    pub script: bool,
    /// The hook's flags.
    #[command(flatten)]
    pub hook: HookArgs,
}

/// `assent hook opencode`'s flags.
#[derive(Debug, clap::Args)]
pub struct OpencodeArgs {
    /// Print the OpenCode plugin that runs this hook (save it as
    /// ~/.config/opencode/plugin/assent.js), with this binary's path, home and flags in it.
    #[arg(long)]
    pub plugin: bool,
    /// The hook's flags.
    #[command(flatten)]
    pub hook: HookArgs,
}

/// Flags of a hook.
#[derive(Debug, clap::Args)]
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

/// How long a hook's proposal lives if the hook itself dies without withdrawing it (a
/// constant, so that re-running the same event sends the same proposal).
pub const HOOK_EXPIRY_SECS: u64 = 3600;

/// What the model and the person read when the call goes back to the client: true in the
/// terminal (a prompt follows) and in a headless run (the client denies). Gemini CLI's hooks
/// cannot hand a call back (its `ask` waits for ever in a headless run): the call is not run.
fn handed_back(client: Agent, why: &str) -> String {
    if matches!(client, Agent::GeminiCli | Agent::Opencode | Agent::Cline) {
        return format!("{why}; not run");
    }
    format!(
        "{why}; the call goes back to the agent's own permission settings (a prompt in a terminal; a headless run denies it)"
    )
}

/// Which event the hook answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Event {
    PreToolUse,
    PermissionRequest,
    /// Gemini CLI's.
    BeforeTool,
    /// Copilot CLI's own `preToolUse` (its fields in camel case, read into the others' names).
    CopilotPreToolUse,
    /// OpenCode's `tool.execute.before`, as Assent's plugin hands it over.
    OpencodeBefore,
    /// Cline's PreToolUse.
    ClinePreToolUse,
}

fn gated(client: Agent, tool: &str, args: &HookArgs) -> bool {
    if args.skip.iter().any(|s| s == tool) {
        return false;
    }
    if !args.tools.is_empty() {
        return args.tools.iter().any(|t| t == tool);
    }
    !client.read_only().contains(&tool)
}

/// The call of `ev` as the hook gates it.
fn gate_of(client_kind: Agent, args: &HookArgs, ev: &Value, tool: &str) -> Gate {
    // What identifies the tool call (its session and its id), never the hook's own flags.
    let session = ev["session_id"].as_str().unwrap_or("-");
    let key = ev["tool_use_id"].as_str().map(|id| format!("hook:{}:{id}", assent_core::kinds::clip_pub(session, 80)));
    let input = ev.get("tool_input").cloned().unwrap_or(json!({}));
    let mut cwd = ev["cwd"].as_str().filter(|c| assent_commands::path::is_absolute(c)).map(std::path::PathBuf::from);
    // A shell that runs in a folder the call names (Gemini's `dir_path`, OpenCode's `workdir`),
    // under the session's: the folder the command's rules read it in.
    // It must resolve, through links, inside the session's folder: the folder is Assent's, not
    // the model's. One that leaves it is no folder rules vouch for (the call asks).
    if let Some(dir) =
        client_kind.work_dir_arg().and_then(|k| input.get(k)).and_then(Value::as_str).filter(|d| !d.is_empty())
    {
        cwd = cwd.and_then(|c| folder_inside(&c, dir));
    }
    Gate {
        tool: tool.to_string(),
        input,
        cwd: cwd.map(|c| c.display().to_string()),
        client: Some(client_kind.name().into()),
        permission_mode: ev["permission_mode"]
            .as_str()
            .filter(|m| assent_core::kinds::is_permission_mode(m))
            .map(str::to_string),
        session_id: ev["session_id"].as_str().map(str::to_string),
        idempotency_key: key,
        expires_in: HOOK_EXPIRY_SECS,
        wait: Duration::from_secs(timeout(client_kind, args)),
        carry_receipt: client_kind == Agent::ClaudeCode,
        confinable: confinable(client_kind, tool, &ev["tool_input"]),
    }
}

/// The folder `dir` names (relative to the session's folder `session`, or absolute), resolved
/// through links, when it is the session's folder or inside it; none otherwise (or when it does
/// not exist).
fn folder_inside(session: &std::path::Path, dir: &str) -> Option<std::path::PathBuf> {
    // Windows answers with its verbatim form (`\\?\C:\...`): the path as the client writes it.
    let plain = |p: std::path::PathBuf| match p.to_str().and_then(|s| s.strip_prefix(r"\\?\")) {
        Some(rest) if cfg!(windows) => std::path::PathBuf::from(rest),
        _ => p,
    };
    let real = plain(std::fs::canonicalize(session.join(dir)).ok()?);
    let base = plain(std::fs::canonicalize(session).unwrap_or_else(|_| session.to_path_buf()));
    real.starts_with(&base).then_some(real)
}

/// How long the hook waits for the person, in seconds: under Cline's fixed 120 s for its hooks.
fn timeout(client: Agent, args: &HookArgs) -> u64 {
    let (default, most) =
        if client == Agent::Cline { (CLINE_MOST_WAIT, CLINE_MOST_WAIT) } else { (DEFAULT_WAIT, HOOK_EXPIRY_SECS - 60) };
    args.timeout.unwrap_or(default).min(most)
}

/// How long a hook waits for the person unless told (under the 60 s most clients give a hook).
pub const DEFAULT_WAIT: u64 = 55;

/// The longest a Cline hook waits (Cline runs a call whose hook takes more than 120 s).
pub const CLINE_MOST_WAIT: u64 = 110;

async fn decide(home: &Home, call: &Call, watch: &Watch) -> Result<Verdict> {
    let tool = call.ev["tool_name"].as_str().context("the hook event has no tool_name")?;
    let client = match Client::agent(home, &call.args.auth) {
        Ok(c) => c,
        Err(_) => return Ok(Verdict::Ask(not_running(call.client, home))),
    };
    let g = gate_of(call.client, &call.args, &call.ev, tool);
    // The client gives up on a call by signalling the hook (SIGINT, SIGTERM, SIGHUP), or by
    // dying (SIGKILL: no signal reaches the hook, but it is handed to another parent).
    let stop = async {
        tokio::select! {
            () = assent_host::start::stop_signal() => {}
            () = watch.gone() => {}
        }
    };
    Ok(answer(home, call, gate(&client.api, g, stop).await))
}

/// The verdict for how gating ended.
fn answer(home: &Home, call: &Call, gated: Gated) -> Verdict {
    let timeout = timeout(call.client, &call.args);
    match gated {
        Gated::Decided { verdict, proposal, .. } => {
            if matches!(verdict, Verdict::Confined { .. }) && call.client != Agent::Codex {
                // What `assent run` needs, left where it finds it without asking again.
                crate::run::leave_ticket(home, &proposal);
            }
            verdict
        }
        Gated::NotRunning(_) => Verdict::Ask(not_running(call.client, home)),
        Gated::Refused(e) => Verdict::Ask(handed_back(call.client, &format!("Assent refused the proposal ({e})"))),
        Gated::Stopped { id } => Verdict::Ask(handed_back(
            call.client,
            &format!("Interrupted while waiting in Assent (proposal {id} withdrawn)"),
        )),
        Gated::TimedOut { id } => Verdict::Ask(handed_back(
            call.client,
            &format!("No decision in Assent within {timeout} s (proposal {id} withdrawn)"),
        )),
        Gated::Lost { id, .. } => {
            Verdict::Ask(handed_back(call.client, &format!("Lost contact with Assent while waiting on {id}")))
        }
    }
}

/// The answer without waiting, from `assent-run`'s one blocking exchange (see [`quick`]): a
/// call a rule decided at once. None for anything else, which the whole hook then answers.
fn at_once(home: &Home, call: &Call) -> Option<Verdict> {
    let tool = call.ev["tool_name"].as_str()?;
    let g = gate_of(call.client, &call.args, &call.ev, tool);
    // Filed again by the whole hook, the call must be found as the same one.
    let key = g.idempotency_key.clone()?;
    let ep = (crate::client::endpoint(home))()?;
    let token = crate::client::agent_token(home, &call.args.auth).ok()?;
    let mut server = assent_client::loopback::Loopback::connect(&ep, Duration::from_secs(3)).ok()?;
    let (body, wants_receipt) = g.body();
    let auth = format!("Bearer {token}");
    let headers = [("authorization", auth.as_str()), ("assent-client", "cli"), ("idempotency-key", key.as_str())];
    let a = server.send("POST", "/v1/proposals", &headers, Some(&serde_json::to_vec(&body).ok()?)).ok()?;
    let p: assent_core::Proposal = serde_json::from_slice(&a.body).ok().filter(|_| (200..300).contains(&a.status))?;
    p.settled.then(|| answer(home, call, assent_client::decided(&body, wants_receipt, p)))
}
fn not_running(client: Agent, home: &Home) -> String {
    handed_back(client, &format!("Assent is not running (home {}), so no person saw this call", home.dir.display()))
}

/// A hook's call, read and checked.
struct Call {
    client: Agent,
    args: HookArgs,
    event: Event,
    ev: Value,
}

/// The call the event `raw` asks about; none when the hook lets it be (a tool it does not gate).
fn read(cmd: HookCmd, raw: &str) -> Result<Option<Call>> {
    let (client, args) = match cmd {
        HookCmd::ClaudeCode(a) => (Agent::ClaudeCode, a),
        HookCmd::Codex(a) => (Agent::Codex, a),
        HookCmd::GeminiCli(a) => (Agent::GeminiCli, a),
        HookCmd::CopilotCli(a) => (Agent::CopilotCli, a),
        HookCmd::Opencode(a) => (Agent::Opencode, a.hook),
        HookCmd::Cline(a) => (Agent::Cline, a.hook),
    };
    let mut ev: Value = serde_json::from_str(raw).context("the hook event on standard input is not JSON")?;
    match client {
        Agent::CopilotCli => ev = clients::copilot_event(&ev)?,
        Agent::Opencode => ev = clients::opencode_event(&ev)?,
        Agent::Cline => ev = clients::cline_event(&ev)?,
        _ => {}
    }
    let event = match ev["hook_event_name"].as_str() {
        Some("CopilotPreToolUse") if client == Agent::CopilotCli => Event::CopilotPreToolUse,
        Some("OpencodeToolExecuteBefore") if client == Agent::Opencode => Event::OpencodeBefore,
        Some("ClinePreToolUse") if client == Agent::Cline => Event::ClinePreToolUse,
        _ if client == Agent::CopilotCli => bail!("assent hook copilot-cli answers Copilot CLI's preToolUse events"),
        Some("PreToolUse") => Event::PreToolUse,
        Some("PermissionRequest") => Event::PermissionRequest,
        Some("BeforeTool") if client == Agent::GeminiCli => Event::BeforeTool,
        Some(other) if client == Agent::GeminiCli => {
            bail!("assent hook gemini-cli answers BeforeTool events, not {other}")
        }
        Some(other) => bail!("assent hook answers PreToolUse and PermissionRequest events, not {other}"),
        None => bail!("the hook event has no hook_event_name"),
    };
    let tool = ev["tool_name"].as_str().unwrap_or("");
    if !gated(client, tool, &args) {
        // Not ours to gate: no output leaves the client's normal behaviour.
        return Ok(None);
    }
    if client == Agent::Codex && event != Event::PermissionRequest {
        bail!("assent hook codex answers PermissionRequest events (Codex's only permission hook)");
    }
    Ok(Some(Call { client, args, event, ev }))
}

/// The file a client runs this hook from, when `cmd` asks for it (`--plugin`, `--script`).
fn printed(home: &Home, cmd: &HookCmd) -> Option<String> {
    match cmd {
        HookCmd::Opencode(a) if a.plugin => {
            let argv = hook_argv(home, "opencode", timeout(Agent::Opencode, &a.hook), &a.hook);
            Some(OPENCODE_PLUGIN.replace("\"__ASSENT_ARGV__\"", &json!(argv).to_string()))
        }
        HookCmd::Cline(a) if a.script => {
            let argv = hook_argv(home, "cline", timeout(Agent::Cline, &a.hook), &a.hook);
            let quoted: Vec<String> = argv
                .iter()
                .map(|w| shlex::try_quote(w).map(|q| q.into_owned()).unwrap_or_else(|_| w.clone()))
                .collect();
            Some(format!(
                "#!/bin/sh\n# Assent's PreToolUse hook for Cline: every tool call waits for Assent (a person, or a\n# rule of theirs). Made by `assent hook cline --script`; saved as ~/.cline/hooks/PreToolUse.\nexec {}\n",
                quoted.join(" ")
            ))
        }
        _ => None,
    }
}

/// What `assent connect` writes for `client`: the hook's command line, quoted for a shell (the
/// clients whose settings name a command), and the file a client runs it from (OpenCode's
/// plugin, Cline's hook file), waiting `wait` seconds (the client's default when none).
pub(crate) fn wiring(home: &Home, client: &str, wait: Option<u64>) -> (String, Option<String>) {
    let args = HookArgs { tools: Vec::new(), skip: Vec::new(), timeout: wait, auth: AgentAuth { token_file: None } };
    let agent = match client {
        "opencode" => Agent::Opencode,
        "cline" => Agent::Cline,
        _ => Agent::ClaudeCode,
    };
    let argv = hook_argv(home, client, wait.unwrap_or_else(|| timeout(agent, &args)), &args);
    let line = argv
        .iter()
        .map(|w| shlex::try_quote(w).map(|q| q.into_owned()).unwrap_or_else(|_| w.clone()))
        .collect::<Vec<_>>();
    let file = match client {
        "opencode" => printed(home, &HookCmd::Opencode(OpencodeArgs { plugin: true, hook: args })),
        "cline" => printed(home, &HookCmd::Cline(ClineArgs { script: true, hook: args })),
        _ => None,
    };
    (line.join(" "), file)
}

/// The command line that runs this hook as this binary (`assent-run` beside it where it is
/// installed), in this home, with these flags.
fn hook_argv(home: &Home, client: &str, wait: u64, args: &HookArgs) -> Vec<String> {
    let mut argv = vec![output::program().display().to_string(), "--home".into(), home.dir.display().to_string()];
    if let Some(t) = &args.auth.token_file {
        argv.extend(["--token-file".into(), t.display().to_string()]);
    }
    argv.extend(["hook".into(), client.into(), "--timeout".into(), wait.to_string()]);
    for (flag, list) in [("--tools", &args.tools), ("--skip", &args.skip)] {
        if !list.is_empty() {
            argv.extend([flag.to_string(), list.join(",")]);
        }
    }
    argv
}

/// The OpenCode plugin's source, its command line left to fill in.
const OPENCODE_PLUGIN: &str = include_str!("opencode_plugin.js");

fn stdin() -> Result<String> {
    let mut raw = String::new();
    std::io::stdin().read_to_string(&mut raw).context("cannot read the hook event from standard input")?;
    Ok(raw)
}

/// Prints the answer to `call`: one JSON line.
fn say(home: &Home, call: &Call, verdict: &Verdict) {
    let tool = call.ev["tool_name"].as_str().unwrap_or_default();
    let rewrite = Rewrite::new(home, &call.args.auth, tool, call.ev.get("tool_input").cloned().unwrap_or(json!({})));
    println!("{}", output(call.client, call.event, verdict, &rewrite));
}

/// Runs a hook: one JSON line on standard output.
pub async fn run(home: &Home, cmd: HookCmd) -> Result<()> {
    if let Some(file) = printed(home, &cmd) {
        print!("{file}");
        return Ok(());
    }
    let watch = Watch::start();
    let answered = async {
        let Some(call) = read(cmd, &stdin()?)? else { return Ok(()) };
        let verdict = decide(home, &call, &watch).await?;
        say(home, &call, &verdict);
        Ok(())
    };
    closed(answered.await)
}

/// The exit code of a hook that could not answer: 2, which Claude Code, Codex and Gemini CLI
/// read as "block this call" (on 1, Claude Code and Gemini CLI run it).
pub const FAILED: u8 = 2;

/// A hook's failure, as the exit code that blocks the call.
fn closed(r: Result<()>) -> Result<()> {
    r.map_err(|e| crate::ExitError::new(FAILED, format!("{e:#}")).into())
}

/// How `assent-run` answered a hook (see [`quick`]).
pub enum Quick {
    /// Answered (or failed, said).
    Answered(Result<()>),
    /// For the whole `assent` to answer, with the event read from standard input and the
    /// client as it was before the call was filed.
    HandOver(String, Watch),
}

/// A hook in `assent-run`, which starts in a fraction of the whole `assent`'s time: the call
/// filed in one blocking exchange, and answered when a rule decided it at once (the call of
/// nearly every hook). Anything else (a call that waits for the person, no tool-use id, a
/// refusal to word, no server) is handed to the whole `assent`, which files the same call again
/// under the same key and finds it filed.
pub fn quick(home: &Home, cmd: HookCmd) -> Quick {
    if let Some(file) = printed(home, &cmd) {
        print!("{file}");
        return Quick::Answered(Ok(()));
    }
    let watch = Watch::here();
    let raw = match stdin() {
        Ok(r) => r,
        Err(e) => return Quick::Answered(closed(Err(e))),
    };
    let call = match read(cmd, &raw) {
        Ok(Some(call)) => call,
        Ok(None) => return Quick::Answered(Ok(())),
        Err(e) => return Quick::Answered(closed(Err(e))),
    };
    match at_once(home, &call) {
        Some(verdict) => {
            say(home, &call, &verdict);
            Quick::Answered(Ok(()))
        }
        None => Quick::HandOver(raw, watch),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hook_waits_55_s_unless_told_and_cline_110() {
        let mut a = args(&[], &[]);
        a.timeout = None;
        assert_eq!((timeout(Agent::GeminiCli, &a), timeout(Agent::Cline, &a)), (DEFAULT_WAIT, CLINE_MOST_WAIT));
        a.timeout = Some(500);
        assert_eq!(timeout(Agent::Cline, &a), CLINE_MOST_WAIT, "capped under Cline's 120 s");
    }

    fn args(tools: &[&str], skip: &[&str]) -> HookArgs {
        HookArgs {
            tools: tools.iter().map(|s| s.to_string()).collect(),
            skip: skip.iter().map(|s| s.to_string()).collect(),
            timeout: Some(1),
            auth: AgentAuth { token_file: None },
        }
    }

    #[test]
    fn gating_rules() {
        assert!(gated(Agent::ClaudeCode, "Bash", &args(&[], &[])));
        assert!(gated(Agent::ClaudeCode, "mcp__github__create_issue", &args(&[], &[])));
        assert!(!gated(Agent::ClaudeCode, "Read", &args(&[], &[])));
        assert!(!gated(Agent::ClaudeCode, "Bash", &args(&[], &["Bash"])));
        assert!(gated(Agent::ClaudeCode, "Edit", &args(&["Bash", "Edit"], &[])));
        assert!(!gated(Agent::ClaudeCode, "Write", &args(&["Bash", "Edit"], &[])));
        // Each client's own read-only tools.
        assert!(gated(Agent::GeminiCli, "run_shell_command", &args(&[], &[])));
        assert!(gated(Agent::GeminiCli, "web_fetch", &args(&[], &[])));
        assert!(!gated(Agent::GeminiCli, "read_file", &args(&[], &[])));
        // What changes only Gemini's own state asks nothing; what widens or writes does.
        for quiet in ["update_topic", "list_background_processes", "enter_plan_mode", "tracker_list_tasks"] {
            assert!(!gated(Agent::GeminiCli, quiet, &args(&[], &[])), "{quiet}");
        }
        for asks in ["exit_plan_mode", "save_memory", "tracker_create_task", "write_file", "replace"] {
            assert!(gated(Agent::GeminiCli, asks, &args(&[], &[])), "{asks}");
        }
        assert!(gated(Agent::GeminiCli, "Read", &args(&[], &[])), "another client's names mean nothing here");
    }

    #[test]
    fn opencode_calls_read_in_the_others_names_and_key_their_proposal() {
        let (_root, w) = project_with_sub();
        let raw = json!({"tool": "bash", "args": {"command": "ls", "workdir": "sub"}, "directory": w,
            "sessionID": "ses_1", "callID": "call_9"});
        let ev = clients::opencode_event(&raw).expect("read");
        let g = gate_of(Agent::Opencode, &args(&[], &[]), &ev, "bash");
        assert_eq!(g.cwd, Some(format!("{w}/sub")));
        assert_eq!(g.idempotency_key.as_deref(), Some("hook:ses_1:call_9"));
        assert!(g.confinable);
        assert!(
            !gated(Agent::Opencode, "read", &args(&[], &[])) && gated(Agent::Opencode, "webfetch", &args(&[], &[]))
        );
        assert!(clients::opencode_event(&json!({"args": {}})).is_err(), "no tool");
    }

    /// A project folder with a `sub` folder: the folder (kept while the first lives) and its path.
    fn project_with_sub() -> (tempfile::TempDir, String) {
        let root = tempfile::tempdir().expect("tmp");
        let w = root.path().canonicalize().expect("real");
        std::fs::create_dir_all(w.join("sub")).expect("made");
        let w = w.to_str().expect("utf-8").to_string();
        (root, w)
    }

    #[test]
    fn a_client_folder_must_resolve_inside_the_session() {
        let root = tempfile::tempdir().expect("tmp");
        let base = root.path().canonicalize().expect("real");
        let (proj, other) = (base.join("proj"), base.join("other"));
        for d in [proj.join("sub"), other.clone()] {
            std::fs::create_dir_all(d).expect("made");
        }
        std::os::unix::fs::symlink(&other, proj.join("link")).expect("link");
        assert_eq!(folder_inside(&proj, "sub"), Some(proj.join("sub")));
        assert_eq!(folder_inside(&proj, "."), Some(proj.clone()));
        for escape in ["link", "..", "../other", other.to_str().expect("utf-8"), "/etc", "missing"] {
            assert_eq!(folder_inside(&proj, escape), None, "{escape}");
        }
        let ev = json!({"tool": "bash", "args": {"command": "cat x", "workdir": "link"}, "directory": proj,
            "sessionID": "s", "callID": "c"});
        let ev = clients::opencode_event(&ev).expect("read");
        assert_eq!(gate_of(Agent::Opencode, &args(&[], &[]), &ev, "bash").cwd, None);
    }

    #[test]
    fn gemini_calls_are_filed_in_the_folder_its_shell_runs_in() {
        let (_root, w) = project_with_sub();
        let ev = json!({"cwd": w, "tool_name": "run_shell_command",
            "tool_input": {"command": "ls", "dir_path": "sub"}, "session_id": "s"});
        let g = gate_of(Agent::GeminiCli, &args(&[], &[]), &ev, "run_shell_command");
        assert_eq!(g.cwd, Some(format!("{w}/sub")));
        assert_eq!(g.client.as_deref(), Some("gemini-cli"));
        assert!(g.confinable && g.idempotency_key.is_none());
        let ev =
            json!({"cwd": "/w", "tool_name": "run_shell_command", "tool_input": {"command": "ls", "dir_path": ""}});
        assert_eq!(gate_of(Agent::GeminiCli, &args(&[], &[]), &ev, "run_shell_command").cwd.as_deref(), Some("/w"));
    }
}
