//! The test's view of processes it started: whether one ended in time, and its memory.

use std::process::Child;
use std::time::Duration;

/// Process `pid`'s resident memory now, in KiB (0 where it cannot be read).
pub fn rss_kb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches(" kB").parse().ok())
        .unwrap_or(0)
}

/// Whether `child` ends within `limit`, looked at every 10 ms (a `kill -9` returns before its
/// target is gone, and sooner than that under load).
pub fn ended_within(child: &mut Child, limit: Duration) -> bool {
    let until = std::time::Instant::now() + limit;
    loop {
        if child.try_wait().ok().flatten().is_some() {
            return true;
        }
        if std::time::Instant::now() >= until {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// [`ended_within`] for a test whose runtime must keep serving while it waits (the child calls
/// a server of the test's own, such as a [`crate::harness::Recorder`]): it sleeps on the runtime, not the thread.
pub async fn ends_within(child: &mut Child, limit: Duration) -> bool {
    let until = std::time::Instant::now() + limit;
    loop {
        if child.try_wait().ok().flatten().is_some() {
            return true;
        }
        if std::time::Instant::now() >= until {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
