//! The processes under test: the real `assent serve`, and the bare axum ceiling.

use anyhow::{Context, Result, bail};
use axum::http::StatusCode;
use axum::{Json, Router, routing::post};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

/// A server process and its base URL (`http://127.0.0.1:PORT/v1`).
pub struct Proc {
    pub child: Child,
    pub base: String,
    /// Keeps the temp home alive.
    pub home: Option<tempfile::TempDir>,
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = Command::new("kill").arg("-TERM").arg(self.child.id().to_string()).status();
        let _ = self.child.wait();
    }
}

impl Proc {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

fn sibling(name: &str) -> Result<PathBuf> {
    let me = std::env::current_exe()?;
    let p = me.parent().context("no folder")?.join(name);
    if !p.exists() {
        bail!("{} is missing: build it first (`cargo build --release -p assent -p assent-bench`)", p.display());
    }
    Ok(p)
}

/// Waits for the line with the URL on the child's standard output.
fn url_of(child: &mut Child) -> Result<String> {
    let out = child.stdout.take().context("no stdout")?;
    let mut lines = BufReader::new(out).lines();
    for line in lines.by_ref() {
        let line = line?;
        if let Some(i) = line.find("http://127.0.0.1:") {
            let url: String = line[i..].split_whitespace().next().unwrap_or_default().to_string();
            // Keep draining so the child never blocks on a full pipe.
            std::thread::spawn(move || for _ in lines {});
            return Ok(url.trim_end_matches('/').trim_end_matches("/v1").to_string() + "/v1");
        }
    }
    bail!("the server exited before it listened")
}

/// The real `assent serve` (the release binary next to this one) on a fresh temp home, with
/// limits raised so that the benchmark measures throughput, not the per-agent caps.
pub fn assent() -> Result<(Proc, PathBuf)> {
    assent_with(&[])
}

/// [`assent`] with extra environment (a team store).
pub fn assent_with(env: &[(String, String)]) -> Result<(Proc, PathBuf)> {
    let bin = sibling("assent")?;
    let home = tempfile::Builder::new().prefix("assent-bench").tempdir_in(std::env::temp_dir())?;
    std::fs::write(
        home.path().join("config.toml"),
        "max_pending_per_agent = 1000000\nmax_waits_per_agent = 1000000\n",
    )?;
    // ASSENT_BENCH_WRAP runs the server under another program (a profiler), e.g.
    // `valgrind --tool=massif --massif-out-file=/tmp/massif.out`.
    let wrap: Vec<String> =
        std::env::var("ASSENT_BENCH_WRAP").unwrap_or_default().split_whitespace().map(str::to_string).collect();
    let mut cmd = match wrap.split_first() {
        Some((program, args)) => {
            let mut c = Command::new(program);
            c.args(args).arg(&bin);
            c
        }
        None => Command::new(&bin),
    };
    let mut child = cmd
        .arg("--home")
        .arg(home.path())
        .args(["serve", "--port", "0"])
        .env("ASSENT_OWNER_CREDENTIAL", "file")
        .envs(env.iter().map(|(k, v)| (k, v)))
        .env("ASSENT_LOG", std::env::var("ASSENT_BENCH_LOG").unwrap_or_else(|_| "warn".into()))
        .stdout(Stdio::piped())
        .stderr(match std::env::var_os("ASSENT_BENCH_LOG") {
            Some(_) => Stdio::inherit(),
            None => Stdio::null(),
        })
        .spawn()
        .with_context(|| format!("cannot start {}", bin.display()))?;
    let base = url_of(&mut child)?;
    Ok((Proc { child, base, home: Some(home) }, bin))
}

/// Adds `n` agents through the CLI; their tokens.
pub fn agents(bin: &PathBuf, home: &std::path::Path, n: usize) -> Result<Vec<String>> {
    let mut tokens = Vec::with_capacity(n);
    for i in 0..n {
        let o = Command::new(bin)
            .arg("--home")
            .arg(home)
            .args(["agent", "add", &format!("bench-{i}"), "--json"])
            .output()?;
        if !o.status.success() {
            bail!("agent add failed: {}", String::from_utf8_lossy(&o.stderr));
        }
        let v: Value = serde_json::from_slice(&o.stdout)?;
        tokens.push(v["token"].as_str().context("no token in agent add --json")?.to_string());
    }
    Ok(tokens)
}

/// A fresh server with `n` agents: the server, the binary, its home, the agents' tokens and the
/// owner's.
pub struct Fresh {
    pub srv: Proc,
    pub bin: PathBuf,
    pub home: PathBuf,
    pub agents: Vec<String>,
    pub owner: String,
}

/// Starts a fresh server and adds `n` agents.
pub fn fresh(n: usize) -> Result<Fresh> {
    let (srv, bin) = assent()?;
    let home = srv.home.as_ref().context("home")?.path().to_path_buf();
    let agents = agents(&bin, &home, n)?;
    let owner = owner(&home)?;
    Ok(Fresh { srv, bin, home, agents, owner })
}

/// The owner credential of a home.
pub fn owner(home: &std::path::Path) -> Result<String> {
    Ok(std::fs::read_to_string(home.join("owner.token"))?.trim().to_string())
}

/// The ceiling, started as a process like the real server.
pub fn ceiling() -> Result<Proc> {
    let mut child = Command::new(std::env::current_exe()?)
        .arg("ceiling-server")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()?;
    let base = url_of(&mut child)?;
    Ok(Proc { child, base, home: None })
}

/// `assent-bench ceiling-server`: a bare axum endpoint that parses the same JSON and stores
/// nothing, on the same kind of runtime as the server.
pub fn run_ceiling() -> Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    rt.block_on(async {
        let app = Router::new().route(
            "/v1/proposals",
            post(|Json(v): Json<Value>| async move {
                let kind = v.get("kind").and_then(Value::as_str).unwrap_or_default().to_string();
                (StatusCode::CREATED, Json(json!({"id": "p_ceiling", "kind": kind, "status": "pending"})))
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        println!("ceiling listening on http://{}/v1", listener.local_addr()?);
        axum::serve(listener, app).await?;
        anyhow::Ok(())
    })
}

/// Resident and proportional set size of a process, in MiB, from `/proc`.
pub fn memory_mib(pid: u32) -> (f64, f64) {
    let read = |file: &str, key: &str| -> f64 {
        std::fs::read_to_string(format!("/proc/{pid}/{file}"))
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with(key))
                    .and_then(|l| l.split_whitespace().nth(1))
                    .and_then(|n| n.parse::<f64>().ok())
            })
            .unwrap_or(0.0)
            / 1024.0
    };
    (read("status", "VmRSS:"), read("smaps_rollup", "Pss:"))
}

/// CPU seconds a process (all its threads) has used so far, user and system, from `/proc`.
pub fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The fields after the command's closing parenthesis; utime and stime are the 12th and 13th.
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or_default();
    let ticks: f64 = rest.split_whitespace().skip(11).take(2).filter_map(|t| t.parse::<f64>().ok()).sum();
    // `/proc` counts in USER_HZ, 100 per second on Linux whatever the kernel's own tick.
    ticks / 100.0
}

/// Open sockets of a process.
pub fn sockets(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| {
            d.filter_map(Result::ok)
                .filter(|e| std::fs::read_link(e.path()).is_ok_and(|l| l.to_string_lossy().starts_with("socket:")))
                .count()
        })
        .unwrap_or(0)
}
