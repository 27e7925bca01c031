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

/// Tools that only read: not gated unless named with `--tools`.
pub const READ_ONLY: [&str; 11] = [
    "Read",
    "Glob",
    "Grep",
    "LS",
    "NotebookRead",
    "WebSearch",
    "TodoRead",
    "TodoWrite",
    "BashOutput",
    "Task",
    "ExitPlanMode",
];

/// The hooks.
#[derive(Debug, clap::Subcommand)]
pub enum HookCmd {
    /// Claude Code PreToolUse or PermissionRequest hooks.
    ClaudeCode(HookArgs),
    /// OpenAI Codex PermissionRequest hooks. Codex refuses an answer that changes the call, so
    /// an approval with edits is answered as a denial that tells the model the edited call to
    /// run instead (which comes back here as a new request).
    Codex(HookArgs),
}

/// Which agent runs the hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Agent {
    ClaudeCode,
    Codex,
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
    /// under the hook's timeout in the client's settings (60 s unless set there).
    #[arg(long, default_value_t = 55)]
    pub timeout: u64,
    /// Which agent token to use.
    #[command(flatten)]
    pub auth: AgentAuth,
}

/// How long a hook's proposal lives if the hook itself dies without withdrawing it (a
/// constant, so that re-running the same event sends the same proposal).
pub const HOOK_EXPIRY_SECS: u64 = 3600;

/// What the model and the person read when the call goes back to the client: true in the
/// terminal (a prompt follows) and in a headless run (the client denies).
fn handed_back(why: &str) -> String {
    format!(
        "{why}; the call goes back to the agent's own permission settings (a prompt in a terminal; a headless run denies it)"
    )
}

/// Which event the hook answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Event {
    PreToolUse,
    PermissionRequest,
}

fn gated(tool: &str, args: &HookArgs) -> bool {
    if args.skip.iter().any(|s| s == tool) {
        return false;
    }
    if !args.tools.is_empty() {
        return args.tools.iter().any(|t| t == tool);
    }
    !READ_ONLY.contains(&tool)
}

/// How the hook tells the client to run a call confined: the call's input with its command
/// replaced by `assent run PROPOSAL`, which runs the command Assent stored (never text of the
/// agent's quoted again) under the confinement the decision and its receipt name.
#[derive(Debug, Clone)]
pub struct Rewrite {
    /// `'/usr/bin/assent' --home '…'` (and `--token-file '…'` when the hook was given one).
    prefix: String,
    /// The call's input as the client sent it.
    input: Value,
}

impl Rewrite {
    /// The rewrite for this `assent`, its home and token, of `input`.
    fn new(home: &Home, auth: &AgentAuth, input: Value) -> Rewrite {
        let exe = std::env::current_exe().unwrap_or_else(|_| "assent".into());
        // `assent-run` beside this binary where it is installed (it starts in a fraction of the
        // time: it does nothing else), else this binary's own `run`.
        let light = exe.with_file_name(format!("{}{}", crate::run::RUNNER, std::env::consts::EXE_SUFFIX));
        let exe = if light.is_file() { light } else { exe };
        let quote = |p: &std::path::Path| {
            let s = p.to_string_lossy();
            shlex::try_quote(&s).map(|q| q.into_owned()).unwrap_or_else(|_| s.into_owned())
        };
        let mut prefix = format!("{} --home {}", quote(&exe), quote(&home.dir));
        if let Some(t) = &auth.token_file {
            prefix.push_str(&format!(" --token-file {}", quote(t)));
        }
        Rewrite { prefix, input }
    }

    /// The input that runs `proposal` confined.
    fn input(&self, proposal: &str) -> Value {
        let mut i = self.input.clone();
        i["command"] = json!(format!("{} run {proposal}", self.prefix));
        i
    }
}

/// Whether the client can run this call confined: Claude Code's Bash tool, whose command the
/// hook's answer can replace.
fn confinable(client: Agent, tool: &str, input: &Value) -> bool {
    client == Agent::ClaudeCode && tool == "Bash" && input.get("command").is_some_and(Value::is_string)
}

