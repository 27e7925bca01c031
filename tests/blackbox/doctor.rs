//! `assent doctor` on a healthy setup (a real Secret Service, a real notification daemon, a
//! running server, its database, Claude Code wired with the hook) and with each part broken
//! (Gemini CLI's hook given too little time among them): each problem named, with a line on how
//! to fix it, and a non-zero exit code.

use crate::harness::{BIN, Bus, Server, private_bus_with_keyring};
use crate::notify::daemon;
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

/// Runs `assent doctor --json` for `home` with this bus and this user directory.
fn doctor(home: &Path, bus: &str, user: &Path) -> (Output, Value) {
    doctor_in(home, bus, user, user)
}

/// [`doctor`] in the folder `cwd` (a project's own Claude Code settings are read there).
fn doctor_in(home: &Path, bus: &str, user: &Path, cwd: &Path) -> (Output, Value) {
    let out = crate::procs::as_user(home, user, cwd)
        .args(["doctor", "--json"])
        .env("DBUS_SESSION_BUS_ADDRESS", bus)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| {
        panic!("not JSON: {}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
    });
    (out, v)
}

fn check<'a>(v: &'a Value, name: &str) -> &'a Value {
    v["checks"].as_array().unwrap().iter().find(|c| c["name"] == name).unwrap_or_else(|| panic!("no {name}: {v}"))
}

/// A user directory where Claude Code runs `assent hook claude-code` before each tool call.
fn wired_user() -> tempfile::TempDir {
    let user = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(user.path().join(".claude")).unwrap();
    let settings = serde_json::json!({"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [
        {"type": "command", "command": "assent hook claude-code --timeout 590", "timeout": 600}
    ]}]}});
    std::fs::write(user.path().join(".claude/settings.json"), settings.to_string()).unwrap();
    user
}

async fn healthy() -> (Bus, crate::notify::Daemon, Server, tempfile::TempDir) {
    let bus = private_bus_with_keyring();
    let d = daemon(&bus);
    let s = Server::start_with("", &[("DBUS_SESSION_BUS_ADDRESS", &bus.address)]).await;
    (bus, d, s, wired_user())
}

#[tokio::test]
async fn a_healthy_setup_has_no_problem() {
    let (bus, _d, s, user) = healthy().await;
    let (out, v) = doctor(s.home(), &bus.address, user.path());
    assert!(out.status.success(), "{v:#}");
    assert_eq!(v["problems"], 0, "{v:#}");
    for c in v["checks"].as_array().unwrap() {
        assert_eq!(c["status"], "ok", "{c}");
    }
    assert!(check(&v, "keychain")["detail"].as_str().unwrap().contains("reachable and unlocked"));
    assert!(check(&v, "notifications")["detail"].as_str().unwrap().contains("with Approve and Reject buttons"));
    let server = check(&v, "server")["detail"].as_str().unwrap().to_string();
    assert!(server.contains(&format!("running at {}", s.url)), "{server}");
    let db = check(&v, "database")["detail"].as_str().unwrap().to_string();
    // Every migration in migrations/ applied.
    let migrations = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/migrations"))
        .unwrap()
        .filter(|e| e.as_ref().is_ok_and(|e| e.path().extension().is_some_and(|x| x == "sql")))
        .count();
    assert!(migrations >= 8, "{migrations}");
    assert!(db.contains("integrity ok") && db.contains(&format!("schema {migrations} of {migrations}")), "{db}");
    assert!(check(&v, "claude code")["detail"].as_str().unwrap().contains("hook in ~/.claude/settings.json"));

    // The words a person reads say the same.
    let text = Command::new(BIN)
        .arg("--home")
        .arg(s.home())
        .arg("doctor")
        .env("DBUS_SESSION_BUS_ADDRESS", &bus.address)
        .env("HOME", user.path())
        .env("PATH", format!("{}:/usr/bin:/bin", Path::new(BIN).parent().unwrap().display()))
        .current_dir(user.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout).to_string();
    assert!(text.contains("Everything Assent needs is in order."), "{text}");
    assert!(!text.contains("PROBLEM"), "{text}");
}

