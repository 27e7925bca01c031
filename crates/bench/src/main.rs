//! `assent-bench`: Assent's benchmarks. Each prints its figures next to the ceiling or target
//! they are compared to, measured in the same run on the same machine.
//!
//! - `ingest`: durable proposals/s and latency with 64 concurrent agents against the real
//!   `assent serve` (release build, a temp home), next to a bare axum endpoint that parses the
//!   same JSON and stores nothing, run as its own process like the server.
//! - `wake`: how soon a decision answers the agent's long-poll wait.
//! - `waits`: 10,000 open waits: the server's memory while they are open, and how soon all are
//!   answered after their decisions.
//! - `preview`: the file preview (read, hash, diff) of 1 MB and 10 MB files with 1% of lines
//!   changed, next to `git diff --no-index` on the same files; and pathological inputs.
//!
//! - `rules`: durable ingest with 1,000 rules next to none, `POST /v1/rules/test` latency, and
//!   32 commands of 4 MiB at once next to inputs of the same size that are not commands.
//! - `hook`: a rule-allowed call through `assent hook claude-code` next to a no-op hook.
//!
//! - `app`: the desktop app next to a hello-world Tauri window: launch time and idle memory.
//!
//! - `team`: the team store on a real PostgreSQL: durable ingest next to SQLite's, a decision
//!   made on one node waking the agent waiting on another, and the first page of the inbox with
//!   1,000,000 team proposals.
//!
//! - `remote`: a decision from a paired phone (a passkey assertion through the remote listener)
//!   to the agent's wait returning, next to the same decision through the owner API.
//!
//! Usage: `assent-bench [all|ingest|wake|waits|preview|rules|hook|app|team|remote]...` (default: all).

mod app;
mod hook;
mod load;
mod preview;
mod remote;
mod rules;
mod server;
mod team;

use std::time::Duration;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("ceiling-server") {
        return server::run_ceiling();
    }
    let want = |name: &str| args.is_empty() || args.iter().any(|a| a == name || a == "all");
    for a in &args {
        if !["all", "ingest", "wake", "waits", "preview", "rules", "hook", "app", "team", "remote"]
            .contains(&a.as_str())
        {
            anyhow::bail!(
                "unknown benchmark {a:?}: use all, ingest, wake, waits, preview, rules, hook, app, team or remote"
            );
        }
    }
    let _ = rustls::crypto::ring::default_provider().install_default();
    if let Err(e) = rlimit::increase_nofile_limit(u64::MAX) {
        eprintln!("cannot raise the open-file limit: {e}");
    }
    println!("Assent benchmarks ({} cores)", std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1));
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    if want("ingest") {
        rt.block_on(load::ingest())?;
    }
    if want("wake") {
        rt.block_on(load::wake())?;
    }
    if want("waits") {
        rt.block_on(load::waits())?;
    }
    if want("preview") {
        preview::run()?;
    }
    if want("rules") {
        rt.block_on(rules::bench())?;
    }
    if want("hook") {
        hook::run()?;
    }
    if want("app") {
        app::run()?;
    }
    if want("team") {
        rt.block_on(team::bench())?;
    }
    if want("remote") {
        rt.block_on(remote::bench())?;
    }
    Ok(())
}

/// Percentile `q` (0..=1) of sorted durations.
pub fn pct(sorted: &[Duration], q: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() as f64 - 1.0) * q).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// The median and the 99th percentile of sorted durations: `p50 1.00 ms  p99 2.00 ms`.
pub fn spread(sorted: &[Duration]) -> String {
    format!("p50 {}  p99 {}", ms(pct(sorted, 0.5)), ms(pct(sorted, 0.99)))
}

/// [`spread`] and the longest: `p50 1.00 ms  p99 2.00 ms  max 3.00 ms`.
pub fn spread_max(sorted: &[Duration]) -> String {
    format!("{}  max {}", spread(sorted), ms(pct(sorted, 1.0)))
}

/// Milliseconds with two decimals.
pub fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

/// "ok" when `good`, else "MISSED".
pub fn verdict(good: bool) -> &'static str {
    if good { "ok" } else { "MISSED" }
}
