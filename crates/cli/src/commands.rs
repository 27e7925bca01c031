//! The client commands: each builds one request to the running server and prints the answer.

use crate::args::{ListArgs, Targets};
use crate::client::{AgentAuth, Client, reader};
use crate::home::Home;
use crate::input::{parse_json, read_secret};
use crate::output;
use anyhow::{Context, Result, bail};
use assent_core::Status;
use assent_core::store::ListQuery;
use reqwest::Method;
use serde_json::json;
use std::path::PathBuf;

/// `assent list`
pub async fn list(home: &Home, a: ListArgs) -> Result<()> {
    let client = reader(home, &a.auth)?;
    let status = a.status.as_deref().filter(|s| !s.is_empty()).map(str::parse::<Status>).transpose();
    let query = ListQuery {
        status: status
            .map_err(|_| anyhow::anyhow!("--status is one of {}", Status::ALL.map(Status::as_str).join(", ")))?,
        group_id: a.group.clone(),
        agent: a.agent.clone(),
        kind: a.kind.clone(),
        text: a.search.clone(),
        limit: a.limit,
        ..Default::default()
    };
    let filters = [
        ("status", "--status", &a.status),
        ("group_id", "--group", &a.group),
        ("agent", "--agent", &a.agent),
        ("kind", "--kind", &a.kind),
        ("q", "--search", &a.search),
    ];
    let page = client.api.list(&query, a.cursor.as_deref()).await.map_err(|e| client.failed(e))?;
    if a.json {
        println!("{}", serde_json::to_string(&page)?);
        return Ok(());
    }
    if page.items.is_empty() {
        println!("no proposals");
    } else {
        print!("{}", output::table(&page.items));
    }
    if let Some(c) = &page.next_cursor {
        // The next page of the same list: every filter, then the cursor.
        let mut hint = String::from("more: assent list");
        for (_, flag, v) in &filters {
            if let Some(v) = v {
                hint.push_str(&format!(" {flag} {}", shell_word(v)));
            }
        }
        if a.limit != 50 {
            hint.push_str(&format!(" --limit {}", a.limit));
        }
        eprintln!("{hint} --cursor {c}");
    }
    Ok(())
}

/// A value as one shell word.
fn shell_word(v: &str) -> String {
    if !v.is_empty() && v.chars().all(|c| c.is_ascii_alphanumeric() || "-_.:/@%+=,".contains(c)) {
        v.to_string()
    } else {
        format!("'{}'", v.replace('\'', "'\\''"))
    }
}

/// What a decision says, for one proposal or many.
pub struct Decide {
    /// approve or reject.
    pub outcome: &'static str,
    /// Why.
    pub reason: Option<String>,
    /// What to change (refine).
    pub feedback: Option<String>,
    /// An edited payload (approve, one proposal).
    pub edits: Option<String>,
    /// Allow similar proposals from now on, for this many seconds (or until removed).
    pub similar: Option<Option<i64>>,
    /// The SHA-256 of the payload the person was shown (one proposal).
    pub seen: Option<String>,
    /// Where an approved command runs (`read`, `workspace`, `unconfined`; one proposal).
    pub run: Option<String>,
    /// The hosts an approved command's box reaches (one proposal; `[]`: no network).
    pub hosts: Option<Vec<String>>,
    /// Print JSON.
    pub json: bool,
}

/// `assent approve|reject ID [ID ...] | --group G [--agent A]`: one proposal as before,
/// several as a batch (each stands alone), or a whole group (all or nothing).
pub async fn decide_many(home: &Home, targets: Targets, d: Decide) -> Result<()> {
    let Targets { ids, group, agent } = targets;
    if ids.len() == 1 && group.is_none() {
        return decide(home, &ids[0], d).await;
    }
    if d.edits.is_some() {
        bail!("--edits goes with one proposal at a time");
    }
    if d.similar.is_some() {
        bail!("--allow-similar goes with one proposal at a time");
    }
    if d.seen.is_some() {
        bail!("--seen goes with one proposal at a time");
    }
    if d.run.is_some() {
        bail!("--run goes with one proposal at a time");
    }
    if d.hosts.is_some() {
        bail!("--host and --no-network go with one proposal at a time");
    }
    let body = match &group {
        Some(g) => json!({"group_id": g, "agent": agent, "outcome": d.outcome, "reason": d.reason}),
        None => {
            json!({"items": ids.iter().map(|id| json!({"id": id, "outcome": d.outcome, "reason": d.reason})).collect::<Vec<_>>()})
        }
    };
    let client = Client::owner(home)?;
    let r = client.api.decide_many(&body).await.map_err(|e| client.failed(e))?;
    if d.json {
        println!("{}", serde_json::to_string(&r)?);
        return Ok(());
    }
    for item in &r.results {
        let why = item.error.as_ref().map(|e| format!("  ({})", e.message)).unwrap_or_default();
        let result = serde_json::to_value(item.result).ok().and_then(|v| v.as_str().map(str::to_string));
        let status = item.status.map(|s| s.as_str()).unwrap_or("");
        println!("{} {} {status}{why}", item.id, result.unwrap_or_default());
    }
    println!("{} decided, {} skipped (settled meanwhile), {} failed", r.decided, r.skipped, r.failed);
    if r.failed > 0 {
        return Err(crate::ExitError::silent(crate::exit::ERROR).into());
    }
    Ok(())
}

