//! The command line as clap reads it: every command, its options and its help.

use crate::client::AgentAuth;
use crate::{propose, receipt, remote, rules, serve, store};
use clap::{Parser, Subcommand};
use std::path::PathBuf;

/// Assent: the approval inbox for AI agents.
#[derive(Debug, Parser)]
#[command(
    name = "assent",
    version = assent_host::VERSION_LINE,
    about = "Assent: the approval inbox for AI agents",
    long_about = "Assent: the approval inbox for AI agents. Local agents propose writes (edit a file, call an \
API, run a tool) to Assent's loopback API; a person reviews the diff Assent computed and approves, rejects, \
edits or sends it back; on approval Assent applies the write itself, with credentials from the system \
keychain. This command runs the headless server (`assent serve`), proposes and waits as an agent, decides \
as the person, and manages agents, credentials and rules."
)]
pub struct Cli {
    /// The data directory (default: ASSENT_HOME, else the platform data dir, e.g.
    /// ~/.local/share/assent).
    #[arg(long, global = true, value_name = "DIR")]
    pub home: Option<PathBuf>,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the engine and the loopback API without a desktop.
    Serve(serve::ServeArgs),
    /// Propose a write as an agent (prints the proposal id).
    Propose(propose::ProposeArgs),
    /// Wait until a proposal is decided (exit code says how).
    Wait {
        /// The proposal id.
        id: String,
        /// Give up after this many seconds (default: wait until it is settled).
        #[arg(long)]
        timeout: Option<u64>,
        /// Print the decision's receipt alone on standard output (the outcome on standard error).
        #[arg(long, conflicts_with = "json")]
        receipt: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// Which agent token to use.
        #[command(flatten)]
        auth: AgentAuth,
    },
    /// List proposals, newest first.
    List(ListArgs),
    /// Show one proposal: its preview, decision and audit trail.
    Show {
        /// The proposal id.
        id: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// Which agent token to use.
        #[command(flatten)]
        auth: AgentAuth,
    },
    /// Approve pending proposals: one, several (each stands alone), or a whole batch (--group).
    Approve {
        /// Which proposals.
        #[command(flatten)]
        targets: Targets,
        /// Why (kept in the audit log).
        #[arg(long)]
        reason: Option<String>,
        /// Approve an edited version: the kind's edit form, e.g. '{"input": {...}}' for tool.call.
        #[arg(long, value_name = "JSON")]
        edits: Option<String>,
        /// Also allow proposals like this one from now on: Assent saves the narrowest rule that
        /// covers it (this agent, this tool and the command's leading words, this folder, this
        /// method and host) and prints it. One proposal at a time.
        #[arg(long)]
        allow_similar: bool,
        /// How long that rule lasts (15m, 1h, 1d; default: until removed).
        #[arg(long = "for", value_name = "DURATION", requires = "allow_similar", value_parser = rules::parse_duration)]
        for_: Option<i64>,
        /// Decide only if the proposal is still what `assent show` printed: its payload's
        /// SHA-256 (the `sha256` line). One proposal at a time.
        #[arg(long, value_name = "SHA256")]
        seen: Option<String>,
        /// Where an approved command runs: `read` or `workspace` (a box), or `unconfined` (as
        /// the client runs it, with everything you can reach). Default: the box `assent show`
        /// names ("runs in"). One proposal at a time.
        #[arg(long, value_name = "BOX", value_parser = ["read", "workspace", "unconfined"])]
        run: Option<String>,
        /// A host the approved command's box may reach (`registry.npmjs.org`, `host:port`),
        /// instead of those `assent show` names ("reaches"); repeat for more. One proposal at a
        /// time.
        #[arg(long = "host", value_name = "HOST", conflicts_with = "no_network")]
        hosts: Vec<String>,
        /// The box reaches no network, not even the hosts `assent show` names.
        #[arg(long)]
        no_network: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Reject pending proposals: one, several, or a whole batch (--group).
    Reject {
        /// Which proposals.
        #[command(flatten)]
        targets: Targets,
        /// Why (the agent is told).
        #[arg(long)]
        reason: String,
        /// Decide only if the proposal is still what `assent show` printed: its payload's
        /// SHA-256 (the `sha256` line). One proposal at a time.
        #[arg(long, value_name = "SHA256")]
        seen: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Send a pending proposal back to the agent with feedback.
    Refine {
        /// The proposal id.
        id: String,
        /// What the agent should change.
        #[arg(long)]
        feedback: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Withdraw one of your own pending proposals (as the agent).
    Withdraw {
        /// The proposal id.
        id: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// Which agent token to use.
        #[command(flatten)]
        auth: AgentAuth,
    },
    /// Propose a failed write again (it needs a new decision).
    Retry {
        /// The failed proposal's id.
        id: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Serve MCP on standard input/output for MCP clients (Claude Code, Claude Desktop, Cursor);
    /// `assent mcp proxy` gates another MCP server.
    Mcp {
        /// Gate an MCP server instead.
        #[command(subcommand)]
        proxy: Option<McpCmd>,
        /// Which agent token to use.
        #[command(flatten)]
        auth: AgentAuth,
    },
    /// Answer a coding agent's permission hook through Assent.
    Hook(assent_boundary::hook::HookCmd),
    /// Manage the agents that may propose.
    #[command(subcommand)]
    Agent(AgentCmd),
    /// Manage the credentials Assent injects into approved HTTP calls (secrets in the keychain).
    #[command(subcommand)]
    Credential(CredentialCmd),
    /// Manage rules: what runs without asking, what is always refused.
    #[command(subcommand)]
    Rule(rules::RuleCmd),
    /// Decisions' receipts: the keys that sign them, and checking one (offline with --keys).
    #[command(subcommand)]
    Receipt(receipt::ReceiptCmd),
    /// Run a command a rule allowed only confined, confined (what Assent's hook rewrites such a
    /// call to): the approved command, its receipt checked, under the rule's confinement; exits
    /// with the command's code, or 126 when it cannot be run confined.
    Run {
        /// The proposal id.
        id: String,
        /// Which agent token to use.
        #[command(flatten)]
        auth: AgentAuth,
    },
    /// Answer from your phone: the remote listener, pairing, paired devices.
    #[command(subcommand)]
    Remote(remote::RemoteCmd),
    /// The team store (PostgreSQL): migrate its schema, keep its password, copy this history in.
    #[command(subcommand)]
    Store(store::StoreCmd),
    /// Wire a coding agent to Assent (its hook merged into its own settings, a backup kept), or
    /// an MCP client's server behind the proxy; `--undo` takes it out again.
    Connect(crate::connect::ConnectArgs),
    /// Check what Assent leans on: the keychain, notifications, the server, the database, the
    /// Claude Code wiring (exit code 1 when something is broken).
    Doctor {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Print a shell completion script: `assent completions bash > ~/.local/share/bash-completion/completions/assent`.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff): `assent man | man -l -`; with `--dir`, write it and one page
    /// per subcommand there.
    Man {
        /// Write assent.1 and assent-SUBCOMMAND.1 pages into this folder.
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
    /// Write the audit log as JSON lines (the rule log after it).
    Export {
        /// Write to this file instead of standard output.
        #[arg(long, short)]
        output: Option<PathBuf>,
    },
}

/// `assent agent ...`
#[derive(Debug, Subcommand)]
pub enum AgentCmd {
    /// Add an agent and print its token (shown once).
    Add {
        /// Its name (a-z, 0-9, '.', '_', '-').
        name: String,
        /// Give a revoked agent's name a new token (its old proposals stay under the name).
        #[arg(long)]
        reuse: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// List agents.
    List(crate::output::Printed),
    /// Revoke an agent's token.
    Revoke {
        /// Its name.
        name: String,
    },
}

/// `assent credential ...`
#[derive(Debug, Subcommand)]
pub enum CredentialCmd {
    /// Add a credential: the secret is read from standard input (or a hidden prompt) and goes
    /// straight into the system keychain.
    Add {
        /// Its name, which proposals use.
        name: String,
        /// A host it may be sent to (`api.example.com`, `https://host:port`, or a loopback
        /// `http://127.0.0.1:PORT`); repeat for several.
        #[arg(long = "host", required = true)]
        hosts: Vec<String>,
        /// How it is sent: bearer, basic (secret is user:password) or header:NAME.
        #[arg(long, default_value = "bearer")]
        scheme: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// List credentials (names, schemes, hosts; never secrets).
    List(crate::output::Printed),
    /// Remove a credential from the keychain and Assent.
    Remove {
        /// Its name.
        name: String,
    },
}

/// `assent mcp`'s commands.
#[derive(Debug, Subcommand)]
pub enum McpCmd {
    /// Gate an MCP server: everything passes through, but each tool call waits for the person (or
    /// a rule) in Assent and reaches the server only with the arguments they approved. Start it
    /// where the client would start the server: `assent mcp proxy --name blog -- node server.js`.
    Proxy(ProxyArgs),
}

/// `assent mcp proxy`'s options.
#[derive(Debug, clap::Args)]
pub struct ProxyArgs {
    /// The server's name, as rules and the inbox see its tools (`mcp__NAME__TOOL`); default: the
    /// command's program name.
    #[arg(long)]
    pub name: Option<String>,
    /// A streamable-HTTP server's URL, instead of a command.
    #[arg(long, conflicts_with = "command", required_unless_present = "command")]
    pub url: Option<String>,
    /// A header for every request to the URL (`NAME: VALUE`); may be repeated.
    #[arg(long = "header", requires = "url", value_name = "NAME: VALUE")]
    pub headers: Vec<String>,
    /// A credential Assent holds (`assent credential add`), sent with every request to the URL
    /// as its scheme says: read from the system keychain when the proxy starts, never written on
    /// the command line or in the client's settings. Its hosts must include the URL's origin.
    #[arg(long, requires = "url", value_name = "NAME")]
    pub credential: Option<String>,
    /// How long a tool call waits for the person before it is withdrawn and not run, in seconds.
    #[arg(long, default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub timeout: u64,
    /// The server's command and its arguments: after `--`, or after the options (everything
    /// from the first word that is not an option is the command's, so a launcher that drops the
    /// `--`, as the MCP Inspector does, still starts it).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_name = "COMMAND")]
    pub command: Vec<std::ffi::OsString>,
}

impl ProxyArgs {
    /// The proxy's options, checked.
    pub fn options(self) -> anyhow::Result<assent_mcp::proxy::Options> {
        use assent_mcp::proxy::{Upstream, default_name, is_server_name};
        let name = self.name.unwrap_or_else(|| default_name(&self.command));
        if !is_server_name(&name) {
            anyhow::bail!(
                "--name {name:?}: a server's name is 1 to {} letters, digits, `-` or `_` (not `__`)",
                assent_mcp::proxy::MAX_NAME
            );
        }
        let upstream = match self.url {
            Some(url) => {
                let parsed = reqwest::Url::parse(&url).map_err(|e| anyhow::anyhow!("--url {url:?}: {e}"))?;
                if !matches!(parsed.scheme(), "http" | "https") {
                    anyhow::bail!("--url {url:?}: only http and https servers");
                }
                let headers = self
                    .headers
                    .iter()
                    .map(|h| match h.split_once(':') {
                        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.trim().to_string())),
                        _ => Err(anyhow::anyhow!("--header {h:?}: write it as `NAME: VALUE`")),
                    })
                    .collect::<anyhow::Result<_>>()?;
                Upstream::Url { url, headers }
            }
            None => Upstream::Command(self.command),
        };
        Ok(assent_mcp::proxy::Options { name, wait: std::time::Duration::from_secs(self.timeout), upstream })
    }
}

/// Filters of `list`.
#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// Only this status (pending, approved, rejected, ...).
    #[arg(long)]
    pub status: Option<String>,
    /// Only this group.
    #[arg(long)]
    pub group: Option<String>,
    /// Only this agent's.
    #[arg(long)]
    pub agent: Option<String>,
    /// Only this kind.
    #[arg(long)]
    pub kind: Option<String>,
    /// Only those whose id, title, summary, agent, kind or payload contain this text.
    #[arg(long, value_name = "TEXT")]
    pub search: Option<String>,
    /// How many (newest first).
    #[arg(long, default_value_t = 50)]
    pub limit: u32,
    /// Continue after a previous page.
    #[arg(long)]
    pub cursor: Option<String>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    /// Which agent token to use.
    #[command(flatten)]
    pub auth: AgentAuth,
}

/// Which proposals a decision is for: ids (one, or several that each stand alone), or a batch.
#[derive(Debug, clap::Args)]
pub struct Targets {
    /// The proposal ids.
    #[arg(required_unless_present = "group")]
    pub ids: Vec<String>,
    /// Every pending proposal of this batch (group_id), all or nothing.
    #[arg(long, conflicts_with = "ids")]
    pub group: Option<String>,
    /// The agent whose batch it is (needed when agents share a group id).
    #[arg(long, requires = "group")]
    pub agent: Option<String>,
}