/// The output for a verdict, in the event's shape and for the client that asked.
fn output(client: Agent, event: Event, v: &Verdict, rewrite: &Rewrite) -> Value {
    match (event, v) {
        // Codex cannot run a rewritten call (and never says it can confine): it asks.
        (_, Verdict::Confined { proposal, .. }) if client == Agent::Codex => json!({ "systemMessage":
            format!("Assent allowed {proposal} only confined, which Codex cannot run; it asks you instead") }),
        (Event::PreToolUse, Verdict::Confined { proposal, confine }) => json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse", "permissionDecision": "allow",
            "permissionDecisionReason": format!("Allowed by a rule in Assent, confined ({}): {proposal}", confine.as_str()),
            "updatedInput": rewrite.input(proposal)}}),
        (Event::PermissionRequest, Verdict::Confined { proposal, .. }) => json!({"hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": {"behavior": "allow", "updatedInput": rewrite.input(proposal)}}}),
        // Codex fails closed on an answer that changes the call: the edit goes back as words.
        (Event::PermissionRequest, Verdict::Allow(Some(edited))) if client == Agent::Codex => {
            let call = edited
                .get("command")
                .and_then(assent_core::verdict::command_text)
                .unwrap_or_else(|| edited.to_string());
            json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "deny",
                "message": format!("The person approved this only as edited in Assent. Run this instead: {call}")}}})
        }
        (Event::PreToolUse, Verdict::Allow(input)) => {
            let mut o = json!({"hookEventName": "PreToolUse", "permissionDecision": "allow",
                "permissionDecisionReason": "Approved in Assent"});
            if let Some(i) = input {
                o["updatedInput"] = i.clone();
                o["permissionDecisionReason"] = json!(if i.get(assent_client::RECEIPT_ARG).is_some() {
                    "Approved in Assent (its receipt handed to the tool)"
                } else {
                    "Approved in Assent with edits"
                });
            }
            json!({ "hookSpecificOutput": o })
        }
        (Event::PreToolUse, Verdict::Deny(why)) => json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": why}}),
        (Event::PreToolUse, Verdict::Ask(why)) => json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse", "permissionDecision": "ask", "permissionDecisionReason": why}}),
        (Event::PermissionRequest, Verdict::Allow(input)) => {
            let mut d = json!({"behavior": "allow"});
            if let Some(i) = input {
                d["updatedInput"] = i.clone();
            }
            json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": d}})
        }
        (Event::PermissionRequest, Verdict::Deny(why)) => json!({"hookSpecificOutput": {
            "hookEventName": "PermissionRequest", "decision": {"behavior": "deny", "message": why}}}),
        // This event has no "ask": saying nothing leaves the decision to the client's dialog.
        (Event::PermissionRequest, Verdict::Ask(why)) => json!({ "systemMessage": why }),
    }
}

/// The call of `ev` as the hook gates it.
fn gate_of(client_kind: Agent, args: &HookArgs, ev: &Value, tool: &str) -> Gate {
    // What identifies the tool call (its session and its id), never the hook's own flags.
    let session = ev["session_id"].as_str().unwrap_or("-");
    let key = ev["tool_use_id"].as_str().map(|id| format!("hook:{}:{id}", assent_core::kinds::clip_pub(session, 80)));
    Gate {
        tool: tool.to_string(),
        input: ev.get("tool_input").cloned().unwrap_or(json!({})),
        cwd: ev["cwd"].as_str().filter(|c| c.starts_with('/')).map(str::to_string),
        client: Some(if client_kind == Agent::Codex { "codex" } else { "claude-code" }.into()),
        permission_mode: ev["permission_mode"]
            .as_str()
            .filter(|m| assent_core::kinds::is_permission_mode(m))
            .map(str::to_string),
        session_id: ev["session_id"].as_str().map(str::to_string),
        idempotency_key: key,
        expires_in: HOOK_EXPIRY_SECS,
        wait: Duration::from_secs(timeout(args)),
        carry_receipt: client_kind == Agent::ClaudeCode,
        confinable: confinable(client_kind, tool, &ev["tool_input"]),
    }
}

/// How long the hook waits for the person, in seconds.
fn timeout(args: &HookArgs) -> u64 {
    args.timeout.min(HOOK_EXPIRY_SECS - 60)
}

