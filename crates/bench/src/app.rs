//! The desktop app next to a hello-world Tauri 2 window built in the same run: launch to a
//! rendered inbox vs launch to the hello page's first paint, and the idle memory of each whole
//! process tree (the app plus its WebKit processes) as PSS.
//!
//! Both pages say when they are on screen the same way: after their first render, in the next
//! animation frame, they call a command that prints a line; the time is taken when the
//! benchmark reads that line, from the moment it spawned the process. PSS (proportional set
//! size, from `/proc/PID/smaps_rollup`) counts each shared page once across the tree, where
//! summed RSS would count the WebKit libraries once per process.

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

/// Launches `bin` until it prints `marker`; the time, and the idle memory a while later.
fn launch(bin: &Path, marker: &str, envs: &[(&str, String)]) -> Result<(Duration, (f64, f64, usize))> {
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
                let _ = tx.send(Instant::now());
            }
        }
    });
    let seen = rx.recv_timeout(Duration::from_secs(60));
    let result = match seen {
        Ok(t) => {
            std::thread::sleep(Duration::from_secs(5));
            Ok((t - t0, tree_memory(child.id())))
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
        let (t, m) = launch(&hello, "hello rendered", &[])?;
        th.push(t);
        mh = m;
        let home = tempfile::tempdir()?;
        std::fs::write(home.path().join("config.toml"), "port = 0\n")?;
        let envs = [
            ("ASSENT_HOME", home.path().display().to_string()),
            ("ASSENT_OWNER_CREDENTIAL", "file".to_string()),
            ("ASSENT_LOG", "info".to_string()),
        ];
        let (t, m) = launch(&app, "inbox rendered", &envs)?;
        ta.push(t);
        ma = m;
    }
    let (h, a) = (median(th), median(ta));
    let ratio = a.as_secs_f64() / h.as_secs_f64();
    println!("  hello world: launch to first paint       {:>7.0} ms (median)", h.as_secs_f64() * 1000.0);
    println!("  Assent:      launch to a rendered inbox  {:>7.0} ms (median)", a.as_secs_f64() * 1000.0);
    println!("  => {ratio:.2}x the hello world's launch (target <= 1.5x): {}", verdict(ratio <= 1.5));
    println!("  hello world idle: PSS {:.0} MiB over {} processes (summed RSS {:.0} MiB)", mh.0, mh.2, mh.1);
    println!("  Assent idle:      PSS {:.0} MiB over {} processes (summed RSS {:.0} MiB)", ma.0, ma.2, ma.1);
    let mratio = ma.0 / mh.0;
    println!("  => {mratio:.2}x the hello world's PSS (target <= 1.3x): {}", verdict(mratio <= 1.3));
    Ok(())
}
