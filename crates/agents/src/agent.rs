//! What a client is to Assent ([`Agent`]), and what its hook reads and writes: the call
//! ([`Call`]), the answer ([`Answer`]), the rewrite to a boxed run ([`Rewrite`]), where its
//! settings are ([`Places`], [`Wiring`]).

use crate::check::{self, Check};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// What a client says of itself, as data: one constant in each client's module.
#[derive(Debug, Clone, Copy)]
pub struct Facts {
    /// Its name: in a proposal's `client` and in `assent hook NAME` (`claude-code`).
    pub name: &'static str,
    /// Its name for a person (`Claude Code`).
    pub title: &'static str,
    /// How the person reads a call that came through it (`Claude Code's hook`).
    pub via: &'static str,
    /// Assent's note on every call that came through it, when it has one.
    pub note: Option<&'static str>,
    /// What `assent hook NAME` is, in a line of its help.
    pub about: &'static str,
    /// Its tools that only read (or change nothing but its own state): not gated unless named
    /// with `--tools`.
    pub read_only: &'static [&'static str],
    /// Its shell tool whose command the hook's answer can replace, so that a call runs in a box
    /// (none: nothing it runs can be confined).
    pub shell_tool: Option<&'static str>,
    /// The argument of its shell tool that names the folder the command runs in, if any.
    pub folder_arg: Option<&'static str>,
    /// Whether a call nobody decided goes back to the client's own permission prompt (else
    /// Assent's hook refuses it: the client has no prompt to go back to).
    pub hands_back: bool,
    /// The longest the hook may wait for the person, in seconds (none: the hook's own bound).
    pub most_wait: Option<u64>,
    /// Whether an approved call that declares a receipt argument gets its receipt.
    pub carries_receipt: bool,
    /// Whether it runs a call the hook rewrote (to `assent run PROPOSAL`, a confined run).
    pub runs_rewritten: bool,
}

impl Facts {
    /// A client named `name` (`title`, read as `via`, its hook `about`), whose tools in
    /// `read_only` only read; the rest as most clients are (no shell a box can take, an undecided
    /// call back to its prompt, no bound of its own, no receipts, rewritten calls run).
    pub const fn new(
        name: &'static str,
        title: &'static str,
        via: &'static str,
        about: &'static str,
        read_only: &'static [&'static str],
    ) -> Facts {
        Facts {
            name,
            title,
            via,
            note: None,
            about,
            read_only,
            shell_tool: None,
            folder_arg: None,
            hands_back: true,
            most_wait: None,
            carries_receipt: false,
            runs_rewritten: true,
        }
    }
}

/// A coding agent's client, as Assent's hook meets it: its facts, and what it does.
pub trait Agent: Sync {
    /// What it says of itself.
    fn facts(&self) -> &'static Facts;