async fn decide(home: &Home, call: &Call, watch: &Watch) -> Result<Verdict> {
    let tool = call.ev["tool_name"].as_str().context("the hook event has no tool_name")?;
    let client = match Client::agent(home, &call.args.auth) {
        Ok(c) => c,
        Err(_) => return Ok(Verdict::Ask(not_running(home))),
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
    let timeout = timeout(&call.args);
    match gated {
        Gated::Decided { verdict, proposal, .. } => {
            if matches!(verdict, Verdict::Confined { .. }) && call.client == Agent::ClaudeCode {
                // What `assent run` needs, left where it finds it without asking again.
                crate::run::leave_ticket(home, &proposal);
            }
            verdict
        }
        Gated::NotRunning(_) => Verdict::Ask(not_running(home)),
        Gated::Refused(e) => Verdict::Ask(handed_back(&format!("Assent refused the proposal ({e})"))),
        Gated::Stopped { id } => {
            Verdict::Ask(handed_back(&format!("Interrupted while waiting in Assent (proposal {id} withdrawn)")))
        }
        Gated::TimedOut { id } => {
            Verdict::Ask(handed_back(&format!("No decision in Assent within {timeout} s (proposal {id} withdrawn)")))
        }
        Gated::Lost { id, .. } => Verdict::Ask(handed_back(&format!("Lost contact with Assent while waiting on {id}"))),
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
/// The client that started the hook, as it was when the hook started: the hook's parent and
/// (a client that runs its hooks through a shell, which outlives it) the parent's parent, each
/// with its start time (so a reused id is not taken for it). Taken before the call is filed: a
/// client killed between the filing and the wait must not leave a watch on whoever adopted the
/// hook.
#[derive(Debug, Default, PartialEq)]
pub struct Watch {
    parent: u32,
    watched: Vec<(u32, String)>,
}

/// How `assent-run` hands its [`Watch`] to the whole `assent` it executes (the same process:
/// `pid;parent;pid:start;...`). A value for another process is ignored.
pub const WATCH_VAR: &str = "ASSENT_HOOK_WATCH";

impl Watch {
    /// The watch `assent-run` took for this process, or else one taken now.
    pub fn start() -> Self {
        std::env::var(WATCH_VAR).ok().and_then(|v| Self::parse(&v)).unwrap_or_else(Self::here)
    }

    /// The client as the system has it now; nothing to watch where there is no process table.
    fn here() -> Self {
        #[cfg(unix)]
        {
            let parent = std::os::unix::process::parent_id();
            let mut watched = Vec::new();
            if let Some(p) = assent_confine::process(parent) {
                watched.push((parent, p.start));
                if let Some(g) = assent_confine::process(p.parent).filter(|_| p.parent > 1) {
                    watched.push((p.parent, g.start));
                }
            }
            Self { parent, watched }
        }
        #[cfg(not(unix))]
        Self::default()
    }

    /// The value of [`WATCH_VAR`] for this process.
    pub fn to_var(&self) -> String {
        let mut v = format!("{};{}", std::process::id(), self.parent);
        for (pid, start) in &self.watched {
            v.push_str(&format!(";{pid}:{start}"));
        }
        v
    }

    /// The watch in `v`, when it was taken for this process.
    fn parse(v: &str) -> Option<Self> {
        let mut parts = v.split(';');
        if parts.next()?.parse::<u32>().ok()? != std::process::id() {
            return None;
        }
        let parent = parts.next()?.parse().ok()?;
        let watched = parts
            .map(|w| w.split_once(':').and_then(|(pid, start)| Some((pid.parse().ok()?, start.to_string()))))
            .collect::<Option<Vec<_>>>()?;
        Some(Self { parent, watched })
    }

    /// Resolves once the client is gone: the hook was handed to another parent, or a watched
    /// process exited.
    async fn gone(&self) {
        #[cfg(unix)]
        loop {
            if std::os::unix::process::parent_id() != self.parent
                || self
                    .watched
                    .iter()
                    .any(|(pid, start)| assent_confine::process(*pid).is_none_or(|p| p.start != *start))
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        #[cfg(not(unix))]
        std::future::pending::<()>().await
    }
}

fn not_running(home: &Home) -> String {
    handed_back(&format!("Assent is not running (home {}), so no person saw this call", home.dir.display()))
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
    };
    let ev: Value = serde_json::from_str(raw).context("the hook event on standard input is not JSON")?;
    let event = match ev["hook_event_name"].as_str() {
        Some("PreToolUse") => Event::PreToolUse,
        Some("PermissionRequest") => Event::PermissionRequest,
        Some(other) => bail!("assent hook answers PreToolUse and PermissionRequest events, not {other}"),
        None => bail!("the hook event has no hook_event_name"),
    };
    let tool = ev["tool_name"].as_str().unwrap_or("");
    if !gated(tool, &args) {
        // Not ours to gate: no output leaves the client's normal behaviour.
        return Ok(None);
    }
    if client == Agent::Codex && event != Event::PermissionRequest {
        bail!("assent hook codex answers PermissionRequest events (Codex's only permission hook)");
    }
    Ok(Some(Call { client, args, event, ev }))
}

fn stdin() -> Result<String> {
    let mut raw = String::new();
    std::io::stdin().read_to_string(&mut raw).context("cannot read the hook event from standard input")?;
    Ok(raw)
}

/// Prints the answer to `call`: one JSON line.
fn say(home: &Home, call: &Call, verdict: &Verdict) {
    let rewrite = Rewrite::new(home, &call.args.auth, call.ev.get("tool_input").cloned().unwrap_or(json!({})));
    println!("{}", output(call.client, call.event, verdict, &rewrite));
}

/// Runs a hook: one JSON line on standard output.
pub async fn run(home: &Home, cmd: HookCmd) -> Result<()> {
    let watch = Watch::start();
    let Some(call) = read(cmd, &stdin()?)? else { return Ok(()) };
    let verdict = decide(home, &call, &watch).await?;
    say(home, &call, &verdict);
    Ok(())
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
    let watch = Watch::here();
    let raw = match stdin() {
        Ok(r) => r,
        Err(e) => return Quick::Answered(Err(e)),
    };
    let call = match read(cmd, &raw) {
        Ok(Some(call)) => call,
        Ok(None) => return Quick::Answered(Ok(())),
        Err(e) => return Quick::Answered(Err(e)),
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

    fn args(tools: &[&str], skip: &[&str]) -> HookArgs {
        HookArgs {
            tools: tools.iter().map(|s| s.to_string()).collect(),
            skip: skip.iter().map(|s| s.to_string()).collect(),
            timeout: 1,
            auth: AgentAuth { token_file: None },
        }
    }

    #[test]
    fn gating_rules() {
        assert!(gated("Bash", &args(&[], &[])));
        assert!(gated("mcp__github__create_issue", &args(&[], &[])));
        assert!(!gated("Read", &args(&[], &[])));
        assert!(!gated("Bash", &args(&[], &["Bash"])));
        assert!(gated("Edit", &args(&["Bash", "Edit"], &[])));
        assert!(!gated("Write", &args(&["Bash", "Edit"], &[])));
    }

    #[test]
    fn a_watch_passes_to_the_same_process_only() {
        let w = Watch { parent: 41, watched: vec![(41, "9001".into()), (7, "12".into())] };
        assert_eq!(Watch::parse(&w.to_var()), Some(w));
        let other = format!("{};41;41:9001", std::process::id() + 1);
        assert_eq!(Watch::parse(&other), None, "a watch taken for another process");
        assert_eq!(Watch::parse(&format!("{};41;41", std::process::id())), None, "no start time");
        assert_eq!(Watch::parse("garbage"), None);
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn a_watched_process_that_exits_ends_the_wait() {
        let mut child = std::process::Command::new("sleep").arg("30").spawn().expect("sleep");
        let start = assent_confine::process(child.id()).expect("in the process table").start;
        let w = Watch { parent: std::os::unix::process::parent_id(), watched: vec![(child.id(), start)] };
        let gone = tokio::time::timeout(Duration::from_millis(600), w.gone()).await;
        assert!(gone.is_err(), "the client is still there");
        child.kill().expect("kill");
        child.wait().expect("reaped");
        tokio::time::timeout(Duration::from_secs(5), w.gone()).await.expect("the wait ends once the client exits");
    }
}
