//! The desktop app next to a hello-world Tauri 2 window built in the same run: launch to a
//! rendered inbox vs launch to the hello page's first paint, and the idle memory of each whole
//! process tree (the app plus its WebKit processes) as PSS.
//!
//! Both pages say when they are on screen the same way: after their first render, in the next
//! animation frame, they call a command that prints a line; the time is taken when the
//! benchmark reads that line, from the moment it spawned the process. PSS (proportional set
//! size, from `/proc/PID/smaps_rollup`) counts each shared page once across the tree, where
//! summed RSS would count the WebKit libraries once per process.
//!
//! Then the app opens an inbox of 1,000,000 proposals (filed through the real server's API
//! first), and the page reports how long its first page took from asking the store to being
//! on screen.

use crate::verdict;
use anyhow::{Context, Result, bail};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const RUNS: usize = 5;

const HELLO_MAIN: &str = r#"
#![allow(missing_docs)]
#[tauri::command]
fn ready() {
    eprintln!("hello rendered");
}
fn main() {
    tauri::Builder::default()
        .invoke_handler(tauri::generate_handler![ready])
        .run(tauri::generate_context!())
        .expect("hello");
}
"#;

const HELLO_HTML: &str = r#"<!doctype html>
<html><head><meta charset="utf-8"><title>Hello</title></head>
<body><h1>Hello, world</h1>
<script>requestAnimationFrame(() => window.__TAURI_INTERNALS__.invoke("ready"));</script>
</body></html>
"#;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Builds the hello-world app (release, its own target folder, kept between runs).
fn build_hello() -> Result<PathBuf> {
    let dir = root().join("target/bench-hello");
    std::fs::create_dir_all(dir.join("src"))?;
    std::fs::create_dir_all(dir.join("dist"))?;
    std::fs::create_dir_all(dir.join("icons"))?;
    std::fs::create_dir_all(dir.join("capabilities"))?;
    let tauri_version = "2.12";
    std::fs::write(
        dir.join("Cargo.toml"),
        format!(
            "[package]\nname = \"hello-tauri\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n\n\
             [build-dependencies]\ntauri-build = \"2\"\n\n[dependencies]\ntauri = \"{tauri_version}\"\n\n\
             [profile.release]\nopt-level = 3\n"
        ),
    )?;
    std::fs::write(dir.join("build.rs"), "fn main() { tauri_build::build() }\n")?;
    std::fs::write(dir.join("src/main.rs"), HELLO_MAIN)?;
    std::fs::write(dir.join("dist/index.html"), HELLO_HTML)?;
    std::fs::copy(root().join("icons/icon.png"), dir.join("icons/icon.png"))?;
    std::fs::write(
        dir.join("tauri.conf.json"),
        r#"{"productName": "hello-tauri", "version": "0.1.0", "identifier": "dev.assent.hello",
  "build": {"frontendDist": "dist"},
  "app": {"withGlobalTauri": false, "windows": [{"title": "Hello", "width": 1280, "height": 800}], "security": {"csp": null}},
  "bundle": {"active": false, "icon": ["icons/icon.png"]}}"#,
    )?;
    std::fs::write(
        dir.join("capabilities/main.json"),
        r#"{"identifier": "main", "windows": ["main"], "permissions": ["core:default"]}"#,
    )?;
    println!("  building the hello-world Tauri app (release; the first time takes a few minutes)...");
    let st = Command::new("cargo")
        .args(["build", "--release", "--quiet", "--manifest-path"])
        .arg(dir.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .status()?;
    if !st.success() {
        bail!("building the hello-world Tauri app failed");
    }
    Ok(dir.join("target/release/hello-tauri"))
}

/// The pids of `pid` and all its descendants.
fn tree(pid: u32) -> Vec<u32> {
    let mut parent_of = Vec::new();
    if let Ok(d) = std::fs::read_dir("/proc") {
        for e in d.flatten() {
            let Ok(p) = e.file_name().to_string_lossy().parse::<u32>() else { continue };
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{p}/stat")) else { continue };
            // The parent is the second field after the closing parenthesis of the name.
            let ppid = stat
                .rsplit_once(')')
                .and_then(|(_, r)| r.split_whitespace().nth(1))
                .and_then(|x| x.parse::<u32>().ok());
            if let Some(pp) = ppid {
                parent_of.push((p, pp));
            }
        }
    }
    let mut out = vec![pid];
    let mut i = 0;
    while i < out.len() {
        let cur = out[i];
        out.extend(parent_of.iter().filter(|(_, pp)| *pp == cur).map(|(p, _)| *p));
        i += 1;
    }
    out
}

