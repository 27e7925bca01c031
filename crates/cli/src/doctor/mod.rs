//! `assent doctor`: is everything Assent leans on in order? The keychain, the notification
//! service, the server, the database and the wiring of Claude Code, Codex, Gemini CLI, Copilot
//! CLI, OpenCode and Cline, each with what was found and, for a problem, one line on how to fix it. The
//! exit code is non-zero when something is broken.

use crate::client;
use anyhow::Result;
use assent_host::home::Home;
use serde::Serialize;
use serde_json::Value;
use std::path::{Path, PathBuf};

mod agents;
mod codex;

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// In order.
    Ok,
    /// Worth knowing, nothing broken.
    Note,
    /// Broken: something Assent needs does not work.
    Problem,
}

/// One check.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    /// What was checked.
    pub name: &'static str,
    /// How it came out.
    pub status: Status,
    /// What was found.
    pub detail: String,
    /// How to fix it (problems and notes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

impl Check {
    fn ok(name: &'static str, detail: impl Into<String>) -> Self {
        Check { name, status: Status::Ok, detail: detail.into(), fix: None }
    }
    fn note(name: &'static str, detail: impl Into<String>, fix: impl Into<String>) -> Self {
        Check { name, status: Status::Note, detail: detail.into(), fix: Some(fix.into()) }
    }
    fn problem(name: &'static str, detail: impl Into<String>, fix: impl Into<String>) -> Self {
        Check { name, status: Status::Problem, detail: detail.into(), fix: Some(fix.into()) }
    }
    /// A client found no Assent in: a note with how to wire it where it is installed, else
    /// nothing to do.
    fn unwired(name: &'static str, installed: bool, detail: &str, fix: &str) -> Self {
        if installed {
            Check::note(name, format!("installed, but {detail}"), fix)
        } else {
            Check::ok(name, "not installed here (nothing to wire)")
        }
    }
}

/// Runs every check and prints them; an error with exit code 1 when any is a problem.
pub async fn run(home: &Home, json: bool) -> Result<()> {
    let checks = vec![
        keychain(home).await,
        notifications().await,
        server(home).await,
        database(home).await,
        confinement(),
        project_hooks(),
        claude_code(),
        agents::gemini_cli(),
        agents::copilot_cli(),
        codex::codex(),
        agents::opencode(),
        agents::cline(),
    ];
    let problems = checks.iter().filter(|c| c.status == Status::Problem).count();
    if json {
        println!("{}", serde_json::json!({ "home": home.dir, "checks": checks, "problems": problems }));
    } else {
        println!("Assent {} — home {}\n", assent_host::VERSION_LINE, home.dir.display());
        for c in &checks {
            let mark = match c.status {
                Status::Ok => "ok     ",
                Status::Note => "note   ",
                Status::Problem => "PROBLEM",
            };
            println!("  {mark}  {:<14} {}", c.name, c.detail);
            if let Some(fix) = &c.fix {
                println!("  {:7}  {:<14} fix: {fix}", "", "");
            }
        }
        println!();
        match problems {
            0 => println!("Everything Assent needs is in order."),
            1 => println!("1 problem."),
            n => println!("{n} problems."),
        }
    }
    if problems > 0 {
        return Err(crate::ExitError::silent(crate::exit::ERROR).into());
    }
    Ok(())
}

async fn keychain(home: &Home) -> Check {
    const NAME: &str = "keychain";
    let configured = assent_host::config::Config::load(&home.config()).map(|c| c.owner_credential).unwrap_or_default();
    // One lookup of the owner credential's entry says both whether the keychain answers and
    // whether it holds the credential.
    let owner_user = assent_secrets::owner::keychain_user(&home.dir);
    let keychain = assent_secrets::Keychain::default();
    let lookup = tokio::task::spawn_blocking(move || keychain.get(&owner_user)).await;
    let (reachable, in_keychain) = match lookup {
        Ok(Ok(_)) => (Ok(()), true),
        Ok(Err(assent_secrets::SecretsError::Missing(_))) => (Ok(()), false),
        Ok(Err(e)) => (Err(e.to_string()), false),
        Err(e) => (Err(e.to_string()), false),
    };
    let file = assent_secrets::owner::file_path(&home.dir);
    let owner = if in_keychain {
        "the owner credential is in the keychain".to_string()
    } else if file.exists() {
        format!("the owner credential is in {}", file.display())
    } else {
        "no owner credential yet (Assent has not run in this home)".to_string()
    };
    match reachable {
        Ok(()) => Check::ok(NAME, format!("Secret Service reachable and unlocked; {owner}")),
        Err(why) if configured == "file" => Check::note(
            NAME,
            format!("no usable keychain ({}); {owner}, as config.toml asks", first_sentence(&why)),
            "credentials for HTTP writes need a keychain: install and unlock one (gnome-keyring, KeePassXC) if you add any",
        ),
        Err(why) => Check::problem(
            NAME,
            format!("no usable keychain: {}; {owner}", first_sentence(&why)),
            "install a Secret Service (`sudo apt install gnome-keyring`) and unlock it by logging in to a desktop session; on a headless machine set `owner_credential = \"file\"` in config.toml",
        ),
    }
}