    /// Its name: in a proposal's `client` and in `assent hook NAME` (`claude-code`).
    fn name(&self) -> &'static str {
        self.facts().name
    }
    /// Its name for a person (`Claude Code`).
    fn title(&self) -> &'static str {
        self.facts().title
    }
    /// How the person reads a call that came through it (`Claude Code's hook`).
    fn via(&self) -> &'static str {
        self.facts().via
    }
    /// Assent's note on every call that came through it, when it has one.
    fn note(&self) -> Option<&'static str> {
        self.facts().note
    }
    /// What `assent hook NAME` is, in a line of its help.
    fn about(&self) -> &'static str {
        self.facts().about
    }
    /// Its tools that only read.
    fn read_only(&self) -> &'static [&'static str] {
        self.facts().read_only
    }
    /// Its shell tool a box can take, if any.
    fn shell_tool(&self) -> Option<&'static str> {
        self.facts().shell_tool
    }
    /// The argument of its shell tool that names the shell's folder, if any.
    fn folder_arg(&self) -> Option<&'static str> {
        self.facts().folder_arg
    }
    /// Whether a call nobody decided goes back to the client's own prompt.
    fn hands_back(&self) -> bool {
        self.facts().hands_back
    }
    /// The longest the hook may wait for the person, if the client bounds it.
    fn most_wait(&self) -> Option<u64> {
        self.facts().most_wait
    }
    /// Whether an approved call that declares a receipt argument gets its receipt.
    fn carries_receipt(&self) -> bool {
        self.facts().carries_receipt
    }
    /// Whether it runs a call the hook rewrote to a boxed run.
    fn runs_rewritten(&self) -> bool {
        self.facts().runs_rewritten
    }

    /// Its hook event (`raw`, as read on standard input) in the names the hook uses.
    fn read(&self, raw: Value) -> Result<Call, String>;

    /// The answer to `call` in the client's shape (one JSON line).
    fn answer(&self, call: &Call, answer: &Answer, rewrite: &Rewrite) -> Value;

    /// The file the client runs the hook from, with the hook's command line `argv` in it
    /// (none: its settings name the command itself).
    fn hook_file(&self, _argv: &[String]) -> Option<String> {
        None
    }

    /// Where `assent connect` wires it: the user's settings (`project` false) or the
    /// project's in `cwd`; an error when it has no such place.
    fn wiring(&self, places: &Places, project: bool) -> Result<Wiring, String>;

    /// Its line in `assent doctor`.
    fn check(&self, places: &Places) -> Check;

    /// Whether it can run `tool` (called with `input`) confined: its shell tool, given a
    /// command line.
    fn confinable(&self, tool: &str, input: &Value) -> bool {
        self.shell_tool() == Some(tool) && input.get("command").is_some_and(Value::is_string)
    }
}

/// Where a client's settings are found: the user's home folder, the folder the command runs in,
/// and the environment's overrides (`CLAUDE_CONFIG_DIR`, `CODEX_HOME`, ...).
#[derive(Debug, Clone)]
pub struct Places {
    /// The user's home folder.
    pub user: PathBuf,
    /// The folder `assent` runs in (a project's settings are read there).
    pub cwd: PathBuf,
    /// The environment variable of that name, when set and not empty.
    pub env: fn(&str) -> Option<PathBuf>,
}

impl Places {
    /// This process's: its home folder, its folder and its environment; none without a home.
    pub fn here() -> Option<Places> {
        Some(Places {
            user: dirs::home_dir()?,
            cwd: std::env::current_dir().unwrap_or_default(),
            env: |name| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from),
        })
    }

    /// The folder `var` names, else `default` under the user's home.
    pub fn dir(&self, var: &str, default: &str) -> PathBuf {
        (self.env)(var).unwrap_or_else(|| self.user.join(default))
    }

    /// `p` as a person reads it: under the home folder as `~/...`.
    pub fn tilde(&self, p: &Path) -> String {
        check::tilde(p, &self.user)
    }
}

/// Where and how `assent connect` writes a client's hook.
#[derive(Debug, Clone)]
pub struct Wiring {
    /// The file.
    pub file: PathBuf,
    /// What goes in it.
    pub format: Format,
    /// What `assent connect` says it put there (`the PreToolUse hook`).
    pub what: &'static str,
}

/// The shape of the settings a client's hook is written into.
#[derive(Debug, Clone, Copy)]
pub enum Format {
    /// JSON (with comments) with a `hooks` table: under `event`, the entry `entry` makes of the
    /// hook's command line and the seconds the client gives it (`versioned`: the file starts
    /// with `"version": 1`, as Copilot CLI's hooks files do).
    HookTable {
        /// The event (`PreToolUse`).
        event: &'static str,
        /// The entry for a command line given so many seconds.
        entry: fn(&str, u64) -> Value,
        /// Whether the file carries `"version": 1`.
        versioned: bool,
    },
    /// Codex's `config.toml`: `[[hooks.PermissionRequest]]` and `hooks = true`.
    CodexToml,
    /// A file of Assent's own: [`Agent::hook_file`]'s text.
    OwnFile,
}

