//! OpenAI Codex: a `PermissionRequest` hook in ~/.codex/config.toml (Claude Code's contract for
//! that event). Codex refuses an answer that changes the call, so an approval with edits is
//! answered as a denial that tells the model the edited call to run instead (which comes back
//! as a new request), and it cannot run a call rewritten to a box. Codex 0.171 runs hooks from a
//! background daemon that keeps the environment of the `codex` that started it: a program put on
//! the PATH afterwards is not on the daemon's, every hook then fails, and Codex falls back to its
//! own prompt, silently; its check looks at the daemon's PATH.

use crate::agent::{Agent, Answer, Call, Facts, Format, Places, Rewrite, Wiring, command_text};
use crate::check::{Check, on_path};
use crate::claude_code::{READ_ONLY, claude_shape, read_claude_event};
use serde_json::{Value, json};
use std::path::Path;

/// Codex.
pub(crate) struct Codex;

const NAME: &str = "codex";

/// Assent's note on a call that came through Codex.
pub const NOTE: &str = "Codex cannot run an edited call: if you edit this one, Assent tells Codex your edit \
as a denial with the edited call, and the model may run that, which comes back here to approve.";

/// What OpenAI Codex says of itself.
const FACTS: Facts = Facts {
    note: Some(NOTE),
    runs_rewritten: false,
    ..Facts::new(
        "codex",
        "OpenAI Codex",
        "Codex's permission hook",
        "OpenAI Codex PermissionRequest hooks (an approval with edits is answered as a denial naming the edited call)",
        &READ_ONLY,
    )
};

impl Agent for Codex {
    fn facts(&self) -> &'static Facts {
        &FACTS
    }

    fn read(&self, ev: Value) -> Result<Call, String> {
        let call = read_claude_event(ev)?;
        if call.event != "PermissionRequest" {
            return Err("assent hook codex answers PermissionRequest events (Codex's only permission hook)".into());
        }
        Ok(call)
    }

    fn answer(&self, call: &Call, answer: &Answer, rewrite: &Rewrite) -> Value {
        match answer {
            // Codex cannot run a rewritten call (and never says it can confine): it asks.
            Answer::Boxed { proposal, .. } => json!({ "systemMessage":
                format!("Assent allowed {proposal} only confined, which Codex cannot run; it asks you instead") }),
            // Codex fails closed on an answer that changes the call: the edit goes back as words.
            Answer::Allow(Some(edited)) => {
                let call = edited.get("command").and_then(command_text).unwrap_or_else(|| edited.to_string());
                json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "deny",
                    "message": format!("The person approved this only as edited in Assent. Run this instead: {call}")}}})
            }
            _ => claude_shape(call.event, answer, rewrite),
        }
    }

    fn wiring(&self, places: &Places, project: bool) -> Result<Wiring, String> {
        if project {
            return Err("Codex reads its hooks from ~/.codex/config.toml alone: leave out --project".into());
        }
        Ok(Wiring {
            file: places.dir("CODEX_HOME", ".codex").join("config.toml"),
            format: Format::CodexToml,
            what: "the PermissionRequest hook (trust it when Codex asks)",
        })
    }

    fn check(&self, places: &Places) -> Check {
        check(places)
    }
}

