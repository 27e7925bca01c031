//! Test harness: the real `assent` binary, started on port 0 with a temp home, and helpers
//! that talk HTTP to it over loopback.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

pub use crate::procs::{ended_within, ends_within, rss_kb};

pub use crate::services::{Bus, Recorder, lookup, private_bus_with_keyring};

pub const BIN: &str = env!("CARGO_BIN_EXE_assent");

/// The Windows build of `assent` the suite runs under Wine instead of [`BIN`], when set
/// (`scripts/windows.sh`): the harness's servers and CLI calls go to it.
pub fn windows_exe() -> Option<String> {
    std::env::var("ASSENT_TEST_WINDOWS_EXE").ok().filter(|v| !v.is_empty())
}

/// A command that runs `assent`: the one cargo built, or the Windows build under Wine.
pub fn assent() -> Command {
    program("assent")
}

/// A command that runs `name` (`assent` or `assent-run`), as [`assent`] does.
pub fn program(name: &str) -> Command {
    match windows_exe() {
        Some(exe) => {
            let mut cmd = Command::new("wine");
            cmd.arg(Path::new(&exe).with_file_name(format!("{name}.exe"))).env("WINEDEBUG", "-all");
            cmd
        }
        None => Command::new(Path::new(BIN).with_file_name(name)),
    }
}

/// The command line that runs `assent`, for a client that starts it itself (an MCP client):
/// the one cargo built, or `wine` with the Windows build.
pub fn assent_argv() -> Vec<String> {
    match windows_exe() {
        Some(exe) => vec!["wine".into(), exe],
        None => vec![BIN.into()],
    }
}

/// `path` as the `assent` the suite runs names it: itself, or under Wine the same file through
/// the drive `Z:` that Wine maps to `/`.
pub fn native(path: &Path) -> String {
    match windows_exe() {
        Some(_) => format!("Z:{}", path.display()).replace('/', "\\"),
        None => path.display().to_string(),
    }
}

/// `path` as a rule names it and the engine writes it in the rules it makes: itself, or on
/// Windows (whose disks compare names whatever their case) `z:/…`, lower-cased, with `/`.
pub fn rule_path(path: &Path) -> String {
    match windows_exe() {
        Some(_) => format!("z:{}", path.display()).to_lowercase(),
        None => path.display().to_string(),
    }
}

/// Whether the `assent` the suite runs can confine a command so: on Linux, what the kernel
/// allows; on Windows, never (a rule that confines asks there).
pub fn can_confine(profile: assent_boundary::Confine) -> bool {
    windows_exe().is_none() && assent_boundary::boxed::Support::detect().can(profile)
}

/// A running `assent serve`.
pub struct Server {
    pub child: Option<Child>,
    pub home: tempfile::TempDir,
    pub url: String,
    pub agent: String,
    pub owner: String,
    pub env: Vec<(String, String)>,
    pub stderr_log: PathBuf,
    pub http: reqwest::Client,
    /// Extra flags for `assent serve`.
    pub args: Vec<String>,
}

pub fn http() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    // Idle connections dropped before the server closes them (its 15 s header-read timeout):
    // a test that waits on an agent for longer would otherwise reuse one as it closes.
    reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(180))
        .pool_idle_timeout(Duration::from_secs(10))
        .build()
        .unwrap()
}

impl Server {
    /// A server with default settings and the owner credential in a file.
    pub async fn start() -> Server {
        Self::start_with("", &[]).await
    }

    /// A server with `config` as its config.toml and extra environment.
    pub async fn start_with(config: &str, env: &[(&str, &str)]) -> Server {
        Self::start_with_args(config, env, &[]).await
    }

    /// A server with `config`, extra environment and extra `serve` flags.
    pub async fn start_with_args(config: &str, env: &[(&str, &str)], args: &[&str]) -> Server {
        Self::start_in(tempfile::tempdir().unwrap(), config, env, args).await
    }

