//! `assent rule add|list|remove|test|import`: the person's rules, from a terminal.

use crate::claude_rules::{self, Anchors, Entry};
use crate::client::Client;
use crate::home::Home;
use crate::output::{clip, safe};
use anyhow::{Context, Result, bail};
use assent_core::engine::rules::RuleList;
use assent_core::rules::{Effect, Rule, RuleMatch, describe};
use assent_core::time::Timestamp;
use serde_json::{Value, json};
use std::path::PathBuf;

/// `assent rule ...`
#[derive(Debug, clap::Subcommand)]
pub enum RuleCmd {
    /// Add a rule: what may run without asking (allow), what is always refused (deny), or what
    /// always asks (ask). Every field given must match.
    Add {
        /// allow, deny or ask.
        #[arg(value_parser = parse_effect)]
        effect: Effect,
        /// What it matches.
        #[command(flatten)]
        m: MatchArgs,
        /// Match every proposal (with an empty match; needed for `allow`).
        #[arg(long)]
        everything: bool,
        /// It stops matching after this long (15m, 1h, 1d, ...; default: until removed).
        #[arg(long = "for", value_name = "DURATION", value_parser = parse_duration)]
        for_: Option<i64>,
        /// A note (a denied proposal's reason).
        #[arg(long)]
        note: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// List the rules, with how many proposals each matched.
    List(crate::output::Printed),
    /// Remove a rule.
    Remove {
        /// Its id (`r_...`).
        id: String,
    },
    /// Say what the rules would do with a proposal, without filing it.
    Test {
        /// The proposal as an agent would post it (`{"kind": ..., "payload": ...}`).
        #[arg(conflicts_with_all = ["tool", "command"])]
        body: Option<String>,
        /// A tool call's tool (with --command for a shell command).
        #[arg(long)]
        tool: Option<String>,
        /// A tool call's command.
        #[arg(long, requires = "tool")]
        command: Option<String>,
        /// The agent proposing (default: default).
        #[arg(long)]
        agent: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Import rules from elsewhere.
    #[command(subcommand)]
    Import(ImportCmd),
}

/// `assent rule import ...`
#[derive(Debug, clap::Subcommand)]
pub enum ImportCmd {
    /// Claude Code's `permissions.allow`, `.deny` and `.ask` lists. Shows what it would create;
    /// creates it with --yes. Entries Assent cannot express with the same meaning are named
    /// and left out.
    ClaudeCode {
        /// A settings file (default: this project's .claude/settings.local.json and
        /// .claude/settings.json, and ~/.claude/settings.json, those that exist).
        file: Option<PathBuf>,
        /// Only for this agent (default: any agent).
        #[arg(long)]
        agent: Option<String>,
        /// Create the rules.
        #[arg(long)]
        yes: bool,
    },
}

/// What a rule matches, as flags.
#[derive(Debug, Clone, clap::Args)]
pub struct MatchArgs {
    /// The agent.
    #[arg(long)]
    agent: Option<String>,
    /// The kind (tool.call, file.write, file.delete, http.request).
    #[arg(long)]
    kind: Option<String>,
    /// The tool's name, a glob (tool.call).
    #[arg(long)]
    tool: Option<String>,
    /// The leading words of a tool's command ("npm test"): whole words, one plain command.
    #[arg(long, value_name = "PREFIX")]
    input: Option<String>,
    /// The file's path, a glob (`**` crosses folders).
    #[arg(long, value_name = "GLOB")]
    path: Option<String>,
    /// The HTTP method.
    #[arg(long)]
    method: Option<String>,
    /// The HTTP host (or origin).
    #[arg(long)]
    host: Option<String>,
    /// The credential.
    #[arg(long)]
    credential: Option<String>,
    /// `--input` is the whole command, exactly (not a prefix).
    #[arg(long, requires = "input")]
    exact: bool,
    /// A built-in rule: `read-only` (commands that only read inside the working folder, run
    /// confined to reading it; on in every new home), `build-test` (builds and tests, run
    /// confined to writing the working folder but its executable configuration, no network) or
    /// `box` (any command that stays in the workspace box, a package install reaching its
    /// registry; deleting, forcing, rewriting, other hosts, publishing and privilege still ask).
    #[arg(long, value_parser = ["read-only", "build-test", "box"])]
    builtin: Option<String>,
    /// An allow runs what it covers confined: `read` (reads the working folder only, no writes,
    /// no network, no secrets) or `workspace` (also writes the folder, never its executable
    /// configuration): the client runs it through `assent run`.
    #[arg(long, value_parser = ["read", "workspace"])]
    confine: Option<String>,
    /// A host the box of an allowed command reaches (`github.com`, `host:port`), through
    /// Assent's proxy; repeat for more. With `--confine`: a command that would reach another
    /// host asks.
    #[arg(long = "reaches", value_name = "HOST", requires = "confine")]
    reaches: Vec<String>,
}

impl From<MatchArgs> for RuleMatch {
    fn from(a: MatchArgs) -> Self {
        RuleMatch {
            agent: a.agent,
            kind: a.kind,
            tool: a.tool,
            input: a.input,
            path: a.path,
            method: a.method,
            host: a.host,
            credential: a.credential,
            exact: a.exact,
            builtin: a.builtin.map(|b| b.replace('-', "_")),
            confine: a.confine.as_deref().map(|c| match c {
                "workspace" => assent_core::rules::Confine::Workspace,
                _ => assent_core::rules::Confine::Read,
            }),
            // In the one form the server takes (it refuses a host that is none, saying why).
            reaches: assent_core::confine::check_hosts(&a.reaches).unwrap_or(a.reaches),
            // A person's own rule from the command line pins no script.
            script: None,
        }
    }
}

fn parse_effect(s: &str) -> Result<Effect, String> {
    s.parse().map_err(|()| format!("`{s}` is not an effect: allow, deny or ask"))
}

/// `15m`, `1h`, `1d`, `90s`, `2h 30m`: whole seconds.
pub fn parse_duration(s: &str) -> Result<i64, String> {
    let d = humantime::parse_duration(s).map_err(|e| format!("`{s}` is not a duration (15m, 1h, 1d): {e}"))?;
    i64::try_from(d.as_secs()).ok().filter(|n| *n > 0).ok_or_else(|| format!("`{s}` is not a positive duration"))
}

/// How long until `t`, in words: `in 59 min`, `expired`.
fn until(t: Option<Timestamp>, now: Timestamp) -> String {
    let Some(t) = t else { return "until removed".into() };
    let left = (t.0 - now.0) / 1000;
    match left {
        ..=0 => "expired".into(),
        1..=119 => format!("in {left} s"),
        120..=7199 => format!("in {} min", left / 60),
        7200..=172_799 => format!("in {} h", left / 3600),
        _ => format!("in {} days", left / 86_400),
    }
}

fn effect_word(e: Effect) -> &'static str {
    e.as_str()
}

fn print_rule(r: &Rule) {
    println!("{} {}: {}", r.id, effect_word(r.effect), safe(&r.description));
    if let Some(n) = &r.note {
        println!("  note: {}", safe(n));
    }
    println!("  expires: {}", until(r.expires_at, Timestamp::now()));
}

/// Runs `assent rule ...`.
pub async fn run(home: &Home, cmd: RuleCmd) -> Result<()> {
    let client = Client::owner(home)?;
    match cmd {
        RuleCmd::Add { effect, m, everything, for_, note, json } => {
            let body = json!({"effect": effect, "match": RuleMatch::from(m), "everything": everything, "expires_in": for_, "note": note});
            let r = client.api.add_rule(&body).await.map_err(|e| client.failed(e))?;
            if json {
                println!("{}", serde_json::to_string(&r)?);
            } else {
                print_rule(&r);
                if r.matches.builtin.as_deref() == Some("box") {
                    println!(
                        "\nCommands that stay in the box now run without asking. Each runs in the `workspace` box\n\
                         (`assent run`): it may write inside the session's folder but never its executable\n\
                         configuration (.git, package.json, a Makefile, .claude, CI workflows, ...), reaches no\n\
                         network (but a package install's registry: npm's, PyPI, crates.io, Go's, and only it),\n\
                         no process outside and no secret of yours, and nothing it starts outlives it.\n\
                         What the box cannot make harmless still asks: deleting, forcing or rewriting inside the\n\
                         folder (rm, git reset --hard, git clean, git branch -D, git checkout -- ., a rebase),\n\
                         and what it cannot give: any other host, publishing, privilege. A command runs the project's\n\
                         own code: what the agent wrote into the project runs too, inside the box. Remove the\n\
                         rule ({}) to ask again.",
                        r.id
                    );
                }
                if r.matches.builtin.as_deref() == Some("build_test") {
                    println!(
                        "\nBuilds and tests now run without asking: `npm test`, `cargo test`, `pytest`, `make` and the like,\n\
                         when the line is nothing but such commands. Each runs confined (`assent run`, the `workspace`\n\
                         profile): it may write inside the session's folder but never its executable configuration\n\
                         (.git, package.json, a Makefile, CI workflows, ...), reach no network, and see no secret of the\n\
                         environment. A build runs the project's own code: what the agent wrote into the project runs\n\
                         too, inside those limits. Remove the rule ({}) to ask again.",
                        r.id
                    );
                }
            }
        }
        RuleCmd::List(crate::output::Printed { json }) => {
            let list = all_rules(&client).await?;
            if json {
                println!("{}", serde_json::to_string(&list)?);
                return Ok(());
            }
            if list.items.is_empty() {
                println!("no rules: every proposal waits for you (add one with `assent rule add`)");
                return Ok(());
            }
            let now = Timestamp::now();
            println!(
                "{:<20} {:<6} {:<15} {:>8} {:>6} {:>10}  RULE",
                "ID", "EFFECT", "EXPIRES", "MATCHED", "SAVED", "RECENT"
            );
            for r in &list.items {
                println!(
                    "{:<20} {:<6} {:<15} {:>8} {:>6} {:>10}  {}",
                    r.rule.id,
                    effect_word(r.rule.effect),
                    until(r.rule.expires_at, now),
                    r.rule.matched,
                    r.saved_this_week,
                    format!("{}/{}", r.would_have_matched, list.recent),
                    clip(&safe(&r.rule.description), 100)
                );
            }
            println!(
                "\nMATCHED: proposals it decided (or sent to you); SAVED: prompts it answered for you this week; \
                 RECENT: of the latest {} proposals, how many it matches",
                list.recent
            );
        }
        RuleCmd::Remove { id } => {
            client.api.remove_rule(&id).await.map_err(|e| client.failed(e))?;
            println!("rule {id} removed");
        }
        RuleCmd::Test { body, tool, command, agent, json } => {
            let mut body = match (body, tool) {
                (Some(b), _) => serde_json::from_str::<Value>(&b).context("the proposal is not JSON")?,
                (None, Some(t)) => {
                    let input = command.map(|c| json!({"command": c})).unwrap_or_else(|| json!({}));
                    json!({"kind": assent_core::payloads::KindName::ToolCall.as_str(), "payload": {"tool": t, "input": input}})
                }
                (None, None) => bail!("give a proposal as JSON, or --tool (and --command)"),
            };
            if let (Some(a), Some(m)) = (agent, body.as_object_mut()) {
                m.insert("agent".into(), json!(a));
            }
            let verdict = client.api.test_rules(&body).await.map_err(|e| client.failed(e))?;
            if json {
                println!("{}", serde_json::to_string(&verdict)?);
                return Ok(());
            }
            match verdict.rule {
                Some(r) => println!("{}: rule {} ({})", effect_word(verdict.effect), r.id, safe(&r.description)),
                None => println!("ask: no rule matches; it would wait for you"),
            }
        }
        RuleCmd::Import(ImportCmd::ClaudeCode { file, agent, yes }) => import(&client, file, agent, yes).await?,
    }
    Ok(())
}

fn settings_files(file: Option<PathBuf>) -> Result<Vec<PathBuf>> {
    if let Some(f) = file {
        return Ok(vec![std::path::absolute(&f).with_context(|| format!("cannot resolve {}", f.display()))?]);
    }
    let cwd = std::env::current_dir().context("cannot read the current folder")?;
    let mut found: Vec<PathBuf> = [".claude/settings.local.json", ".claude/settings.json"]
        .iter()
        .map(|p| cwd.join(p))
        .filter(|p| p.is_file())
        .collect();
    if let Some(h) = dirs::home_dir() {
        let user = h.join(".claude").join("settings.json");
        if user.is_file() && !found.contains(&user) {
            found.push(user);
        }
    }
    if found.is_empty() {
        bail!(
            "no Claude Code settings here (.claude/settings.json, .claude/settings.local.json, ~/.claude/settings.json): name the file"
        );
    }
    Ok(found)
}

/// Every rule, page after page, as one list.
async fn all_rules(client: &Client) -> Result<RuleList> {
    let mut path = "/rules?limit=1000".to_string();
    let mut all: Option<RuleList> = None;
    loop {
        let page = client.api.rules(&path).await.map_err(|e| client.failed(e))?;
        let next = page.next_after;
        match all.as_mut() {
            None => all = Some(page),
            Some(a) => a.items.extend(page.items),
        }
        match next {
            Some(n) => path = format!("/rules?limit=1000&after={n}"),
            None => break,
        }
    }
    let mut all = all.context("no answer")?;
    all.next_after = None;
    Ok(all)
}

async fn import(client: &Client, file: Option<PathBuf>, agent: Option<String>, yes: bool) -> Result<()> {
    let home = dirs::home_dir().unwrap_or_default();
    let existing = all_rules(client).await?;
    let mut have: Vec<(Effect, RuleMatch)> =
        existing.items.iter().map(|r| (r.rule.effect, r.rule.matches.clone())).collect();
    let (mut create, mut refused, mut already) = (Vec::new(), 0usize, 0usize);
    for f in settings_files(file)? {
        let text = std::fs::read_to_string(&f).with_context(|| format!("cannot read {}", f.display()))?;
        let settings: Value = serde_json::from_str(&text).with_context(|| format!("{} is not JSON", f.display()))?;
        let entries = claude_rules::read(&settings, &Anchors::of(&f, &home))
            .map_err(|e| anyhow::anyhow!("{}: {e}", f.display()))?;
        println!("{}:", f.display());
        for e in entries {
            match e {
                Entry::Rule { source, effect, mut matches } => {
                    matches.agent.clone_from(&agent);
                    if have.contains(&(effect, matches.clone())) {
                        println!("  = {:<5} {}  (already a rule)", effect_word(effect), safe(&source));
                        already += 1;
                        continue;
                    }
                    println!(
                        "  + {:<5} {}  ->  {}",
                        effect_word(effect),
                        safe(&source),
                        safe(&describe(effect, &matches))
                    );
                    have.push((effect, matches.clone()));
                    create.push((source, effect, matches));
                }
                Entry::Refused { source, effect, why } => {
                    println!("  ! {:<5} {}  not imported: {why}", effect_word(effect), safe(&source));
                    refused += 1;
                }
            }
        }
    }
    println!();
    if create.is_empty() {
        println!("nothing to create ({already} already rules, {refused} not imported)");
        return Ok(());
    }
    if !yes {
        println!(
            "{} rules to create, {already} already rules, {refused} not imported. Run again with --yes to create them.",
            create.len()
        );
        return Ok(());
    }
    let mut made = 0;
    for (source, effect, matches) in create {
        let note = format!("imported from Claude Code: {source}");
        let body = json!({"effect": effect, "match": matches, "note": note});
        match client.api.add_rule(&body).await.map_err(|e| client.failed(e)) {
            Ok(r) => {
                made += 1;
                println!("created {} for {}", r.id, safe(&source));
            }
            Err(e) => println!("could not create a rule for {}: {e:#}", safe(&source)),
        }
    }
    println!("{made} rules created, {already} already rules, {refused} not imported");
    Ok(())
}
