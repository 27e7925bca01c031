//! The hook's own cost: a rule-allowed Bash call through `assent-run hook claude-code` (a process
//! per call, as Claude Code runs it: the event on standard input, the answer on standard output,
//! which rewrites the call to `assent-run ... run ID`), next to a hook that does nothing but read
//! its input and answer (`cat`), and the same hook in the whole `assent`, alternated in one run. Then what confinement costs: the rewritten command
//! (`assent-run ... run ID`: the ticket read, its receipt checked, the command run under the `read`
//! profile) next to the same command run plain, both by bash as the client runs them.

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
const ABOVE: Duration = Duration::from_millis(3);
/// The target for the box alone: a boxed read, and a boxed build, at most this much above the
/// same command run plain, at the median (the goal is half of it).
const CONFINED_ABOVE: Duration = Duration::from_millis(3);
/// What a boxed build is measured with: a write inside the folder (the box rule allows it, in
/// the `workspace` box, whose executable configuration is mounted read-only and checked after).
const BUILD: &str = "touch build.stamp";
/// The command both are measured with.
const COMMAND: &str = "git status --short";

/// Runs `program args` once per call with the event on its input; the latencies, sorted.
fn calls(program: &std::path::Path, args: &[&str], cwd: &str, check: bool) -> Result<Vec<Duration>> {
    let mut lat = Vec::with_capacity(CALLS);
    for i in 0..CALLS + WARMUP {
        let event = json!({
            "session_id": "bench", "transcript_path": "/dev/null", "cwd": cwd, "permission_mode": "default",
            "hook_event_name": "PreToolUse", "tool_name": "Bash",
            "tool_input": {"command": COMMAND, "description": "Show the changes"},
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
        if check && !String::from_utf8_lossy(&out.stdout).contains(" run p_") {
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
        "\n== hook: a rule-allowed call through `assent-run hook claude-code` next to a no-op hook, and through the whole `assent` ({CALLS} calls a round, {ROUNDS} rounds alternated, medians)"
    );
    let (srv, bin) = server::assent()?;
    let runner = bin.with_file_name("assent-run");
    let home = srv.home.as_ref().context("home")?.path().to_path_buf();
    let project = tempfile::tempdir()?;
    let cwd = project.path().canonicalize()?.display().to_string();
    let home_arg = home.display().to_string();
    let hook_args = ["--home", home_arg.as_str(), "hook", "claude-code"];
    let (mut light, mut whole, mut noop) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        // The built-in read-only rule allows `git status` in the session's folder.
        let l = calls(&runner, &hook_args, &cwd, true)?;
        let w = calls(&bin, &hook_args, &cwd, true)?;
        let n = calls(std::path::Path::new("cat"), &[], &cwd, false)?;
        light.push((pct(&l, 0.5), pct(&l, 0.99)));
        whole.push((pct(&w, 0.5), pct(&w, 0.99)));
        noop.push((pct(&n, 0.5), pct(&n, 0.99)));
    }
    let median = |v: &mut Vec<(Duration, Duration)>, f: fn(&(Duration, Duration)) -> Duration| {
        let mut xs: Vec<Duration> = v.iter().map(f).collect();
        xs.sort();
        xs[xs.len() / 2]
    };
    let (l50, l99) = (median(&mut light, |x| x.0), median(&mut light, |x| x.1));
    let (w50, w99) = (median(&mut whole, |x| x.0), median(&mut whole, |x| x.1));
    let (n50, n99) = (median(&mut noop, |x| x.0), median(&mut noop, |x| x.1));
    println!("  assent-run hook claude-code (allowed by the built-in rule): p50 {}  p99 {}", ms(l50), ms(l99));
    println!("  assent hook claude-code (the whole binary, the same call):  p50 {}  p99 {}", ms(w50), ms(w99));
    println!("  no-op hook (cat):                                           p50 {}  p99 {}", ms(n50), ms(n99));
    let above = l50.saturating_sub(n50);
    println!(
        "  => {} above the no-op hook at p50 (target <= {}): {}; the whole binary {} above",
        ms(above),
        ms(ABOVE),
        verdict(above <= ABOVE),
        ms(w50.saturating_sub(n50))
    );
    confined(&runner, &home_arg, &cwd)?;
    drop(srv);
    Ok(())
}

/// Runs `program args` in `cwd` once per call; the latencies, sorted (each run must succeed).
fn runs(program: &std::path::Path, args: &[&str], cwd: &str) -> Result<Vec<Duration>> {
    let mut lat = Vec::with_capacity(CALLS);
    for i in 0..CALLS + WARMUP {
        let t = Instant::now();
        let out = Command::new(program).args(args).current_dir(cwd).stdin(Stdio::null()).output()?;
        let took = t.elapsed();
        if !out.status.success() {
            bail!("{} failed: {}", program.display(), String::from_utf8_lossy(&out.stderr));
        }
        if i >= WARMUP {
            lat.push(took);
        }
    }
    lat.sort();
    Ok(lat)
}

/// Files `COMMAND` through the hook (untimed) as Claude Code would, and returns the command the
/// hook rewrote it to (`assent-run ... run ID`: the hook left the proposal for it in the home).
fn allowed(bin: &std::path::Path, home: &str, cwd: &str, command: &str, n: usize) -> Result<String> {
    let event = json!({
        "session_id": "bench", "cwd": cwd, "hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": {"command": command},
        "tool_use_id": format!("toolu_confined_{n}_{}_{}", command.len(), std::process::id()),
    });
    let mut child = Command::new(bin)
        .args(["--home", home, "hook", "claude-code"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()?;
    child.stdin.take().context("stdin")?.write_all(event.to_string().as_bytes())?;
    let out: serde_json::Value = serde_json::from_slice(&child.wait_with_output()?.stdout)?;
    match out["hookSpecificOutput"]["updatedInput"]["command"].as_str() {
        Some(c) => Ok(c.to_string()),
        None => bail!("`{command}` was not allowed in a box: {out}"),
    }
}

/// Times the rewritten command in `cwd`, run by bash as the client runs it, each on a proposal
/// the hook just allowed (`fresh`: with what the hook left), or on the same one again (what the
/// hook left used up: the proposal and keys asked of the server); the latencies, sorted.
fn confined_runs(bin: &std::path::Path, home: &str, cwd: &str, command: &str, fresh: bool) -> Result<Vec<Duration>> {
    let mut lat = Vec::with_capacity(CALLS);
    let mut rewritten = allowed(bin, home, cwd, command, 0)?;
    for i in 0..CALLS + WARMUP {
        if fresh {
            rewritten = allowed(bin, home, cwd, command, i + 1)?;
        }
        let t = Instant::now();
        let out = Command::new("bash").args(["-c", &rewritten]).current_dir(cwd).stdin(Stdio::null()).output()?;
        let took = t.elapsed();
        if !out.status.success() {
            bail!("`{rewritten}` failed: {}", String::from_utf8_lossy(&out.stderr));
        }
        if i >= WARMUP {
            lat.push(took);
        }
    }
    lat.sort();
    Ok(lat)
}

/// A boxed read and a boxed build (the call as the hook rewrote it, run by bash) next to the same
/// command run plain by bash, alternated in rounds; the whole of `assent-run` is counted (its
/// start, the proposal and keys read, the receipt checked, the box's namespaces and mounts made,
/// Landlock and seccomp added, and for the build the folder's executable configuration
/// found before and checked after).
fn confined(bin: &std::path::Path, home: &str, cwd: &str) -> Result<()> {
    println!(
        "\n== boxed: `{COMMAND}` (read box) and `{BUILD}` (workspace box, by the box rule) as the hook rewrote them, next to the same commands, all run by bash; as {}",
        if is_root() { "root (the box runs as nobody)" } else { "a user" },
    );
    let st = Command::new("git").args(["init", "-q"]).current_dir(cwd).status()?;
    if !st.success() {
        bail!("git init failed");
    }
    let full = bin.with_file_name("assent");
    let added =
        Command::new(&full).args(["--home", home, "rule", "add", "allow", "--builtin", "box", "--json"]).output()?;
    if !added.status.success() {
        bail!("the box rule could not be added: {}", String::from_utf8_lossy(&added.stderr));
    }
    let (mut conf, mut asked, mut plain, mut build, mut build_plain) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        let c = confined_runs(bin, home, cwd, COMMAND, true)?;
        let a = confined_runs(bin, home, cwd, COMMAND, false)?;
        let p = runs(std::path::Path::new("bash"), &["-c", COMMAND], cwd)?;
        let b = confined_runs(bin, home, cwd, BUILD, true)?;
        let bp = runs(std::path::Path::new("bash"), &["-c", BUILD], cwd)?;
        conf.push(pct(&c, 0.5));
        asked.push(pct(&a, 0.5));
        plain.push(pct(&p, 0.5));
        build.push(pct(&b, 0.5));
        build_plain.push(pct(&bp, 0.5));
    }
    for v in [&mut conf, &mut asked, &mut plain, &mut build, &mut build_plain] {
        v.sort();
    }
    let mid = |v: &Vec<Duration>| v[v.len() / 2];
    let (c50, a50, p50, b50, bp50) = (mid(&conf), mid(&asked), mid(&plain), mid(&build), mid(&build_plain));
    println!("  bash -c 'assent-run ... run ID' (read box):           p50 {}", ms(c50));
    println!("  the same again (no ticket: asks the server):          p50 {}", ms(a50));
    println!("  bash -c '{COMMAND}' (plain):                 p50 {}", ms(p50));
    println!("  bash -c 'assent-run ... run ID' (workspace box):      p50 {}", ms(b50));
    println!("  bash -c '{BUILD}' (plain):                  p50 {}", ms(bp50));
    for (what, above) in [("read box", c50.saturating_sub(p50)), ("workspace box", b50.saturating_sub(bp50))] {
        println!(
            "  => {what}: {} above the plain command at p50 (target <= {}, goal {}): {}",
            ms(above),
            ms(CONFINED_ABOVE),
            ms(CONFINED_ABOVE / 2),
            verdict(above <= CONFINED_ABOVE)
        );
    }
    Ok(())
}

fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}