fn first_sentence(s: &str) -> String {
    s.split(". ").next().unwrap_or(s).trim_end_matches('.').to_string()
}

async fn notifications() -> Check {
    const NAME: &str = "notifications";
    match assent_notify::probe().await {
        Ok(info) if info.actions => {
            Check::ok(NAME, format!("{} shows notifications with Approve and Reject buttons", info.server))
        }
        Ok(info) => Check::note(
            NAME,
            format!("{} shows notifications but without buttons", info.server),
            "decide in the inbox (or use a notification daemon with actions, such as dunst or GNOME's)",
        ),
        Err(why) => Check::problem(
            NAME,
            why,
            "log in to a desktop session, or install and start a notification daemon (`sudo apt install dunst`)",
        ),
    }
}

async fn server(home: &Home) -> Check {
    const NAME: &str = "server";
    let Some(info) = home.server() else {
        return Check::problem(
            NAME,
            "not running (no server.json in the home)",
            "open the Assent app, or run `assent serve`",
        );
    };
    let no_token: assent_client::Resolve<String> = std::sync::Arc::new(|| None);
    let api = match assent_client::Client::new(client::endpoint(home), no_token, "cli") {
        Ok(a) => a,
        Err(e) => return Check::problem(NAME, e.to_string(), "report this: the HTTP client could not be built"),
    };
    match api.endpoint().await {
        Ok(ep) => {
            let port = ep.url.rsplit(':').next().unwrap_or("?").to_string();
            let version = if info.version.is_empty() { String::new() } else { format!(", version {}", info.version) };
            Check::ok(NAME, format!("running at {} (port {port}, process {}{version})", ep.url, info.pid))
        }
        Err(assent_client::Error::NotRunning) => Check::problem(
            NAME,
            format!(
                "server.json names {}, but nothing answers there (a server that stopped without cleaning up)",
                info.url
            ),
            "open the Assent app, or run `assent serve`",
        ),
        Err(assent_client::Error::Impostor { url }) => Check::problem(
            NAME,
            format!("the program at {url} did not prove it is this home's Assent server"),
            "stop whatever listens on that port, then start Assent again",
        ),
        Err(e) => Check::problem(NAME, e.to_string(), "start Assent again: open the app, or run `assent serve`"),
    }
}

/// What is wrong with a database's schema, if anything: an upgrade that did not finish, or a
/// schema newer than this Assent knows. `team`: the team store as shown (its administrator
/// restores it), else the home's own SQLite database.
fn schema_trouble(dirty: bool, schema: i64, latest: i64, team: Option<&str>) -> Option<Check> {
    const NAME: &str = "database";
    let (detail, fix) = match team {
        Some(shown) if dirty => (
            format!("a schema upgrade of {shown} did not finish (schema {schema} of {latest})"),
            "ask the database's administrator to restore it from a backup taken before the upgrade",
        ),
        Some(shown) if schema > latest => (
            format!("{shown} has schema {schema}, newer than this Assent knows ({latest})"),
            "update Assent on this machine",
        ),
        None if dirty => (
            format!("a schema upgrade did not finish (schema {schema} of {latest})"),
            "restore the database from a backup taken before the upgrade",
        ),
        None if schema > latest => (
            format!("schema {schema} is newer than this Assent knows ({latest}): a newer version wrote it"),
            "install the newer Assent again (or restore a backup made by this version)",
        ),
        _ => return None,
    };
    Some(Check::problem(NAME, detail, fix))
}

/// The team store this home uses: reachable, its schema, its nodes.
async fn team_database(config: &assent_host::config::Config, url: &str) -> Check {
    const NAME: &str = "database";
    let shown = assent_store::pg::display_url(url);
    let opts = match assent_host::start::team_options(config, url).await {
        Ok(o) => o,
        Err(e) => return Check::problem(NAME, format!("{e:#}"), "fix `store` in config.toml (or ASSENT_STORE)"),
    };
    match assent_store::pg::inspect(&opts).await {
        Err(e) => Check::problem(
            NAME,
            format!("the team store {shown} cannot be used: {e}"),
            "check that the database server runs and is reachable, and the password (`assent store password` or ~/.pgpass)",
        ),
        Ok(h) if let Some(trouble) = schema_trouble(h.dirty, h.schema, h.latest, Some(&shown)) => trouble,
        Ok(h) => Check::ok(
            NAME,
            format!(
                "team store {shown}, schema {} of {}, node `{}` among {} ({})",
                h.schema,
                h.latest,
                opts.node,
                h.nodes.len(),
                h.nodes.join(", ")
            ),
        ),
    }
}

