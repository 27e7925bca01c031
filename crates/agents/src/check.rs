//! A line of `assent doctor`, and what the clients' checks share: reading their settings
//! (JSON with comments), finding the program a hook runs, the time a client gives its hook.

use serde::Serialize;
use serde_json::Value;
use std::path::{Path, PathBuf};

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
    /// In order.
    pub fn ok(name: &'static str, detail: impl Into<String>) -> Self {
        Check { name, status: Status::Ok, detail: detail.into(), fix: None }
    }
    /// Worth knowing.
    pub fn note(name: &'static str, detail: impl Into<String>, fix: impl Into<String>) -> Self {
        Check { name, status: Status::Note, detail: detail.into(), fix: Some(fix.into()) }
    }
    /// Broken.
    pub fn problem(name: &'static str, detail: impl Into<String>, fix: impl Into<String>) -> Self {
        Check { name, status: Status::Problem, detail: detail.into(), fix: Some(fix.into()) }
    }
    /// A client found no Assent in: a note with how to wire it where it is installed, else
    /// nothing to do.
    pub fn unwired(name: &'static str, installed: bool, detail: &str, fix: &str) -> Self {
        if installed {
            Check::note(name, format!("installed, but {detail}"), fix)
        } else {
            Check::ok(name, "not installed here (nothing to wire)")
        }
    }
}

/// The most of a settings file read (a project's may be anything).
pub const MAX_SETTINGS_BYTES: u64 = 1 << 20;

/// A settings file as JSON, read as the clients read it: through a link, and as JSONC (settings
/// files may hold comments and trailing commas: Gemini CLI's do; plain JSON is JSONC too). The
/// one reader of settings, for `assent doctor` and for what a project's own settings say to its
/// client (`assent_core::kinds::project_hooks`): a file the client reads is never one Assent
/// cannot. At most [`MAX_SETTINGS_BYTES`], of a regular file only: a FIFO or a device put in
/// its place is not read, and opening it never blocks.
pub fn read_json(file: &Path) -> Option<Value> {
    let text = read_small(file)?;
    // The parser's syntax tree alone (no comments or tokens kept): what a read needs, where
    // `assent connect`'s edits, which keep comments, use the concrete tree.
    let options = jsonc_parser::CollectOptions::default();
    jsonc_parser::parse_to_ast(&text, &options, &jsonc_parser::ParseOptions::default()).ok()?.value.map(Into::into)
}

/// The text of the regular file `file` (a link followed), when it is at most
/// [`MAX_SETTINGS_BYTES`]; checked on what was opened, so a file swapped after a look is not
/// read instead.
fn read_small(file: &Path) -> Option<String> {
    use std::io::Read;
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // A FIFO opened for reading waits for a writer unless non-blocking; a regular file
        // reads the same either way.
        opts.custom_flags(libc::O_NONBLOCK);
    }
    let f = opts.open(file).ok()?;
    let m = f.metadata().ok()?;
    if !m.is_file() || m.len() > MAX_SETTINGS_BYTES {
        return None;
    }
    let mut text = String::new();
    f.take(MAX_SETTINGS_BYTES + 1).read_to_string(&mut text).ok()?;
    (text.len() as u64 <= MAX_SETTINGS_BYTES).then_some(text)
}

/// `program` in the folders of the `PATH`.
pub fn on_path(program: &str) -> Option<PathBuf> {
    if program.is_empty() {
        return None;
    }
    std::env::split_paths(&std::env::var_os("PATH")?).map(|d| d.join(program)).find(|p| p.is_file())
}

/// `p` as a person reads it: under the home folder `user` as `~/...`.
pub fn tilde(p: &Path, user: &Path) -> String {
    match p.strip_prefix(user) {
        Ok(rest) => format!("~/{}", rest.display()),
        Err(_) => p.display().to_string(),
    }
}

