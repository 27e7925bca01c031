//! Whether the client that started a hook is still there: a client killed while its call waits
//! leaves no question behind.

/// The client that started the hook, as it was when the hook started: the hook's parent and
/// (a client that runs its hooks through a shell, which outlives it) the parent's parent, each
/// with its start time (so a reused id is not taken for it). Taken before the call is filed: a
/// client killed between the filing and the wait must not leave a watch on whoever adopted the
/// hook.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Watch {
    parent: u32,
    watched: Vec<(u32, String)>,
}

use crate::exits::Exits;
use std::time::Duration;

/// How `assent-run` hands its [`Watch`] to the whole `assent` it executes (the same process:
/// `pid;parent;pid:start;...`). A value for another process is ignored.
pub const WATCH_VAR: &str = "ASSENT_HOOK_WATCH";

impl Watch {
    /// The watch `assent-run` took for this process, or else one taken now.
    pub fn start() -> Self {
        std::env::var(WATCH_VAR).ok().and_then(|v| Self::parse(&v)).unwrap_or_else(Self::here)
    }

    /// The client as the system has it now; nothing to watch where there is no process table.
    pub fn here() -> Self {
        let Some(parent) = parent_id() else { return Self::default() };
        let mut watched = Vec::new();
        if let Some(p) = crate::procs::process(parent) {
            watched.push((parent, p.start));
            if let Some(g) = crate::procs::process(p.parent).filter(|_| p.parent > 1) {
                watched.push((p.parent, g.start));
            }
        }
        Self { parent, watched }
    }

    /// The value of [`WATCH_VAR`] for this process.
    pub fn to_var(&self) -> String {
        let mut v = format!("{};{}", std::process::id(), self.parent);
        for (pid, start) in &self.watched {
            v.push_str(&format!(";{pid}:{start}"));
        }
        v
    }

    /// The watch in `v`, when it was taken for this process: on Unix by this very process
    /// (`assent-run` becomes the whole `assent`), on Windows by its parent (`assent-run` starts
    /// it and waits).
    fn parse(v: &str) -> Option<Self> {
        let mut parts = v.split(';');
        let taker = if cfg!(windows) { parent_id()? } else { std::process::id() };
        if parts.next()?.parse::<u32>().ok()? != taker {
            return None;
        }
        let parent = parts.next()?.parse().ok()?;
        let watched = parts
            .map(|w| w.split_once(':').and_then(|(pid, start)| Some((pid.parse().ok()?, start.to_string()))))
            .collect::<Option<Vec<_>>>()?;
        Some(Self { parent, watched })
    }

    /// Whether the client is gone: the hook was handed to another parent, or a watched process
    /// exited (never, where there is no process table: a wait then ends by its own bound).
    pub fn is_gone(&self) -> bool {
        self.adopted()
            || self.watched.iter().any(|(pid, start)| crate::procs::process(*pid).is_none_or(|p| p.start != *start))
    }

    /// Whether the hook was handed to another parent: on Unix, its client died. (On Windows a
    /// process keeps its parent's id when the parent ends: only the watched processes say it.)
    fn adopted(&self) -> bool {
        cfg!(unix) && parent_id() != Some(self.parent)
    }

    /// The watched processes' exits as the system reports them, where it does (macOS, Windows).
    pub fn exits(&self) -> Option<Exits> {
        Exits::watch(&self.watched)
    }

    /// Waits up to `timeout` on the system's report of the watched processes' exits (`exits`,
    /// from [`Watch::exits`]); whether the client is gone by then.
    pub fn wait_gone(&self, exits: &Exits, timeout: Duration) -> bool {
        self.adopted() || exits.wait(timeout) || self.adopted()
    }
}

/// This process's parent; none where there is no process table.
fn parent_id() -> Option<u32> {
    #[cfg(unix)]
    {
        Some(std::os::unix::process::parent_id())
    }
    #[cfg(not(unix))]
    {
        crate::procs::process(std::process::id()).map(|p| p.parent)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_watch_passes_to_the_same_process_only() {
        let w = Watch { parent: 41, watched: vec![(41, "9001".into()), (7, "12".into())] };
        assert_eq!(Watch::parse(&w.to_var()), Some(w));
        let other = format!("{};41;41:9001", std::process::id() + 1);
        assert_eq!(Watch::parse(&other), None, "a watch taken for another process");
        assert_eq!(Watch::parse(&format!("{};41;41", std::process::id())), None, "no start time");
        assert_eq!(Watch::parse("garbage"), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_watched_process_that_exits_is_gone() {
        let mut child = std::process::Command::new("sleep").arg("30").spawn().expect("sleep");
        let start = crate::procs::process(child.id()).expect("in the process table").start;
        let w = Watch { parent: std::os::unix::process::parent_id(), watched: vec![(child.id(), start)] };
        assert!(!w.is_gone(), "the client is still there");
        child.kill().expect("kill");
        child.wait().expect("reaped");
        let since = std::time::Instant::now();
        while !w.is_gone() {
            assert!(since.elapsed() < Duration::from_secs(5), "the client is seen gone once it exits");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}
