//! `assent doctor`: is everything Assent leans on in order? The keychain, the notification
//! service, the server, the database, the box and the wiring of each agent client (each
//! client's module in `assent-agents` checks its own), each with what was found and, for a
//! problem, one line on how to fix it. The exit code is non-zero when something is broken.

use crate::client;
use anyhow::Result;
use assent_host::home::Home;

pub use assent_agents::{Check, Status};

/// Runs every check and prints them; an error with exit code 1 when any is a problem.
pub async fn run(home: &Home, json: bool) -> Result<()> {
    let mut checks = vec![
        keychain(home).await,
        notifications().await,
        server(home).await,
        database(home).await,
        confinement(),
        project_hooks(),
    ];
    // Each agent client's wiring, as its module in assent-agents checks it.
    match assent_agents::Places::here() {
        Some(places) => checks.extend(assent_agents::all().iter().map(|a| a.check(&places))),
        None => {
            checks.push(Check::note("agents", "no home directory: the clients' settings cannot be read", "set HOME"))
        }
    }
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
        Ok(()) => Check::ok(NAME, format!("{} reachable and unlocked; {owner}", keychain_name())),
        Err(why) if configured == "file" => Check::note(
            NAME,
            format!("no usable keychain ({}); {owner}, as config.toml asks", first_sentence(&why)),
            keychain_fix(true),
        ),
        Err(why) => {
            Check::problem(NAME, format!("no usable keychain: {}; {owner}", first_sentence(&why)), keychain_fix(false))
        }
    }
}

/// The system's keychain, by its name on this platform.
fn keychain_name() -> &'static str {
    if cfg!(windows) {
        "Windows Credential Manager"
    } else if cfg!(target_os = "macos") {
        "the macOS Keychain"
    } else {
        "Secret Service"
    }
}

/// How to get a usable keychain on this platform (`optional`: only credentials need it).
fn keychain_fix(optional: bool) -> &'static str {
    match (cfg!(windows), cfg!(target_os = "macos"), optional) {
        (true, _, _) => "log in to Windows as yourself (Credential Manager is per user); a service account has none",
        (_, true, _) => "unlock your login keychain (Keychain Access), or log in to the Mac's desktop",
        (_, _, true) => {
            "credentials for HTTP writes need a keychain: install and unlock one (gnome-keyring, KeePassXC) if you add any"
        }
        _ => {
            "install a Secret Service (`sudo apt install gnome-keyring`) and unlock it by logging in to a desktop session; on a headless machine set `owner_credential = \"file\"` in config.toml"
        }
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
        Err(why) => Check::problem(NAME, why, notifications_fix()),
    }
}

/// What to do when no notification is shown, on this platform.
fn notifications_fix() -> &'static str {
    if cfg!(target_os = "macos") {
        "open the Assent app: macOS shows the notifications of an app bundle (Assent.app), allowed in System Settings, Notifications"
    } else {
        "log in to a desktop session, or install and start a notification daemon (`sudo apt install dunst`)"
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
    let support = assent_boundary::boxed::Support::detect();
    let missing = support.missing(assent_boundary::Confine::Workspace);
    if missing.is_empty() {
        return Check::ok("box", format!("commands run in a box (read, workspace): {}", support.layers()));
    }
    let fix = if cfg!(windows) {
        "nothing to set: decide such calls in the inbox (docs/platforms.md says what Windows has)"
    } else if cfg!(target_os = "macos") {
        "Seatbelt's sandbox-exec comes with macOS: reinstall the system's command-line tools"
    } else {
        "allow unprivileged user namespaces (Debian 11+, Ubuntu 22.04, Fedora: on by default; Ubuntu 24.04+: an AppArmor profile for assent and assent-run, see docs/rules.md)"
    };
    Check::note(
        "box",
        format!("commands cannot run in a box here: {}; rules that box ask instead", missing.join("; ")),
        fix,
    )
}
