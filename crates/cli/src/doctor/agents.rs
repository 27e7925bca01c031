//! Gemini CLI's and GitHub Copilot CLI's wiring: a hook that runs `assent hook gemini-cli` (or
//! `copilot-cli`), given the time it waits. Both run a call whose hook timed out, so a hook given
//! less time than it waits for the person lets calls through unseen.

use super::{Check, on_path, read_json, tilde};
use std::path::{Path, PathBuf};

const NAME: &str = "gemini cli";

/// Gemini CLI's own default for a hook's timeout, in milliseconds.
const DEFAULT_HOOK_TIMEOUT_MS: u64 = 60_000;

/// Copilot CLI's own default for a hook's timeout, in seconds.
const COPILOT_DEFAULT_TIMEOUT_SECS: u64 = 30;

/// The hook's own default wait (`--timeout`), in seconds.
const DEFAULT_WAIT: u64 = 55;

/// What the hook needs beyond its wait: starting, filing, answering.
const MARGIN_MS: u64 = 3_000;

/// One `assent hook gemini-cli` in a settings file.
struct Hook {
    file: PathBuf,
    command: String,
    timeout_ms: u64,
    name: Option<String>,
}

pub(super) fn gemini_cli() -> Check {
    let Some(user) = dirs::home_dir() else { return Check::note(NAME, "no home directory", "set HOME") };
    let base = std::env::var_os("GEMINI_CLI_HOME").map(PathBuf::from).unwrap_or_else(|| user.clone());
    let cwd = std::env::current_dir().unwrap_or_default();
    let user_settings = base.join(".gemini/settings.json");
    let project_settings = cwd.join(".gemini/settings.json");
    let mut hooks = hooks_in(&user_settings);
    // In the home folder itself, the project's settings are the user's.
    let project_settings = (project_settings != user_settings).then_some(project_settings);
    if let Some(p) = &project_settings {
        hooks.extend(hooks_in(p));
    }
    let installed = base.join(".gemini").exists() || on_path("gemini").is_some();
    if hooks.is_empty() {
        return Check::unwired(
            NAME,
            installed,
            "no Assent hook in its settings: its tool calls do not come to Assent",
            "assent connect gemini-cli (adds the BeforeTool hook to ~/.gemini/settings.json; docs/clients.md: \"Gemini CLI\")",
        );
    }
    let found: Vec<String> = hooks.iter().map(|h| format!("hook in {}", tilde(&h.file, &user))).collect();
    for h in &hooks {
        if let Some(c) = missing_program(NAME, "Gemini CLI", h, &found) {
            return c;
        }
        if let Some(c) = too_little_time(NAME, "Gemini CLI", h, &user, "\"timeout\" (milliseconds)", 1) {
            return c;
        }
        if let Some(why) = switched_off(&h.file, h.name.as_deref()) {
            return Check::problem(
                NAME,
                format!("the hook in {} is {why}", tilde(&h.file, &user)),
                "remove that setting",
            );
        }
    }
    if hooks.iter().all(|h| Some(&h.file) == project_settings.as_ref()) {
        return Check::note(
            NAME,
            format!(
                "{}: a project's hooks run only in a folder Gemini CLI trusts (and never with --skip-trust)",
                found.join(", ")
            ),
            "put the hook in ~/.gemini/settings.json",
        );
    }
    Check::ok(NAME, format!("{}; {}", found.join(", "), when_killed("Gemini CLI")))
}

/// What a client does with a call whose hook program is not there, as measured with the real
/// clients (tests/blackbox/agents.rs, `a_missing_hook_program_does_what_doctor_says`): Gemini
/// CLI and Copilot CLI refuse it, Cline runs it.
fn when_missing(client: &str, runs: bool) -> String {
    if runs {
        format!("{client} runs every call whose hook fails")
    } else {
        format!("{client} refuses every call while it is missing")
    }
}

/// What the OK line adds for a client that runs a call whose hook was killed outright (measured
/// as above, `its_hook_killed_withdraws_the_question_at_once`): Assent withdraws the question at
/// once, but the call has run.
fn when_killed(client: &str) -> String {
    format!("{client} runs a call whose hook is killed outright (Assent then withdraws its question at once)")
}

/// A problem when the program `h` runs is not found.
fn missing_program(name: &'static str, client: &str, h: &Hook, found: &[String]) -> Option<Check> {
    let program = h.command.split_whitespace().next().unwrap_or("").trim_matches(['\'', '"']);
    let exists = if program.contains('/') { Path::new(program).exists() } else { on_path(program).is_some() };
    (!exists).then(|| {
        Check::problem(
            name,
            format!("{} runs `{program}`, which is not on the PATH: {}", found.join(", "), when_missing(client, false)),
            format!("assent connect {} writes this assent's full path in the settings", name.replace(' ', "-")),
        )
    })
}