    /// A server whose home is `home` (its log goes beside it).
    pub async fn start_in(home: tempfile::TempDir, config: &str, env: &[(&str, &str)], args: &[&str]) -> Server {
        if !config.is_empty() {
            std::fs::write(home.path().join("config.toml"), config).unwrap();
        }
        // A clock the test moves (`Server::advance`), starting at the system's time.
        let mut envs: Vec<(String, String)> = vec![
            ("ASSENT_OWNER_CREDENTIAL".into(), "file".into()),
            ("ASSENT_LOG".into(), "debug".into()),
            ("ASSENT_TEST_CLOCK".into(), "0".into()),
        ];
        // The shared suite on a team store: a database of its own per server.
        if crate::pg::suite_on_postgres() && !env.iter().any(|(k, _)| *k == "ASSENT_STORE") {
            let pg = crate::pg::shared();
            envs.extend(pg.env(&pg.new_db(), "solo", "owner"));
        }
        for (k, v) in env {
            envs.retain(|(ek, _)| ek != k);
            envs.push((k.to_string(), v.to_string()));
        }
        let stderr_log =
            home.path().join("..").join(format!("{}.stderr", home.path().file_name().unwrap().to_string_lossy()));
        let mut s = Server {
            child: None,
            home,
            url: String::new(),
            agent: String::new(),
            owner: String::new(),
            env: envs,
            stderr_log,
            http: http(),
            args: args.iter().map(|a| a.to_string()).collect(),
        };
        s.spawn();
        s
    }

    pub fn home(&self) -> &Path {
        self.home.path()
    }