#[tokio::test]
async fn each_broken_part_is_named_with_its_fix() {
    let (bus, d, mut s, user) = healthy().await;

    // No notification service.
    drop(d);
    let (out, v) = doctor(s.home(), &bus.address, user.path());
    assert_eq!(out.status.code(), Some(1), "{v:#}");
    let c = check(&v, "notifications");
    assert_eq!(c["status"], "problem", "{c}");
    assert!(c["fix"].as_str().unwrap().contains("notification daemon"), "{c}");
    assert_eq!(v["problems"], 1, "only that: {v:#}");

    // No keychain (and so no bus for notifications either).
    let (out, v) = doctor(s.home(), "unix:path=/nonexistent/bus", user.path());
    assert_eq!(out.status.code(), Some(1));
    let c = check(&v, "keychain");
    assert_eq!(c["status"], "problem", "{c}");
    assert!(c["fix"].as_str().unwrap().contains("gnome-keyring"), "{c}");
    assert!(c["detail"].as_str().unwrap().contains("owner credential is in"), "{c}");

    // Claude Code's hook runs a program that is not there.
    let settings = user.path().join(".claude/settings.json");
    let text = std::fs::read_to_string(&settings).unwrap().replace("assent hook", "assent-missing hook");
    std::fs::write(&settings, text).unwrap();
    let (_, v) = doctor(s.home(), &bus.address, user.path());
    let c = check(&v, "claude code");
    assert_eq!(c["status"], "problem", "{c}");
    assert!(c["detail"].as_str().unwrap().contains("`assent-missing`, which is not on the PATH"), "{c}");
    // A PermissionRequest hook in Claude Code's auto mode (or with no `defaultMode`, where it
    // may start in auto) is asked nothing: a note with the fix; in `default` mode (`manual`, its
    // other name), or as PreToolUse, fine. In `dontAsk` the calls are refused, not run.
    let permission_request = |mode: Option<&str>| {
        let mut v = serde_json::json!({"hooks": {"PermissionRequest": [{"matcher": "*", "hooks": [
            {"type": "command", "command": "assent hook claude-code --timeout 590", "timeout": 600}
        ]}]}});
        if let Some(m) = mode {
            v["permissions"] = serde_json::json!({"defaultMode": m});
        }
        v.to_string()
    };
    for (mode, status, says) in [
        (None, "note", "not set, so Claude Code chooses it"),
        (Some("auto"), "note", "its classifier answers the prompts; those calls run without Assent"),
        (Some("acceptEdits"), "note", "no edits at all"),
        (Some("dontAsk"), "note", "those calls are refused without you"),
        (Some("bypassPermissions"), "note", "`bypassPermissions`"),
        (Some("default"), "ok", "hook in ~/.claude/settings.json"),
        (Some("manual"), "ok", "hook in ~/.claude/settings.json"),
    ] {
        std::fs::write(&settings, permission_request(mode)).unwrap();
        let (_, v) = doctor(s.home(), &bus.address, user.path());
        let c = check(&v, "claude code");
        assert_eq!(c["status"], status, "{mode:?}: {c}");
        assert!(c["detail"].as_str().unwrap().contains(says), "{mode:?}: {c}");
        if status == "note" {
            assert!(c["fix"].as_str().unwrap().contains("PreToolUse"), "{c}");
        }
    }
    // A project's local settings win over the user's.
    std::fs::write(&settings, permission_request(Some("default"))).unwrap();
    let project = user.path().join("proj");
    std::fs::create_dir_all(project.join(".claude")).unwrap();
    std::fs::write(project.join(".claude/settings.local.json"), r#"{"permissions": {"defaultMode": "auto"}}"#).unwrap();
    let (_, v) = doctor_in(s.home(), &bus.address, user.path(), &project);
    assert_eq!(check(&v, "claude code")["status"], "note", "{v:#}");
    // Installed but not wired: a note, not a problem.
    std::fs::write(&settings, "{}").unwrap();
    let (_, v) = doctor(s.home(), &bus.address, user.path());
    let c = check(&v, "claude code");
    assert_eq!(c["status"], "note", "{c}");
    assert!(c["fix"].as_str().unwrap().contains("assent connect claude-code"), "{c}");

    // The server died without cleaning up: server.json names a port nobody answers on.
    s.kill9();
    let (out, v) = doctor(s.home(), &bus.address, user.path());
    assert_eq!(out.status.code(), Some(1));
    let c = check(&v, "server");
    assert_eq!(c["status"], "problem", "{c}");
    assert!(c["detail"].as_str().unwrap().contains("nothing answers there"), "{c}");
    assert!(c["fix"].as_str().unwrap().contains("assent serve"), "{c}");
    // Stopped cleanly: not running.
    std::fs::remove_file(s.home().join("server.json")).unwrap();
    let (_, v) = doctor(s.home(), &bus.address, user.path());
    assert!(check(&v, "server")["detail"].as_str().unwrap().starts_with("not running"), "{v:#}");

    // A database written by a newer Assent, then a damaged one.
    let db = s.home().join("assent.db");
    let py = |code: &str| {
        let out = Command::new("python3").args(["-c", code]).arg(&db).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    };
    py(
        "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute(\"INSERT INTO _sqlx_migrations (version, description, installed_on, success, checksum, execution_time) VALUES (99, 'future', datetime('now'), 1, x'00', 0)\"); c.commit()",
    );
    let (_, v) = doctor(s.home(), &bus.address, user.path());
    let c = check(&v, "database");
    assert_eq!(c["status"], "problem", "{c}");
    assert!(c["detail"].as_str().unwrap().contains("newer than this Assent knows"), "{c}");
    py(
        "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('DELETE FROM _sqlx_migrations WHERE version = 99'); c.commit(); c.execute('PRAGMA wal_checkpoint(TRUNCATE)')",
    );
    let (_, v) = doctor(s.home(), &bus.address, user.path());
    assert_eq!(check(&v, "database")["status"], "ok", "{v:#}");
    // Damage: overwrite the middle of the file (past the header and the schema).
    let mut bytes = std::fs::read(&db).unwrap();
    assert!(bytes.len() > 3 * 4096, "{} bytes", bytes.len());
    for b in &mut bytes[2 * 4096..3 * 4096] {
        *b = 0x5a;
    }
    std::fs::write(&db, &bytes).unwrap();
    let (out, v) = doctor(s.home(), &bus.address, user.path());
    assert_eq!(out.status.code(), Some(1));
    let c = check(&v, "database");
    assert_eq!(c["status"], "problem", "{c}");
    assert!(
        c["fix"].as_str().unwrap().contains("backup") || c["fix"].as_str().unwrap().contains("move the file aside"),
        "{c}"
    );
}

#[test]
fn completions_and_the_manual_come_from_the_command_definitions() {
    let run = |args: &[&str]| {
        let out = Command::new(BIN).args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    let bash = run(&["completions", "bash"]);
    assert!(bash.contains("_assent()") && bash.contains("doctor") && bash.contains("--allow-similar"), "{bash}");
    assert!(run(&["completions", "zsh"]).starts_with("#compdef assent"));
    assert!(run(&["completions", "fish"]).contains("complete -c assent"));
    let man = run(&["man"]);
    assert!(man.contains(".TH assent 1") && man.contains(assent_version().as_str()), "{man}");
    let dir = tempfile::tempdir().unwrap();
    run(&["man", "--dir", dir.path().to_str().unwrap()]);
    for page in ["assent.1", "assent-doctor.1", "assent-rule-add.1", "assent-serve.1"] {
        assert!(dir.path().join(page).exists(), "{page}");
    }
    let bad = Command::new(BIN).args(["completions", "tcsh"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(2), "an unknown shell is a usage error");
}

fn assent_version() -> String {
    let out = Command::new(BIN).arg("--version").output().unwrap();
    let v = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(v.starts_with("assent 0.") && v.contains(" (commit "), "{v}");
    v.trim_start_matches("assent ").to_string()
}

/// Runs doctor (as [`doctor`] does): the check `name` is a problem, its detail saying `detail`
/// and its fix `fix`, and doctor fails.
fn a_problem(s: &Server, bus: &str, user: &Path, name: &str, detail: &str, fix: &str) {
    let (out, v) = doctor(s.home(), bus, user);
    assert!(!out.status.success());
    let c = check(&v, name);
    assert_eq!(c["status"], "problem", "{c}");
    assert!(c["detail"].as_str().unwrap().contains(detail), "{c}");
    assert!(c["fix"].as_str().unwrap().contains(fix), "{c}");
}

/// Runs doctor (as [`doctor`] does): the check `name` is ok, its detail saying `detail`, and
/// doctor succeeds.
fn ok(s: &Server, bus: &str, user: &Path, name: &str, detail: &str) {
    let (out, v) = doctor(s.home(), bus, user);
    let c = check(&v, name);
    assert_eq!(c["status"], "ok", "{c}");
    assert!(c["detail"].as_str().unwrap().contains(detail), "{c}");
    assert!(out.status.success(), "{v:#}");
}

/// Gemini CLI runs a call whose hook timed out: a hook given less time than it waits is a
/// problem, named with the timeout to set.
#[tokio::test]
async fn a_gemini_hook_with_too_little_time_is_a_problem() {
    let (bus, _d, s, user) = healthy().await;
    let write = |hook_timeout_ms: u64| {
        std::fs::create_dir_all(user.path().join(".gemini")).unwrap();
        let settings = serde_json::json!({"hooks": {"BeforeTool": [{"matcher": "", "hooks": [
            {"name": "assent", "type": "command", "command": "assent-run hook gemini-cli --timeout 55", "timeout": hook_timeout_ms}
        ]}]}});
        std::fs::write(user.path().join(".gemini/settings.json"), settings.to_string()).unwrap();
    };
    write(30_000);
    let detail = "runs the call when its hook times out";
    a_problem(&s, &bus.address, user.path(), "gemini cli", detail, "58000");
    write(60_000);
    ok(&s, &bus.address, user.path(), "gemini cli", "hook in ~/.gemini/settings.json");
}

/// Copilot CLI too runs a call whose hook timed out (after 30 s unless `timeoutSec` says).
#[tokio::test]
async fn a_copilot_hook_left_at_its_default_timeout_is_a_problem() {
    let (bus, _d, s, user) = healthy().await;
    let write = |timeout: Option<u64>| {
        std::fs::create_dir_all(user.path().join(".copilot/hooks")).unwrap();
        let mut hook = serde_json::json!({"type": "command", "bash": "assent-run hook copilot-cli --timeout 55"});
        if let Some(t) = timeout {
            hook["timeoutSec"] = t.into();
        }
        let hooks = serde_json::json!({"version": 1, "hooks": {"preToolUse": [hook]}});
        std::fs::write(user.path().join(".copilot/hooks/assent.json"), hooks.to_string()).unwrap();
    };
    write(None);
    let fix = "\"timeoutSec\" to at least 58";
    a_problem(&s, &bus.address, user.path(), "copilot cli", "gives it 30 s", fix);
    write(Some(600));
    ok(&s, &bus.address, user.path(), "copilot cli", "hook in ~/.copilot/hooks/assent.json");
}

/// Codex: hooks switched off, and a daemon started without `assent` on its PATH (Codex runs
/// hooks from it, and falls back to its own prompt when they fail), are problems.
#[tokio::test]
async fn a_codex_hook_its_daemon_cannot_run_is_a_problem() {
    let (bus, _d, s, user) = healthy().await;
    let write = |features: &str| {
        std::fs::create_dir_all(user.path().join(".codex")).unwrap();
        let config = format!(
            "{features}\n[[hooks.PermissionRequest]]\nmatcher = \"\"\n\n[[hooks.PermissionRequest.hooks]]\ntype = \"command\"\ncommand = \"assent-run hook codex --timeout 590\"\ntimeout = 600\n"
        );
        std::fs::write(user.path().join(".codex/config.toml"), config).unwrap();
    };
    write("");
    let (_, v) = doctor(s.home(), &bus.address, user.path());
    let c = check(&v, "codex");
    assert_eq!(c["status"], "problem", "{c}");
    assert!(c["fix"].as_str().unwrap().contains("hooks = true"), "{c}");
    write("[features]\nhooks = true\n");
    let (out, v) = doctor(s.home(), &bus.address, user.path());
    assert_eq!(check(&v, "codex")["status"], "ok", "{v:#}");
    assert!(out.status.success());

    // A daemon (as the process table shows it) whose PATH has no `assent-run`.
    let mut daemon = Command::new("bash")
        .args(["-c", "exec -a codex python3 -c 'import time; time.sleep(60)' app-server"])
        .env("PATH", "/usr/bin:/bin")
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let (out, v) = doctor(s.home(), &bus.address, user.path());
    daemon.kill().unwrap();
    let _ = daemon.wait();
    let c = check(&v, "codex");
    assert_eq!(c["status"], "problem", "{c}");
    assert!(c["detail"].as_str().unwrap().contains(&format!("process {}", daemon.id())), "{c}");
    assert!(c["fix"].as_str().unwrap().contains("codex app-server daemon restart"), "{c}");
    assert!(!out.status.success());
}

/// OpenCode: the plugin Assent printed is found, and one whose program moved away is a problem
/// (every call would be refused).
#[tokio::test]
async fn the_opencode_plugin_is_found_and_checked() {
    let plugin = ".config/opencode/plugin/assent.js";
    printed_hook_is_found_and_checked(&["opencode", "--plugin"], plugin, "opencode", "plugin ~/").await;
}

/// Cline: the hook file Assent printed is found, and one whose program moved away is a problem
/// (Cline runs every call whose hook fails).
#[tokio::test]
async fn the_cline_hook_is_found_and_checked() {
    printed_hook_is_found_and_checked(&["cline", "--script"], ".cline/hooks/PreToolUse", "cline", "hook ~/").await;
}

/// What `assent hook HOOK` prints, written to `file` in the user directory: the check `name`
/// finds it (its detail says `shown` and the file), and is a problem once the program it runs
/// moved away.
async fn printed_hook_is_found_and_checked(hook: &[&str], file: &str, name: &str, shown: &str) {
    let (bus, _d, s, user) = healthy().await;
    let path = user.path().join(file);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let out = Command::new(BIN).arg("--home").arg(s.home()).arg("hook").args(hook).output().unwrap();
    let printed = String::from_utf8(out.stdout).unwrap();
    std::fs::write(&path, &printed).unwrap();
    ok(&s, &bus.address, user.path(), name, &format!("{shown}{file}"));
    let moved = printed.replace(Path::new(BIN).parent().unwrap().to_str().unwrap(), "/nonexistent");
    std::fs::write(&path, moved).unwrap();
    let (_, v) = doctor(s.home(), &bus.address, user.path());
    assert_eq!(check(&v, name)["status"], "problem", "{v:#}");
}