/// A problem when `h` waits longer than its client gives it (the client's `setting`, counted
/// in units of `unit_ms`: 1 for milliseconds, 1000 for seconds).
fn too_little_time(
    name: &'static str,
    client: &str,
    h: &Hook,
    user: &Path,
    setting: &str,
    unit_ms: u64,
) -> Option<Check> {
    let wait = wait_of(&h.command);
    let needed = wait * 1000 + MARGIN_MS;
    (needed > h.timeout_ms).then(|| {
        Check::problem(
            name,
            format!(
                "the hook in {} waits up to {wait} s for you, but {client} gives it {} s and runs the call when its hook times out",
                tilde(&h.file, user),
                h.timeout_ms / 1000
            ),
            format!("set the hook's {setting} to at least {}, or a lower --timeout", needed.div_ceil(unit_ms)),
        )
    })
}

/// The `assent hook gemini-cli` hooks of the BeforeTool event in `file`.
fn hooks_in(file: &Path) -> Vec<Hook> {
    let Some(v) = read_json(file) else { return Vec::new() };
    let groups = v["hooks"]["BeforeTool"].as_array().cloned().unwrap_or_default();
    groups
        .iter()
        .filter_map(|g| g["hooks"].as_array())
        .flatten()
        .filter_map(|h| {
            let command = h["command"].as_str()?;
            (command.contains("assent") && command.contains("hook gemini-cli")).then(|| Hook {
                file: file.to_path_buf(),
                command: command.to_string(),
                timeout_ms: h["timeout"].as_u64().unwrap_or(DEFAULT_HOOK_TIMEOUT_MS),
                name: h["name"].as_str().map(str::to_string),
            })
        })
        .collect()
}

/// The hook's `--timeout`, in seconds.
fn wait_of(command: &str) -> u64 {
    let words: Vec<&str> = command.split_whitespace().collect();
    words
        .iter()
        .enumerate()
        .find_map(|(i, w)| match w.strip_prefix("--timeout") {
            Some("") => words.get(i + 1).and_then(|n| n.parse().ok()),
            Some(rest) => rest.strip_prefix('=').and_then(|n| n.parse().ok()),
            None => None,
        })
        .unwrap_or(DEFAULT_WAIT)
}

/// Why the hooks in `file` do not run, if a setting there turns them off.
fn switched_off(file: &Path, name: Option<&str>) -> Option<String> {
    let v = read_json(file)?;
    let config = &v["hooksConfig"];
    if config["enabled"] == false {
        return Some("switched off (\"hooksConfig\": {\"enabled\": false})".into());
    }
    let disabled = config["disabled"].as_array()?;
    let name = name?;
    disabled
        .iter()
        .any(|d| d == name)
        .then(|| format!("switched off by name (\"hooksConfig\": {{\"disabled\": [\"{name}\"]}})"))
}

pub(super) fn copilot_cli() -> Check {
    const NAME: &str = "copilot cli";
    let Some(user) = dirs::home_dir() else { return Check::note(NAME, "no home directory", "set HOME") };
    let home = std::env::var_os("COPILOT_HOME").map(PathBuf::from).unwrap_or_else(|| user.join(".copilot"));
    let mut files: Vec<PathBuf> = std::fs::read_dir(home.join("hooks"))
        .map(|d| d.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "json")).collect())
        .unwrap_or_default();
    files.sort();
    files.extend([home.join("settings.json"), home.join("config.json")]);
    let hooks: Vec<Hook> = files.iter().flat_map(|f| copilot_hooks_in(f)).collect();
    if hooks.is_empty() {
        return Check::unwired(
            NAME,
            home.exists() || on_path("copilot").is_some(),
            "no Assent hook in its hooks: its tool calls do not come to Assent",
            "assent connect copilot-cli (writes ~/.copilot/hooks/assent.json; docs/clients.md: \"GitHub Copilot CLI\")",
        );
    }
    let found: Vec<String> = hooks.iter().map(|h| format!("hook in {}", tilde(&h.file, &user))).collect();
    for h in &hooks {
        if let Some(c) = missing_program(NAME, "Copilot CLI", h, &found) {
            return c;
        }
        if let Some(c) = too_little_time(NAME, "Copilot CLI", h, &user, "\"timeoutSec\"", 1000) {
            return c;
        }
        if read_json(&h.file).is_some_and(|v| v["disableAllHooks"] == true) {
            let detail = format!("hooks are switched off in {}", tilde(&h.file, &user));
            return Check::problem(NAME, detail, "remove \"disableAllHooks\"");
        }
    }
    Check::ok(NAME, found.join(", "))
}

/// The `assent hook copilot-cli` hooks of the preToolUse event in `file` (each an entry, or a
/// group of them under a matcher).
fn copilot_hooks_in(file: &Path) -> Vec<Hook> {
    let Some(v) = read_json(file) else { return Vec::new() };
    let entries = v["hooks"]["preToolUse"].as_array().cloned().unwrap_or_default();
    let flat = entries.iter().flat_map(|e| match e["hooks"].as_array() {
        Some(group) => group.iter().collect::<Vec<_>>(),
        None => vec![e],
    });
    flat.filter_map(|h| {
        let command = h["bash"].as_str().or_else(|| h["command"].as_str())?;
        let secs = h["timeoutSec"].as_u64().or_else(|| h["timeout"].as_u64()).unwrap_or(COPILOT_DEFAULT_TIMEOUT_SECS);
        (command.contains("assent") && command.contains("hook copilot-cli")).then(|| Hook {
            file: file.to_path_buf(),
            command: command.to_string(),
            timeout_ms: secs * 1000,
            name: None,
        })
    })
    .collect()
}