    /// Starts the process and waits for its "listening" line.
    pub fn spawn(&mut self) {
        let log = std::fs::OpenOptions::new().create(true).append(true).open(&self.stderr_log).unwrap();
        let mut cmd = assent();
        cmd.arg("--home")
            .arg(native(self.home.path()))
            .args(["serve", "--port", "0"])
            .args(&self.args)
            .stdout(Stdio::piped())
            .stderr(log)
            .stdin(Stdio::null());
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            let mut line = String::new();
            let _ = r.read_line(&mut line);
            let _ = tx.send(line);
            // Keep draining so the child never blocks on a full pipe.
            let mut sink = String::new();
            while r.read_line(&mut sink).unwrap_or(0) > 0 {
                sink.clear();
            }
        });
        let line = rx.recv_timeout(Duration::from_secs(30)).unwrap_or_default();
        let url = line
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap_or_else(|| panic!("server did not start: {line:?}\n{}", self.stderr()))
            .trim_end_matches("/v1")
            .to_string();
        // Under Wine, the server names its home as Windows does: proof it is the Windows build.
        if windows_exe().is_some() {
            assert!(line.contains("(home Z:\\"), "not the Windows build: {line:?}");
        }
        self.url = url;
        self.child = Some(child);
        self.agent = std::fs::read_to_string(self.home.path().join("agent.token")).unwrap().trim().to_string();
        self.owner = std::fs::read_to_string(self.home.path().join("owner.token"))
            .map(|s| s.trim().to_string())
            .unwrap_or_default();
    }

    /// The server process's resident memory now, in KiB (0 where it cannot be read).
    pub fn rss_kb(&self) -> u64 {
        rss_kb(self.child.as_ref().map_or(0, Child::id))
    }

    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr_log).unwrap_or_default()
    }

    /// `kill -9`.
    pub fn kill9(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// SIGTERM and wait.
    pub fn stop(&mut self) -> std::process::ExitStatus {
        let mut c = self.child.take().unwrap();
        let _ = Command::new("kill").arg("-TERM").arg(c.id().to_string()).status();
        c.wait().unwrap()
    }

    pub async fn req(
        &self,
        method: Method,
        path: &str,
        token: Option<&str>,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        let mut r = self.http.request(method, format!("{}/v1{path}", self.url));
        if let Some(t) = token {
            r = r.bearer_auth(t);
        }
        if let Some(b) = body {
            r = r.json(&b);
        }
        let res = r.send().await.unwrap();
        let status = res.status();
        let text = res.text().await.unwrap();
        (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
    }

    /// Moves the server's clock forward by `by` (leases, expiry, pushes held back: everything
    /// that waits on the time) and returns once its expiry sweeper has looked at the new time.
    pub async fn advance(&self, by: Duration) {
        let body = serde_json::json!({"advance_ms": by.as_millis() as u64});
        let (code, v) = self.req(Method::POST, "/testing/clock", Some(&self.owner.clone()), Some(body)).await;
        assert_eq!(code, StatusCode::NO_CONTENT, "moving the clock: {v}");
    }

    /// Returns once `n` agents wait on a decision (open long-polls), waiting up to 20 s for
    /// clients to start waiting (a test build's `/testing/waits`).
    pub async fn until_waiting(&self, n: u64) {
        for _ in 0..800 {
            let (code, v) = self.req(Method::GET, "/testing/waits", Some(&self.owner.clone()), None).await;
            assert_eq!(code, StatusCode::OK, "{v}");
            if v["agents_waiting"].as_u64() >= Some(n) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("{n} agents never waited");
    }

    /// The newest pending proposal, as the owner sees it, once there is one (waiting up to 20 s
    /// for a client to file it).
    pub async fn first_pending(&self) -> Value {
        for _ in 0..800 {
            let (_, page) = self.req(Method::GET, "/proposals?status=pending", Some(&self.owner.clone()), None).await;
            if let Some(p) = page["items"].as_array().and_then(|a| a.first()) {
                return p.clone();
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("no proposal was filed");
    }

    /// Posts `body` to `/proposals` as the default agent: the status and the answer, whatever
    /// they are.
    pub async fn try_propose(&self, body: Value) -> (StatusCode, Value) {
        self.req(Method::POST, "/proposals", Some(&self.agent), Some(body)).await
    }

    /// Proposes a tool.call as the default agent; returns the proposal.
    pub async fn propose(&self, body: Value) -> Value {
        let (s, v) = self.try_propose(body).await;
        assert_eq!(s, StatusCode::CREATED, "{v}");
        v
    }

    pub async fn propose_tool(&self, command: &str) -> String {
        let p = self
            .propose(json!({"kind": "tool.call", "payload": {"tool": "Bash", "input": {"command": command}}}))
            .await;
        p["id"].as_str().unwrap().to_string()
    }

    pub async fn decide(&self, id: &str, body: Value) -> (StatusCode, Value) {
        self.req(Method::POST, &format!("/proposals/{id}/decision"), Some(&self.owner.clone()), Some(body)).await
    }

    pub async fn get(&self, id: &str, token: &str) -> (StatusCode, Value) {
        self.req(Method::GET, &format!("/proposals/{id}"), Some(token), None).await
    }

    /// Runs the CLI against this server's home.
    pub fn cli(&self, args: &[&str]) -> Output {
        cli(self.home.path(), &self.env, args)
    }

    fn env_of(&self, key: &str) -> Option<&str> {
        self.env.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    /// Runs SQL on the server's database as someone with a database tool would (the SQLite file
    /// in its home, or its team database): rows as lines, columns joined by `|`; the error when
    /// the database refuses it.
    pub fn sql(&self, sql: &str) -> Result<String, String> {
        if let Some(url) = self.env_of("ASSENT_STORE") {
            return crate::pg::psql(url, self.env_of("PGPASSFILE").unwrap_or_default(), sql);
        }
        let out = Command::new("python3")
            .args([
                "-c",
                "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); r=c.execute(sys.argv[2]).fetchall(); c.commit(); \
                 print('\\n'.join('|'.join(str(v) for v in row) for row in r))",
            ])
            .arg(self.home.path().join("assent.db"))
            .arg(sql)
            .output()
            .unwrap();
        crate::pg::answer(&out)
    }

    /// Everything the server's database holds, as bytes: the SQLite file and its write-ahead
    /// log, or a dump of its team database.
    pub fn stored_bytes(&self) -> Vec<u8> {
        match self.env_of("ASSENT_STORE") {
            Some(url) => {
                let out = Command::new("pg_dump")
                    .arg(url)
                    .env("PGPASSFILE", self.env_of("PGPASSFILE").unwrap_or_default())
                    .output()
                    .unwrap();
                assert!(out.status.success(), "pg_dump: {}", String::from_utf8_lossy(&out.stderr));
                out.stdout
            }
            None => ["assent.db", "assent.db-wal"]
                .iter()
                .flat_map(|f| std::fs::read(self.home.path().join(f)).unwrap_or_default())
                .collect(),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill9();
        let _ = std::fs::remove_file(&self.stderr_log);
    }
}

/// Runs `assent --home HOME ARGS` with `env`.
pub fn cli(home: &Path, env: &[(String, String)], args: &[&str]) -> Output {
    let mut cmd = assent();
    cmd.arg("--home").arg(native(home)).args(args).stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.env_remove("ASSENT_TOKEN");
    let out = cmd.output().unwrap();
    // Wine under load has lost a run of the Windows build whole: no output at all, where `assent`
    // always says something (its answer, or why it failed). Such a run is tried once more, and
    // said; on Linux never.
    if windows_exe().is_some() && out.stdout.is_empty() && out.stderr.is_empty() {
        eprintln!("Wine lost a run of `assent {}` (no output, {}): run once more", args.join(" "), out.status);
        return cmd.output().unwrap();
    }
    out
}

/// Starting a child process that talks to a server.
pub trait Launch {
    /// Starts the command with `env` added to its environment (a server's, so that it reaches
    /// that server), and its standard output and error as given (its input as set, or this
    /// process's).
    fn launch(&mut self, env: &[(String, String)], stdout: Stdio, stderr: Stdio) -> Child;
}

impl Launch for Command {
    fn launch(&mut self, env: &[(String, String)], stdout: Stdio, stderr: Stdio) -> Child {
        self.envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str()))).stdout(stdout).stderr(stderr).spawn().unwrap()
    }
}

/// A scratch folder holding one file, `name`, with `content`: the folder (removed when dropped)
/// and the file's path.
pub fn scratch_file(name: &str, content: impl AsRef<[u8]>) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(name);
    std::fs::write(&file, content).unwrap();
    (dir, file)
}

/// What `assent --home HOME hook ARGS` prints (a hook script or plugin to install), once it
/// succeeds.
pub fn printed_hook(home: &Path, args: &[&str]) -> Vec<u8> {
    let out = Command::new(BIN).arg("--home").arg(home).arg("hook").args(args).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

/// A Python interpreter of the virtual environment `.ci/NAME` with `packages`, ready once it
/// can run `import MODULES` ([`python_venv`]).
pub fn venv_python(name: &str, packages: &[&str], modules: &str) -> PathBuf {
    let ready = |bin: &Path| {
        Command::new(bin.join("python"))
            .args(["-c", &format!("import {modules}")])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    python_venv(name, packages, ready).join("python")
}

/// The lines a child prints on its standard output, read on a thread as they come.
pub fn stdout_lines(child: &mut Child) -> std::sync::mpsc::Receiver<String> {
    let out = child.stdout.take().unwrap();
    let (tx, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    lines
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

/// Runs the CLI with `input` on standard input.
pub fn cli_with_stdin(home: &Path, env: &[(String, String)], args: &[&str], input: &str) -> Output {
    let mut cmd = assent();
    cmd.arg("--home").arg(native(home)).args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

/// The `bin` folder of a Python virtual environment `.ci/NAME` that has `packages`, made on
/// first use (once per test run, whichever test asks first); `ready` says whether a `bin`
/// folder already has what the tests need.
pub fn python_venv(name: &str, packages: &[&str], ready: impl Fn(&Path) -> bool) -> PathBuf {
    static MADE: std::sync::Mutex<Vec<(String, PathBuf)>> = std::sync::Mutex::new(Vec::new());
    let mut made = MADE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, bin)) = made.iter().find(|(n, _)| n == name) {
        return bin.clone();
    }
    let venv = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".ci").join(name);
    let bin = venv.join("bin");
    if !ready(&bin) {
        let status = Command::new("python3").args(["-m", "venv"]).arg(&venv).status().unwrap();
        assert!(status.success(), "cannot create a Python venv in {}", venv.display());
        let pip = Command::new(bin.join("pip")).args(["install", "--quiet"]).args(packages).output().unwrap();
        assert!(pip.status.success(), "pip install {packages:?} failed: {}", String::from_utf8_lossy(&pip.stderr));
        assert!(ready(&bin), "the venv in {} lacks {packages:?} after installing them", venv.display());
    }
    made.push((name.to_string(), bin.clone()));
    bin
}

/// A command-line program `bin` of the npm package `package`, installed into `.ci/NAME` on first
/// use ([`npm_program`]); it works once `bin --version` does.
pub fn npm_cli(name: &str, package: &str, bin: &str) -> PathBuf {
    let works = |b: &Path| Command::new(b).arg("--version").output().is_ok_and(|o| o.status.success());
    npm_program(name, package, bin, works)
}

/// The program `bin` of the npm package `package` (with its version), installed into `.ci/NAME`
/// on first use; `works` says whether an installed program runs.
pub fn npm_program(name: &str, package: &str, bin: &str, works: impl Fn(&Path) -> bool) -> PathBuf {
    static MADE: std::sync::Mutex<Vec<(String, PathBuf)>> = std::sync::Mutex::new(Vec::new());
    let mut made = MADE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, p)) = made.iter().find(|(n, _)| n == name) {
        return p.clone();
    }
    let prefix = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".ci").join(name);
    let program = prefix.join("node_modules/.bin").join(bin);
    if !works(&program) {
        let out = Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--prefix"])
            .arg(&prefix)
            .arg(package)
            .output()
            .unwrap();
        assert!(out.status.success(), "npm install {package}: {}", String::from_utf8_lossy(&out.stderr));
        assert!(works(&program), "{bin} does not run after installing {package}");
    }
    made.push((name.to_string(), program.clone()));
    program
}

/// The call a coding agent (`agent`, its name for messages) filed in the inbox, once it is there
/// (up to 90 s); if the agent ends first, or never files, the test fails with what it printed.
pub async fn filed(s: &Server, agent: &mut Child, name: &str) -> Value {
    let deadline = std::time::Instant::now() + Duration::from_secs(90);
    while std::time::Instant::now() < deadline {
        let (_, page) = s.req(Method::GET, "/proposals?status=pending", Some(&s.owner.clone()), None).await;
        if let Some(p) = page["items"].as_array().and_then(|a| a.first()) {
            return p.clone();
        }
        if agent.try_wait().ok().flatten().is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let _ = agent.kill();
    let _ = agent.wait();
    let mut said = String::new();
    if let Some(mut o) = agent.stdout.take() {
        let _ = std::io::Read::read_to_string(&mut o, &mut said);
    }
    if let Some(mut e) = agent.stderr.take() {
        let _ = std::io::Read::read_to_string(&mut e, &mut said);
    }
    panic!("{name}'s tool call never reached the inbox; {name} said:\n{said}");
}

/// Waits for the call `id` of a coding agent (`name`) just killed to be withdrawn by its hook,
/// which sees its client gone: within 30 s (about a second alone), and not by its lease.
pub async fn withdrawn_by_its_hook(s: &Server, id: &str, name: &str) {
    let killed = std::time::Instant::now();
    loop {
        let (_, now) = s.get(id, &s.owner.clone()).await;
        if now["status"] != "pending" {
            assert_eq!(now["status"], "withdrawn", "{now}");
            break;
        }
        // Killed as soon as the call is filed, so this also catches a hook that looks for its
        // client only after the filing (it then watched whoever adopted it, and the lease
        // withdrew the call: one run in six with the machine busy). The audit below says who
        // withdrew it.
        assert!(
            killed.elapsed() < Duration::from_secs(30),
            "still pending {:?} after {name} was killed",
            killed.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (_, audit) = s.req(Method::GET, &format!("/proposals/{id}/audit"), Some(&s.owner.clone()), None).await;
    assert!(!audit.to_string().contains("lease"), "withdrawn by the hook, not by the lease: {audit}");
}

/// Runs an SDK's fresh-install script (`dir` from the repository's root): it copies the SDK as
/// a fresh clone has it, installs it into a project outside the repository as its README says,
/// and prints `fresh install: ok` once every documented import worked.
pub fn fresh_install(dir: &str, script: &str) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(dir);
    let out = Command::new("bash").arg(script).current_dir(&dir).output().unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success() && text.contains("fresh install: ok"), "{script} failed:\n{text}");
}