async fn database(home: &Home) -> Check {
    const NAME: &str = "database";
    if let Ok(config) = assent_host::config::Config::load(&home.config())
        && let Some(url) = config.store.clone()
    {
        return team_database(&config, &url).await;
    }
    let path = home.db();
    if !path.exists() {
        return Check::note(
            NAME,
            format!("none yet at {}", path.display()),
            "it is made when Assent first starts in this home",
        );
    }
    match assent_store::inspect(&path).await {
        Err(why) => Check::problem(
            NAME,
            format!("{} cannot be read: {why}", path.display()),
            "stop Assent, move the file aside and start Assent again (it makes a new one); keep the old one for its audit log",
        ),
        Ok(h) if h.integrity != "ok" => Check::problem(
            NAME,
            format!("SQLite's integrity check failed: {}", crate::output::clip(&h.integrity, 200)),
            "stop Assent and restore the database from a backup (`assent export` writes the audit log as JSON lines)",
        ),
        Ok(h) if let Some(trouble) = schema_trouble(h.dirty, h.schema, h.latest, None) => trouble,
        Ok(h) => {
            let upgrade = if h.schema < h.latest { " (upgraded at the next start)" } else { "" };
            Check::ok(
                NAME,
                format!(
                    "integrity ok, schema {} of {}{upgrade}, {} at {}",
                    h.schema,
                    h.latest,
                    assent_core::engine::human_bytes(h.bytes),
                    path.display()
                ),
            )
        }
    }
}

/// What the project in the current folder says to the agents' clients about hooks: settings
/// that add hooks Assent does not see, or turn hooks off (a problem: the client then files
/// nothing).
fn project_hooks() -> Check {
    use assent_core::kinds::project_hooks::{Finding, findings};
    let cwd = std::env::current_dir().unwrap_or_default();
    let found = findings(&cwd);
    if found.is_empty() {
        return Check::ok("project hooks", format!("{}: no project setting adds or turns off hooks", cwd.display()));
    }
    let words: Vec<String> = found.iter().map(Finding::words).collect();
    let off = found.iter().any(|f| matches!(f, Finding::TurnsHooksOff { .. }));
    let fix = "remove what you did not put there (a command the agent ran may have written it)";
    if off {
        Check::problem("project hooks", words.join(" "), fix)
    } else {
        Check::note("project hooks", words.join(" "), fix)
    }
}

/// Whether commands can run in a box here; where they cannot, every rule that runs a command
/// in a box asks instead (safe, but the built-in read-only rule then asks for every read), and
/// what the person approves runs only if they choose to run it unconfined.
fn confinement() -> Check {
    use assent_confine::Profile;
    let support = assent_confine::Support::detect();
    let missing = support.missing(Profile::Workspace);
    if missing.is_empty() {
        return Check::ok("box", format!("commands run in a box (read, workspace): {}", support.layers()));
    }
    Check::note(
        "box",
        format!("commands cannot run in a box here: {}; rules that box ask instead", missing.join("; ")),
        "allow unprivileged user namespaces (Debian 11+, Ubuntu 22.04, Fedora: on by default; Ubuntu 24.04+: an AppArmor profile for assent and assent-run, see docs/rules.md)",
    )
}