/// A hook's call, read from the client's event: the event's name and its fields in the names
/// every client's reading shares (`tool_name`, `tool_input`, `cwd`, `session_id`,
/// `tool_use_id`, `permission_mode`).
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// The event answered (`PreToolUse`, `PermissionRequest`, `BeforeTool`, ...).
    pub event: &'static str,
    /// The event's fields.
    pub ev: Value,
}

impl Call {
    /// The tool called.
    pub fn tool(&self) -> &str {
        self.ev["tool_name"].as_str().unwrap_or_default()
    }

    /// Its input (an empty object when there is none).
    pub fn input(&self) -> Value {
        self.ev.get("tool_input").cloned().unwrap_or_else(|| json!({}))
    }
}

/// What the hook tells a client about its call.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// Go ahead, with the input to use when the person edited it (or Assent handed the tool its
    /// receipt).
    Allow(Option<Value>),
    /// Go ahead, in a box: the client runs the rewritten call ([`Rewrite`]).
    Boxed {
        /// The proposal whose approved command runs.
        proposal: String,
        /// The box's profile (`read`, `workspace`).
        profile: &'static str,
        /// Whether a rule allowed it (else a person approved it).
        by_rule: bool,
        /// The hosts the box reaches.
        hosts: Vec<String>,
    },
    /// Do not, and why.
    Deny(String),
    /// Nobody decided, and why.
    Ask(String),
}

/// The argument through which a tool that declares it gets the receipt of its approval.
pub const RECEIPT_ARG: &str = "assent_receipt";

/// How the hook tells the client to run a call confined: the call's input with its command
/// replaced by `PREFIX run PROPOSAL` (`assent-run --home ... run p_...`), which runs the command
/// Assent stored (never text of the agent's quoted again) in the box the decision names.
#[derive(Debug, Clone)]
pub struct Rewrite {
    /// The program, its home and token file, quoted for a shell.
    pub prefix: String,
    /// The call's input as the client sent it.
    pub input: Value,
}

impl Rewrite {
    /// The input that runs `proposal` confined.
    pub fn input(&self, proposal: &str) -> Value {
        let mut i = self.input.clone();
        i["command"] = json!(format!("{} run {proposal}", self.prefix));
        i
    }
}

/// Why a call runs in a box, as the client shows it (the model reads it too).
pub fn boxed_reason(proposal: &str, profile: &str, by_rule: bool, hosts: &[String]) -> String {
    let who = if by_rule { "Allowed by a rule in Assent" } else { "Approved in Assent" };
    match hosts {
        [] => format!("{who}, to run in the {profile} box: {proposal}"),
        _ => format!("{who}, to run in the {profile} box reaching {}: {proposal}", hosts.join(", ")),
    }
}

/// A command as a person reads it: a string as it is; an argument list (Codex's
/// `["bash", "-lc", "git push"]`) as the script a shell runs, or its words joined.
pub fn command_text(command: &Value) -> Option<String> {
    match command {
        Value::String(s) => Some(s.clone()),
        Value::Array(words) => {
            let words: Vec<&str> = words.iter().filter_map(Value::as_str).collect();
            match words.as_slice() {
                [sh, flag, script] if sh.ends_with("sh") && (*flag == "-c" || *flag == "-lc") => {
                    Some(script.to_string())
                }
                [] => None,
                w => Some(w.join(" ")),
            }
        }
        _ => None,
    }
}

/// Copies `fields` of `from` (each `(from, to)`, a string) into the event `out`.
pub(crate) fn carry(out: &mut Value, from: &[(Option<&Value>, &str)]) {
    for (value, to) in from {
        if let Some(v) = value.and_then(Value::as_str) {
            out[*to] = json!(v);
        }
    }
}