/// Every command of a Claude Code / Gemini CLI `hooks` table
/// (`{"Event": [{"hooks": [{"command"}]}]}`), each with its event (`PreToolUse`).
pub fn hook_table(v: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (event, groups) in v["hooks"].as_object().into_iter().flatten().filter_map(|(e, g)| Some((e, g.as_array()?))) {
        for hook in groups.iter().filter_map(|g| g["hooks"].as_array()).flatten() {
            if let Some(cmd) = hook["command"].as_str() {
                out.push((event.clone(), cmd.to_string()));
            }
        }
    }
    out
}

/// What a client does with a call whose hook program is not there, as measured with the real
/// clients (tests/blackbox/agents.rs, `a_missing_hook_program_does_what_doctor_says`).
pub(crate) fn when_missing(client: &str, runs: bool) -> String {
    if runs {
        format!("{client} runs every call whose hook fails")
    } else {
        format!("{client} refuses every call while it is missing")
    }
}

/// What the OK line adds for a client that runs a call whose hook was killed outright (measured
/// as above, `its_hook_killed_withdraws_the_question_at_once`): Assent withdraws the question at
/// once, but the call has run.
pub(crate) fn when_killed(client: &str) -> String {
    format!("{client} runs a call whose hook is killed outright (Assent then withdraws its question at once)")
}

/// The hook's own default wait (`--timeout`), in seconds.
pub(crate) const DEFAULT_WAIT: u64 = 55;

/// What the hook needs beyond its wait: starting, filing, answering.
const MARGIN_MS: u64 = 3_000;

/// One `assent hook NAME` in a client's settings.
pub(crate) struct Hook {
    pub(crate) file: PathBuf,
    pub(crate) command: String,
    pub(crate) timeout_ms: u64,
    pub(crate) name: Option<String>,
}

/// A problem when the program `h` runs is not found.
pub(crate) fn missing_program(name: &'static str, client: &str, h: &Hook, found: &[String]) -> Option<Check> {
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
pub(crate) fn too_little_time(
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

/// The hook's `--timeout`, in seconds.
pub(crate) fn wait_of(command: &str) -> u64 {
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

/// A file Assent printed for a client (a plugin, a hook script): the first in `folders` that
/// `named` takes and that holds `marker`, and the program it runs, as `program` reads it.
pub(crate) fn printed(
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

/// What the model and the person read when nobody decided a call: why, and that the call goes
/// back to the client's own permission settings, or (a client with none to go back to) that it
/// is not run.
pub fn handed_back(hands_back: bool, why: &str) -> String {
    if !hands_back {
        return format!("{why}; not run");
    }
    format!(
        "{why}; the call goes back to the agent's own permission settings (a prompt in a terminal; a headless run denies it)"
    )
}

#[cfg(test)]
mod tests {
    use super::{MAX_SETTINGS_BYTES, read_json, wait_of};

    #[test]
    fn settings_are_jsonc_and_a_large_file_is_not_read() {
        let dir = std::env::temp_dir().join(format!("assent-agents-settings-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a folder");
        let small = dir.join("small.json");
        std::fs::write(&small, "{\"a\": 1, // one\n}").expect("written");
        assert_eq!(read_json(&small), Some(serde_json::json!({"a": 1})));
        let large = dir.join("large.json");
        let pad = " ".repeat(MAX_SETTINGS_BYTES as usize);
        std::fs::write(&large, format!("{{\"a\": 1}}{pad}")).expect("written");
        assert_eq!(read_json(&large), None, "over the bound: not read");
        assert_eq!(read_json(&dir), None, "a folder");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_wait_is_read_from_the_command() {
        assert_eq!(wait_of("assent-run hook gemini-cli --timeout 590"), 590);
        assert_eq!(wait_of("'/usr/bin/assent-run' hook gemini-cli --timeout=30"), 30);
        assert_eq!(wait_of("assent hook gemini-cli"), 55);
        assert_eq!(wait_of("assent hook gemini-cli --timeout x"), 55);
    }
}