fn check(places: &Places) -> Check {
    let home = places.dir("CODEX_HOME", ".codex");
    let file = home.join("config.toml");
    let config = std::fs::read_to_string(&file).ok().and_then(|t| t.parse::<toml::Table>().ok()).unwrap_or_default();
    let commands = hook_commands(&config);
    let shown = places.tilde(&file);
    if commands.is_empty() {
        return Check::unwired(
            NAME,
            home.exists() || on_path("codex").is_some(),
            "no Assent hook in its config: what it asks about does not come to Assent",
            "assent connect codex (adds the PermissionRequest hook to ~/.codex/config.toml; docs/clients.md: \"OpenAI Codex\")",
        );
    }
    let features = config.get("features").and_then(toml::Value::as_table);
    let on = |name: &str| features.and_then(|f| f.get(name)).and_then(toml::Value::as_bool) == Some(true);
    if !on("hooks") && !on("codex_hooks") {
        return Check::problem(
            NAME,
            format!("a hook in {shown}, but hooks are switched off: Codex never runs it"),
            format!("set `hooks = true` under [features] in {shown}"),
        );
    }
    for command in &commands {
        let program = program_of(command);
        if !found(&program, std::env::var_os("PATH").as_deref()) {
            return Check::problem(
                NAME,
                format!("the hook in {shown} runs `{program}`, which is not on the PATH"),
                "install the `assent` command or write its full path in the hook",
            );
        }
        for (pid, path) in daemons() {
            if !found(&program, path.as_deref()) {
                return Check::problem(
                    NAME,
                    format!(
                        "Codex's app-server daemon (process {pid}) started without `{program}` on its PATH: every hook fails and Codex asks you itself"
                    ),
                    "restart the daemon from a shell that finds `assent` (`codex app-server daemon restart`), or write the hook's full path",
                );
            }
        }
    }
    Check::ok(NAME, format!("hook in {shown}"))
}

/// The commands of the `[[hooks.PermissionRequest]]` hooks that run `assent hook codex`.
fn hook_commands(config: &toml::Table) -> Vec<String> {
    let groups = config.get("hooks").and_then(|h| h.get("PermissionRequest")).and_then(toml::Value::as_array);
    groups
        .into_iter()
        .flatten()
        .filter_map(|g| g.get("hooks").and_then(toml::Value::as_array))
        .flatten()
        .filter_map(|h| h.get("command").and_then(toml::Value::as_str))
        .filter(|c| c.contains("assent") && c.contains("hook codex"))
        .map(str::to_string)
        .collect()
}

/// The program a hook's command runs, unquoted.
fn program_of(command: &str) -> String {
    shlex::split(command).and_then(|w| w.into_iter().next()).unwrap_or_default()
}

/// Whether `program` is found: as a path, or in the folders of `path`.
fn found(program: &str, path: Option<&std::ffi::OsStr>) -> bool {
    if program.contains('/') {
        return Path::new(program).is_file();
    }
    path.is_some_and(|p| std::env::split_paths(p).any(|d| d.join(program).is_file()))
}

/// Codex's app-server daemons running here, each with the PATH it runs hooks with (Linux: where
/// the process table can be read).
#[cfg(not(target_os = "linux"))]
fn daemons() -> Vec<(u32, Option<std::ffi::OsString>)> {
    Vec::new()
}

/// Codex's app-server daemons running here, each with the PATH it runs hooks with.
#[cfg(target_os = "linux")]
fn daemons() -> Vec<(u32, Option<std::ffi::OsString>)> {
    let Ok(procs) = std::fs::read_dir("/proc") else { return Vec::new() };
    let mut out = Vec::new();
    for pid in procs.flatten().filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok()) {
        let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else { continue };
        let words: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
        let is_codex = words.first().is_some_and(|w| String::from_utf8_lossy(w).contains("codex"));
        if !is_codex || !words.iter().any(|w| *w == b"app-server" || w.ends_with(b"app-server daemon")) {
            continue;
        }
        let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else { continue };
        let path = environ.split(|b| *b == 0).find_map(|v| v.strip_prefix(b"PATH=")).map(|p| {
            use std::os::unix::ffi::OsStrExt;
            std::ffi::OsStr::from_bytes(p).to_os_string()
        });
        out.push((pid, path));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hooks_are_read_from_the_config() {
        let config: toml::Table = r#"
[features]
hooks = true

[[hooks.PermissionRequest]]
matcher = ""

[[hooks.PermissionRequest.hooks]]
type = "command"
command = "'/opt/my tools/assent-run' hook codex --timeout 590"
"#
        .parse()
        .expect("toml");
        let commands = hook_commands(&config);
        assert_eq!(commands.len(), 1);
        assert_eq!(program_of(&commands[0]), "/opt/my tools/assent-run");
        assert!(found("sh", Some(std::ffi::OsStr::new("/usr/bin:/bin"))));
        assert!(!found("sh", Some(std::ffi::OsStr::new("/nonexistent"))));
        assert!(!found("sh", None));
    }
}
