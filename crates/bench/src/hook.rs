//! The hook's own cost: a rule-allowed Bash call through `assent hook claude-code` (a process
//! per call, as Claude Code runs it: the event on standard input, the answer on standard output),
//! next to a hook that does nothing but read its input and answer (`cat`), in the same run.

use crate::server;
use crate::{ms, pct, verdict};
use anyhow::{Context, Result, bail};
use serde_json::json;
use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const CALLS: usize = 200;
const WARMUP: usize = 20;
const ROUNDS: usize = 3;
/// The target: at most this much above the no-op hook at the median.
const ABOVE: Duration = Duration::from_millis(5);

/// Runs `program args` once per call with the event on its input; the latencies, sorted.
fn calls(program: &std::path::Path, args: &[&str], cwd: &str, check: bool) -> Result<Vec<Duration>> {
    let mut lat = Vec::with_capacity(CALLS);
    for i in 0..CALLS + WARMUP {
        let event = json!({
            "session_id": "bench", "transcript_path": "/dev/null", "cwd": cwd, "permission_mode": "default",
            "hook_event_name": "PreToolUse", "tool_name": "Bash",
            "tool_input": {"command": "git status --short", "description": "Show the changes"},
            "tool_use_id": format!("toolu_bench_{i}_{}", std::process::id()),
        });
        let t = Instant::now();
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        child.stdin.take().context("stdin")?.write_all(event.to_string().as_bytes())?;
        let out = child.wait_with_output()?;
        let took = t.elapsed();
        if check && !String::from_utf8_lossy(&out.stdout).contains("\"allow\"") {
            bail!("the hook did not allow the call: {}", String::from_utf8_lossy(&out.stdout));
        }
        if i >= WARMUP {
            lat.push(took);
        }
    }
    lat.sort();
    Ok(lat)
}

/// The benchmark.
pub fn run() -> Result<()> {
    println!(
        "\n== hook: a rule-allowed call through `assent hook claude-code` next to a no-op hook ({CALLS} calls a round, {ROUNDS} rounds alternated, medians)"
    );
    let (srv, bin) = server::assent()?;
    let home = srv.home.as_ref().context("home")?.path().to_path_buf();
    let project = tempfile::tempdir()?;
    let cwd = project.path().canonicalize()?.display().to_string();
    let home_arg = home.display().to_string();
    let (mut hook, mut noop) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        // The built-in read-only rule allows `git status` in the session's folder.
        let h = calls(&bin, &["--home", &home_arg, "hook", "claude-code"], &cwd, true)?;
        let n = calls(std::path::Path::new("cat"), &[], &cwd, false)?;
        hook.push((pct(&h, 0.5), pct(&h, 0.99)));
        noop.push((pct(&n, 0.5), pct(&n, 0.99)));
    }
    let median = |v: &mut Vec<(Duration, Duration)>, f: fn(&(Duration, Duration)) -> Duration| {
        let mut xs: Vec<Duration> = v.iter().map(f).collect();
        xs.sort();
        xs[xs.len() / 2]
    };
    let (h50, h99) = (median(&mut hook, |x| x.0), median(&mut hook, |x| x.1));
    let (n50, n99) = (median(&mut noop, |x| x.0), median(&mut noop, |x| x.1));
    println!("  assent hook claude-code (allowed by the built-in rule): p50 {}  p99 {}", ms(h50), ms(h99));
    println!("  no-op hook (cat):                                       p50 {}  p99 {}", ms(n50), ms(n99));
    let above = h50.saturating_sub(n50);
    println!("  => {} above the no-op hook at p50 (target <= {}): {}", ms(above), ms(ABOVE), verdict(above <= ABOVE));
    drop(srv);
    Ok(())
}