/// `assent withdraw ID`: the agent takes back its own pending proposal.
pub async fn withdraw(home: &Home, id: &str, json_out: bool, auth: &AgentAuth) -> Result<()> {
    let client = Client::agent(home, auth)?;
    let p = client.api.withdraw(id).await.map_err(|e| client.failed(e))?;
    if json_out {
        println!("{}", serde_json::to_string(&p)?);
    } else {
        println!("{} {}", p.id, p.status.as_str());
    }
    Ok(())
}

/// `assent show ID`
pub async fn show(home: &Home, id: &str, json_out: bool, auth: &AgentAuth) -> Result<()> {
    let client = reader(home, auth)?;
    let p = client.api.get(id).await.map_err(|e| client.failed(e))?;
    let audit = client.api.audit_of(id).await.map_err(|e| client.failed(e))?;
    let asked = ListQuery { supersedes: Some(id.to_string()), limit: 10, ..Default::default() };
    let revisions = client.api.list(&asked, None).await.map_err(|e| client.failed(e))?.items;
    let revised_by: Vec<String> = revisions.iter().map(|r| format!("{} ({})", r.id, r.status.as_str())).collect();
    if json_out {
        println!("{}", json!({ "proposal": p, "audit": audit, "superseded_by": revisions }));
    } else {
        let mut text = output::proposal(&p, Some(&audit));
        if !revised_by.is_empty() {
            text = text.replacen('\n', &format!("\nsuperseded by {}\n", revised_by.join(", ")), 1);
        }
        print!("{text}");
    }
    Ok(())
}

/// `assent approve|reject|refine`
pub async fn decide(home: &Home, id: &str, d: Decide) -> Result<()> {
    let mut body = json!({ "outcome": d.outcome });
    if let Some(r) = d.reason {
        body["reason"] = json!(r);
    }
    if let Some(f) = d.feedback {
        body["feedback"] = json!(f);
    }
    if let Some(e) = d.edits {
        body["edits"] = parse_json("--edits", &e)?;
    }
    if let Some(expires_in) = d.similar {
        body["allow_similar"] = json!({ "expires_in": expires_in });
    }
    if let Some(seen) = d.seen {
        body["seen"] = json!(seen);
    }
    if let Some(run) = d.run {
        body["run"] = json!(run);
    }
    if let Some(hosts) = d.hosts {
        body["hosts"] = json!(hosts);
    }
    let client = Client::owner(home)?;
    let decided = client.api.decide(id, &body).await.map_err(|e| client.failed(e))?;
    if d.json {
        println!("{}", serde_json::to_string(&decided)?);
        return Ok(());
    }
    let mut p = decided.proposal;
    println!("{} {}", p.id, p.status.as_str());
    // What was decided, in Assent's words (an edit as edited): the person reads what their
    // decision was about.
    if let Some(edited) = p.approved_payload.take() {
        p.payload = edited;
    }
    println!("what        {}", output::safe(&output::computed_title(&p)));
    if let Some(rule) = decided.rule {
        let until =
            rule.expires_at.map(|t| format!(" until {}", t.to_rfc3339())).unwrap_or_else(|| " until removed".into());
        println!("rule {} saved: {}{until}", rule.id, output::safe(&rule.description));
    }
    Ok(())
}