fn claude_code() -> Check {
    const NAME: &str = "claude code";
    let Some(user) = dirs::home_dir() else { return Check::note(NAME, "no home directory", "set HOME") };
    let config_dir = std::env::var_os("CLAUDE_CONFIG_DIR").map(PathBuf::from).unwrap_or_else(|| user.join(".claude"));
    let cwd = std::env::current_dir().unwrap_or_default();
    let settings = [
        config_dir.join("settings.json"),
        config_dir.join("settings.local.json"),
        cwd.join(".claude/settings.json"),
        cwd.join(".claude/settings.local.json"),
    ];
    let mcp_files = [user.join(".claude.json"), config_dir.join(".claude.json"), cwd.join(".mcp.json")];
    let mut found = Vec::new();
    let mut commands = Vec::new();
    let mut events = Vec::new();
    for file in &settings {
        for (event, cmd) in hook_commands(file) {
            found.push(format!("hook in {}", tilde(file, &user)));
            commands.push(cmd);
            events.push(event);
        }
    }
    for file in &mcp_files {
        for cmd in mcp_commands(file) {
            found.push(format!("MCP server in {}", tilde(file, &user)));
            commands.push(cmd);
        }
    }
    found.dedup();
    let installed = config_dir.exists() || user.join(".claude.json").exists() || on_path("claude").is_some();
    if found.is_empty() {
        return Check::unwired(
            NAME,
            installed,
            "no Assent hook or MCP server in its settings: its tool calls do not come to Assent",
            "assent connect claude-code (adds the PreToolUse hook to ~/.claude/settings.json; docs/clients.md: \"Claude Code: every tool call through the inbox\")",
        );
    }
    // The hook runs the named program: it has to be found.
    for cmd in &commands {
        let program = cmd.split_whitespace().next().unwrap_or("");
        let exists = if program.contains('/') { Path::new(program).exists() } else { on_path(program).is_some() };
        if !exists {
            return Check::problem(
                NAME,
                format!("{} runs `{program}`, which is not on the PATH", found.join(", ")),
                "install the `assent` command (the .deb does; from source: `cargo install --path .`) or write its full path in the settings",
            );
        }
    }
    // A `PermissionRequest` hook is asked only where Claude Code would prompt: in any mode but
    // `default`, that is little or nothing. The settings later in `settings` win.
    let mode = settings
        .iter()
        .rev()
        .find_map(|f| read_json(f).and_then(|v| v["permissions"]["defaultMode"].as_str().map(str::to_string)));
    if !events.iter().any(|e| e == "PreToolUse") && events.iter().any(|e| e == "PermissionRequest") {
        // `manual` is Claude Code's other name for `default`.
        let set = mode.as_deref().map(|m| if m == "manual" { "default" } else { m });
        if set != Some("default") {
            let (mode, asked, outcome) = match set {
                None => (
                    "not set, so Claude Code chooses it (interactive sessions may start in `auto`)".to_string(),
                    "nothing in `auto`",
                    "those calls run without Assent",
                ),
                Some(m) => (
                    format!("`{m}`"),
                    match m {
                        "auto" => "nothing: its classifier answers the prompts",
                        "acceptEdits" => "no edits at all, nor commands that only touch files in its folder",
                        "dontAsk" => "nothing: what it would prompt for is refused",
                        "bypassPermissions" => "nothing",
                        _ => "little or nothing",
                    },
                    if m == "dontAsk" {
                        "those calls are refused without you"
                    } else {
                        "those calls run without Assent"
                    },
                ),
            };
            return Check::note(
                NAME,
                format!(
                    "{}: a PermissionRequest hook, and Claude Code's permission mode is {mode}, in which it asks the hook {asked}; {outcome}",
                    found.join(", ")
                ),
                "make the hook a PreToolUse hook, or set \"permissions\": {\"defaultMode\": \"default\"} in the same settings (docs/clients.md: \"Which hook sees what\")",
            );
        }
    }
    Check::ok(NAME, found.join(", "))
}

fn read_json(file: &Path) -> Option<Value> {
    // Settings files may hold comments and trailing commas (Gemini CLI's do): read as JSONC.
    let text = std::fs::read_to_string(file).ok()?;
    jsonc_parser::cst::CstRootNode::parse(&text, &jsonc_parser::ParseOptions::default()).ok()?.to_serde_value()
}

/// The hook commands in a Claude Code settings file that run `assent hook`, each with its
/// event (`PreToolUse`, `PermissionRequest`).
fn hook_commands(file: &Path) -> Vec<(String, String)> {
    let Some(v) = read_json(file) else { return Vec::new() };
    let table = assent_core::kinds::project_hooks::hook_table(&v);
    table.into_iter().filter(|(_, cmd)| cmd.contains("assent") && cmd.contains(" hook")).collect()
}

/// The MCP server commands that run `assent mcp` (top level, and per project in ~/.claude.json).
fn mcp_commands(file: &Path) -> Vec<String> {
    let Some(v) = read_json(file) else { return Vec::new() };
    let mut tables = vec![&v["mcpServers"]];
    if let Some(projects) = v["projects"].as_object() {
        tables.extend(projects.values().map(|p| &p["mcpServers"]));
    }
    let mut out = Vec::new();
    for servers in tables.into_iter().filter_map(Value::as_object) {
        for s in servers.values() {
            let command = s["command"].as_str().unwrap_or("");
            let args: Vec<&str> = s["args"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
            if command.ends_with("assent") && args.first() == Some(&"mcp") {
                out.push(format!("{command} mcp"));
            }
        }
    }
    out
}

fn on_path(program: &str) -> Option<PathBuf> {
    if program.is_empty() {
        return None;
    }
    std::env::split_paths(&std::env::var_os("PATH")?).map(|d| d.join(program)).find(|p| p.is_file())
}

fn tilde(p: &Path, user: &Path) -> String {
    match p.strip_prefix(user) {
        Ok(rest) => format!("~/{}", rest.display()),
        Err(_) => p.display().to_string(),
    }
}