/// Summed PSS and RSS of a process tree, MiB.
fn tree_memory(pid: u32) -> (f64, f64, usize) {
    let pids = tree(pid);
    let (mut pss, mut rss) = (0.0, 0.0);
    for p in &pids {
        let (r, s) = crate::server::memory_mib(*p);
        pss += s;
        rss += r;
    }
    (pss, rss, pids.len())
}

/// Launches `bin` until it prints `marker`; the time, the idle memory a while later, and the
/// line that carried the marker.
fn launch(bin: &Path, marker: &str, envs: &[(&str, String)]) -> Result<(Duration, (f64, f64, usize), String)> {
    let t0 = Instant::now();
    let mut child = Command::new(bin)
        .envs(envs.iter().map(|(k, v)| (*k, v.as_str())))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot start {}", bin.display()))?;
    let err = child.stderr.take().context("stderr")?;
    let (tx, rx) = std::sync::mpsc::channel();
    let marker = marker.to_string();
    std::thread::spawn(move || {
        for line in BufReader::new(err).lines().map_while(Result::ok) {
            if line.contains(&marker) {
                let _ = tx.send((Instant::now(), line));
            }
        }
    });
    let seen = rx.recv_timeout(Duration::from_secs(60));
    let result = match seen {
        Ok((t, line)) => {
            std::thread::sleep(Duration::from_secs(5));
            Ok((t - t0, tree_memory(child.id()), line))
        }
        Err(_) => Err(anyhow::anyhow!("{} never said it was on screen", bin.display())),
    };
    for p in tree(child.id()).into_iter().rev() {
        let _ = Command::new("kill").arg("-9").arg(p.to_string()).status();
    }
    let _ = child.wait();
    result
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Runs the app benchmark (needs a display: `scripts/bench.sh` provides Xvfb when there is none).
pub fn run() -> Result<()> {
    println!("\n== app: the desktop app next to a hello-world Tauri 2 window, {RUNS} launches each, release builds");
    if std::env::var_os("DISPLAY").is_none() && std::env::var_os("WAYLAND_DISPLAY").is_none() {
        println!("  skipped: no display (run it through scripts/bench.sh, which starts Xvfb)");
        return Ok(());
    }
    let app = std::env::current_exe()?.parent().context("folder")?.join("assent-desktop");
    if !app.exists() {
        bail!("{} is missing: cargo build --release -p assent-desktop", app.display());
    }
    let hello = build_hello()?;
    let (mut th, mut ta) = (Vec::new(), Vec::new());
    let (mut mh, mut ma) = ((0.0, 0.0, 0), (0.0, 0.0, 0));
    for _ in 0..RUNS {
        let (t, m, _) = launch(&hello, "hello rendered", &[])?;
        th.push(t);
        mh = m;
        let home = tempfile::tempdir()?;
        std::fs::write(home.path().join("config.toml"), "port = 0\n")?;
        let envs = [
            ("ASSENT_HOME", home.path().display().to_string()),
            ("ASSENT_OWNER_CREDENTIAL", "file".to_string()),
            ("ASSENT_LOG", "info".to_string()),
        ];
        let (t, m, _) = launch(&app, "inbox rendered", &envs)?;
        ta.push(t);
        ma = m;
    }
    let (h, a) = (median(th), median(ta));
    let ratio = a.as_secs_f64() / h.as_secs_f64();
    println!("  hello world: launch to first paint       {:>7.0} ms (median)", h.as_secs_f64() * 1000.0);
    println!("  Assent:      launch to a rendered inbox  {:>7.0} ms (median)", a.as_secs_f64() * 1000.0);
    println!("  => {ratio:.2}x the hello world's launch (target <= 1.15x): {}", verdict(ratio <= 1.15));
    println!("  hello world idle: PSS {:.0} MiB over {} processes (summed RSS {:.0} MiB)", mh.0, mh.2, mh.1);
    println!("  Assent idle:      PSS {:.0} MiB over {} processes (summed RSS {:.0} MiB)", ma.0, ma.2, ma.1);
    let mratio = ma.0 / mh.0;
    println!("  => {mratio:.2}x the hello world's PSS (target <= 1.1x): {}", verdict(mratio <= 1.1));

    // The same app on an inbox of 1,000,000 proposals, filed through the API beforehand.
    let seed = seed();
    if seed == 0 {
        println!("  the inbox of {SEED} proposals skipped (ASSENT_BENCH_SEED=0)");
        return Ok(());
    }
    let home = seeded_home(seed)?;
    let keep = std::env::var_os("ASSENT_BENCH_KEEP").is_some();
    if keep {
        println!("  the seeded home stays in {} (ASSENT_BENCH_KEEP)", home.path().display());
    }
    let envs = [
        ("ASSENT_HOME", home.path().display().to_string()),
        ("ASSENT_OWNER_CREDENTIAL", "file".to_string()),
        ("ASSENT_LOG", "info".to_string()),
    ];
    let (mut launches, mut pages) = (Vec::new(), Vec::new());
    for _ in 0..RUNS {
        let (t, _, line) = launch(&app, "inbox rendered", &envs)?;
        launches.push(t);
        pages.push(Duration::from_secs_f64(first_page_ms(&line)? / 1000.0));
    }
    let (l, p) = (median(launches), median(pages));
    if keep {
        let _ = home.keep();
    }
    println!(
        "  Assent on {seed} proposals: launch to a rendered inbox {:.0} ms; its first page asked for and on screen in {:.0} ms (median of {RUNS})",
        l.as_secs_f64() * 1000.0,
        p.as_secs_f64() * 1000.0
    );
    println!(
        "  => first page of a {seed}-proposal inbox {:.0} ms (target < 50 ms at 1,000,000): {}",
        p.as_secs_f64() * 1000.0,
        verdict(p < Duration::from_millis(50))
    );
    // Start-up must not grow with the inbox: the engine reads no more at start for a million
    // proposals than for none (the first page's rows aside).
    println!(
        "  => launch on a {seed}-proposal inbox {:.0} ms (target < 500 ms at 1,000,000): {}",
        l.as_secs_f64() * 1000.0,
        verdict(l < Duration::from_millis(500))
    );
    Ok(())
}

/// The inbox the first page is measured on.
const SEED: usize = 1_000_000;

/// How many proposals to seed: [`SEED`], or `ASSENT_BENCH_SEED` (0 skips that part).
fn seed() -> usize {
    std::env::var("ASSENT_BENCH_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(SEED)
}

/// A home whose store holds `seed` pending proposals from 16 agents, filed through the real
/// server's API (which is then stopped, so that the desktop app can open the home).
fn seeded_home(seed: usize) -> Result<tempfile::TempDir> {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let (mut srv, bin) = crate::server::assent()?;
    let home = srv.home.take().context("no home")?;
    let tokens = crate::server::agents(&bin, home.path(), 16)?;
    let started = Instant::now();
    rt.block_on(crate::load::blast(&srv.base, &tokens, seed, 0))?;
    drop(srv);
    println!("  filed {seed} proposals through the API in {:.1} s", started.elapsed().as_secs_f64());
    // The seed's writes reach the disk now, not while the app is being timed.
    Command::new("sync").status()?;
    let config = home.path().join("config.toml");
    let mut text = std::fs::read_to_string(&config)?;
    text.push_str("port = 0\n");
    std::fs::write(&config, text)?;
    Ok(home)
}

/// The `first_page_ms` field of the app's "inbox rendered" log line.
fn first_page_ms(line: &str) -> Result<f64> {
    let plain: String = strip_ansi(line);
    plain
        .split_whitespace()
        .find_map(|f| f.strip_prefix("first_page_ms="))
        .and_then(|v| v.parse().ok())
        .with_context(|| format!("no first_page_ms in {plain:?}"))
}

/// The text without terminal colour codes.
fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_first_page_time_with_or_without_colours() {
        let coloured = "\u{1b}[2m2026-11-23T09:00:00Z\u{1b}[0m \u{1b}[32m INFO\u{1b}[0m inbox rendered \u{1b}[3mms\u{1b}[0m\u{1b}[2m=\u{1b}[0m812 \u{1b}[3mfirst_page_ms\u{1b}[0m\u{1b}[2m=\u{1b}[0m41.5";
        assert_eq!(first_page_ms(coloured).ok(), Some(41.5));
        assert_eq!(first_page_ms("INFO inbox rendered ms=900 first_page_ms=12").ok(), Some(12.0));
        assert!(first_page_ms("INFO inbox rendered ms=900").is_err());
    }
}