/// `assent agent add|list|revoke`
pub async fn agent(home: &Home, cmd: crate::AgentCmd) -> Result<()> {
    let client = Client::owner(home)?;
    match cmd {
        crate::AgentCmd::Add { name, reuse, json } => {
            let t = client.api.add_agent(&name, reuse).await.map_err(|e| client.failed(e))?;
            if json {
                println!("{}", json!({ "name": t.name, "token": t.token }));
            } else {
                println!("{}", t.token);
                eprintln!(
                    "agent `{name}` added. This token is shown once: give it to the agent (Authorization: Bearer <token>)."
                );
            }
        }
        crate::AgentCmd::List(crate::output::Printed { json }) => {
            let agents = client.api.agents().await.map_err(|e| client.failed(e))?;
            if json {
                println!("{}", json!({ "items": agents }));
            } else {
                println!("{:<24}  {:<24}  STATUS", "NAME", "CREATED (UTC)");
                for a in agents {
                    let status = match a.revoked_at {
                        None => "active".to_string(),
                        Some(t) => format!("revoked {}", t.to_rfc3339()),
                    };
                    let created: String = a.created_at.to_rfc3339().chars().take(19).collect();
                    println!("{:<24}  {:<24}  {status}", a.name, created.replace('T', " "));
                }
            }
        }
        crate::AgentCmd::Revoke { name } => {
            client.api.revoke_agent(&name).await.map_err(|e| client.failed(e))?;
            println!("agent `{name}` revoked: its token no longer works");
        }
    }
    Ok(())
}

/// `assent export`: the audit log as JSON lines, then the rule log (rows with `rule_id`).
pub async fn export(home: &Home, output: Option<PathBuf>) -> Result<()> {
    use std::io::Write;
    let client = Client::owner(home)?;
    let mut out: Box<dyn Write> = match &output {
        Some(p) => Box::new(std::io::BufWriter::new(
            std::fs::File::create(p).with_context(|| format!("cannot create {}", p.display()))?,
        )),
        None => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
    };
    let mut n = 0usize;
    // The audit log, then the rule log: every decision and every change of rules.
    for path in ["/audit", "/rules/log"] {
        let mut after = 0i64;
        loop {
            let page = client.call(Method::GET, &format!("{path}?after={after}&limit=5000"), None, &[]).await?;
            for e in page["items"].as_array().cloned().unwrap_or_default() {
                match writeln!(out, "{e}") {
                    // The reader has what it wanted (`assent export | head`): stop quietly.
                    Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => return Ok(()),
                    r => r?,
                }
                n += 1;
            }
            match page["next_after"].as_i64() {
                Some(next) => after = next,
                None => break,
            }
        }
    }
    match out.flush() {
        Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => return Ok(()),
        r => r?,
    }
    if output.is_some() {
        eprintln!("exported {n} audit rows");
    }
    Ok(())
}

/// `assent credential add|list|remove`
pub async fn credential(home: &Home, cmd: crate::CredentialCmd) -> Result<()> {
    let client = Client::owner(home)?;
    match cmd {
        crate::CredentialCmd::Add { name, hosts, scheme, json } => {
            let secret = read_secret()?;
            let body = json!({ "name": name, "hosts": hosts, "scheme": scheme, "secret": secret });
            let c = client.api.add_credential(&body).await.map_err(|e| client.failed(e))?;
            if json {
                println!("{}", serde_json::to_string(&c)?);
            } else {
                println!(
                    "credential `{name}` stored in the system keychain; it may be sent to {}",
                    c.origins.join(", ")
                );
            }
        }
        crate::CredentialCmd::List(crate::output::Printed { json }) => {
            let items = client.api.credentials().await.map_err(|e| client.failed(e))?;
            if json {
                println!("{}", json!({ "items": items }));
            } else {
                if items.is_empty() {
                    println!("no credentials");
                }
                for c in items {
                    println!("{:<20}  {:<20}  {}", c.name, scheme_label(&c.scheme), c.origins.join(", "));
                }
            }
        }
        crate::CredentialCmd::Remove { name } => {
            client.api.remove_credential(&name).await.map_err(|e| client.failed(e))?;
            println!("credential `{name}` removed from the keychain");
        }
    }
    Ok(())
}

fn scheme_label(s: &assent_core::credentials::Scheme) -> String {
    use assent_core::credentials::Scheme;
    match s {
        Scheme::Bearer => "bearer".into(),
        Scheme::Basic => "basic".into(),
        Scheme::Header(h) => format!("header:{h}"),
    }
}

/// `assent retry ID`
pub async fn retry(home: &Home, id: &str, json_out: bool) -> Result<()> {
    let client = Client::owner(home)?;
    let p = client.api.retry(id).await.map_err(|e| client.failed(e))?;
    if json_out {
        println!("{}", serde_json::to_string(&p)?);
    } else {
        println!("{}", p.id);
        eprintln!("proposed again as {}: pending a new decision", p.id);
    }
    Ok(())
}