pub(super) fn opencode() -> Check {
    const NAME: &str = "opencode";
    let Some(user) = dirs::home_dir() else { return Check::note(NAME, "no home directory", "set HOME") };
    let config = std::env::var_os("XDG_CONFIG_HOME").map(PathBuf::from).unwrap_or_else(|| user.join(".config"));
    let config = config.join("opencode");
    let plugins = ["plugin", "plugins"].map(|d| config.join(d));
    let Some((plugin, program)) = printed(
        &plugins,
        |_| true,
        "Assent's plugin for OpenCode",
        |text| {
            // The program the plugin runs: the first word of its command line.
            let argv = text.lines().find_map(|l| l.trim().strip_prefix("const ARGV = "))?;
            serde_json::from_str::<Vec<String>>(argv).ok()?.into_iter().next()
        },
    ) else {
        return Check::unwired(
            NAME,
            config.exists() || on_path("opencode").is_some(),
            "no Assent plugin in its plugins: its tool calls do not come to Assent",
            "assent connect opencode (writes ~/.config/opencode/plugin/assent.js; docs/clients.md: \"OpenCode\")",
        );
    };
    match program {
        Some(p) if Path::new(&p).is_file() => Check::ok(NAME, format!("plugin {}", tilde(&plugin, &user))),
        _ => Check::problem(
            NAME,
            format!(
                "the plugin {} runs a program that is not there: {}",
                tilde(&plugin, &user),
                when_missing("OpenCode", false)
            ),
            "write it again with this assent's path: assent connect opencode",
        ),
    }
}

pub(super) fn cline() -> Check {
    const NAME: &str = "cline";
    let Some(user) = dirs::home_dir() else { return Check::note(NAME, "no home directory", "set HOME") };
    let dir = std::env::var_os("CLINE_DIR").map(PathBuf::from).unwrap_or_else(|| user.join(".cline"));
    // Cline runs a file named for the event, with or without an extension, in either folder.
    let folders = [dir.join("hooks"), user.join("Documents/Cline/Hooks")];
    let event = |p: &Path| p.file_stem().is_some_and(|n| n.eq_ignore_ascii_case("PreToolUse"));
    let Some((hook, program)) = printed(&folders, event, "hook cline", |text| {
        // The program the hook file runs: the first word after `exec`.
        let exec = text.lines().find_map(|l| l.trim().strip_prefix("exec "))?;
        shlex::split(exec)?.into_iter().next()
    }) else {
        return Check::unwired(
            NAME,
            dir.exists() || on_path("cline").is_some(),
            "no Assent hook in its hooks: its tool calls do not come to Assent",
            "assent connect cline (writes ~/.cline/hooks/PreToolUse; docs/clients.md: \"Cline\")",
        );
    };
    match program {
        Some(p) if Path::new(&p).is_file() || (!p.contains('/') && on_path(&p).is_some()) => {
            Check::ok(NAME, format!("hook {}; {}", tilde(&hook, &user), when_killed("Cline")))
        }
        _ => Check::problem(
            NAME,
            format!(
                "the hook {} runs a program that is not there: {}",
                tilde(&hook, &user),
                when_missing("Cline", true)
            ),
            "write it again with this assent's path: assent connect cline",
        ),
    }
}

/// A file Assent printed for a client (a plugin, a hook script): the first in `folders` that
/// `named` takes and that holds `marker`, and the program it runs, as `program` reads it.
fn printed(
    folders: &[PathBuf],
    named: impl Fn(&Path) -> bool,
    marker: &str,
    program: impl Fn(&str) -> Option<String>,
) -> Option<(PathBuf, Option<String>)> {
    folders
        .iter()
        .filter_map(|d| std::fs::read_dir(d).ok())
        .flat_map(|d| d.flatten().map(|e| e.path()))
        .filter(|p| named(p))
        .find_map(|p| std::fs::read_to_string(&p).ok().filter(|t| t.contains(marker)).map(|t| (p, program(&t))))
}

#[cfg(test)]
mod tests {
    use super::wait_of;

    #[test]
    fn the_wait_is_read_from_the_command() {
        assert_eq!(wait_of("assent-run hook gemini-cli --timeout 590"), 590);
        assert_eq!(wait_of("'/usr/bin/assent-run' hook gemini-cli --timeout=30"), 30);
        assert_eq!(wait_of("assent hook gemini-cli"), 55);
        assert_eq!(wait_of("assent hook gemini-cli --timeout x"), 55);
    }
}
