//! `assent propose` and `assent wait`: file a proposal as an agent and wait for its decision,
//! printed for a person, as JSON, or as the decision's receipt alone.

use crate::client::{AgentAuth, Client, reader};
use crate::home::Home;
use crate::input::{parse_json, read_stdin};
use crate::{ExitError, exit, output};
use anyhow::{Context, Result, bail};
use assent_client::Waited;
use assent_core::{Proposal, Status};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Flags of `propose`.
#[derive(Debug, clap::Args)]
pub struct ProposeArgs {
    /// The kind.
    #[arg(long, default_value = assent_core::payloads::KindName::ToolCall.as_str())]
    pub kind: String,
    /// For tool.call: the tool's name.
    #[arg(long, conflicts_with_all = ["payload", "payload_file"])]
    pub tool: Option<String>,
    /// For tool.call: the tool's input as JSON.
    #[arg(long, requires = "tool", value_name = "JSON")]
    pub input: Option<String>,
    /// The payload as JSON.
    #[arg(long, value_name = "JSON", conflicts_with = "payload_file")]
    pub payload: Option<String>,
    /// Read the payload from a file (`-` for standard input).
    #[arg(long, value_name = "FILE")]
    pub payload_file: Option<PathBuf>,
    /// A short title (shown as your words).
    #[arg(long)]
    pub title: Option<String>,
    /// A summary (shown as your words).
    #[arg(long)]
    pub summary: Option<String>,
    /// Put it in a group decided together.
    #[arg(long)]
    pub group: Option<String>,
    /// Your session id.
    #[arg(long)]
    pub session: Option<String>,
    /// The proposal this revises.
    #[arg(long)]
    pub supersedes: Option<String>,
    /// Who will check the decision's receipt (a tool server's or an API's name): its `aud`.
    #[arg(long)]
    pub audience: Option<String>,
    /// Seconds until it expires.
    #[arg(long)]
    pub expires_in: Option<u64>,
    /// Makes retries safe: the same key and body return the same proposal.
    #[arg(long)]
    pub idempotency_key: Option<String>,
    /// Wait for the decision (optionally at most SECS seconds). The proposal is withdrawn if
    /// this command dies while it waits.
    #[arg(long, value_name = "SECS", num_args = 0..=1, default_missing_value = "0")]
    pub wait: Option<u64>,
    /// Withdraw the proposal once nothing has waited for it or read it for SECS seconds (5 to
    /// 3600; with --wait, 15 unless given).
    #[arg(long, value_name = "SECS")]
    pub lease: Option<u64>,
    /// With --wait: print the decision's receipt alone on standard output (the outcome goes to
    /// standard error), to hand to the tool or API that checks it.
    #[arg(long, requires = "wait", conflicts_with = "json")]
    pub receipt: bool,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    /// Which agent token to use.
    #[command(flatten)]
    pub auth: AgentAuth,
}

fn read_payload(a: &ProposeArgs) -> Result<Value> {
    if let Some(tool) = &a.tool {
        let input = match &a.input {
            Some(i) => parse_json("--input", i)?,
            None => json!({}),
        };
        return Ok(json!({ "tool": tool, "input": input }));
    }
    if let Some(p) = &a.payload {
        return parse_json("--payload", p);
    }
    let text = match a.payload_file.as_deref() {
        Some(p) if p.as_os_str() == "-" => read_stdin()?,
        Some(p) => std::fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()))?,
        None => bail!("give the payload with --tool/--input, --payload JSON or --payload-file FILE (- for stdin)"),
    };
    parse_json("the payload", &text)
}

/// `assent propose`
pub async fn propose(home: &Home, a: ProposeArgs) -> Result<()> {
    let payload = read_payload(&a)?;
    let mut body = json!({ "kind": a.kind, "payload": payload });
    for (k, v) in [
        ("title", &a.title),
        ("summary", &a.summary),
        ("group_id", &a.group),
        ("session_id", &a.session),
        ("supersedes", &a.supersedes),
        ("audience", &a.audience),
    ] {
        if let Some(v) = v {
            body[k] = json!(v);
        }
    }
    if let Some(e) = a.expires_in {
        body["expires_in"] = json!(e);
    }
    if let Some(l) = a.lease.or(a.wait.map(|_| assent_client::LEASE_SECS)) {
        body["lease_secs"] = json!(l);
    }
    let client = Client::agent(home, &a.auth)?;
    let p = client.api.propose(&body, a.idempotency_key.as_deref()).await.map_err(|e| client.failed(e))?;
    match a.wait {
        None => {
            if a.json {
                println!("{}", json!(p));
            } else {
                println!("{}", p.id);
                eprintln!("proposed {}: pending a decision (assent wait {})", p.id, p.id);
            }
            Ok(())
        }
        Some(secs) => {
            let limit = (secs > 0).then(|| Duration::from_secs(secs));
            let p = wait_until(&client, p, limit).await?;
            finish_wait(&p, Print::of(a.json, a.receipt))
        }
    }
}

/// How a wait's outcome is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Print {
    /// A line for a person.
    Text,
    /// The proposal as JSON.
    Json,
    /// The receipt alone on standard output, the line for a person on standard error.
    Receipt,
}

impl Print {
    /// From the `--json` and `--receipt` flags.
    pub fn of(json: bool, receipt: bool) -> Print {
        if json {
            Print::Json
        } else if receipt {
            Print::Receipt
        } else {
            Print::Text
        }
    }
}

/// Waits until `p` settles or `limit` passes (none: no limit): the proposal as last seen.
async fn wait_until(client: &Client, p: Proposal, limit: Option<Duration>) -> Result<Proposal> {
    let deadline = limit.map(|l| Instant::now() + l);
    match client.api.wait_settled(p, deadline, std::future::pending()).await.map_err(|e| client.failed(e))? {
        Waited::Settled(p) | Waited::TimedOut(p) => Ok(p),
        Waited::Stopped => bail!("the wait stopped without a reason"),
    }
}

/// Prints the outcome of a wait and maps it to the exit code.
fn finish_wait(p: &Proposal, print: Print) -> Result<()> {
    let d = p.decision.as_ref();
    if print == Print::Json {
        println!("{}", json!(p));
    } else {
        let why = d
            .and_then(|d| d.reason.as_deref().or(d.feedback.as_deref()))
            .map(|r| format!(": {}", output::safe(r)))
            .unwrap_or_default();
        let mut text = format!("{} {}{why}", p.id, p.status);
        if p.status == Status::Approved && d.is_some_and(|d| d.edited_payload.is_some()) {
            text.push_str(&format!(
                "\napproved with edits; the approved payload:\n{}",
                serde_json::to_string_pretty(&p.approved_payload).unwrap_or_default()
            ));
        }
        if print == Print::Receipt {
            eprintln!("{text}");
            match d.and_then(|d| d.receipt.as_deref()) {
                Some(r) => println!("{r}"),
                None if p.settled && d.is_some() => eprintln!("(Assent issued no receipt for this decision)"),
                None => {}
            }
        } else {
            println!("{text}");
        }
    }
    let code = exit::for_status(p.status.as_str());
    if code == exit::OK { Ok(()) } else { Err(ExitError::silent(code).into()) }
}

/// `assent wait ID`
pub async fn wait(home: &Home, id: &str, timeout: Option<u64>, print: Print, auth: &AgentAuth) -> Result<()> {
    let client = reader(home, auth)?;
    let p = client.api.get(id).await.map_err(|e| client.failed(e))?;
    let p = wait_until(&client, p, timeout.map(Duration::from_secs)).await?;
    finish_wait(&p, print)
}
