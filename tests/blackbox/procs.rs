//! The test's view of processes it started: whether one ended in time, and its memory; and the
//! `assent` a person runs as themselves.

use std::process::Child;
use std::time::{Duration, Instant};

/// Process `pid`'s resident memory now, in KiB (0 where it cannot be read).
pub fn rss_kb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches(" kB").parse().ok())
        .unwrap_or(0)
}

/// How often a process is looked at while waiting for it to end.
const LOOK: Duration = Duration::from_millis(10);

/// Whether `child` has ended (yes), or `until` has passed while it runs (no); none: look again.
fn ended_by(child: &mut Child, until: Instant) -> Option<bool> {
    if child.try_wait().ok().flatten().is_some() {
        return Some(true);
    }
    (Instant::now() >= until).then_some(false)
}

/// Whether `child` ends within `limit`, looked at every 10 ms (a `kill -9` returns before its
/// target is gone, and sooner than that under load).
pub fn ended_within(child: &mut Child, limit: Duration) -> bool {
    let until = Instant::now() + limit;
    loop {
        if let Some(ended) = ended_by(child, until) {
            return ended;
        }
        std::thread::sleep(LOOK);
    }
}

/// [`ended_within`] for a test whose runtime must keep serving while it waits (the child calls
/// a server of the test's own, such as a [`crate::harness::Recorder`]): it sleeps on the
/// runtime, not the thread.
pub async fn ends_within(child: &mut Child, limit: Duration) -> bool {
    let until = Instant::now() + limit;
    loop {
        if let Some(ended) = ended_by(child, until) {
            return ended;
        }
        tokio::time::sleep(LOOK).await;
    }
}

/// The processes whose command line (its words joined by spaces) `wanted` accepts.
pub fn matching(wanted: impl Fn(&str) -> bool) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let cmd = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        if pid != std::process::id() && wanted(&String::from_utf8_lossy(&cmd).replace('\0', " ")) {
            out.push(pid);
        }
    }
    out
}

/// `assent --home HOME` as the person whose home folder is `user` runs it in `cwd`: the clients'
/// settings where they keep them (none of this machine's `CLAUDE_CONFIG_DIR`, `CODEX_HOME`, ...),
/// `assent` first on the PATH. The arguments are the caller's.
pub fn as_user(home: &std::path::Path, user: &std::path::Path, cwd: &std::path::Path) -> std::process::Command {
    let mut c = std::process::Command::new(crate::harness::BIN);
    c.arg("--home").arg(home).env("HOME", user);
    for var in ["CLAUDE_CONFIG_DIR", "XDG_CONFIG_HOME", "CODEX_HOME", "COPILOT_HOME", "GEMINI_CLI_HOME", "CLINE_DIR"] {
        c.env_remove(var);
    }
    let bin =
        std::path::Path::new(crate::harness::BIN).parent().unwrap_or(std::path::Path::new("/")).display().to_string();
    c.env("PATH", format!("{bin}:/usr/bin:/bin")).current_dir(cwd).stdin(std::process::Stdio::null());
    c
}
