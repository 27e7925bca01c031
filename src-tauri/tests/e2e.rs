//! The real desktop app under Xvfb, driven by WebDriver (tauri-driver with WebKitWebDriver):
//! a proposal posted over HTTP appears, its diff is shown, a click approves it, and the agent's
//! waiting request returns with the outcome; the same for a rejection with a reason. Saves
//! screenshots of the inbox, a diff and the credentials page (into `docs/` when
//! `ASSENT_UPDATE_SCREENSHOTS=1`, else `target/e2e/`).
//!
//! Needs tauri-driver (`.ci/bin/bin/tauri-driver`, `TAURI_DRIVER`, or on PATH),
//! /usr/bin/WebKitWebDriver, xvfb-run and dbus-daemon: `scripts/test.sh` installs them.

#![allow(missing_docs, clippy::unwrap_used)]

use base64::Engine as _;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const APP: &str = env!("CARGO_BIN_EXE_assent-desktop");
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn tauri_driver() -> PathBuf {
    if let Ok(p) = std::env::var("TAURI_DRIVER") {
        return p.into();
    }
    let local = root().join(".ci/bin/bin/tauri-driver");
    if local.exists() {
        return local;
    }
    let home = PathBuf::from(
        std::env::var("CARGO_HOME").unwrap_or_else(|_| format!("{}/.cargo", std::env::var("HOME").unwrap())),
    );
    let p = home.join("bin/tauri-driver");
    assert!(
        p.exists(),
        "tauri-driver is needed: cargo install tauri-driver --locked --root .ci/bin (scripts/test.sh does)"
    );
    p
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

struct Env {
    driver: Child,
    port: u16,
    home: tempfile::TempDir,
    _dirs: tempfile::TempDir,
}

impl Drop for Env {
    fn drop(&mut self) {
        // tauri-driver and everything under xvfb-run share its process group.
        let _ = Command::new("pkill").args(["-TERM", "-g"]).arg(self.driver.id().to_string()).status();
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

fn start() -> Env {
    use std::os::unix::process::CommandExt;
    let dirs = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("config.toml"), "port = 0\n").unwrap();
    let (port, native) = (free_port(), free_port());
    let runtime = dirs.path().join("run");
    std::fs::create_dir_all(&runtime).unwrap();
    // The app's log (and the driver's), said when an element never comes.
    std::fs::create_dir_all(root().join("target/e2e")).unwrap();
    let log = std::fs::File::create(root().join("target/e2e/app.log")).unwrap();
    let driver = Command::new("xvfb-run")
        .args(["-a", "-s", "-screen 0 1280x800x24", "dbus-run-session", "--"])
        .arg(tauri_driver())
        .args(["--port", &port.to_string(), "--native-port", &native.to_string()])
        .args(["--native-driver", "/usr/bin/WebKitWebDriver"])
        .env("HOME", dirs.path())
        .env("XDG_RUNTIME_DIR", &runtime)
        .env("XDG_DATA_HOME", dirs.path().join("data"))
        .env("XDG_CONFIG_HOME", dirs.path().join("config"))
        .env("XDG_CACHE_HOME", dirs.path().join("cache"))
        .env("ASSENT_HOME", home.path())
        .env("ASSENT_OWNER_CREDENTIAL", "file")
        .env("ASSENT_LOG", "debug,hyper=info,sqlx=warn,tao=info,zbus=info")
        .stdout(Stdio::null())
        .stderr(log)
        .process_group(0)
        .spawn()
        .expect("xvfb-run is needed for the desktop tests");
    let env = Env { driver, port, home, _dirs: dirs };
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "tauri-driver did not listen");
        std::thread::sleep(Duration::from_millis(100));
    }
    env
}

struct Driver {
    http: reqwest::Client,
    base: String,
}

impl Driver {
    async fn call(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
        let mut r = self.http.request(method, format!("{}{path}", self.base));
        if let Some(b) = body {
            r = r.json(&b);
        }
        let v: Value = r.send().await.unwrap().json().await.unwrap();
        v["value"].clone()
    }
    async fn find(&self, css: &str) -> Option<String> {
        let v =
            self.call(reqwest::Method::POST, "/element", Some(json!({"using": "css selector", "value": css}))).await;
        v[ELEMENT].as_str().map(String::from)
    }
    async fn wait_for(&self, css: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(e) = self.find(css).await {
                return e;
            }
            if Instant::now() > deadline {
                // Said first: the window may no longer answer a screenshot.
                eprintln!("no element {css} after 20 s");
                let src = self.call(reqwest::Method::GET, "/source", None).await;
                let src: String = src.as_str().unwrap_or_default().chars().take(3000).collect();
                eprintln!("page:\n{src}");
                diagnose();
                self.screenshot("failure.png").await;
                panic!("no element {css}; screenshot in target/e2e/failure.png; page:\n{src}");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    async fn click(&self, css: &str) {
        let e = self.wait_for(css).await;
        self.call(reqwest::Method::POST, &format!("/element/{e}/click"), Some(json!({}))).await;
    }
    async fn text(&self, css: &str) -> String {
        let e = self.wait_for(css).await;
        self.call(reqwest::Method::GET, &format!("/element/{e}/text"), None)
            .await
            .as_str()
            .unwrap_or_default()
            .to_string()
    }
    /// Waits until the element's text is `want` (the app updates after its own round trip,
    /// which may end after the agent has already heard the decision); the last text seen.
    async fn text_becomes(&self, css: &str, want: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let t = self.text(css).await;
            if t == want || Instant::now() > deadline {
                return t;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    /// The element's text now, none if there is no such element (no waiting).
    async fn text_now(&self, css: &str) -> Option<String> {
        let e = self.find(css).await?;
        self.call(reqwest::Method::GET, &format!("/element/{e}/text"), None).await.as_str().map(String::from)
    }
    /// Runs `script` in the page.
    async fn execute(&self, script: &str) -> Value {
        self.call(reqwest::Method::POST, "/execute/sync", Some(json!({"script": script, "args": []}))).await
    }
    async fn type_into(&self, css: &str, text: &str) {
        let e = self.wait_for(css).await;
        self.call(reqwest::Method::POST, &format!("/element/{e}/value"), Some(json!({"text": text}))).await;
    }
    async fn screenshot(&self, name: &str) {
        let v = self.call(reqwest::Method::GET, "/screenshot", None).await;
        let png = base64::engine::general_purpose::STANDARD.decode(v.as_str().unwrap()).unwrap();
        let dir = if name != "failure.png" && std::env::var("ASSENT_UPDATE_SCREENSHOTS").is_ok_and(|v| v == "1") {
            root().join("docs")
        } else {
            root().join("target/e2e")
        };
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(name), png).unwrap();
    }
}

/// Says what the app was doing: the end of its log, and where each of its threads is (when gdb
/// is at hand), for a window that stopped answering.
fn diagnose() {
    let log = std::fs::read_to_string(root().join("target/e2e/app.log")).unwrap_or_default();
    let lines: Vec<&str> = log.lines().collect();
    eprintln!("app log (last 60 lines):\n{}", lines[lines.len().saturating_sub(60)..].join("\n"));
    let pid = Command::new("pgrep")
        .args(["-n", "-f", APP])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    if let Ok(pid) = pid.as_deref() {
        let bt = Command::new("gdb").args(["-p", pid, "-batch", "-ex", "thread apply all bt 30"]).output();
        if let Ok(bt) = bt {
            let text = String::from_utf8_lossy(&bt.stdout);
            let _ = std::fs::write(root().join("target/e2e/app-threads.txt"), text.as_bytes());
            eprintln!("app threads:\n{text}");
        }
    }
}

/// Waits up to 10 s for `done`, failing with `what` otherwise.
async fn eventually<F: std::future::Future<Output = bool>>(what: &str, done: impl Fn() -> F) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done().await {
        assert!(Instant::now() < deadline, "{what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn api(home: &Path) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(s) = std::fs::read_to_string(home.join("server.json")) {
            let v: Value = serde_json::from_str(&s).unwrap();
            return format!("{}/v1", v["url"].as_str().unwrap().trim_end_matches('/'));
        }
        assert!(Instant::now() < deadline, "the app did not start its API");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The app in a WebDriver session, and an agent and the owner talking to its API.
struct Scene {
    d: Driver,
    http: reqwest::Client,
    /// The API's base URL (`.../v1`).
    base: String,
    /// The agent's token.
    token: String,
    /// The owner's token.
    owner: String,
}

impl Scene {
    /// Files a proposal as the agent; its id.
    async fn propose(&self, body: Value) -> String {
        let p =
            self.send(self.http.post(format!("{}/proposals", self.base)).bearer_auth(&self.token).json(&body)).await;
        p["id"].as_str().unwrap_or_else(|| panic!("{p}")).to_string()
    }

    /// The agent's wait on `id` (60 s), started now.
    fn wait(&self, id: &str) -> tokio::task::JoinHandle<Value> {
        let req = self.http.get(format!("{}/proposals/{id}?wait=60", self.base)).bearer_auth(&self.token);
        tokio::spawn(async move { req.send().await.unwrap().json().await.unwrap() })
    }

    /// What a wait started by [`Scene::wait`] returned, within 30 s.
    async fn answered(waiter: tokio::task::JoinHandle<Value>) -> Value {
        tokio::time::timeout(Duration::from_secs(30), waiter).await.unwrap().unwrap()
    }

    /// A request's JSON answer.
    async fn send(&self, req: reqwest::RequestBuilder) -> Value {
        req.send().await.unwrap().json().await.unwrap()
    }

    /// Clicks the inbox row of `id`.
    async fn open(&self, id: &str) {
        self.d.click(&format!("[data-testid=\"row\"][data-id=\"{id}\"]")).await;
    }
}

#[tokio::test]
async fn the_app_shows_a_proposal_and_a_click_decides_it() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let env = start();
    let http = reqwest::Client::builder().no_proxy().timeout(Duration::from_secs(120)).build().unwrap();
    let caps = json!({"capabilities": {"alwaysMatch": {"browserName": "wry", "tauri:options": {"application": APP}}}});
    // tauri-driver accepts connections a moment before it serves sessions.
    let mut tries = 0;
    let s: Value = loop {
        match http.post(format!("http://127.0.0.1:{}/session", env.port)).json(&caps).send().await {
            Ok(r) => break r.json().await.unwrap(),
            Err(e) if tries < 50 => {
                tries += 1;
                let _ = e;
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Err(e) => panic!("no WebDriver session: {e}"),
        }
    };
    let session = s["value"]["sessionId"].as_str().unwrap_or_else(|| panic!("no WebDriver session: {s}")).to_string();
    let d = Driver { http: http.clone(), base: format!("http://127.0.0.1:{}/session/{session}", env.port) };
    let read = |name: &str| std::fs::read_to_string(env.home.path().join(name)).unwrap().trim().to_string();
    let sc = Scene {
        d,
        http: http.clone(),
        base: api(env.home.path()),
        token: read("agent.token"),
        owner: read("owner.token"),
    };

    approve_with_a_click(&sc).await;
    reject_with_a_reason(&sc).await;
    a_slow_load_never_shows_one_and_decides_another(&sc).await;
    let similar_rule = approve_and_allow_similar(&sc).await;
    the_rules_page(&sc, &similar_rule).await;
    inbox_and_credentials(&sc).await;
    settings(&sc, &env).await;
    answering_from_a_phone(&sc).await;

    http.delete(format!("http://127.0.0.1:{}/session/{session}", env.port)).send().await.unwrap();
}

/// Approve with a click: the diff shown, the write applied, the click's receipt checked.
async fn approve_with_a_click(sc: &Scene) {
    let d = &sc.d;
    let files = tempfile::tempdir().unwrap();
    let target = files.path().join("greeting.txt");
    std::fs::write(&target, "hello\nworld\n").unwrap();
    let id = sc
        .propose(json!({"kind": "file.write", "title": "Greet the world politely",
        "payload": {"path": target.to_str().unwrap(), "content": "hello\nwonderful world\n"}}))
        .await;
    let waiter = sc.wait(&id);
    sc.open(&id).await;
    let diff = d.text("[data-testid=\"diff\"]").await;
    assert!(diff.contains("wonderful world") && diff.contains("world"), "{diff}");
    d.screenshot("app-diff.png").await;
    d.click("[data-testid=\"approve\"]").await;
    let done = Scene::answered(waiter).await;
    assert_eq!(done["status"], "applied", "{done}");
    assert_eq!(done["decision"]["outcome"], "approve");
    assert_eq!(done["decision"]["channel"], "app");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "hello\nwonderful world\n");
    // The click's receipt, checked with the app's published keys: an approval through the app,
    // over exactly the content written.
    let jwks = sc.send(sc.http.get(format!("{}/keys", sc.base))).await;
    let keys = assent_receipt::KeySet::from_json(&jwks).unwrap();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64;
    let expect = assent_receipt::Expect { payload: Some(&done["payload"]), approved: true, ..Default::default() };
    let claims = assent_receipt::verify(done["decision"]["receipt"].as_str().unwrap(), &keys, &expect, now).unwrap();
    assert_eq!((claims.channel.as_str(), claims.jti.as_str()), ("app", id.as_str()));
}

/// Reject with a reason: the agent hears it, the badge says it.
async fn reject_with_a_reason(sc: &Scene) {
    let d = &sc.d;
    let id = sc
        .propose(json!({"kind": "tool.call", "title": "Deploy to production",
        "payload": {"tool": "Bash", "input": {"command": "make deploy"}}}))
        .await;
    let waiter = sc.wait(&id);
    sc.open(&id).await;
    d.click("[data-testid=\"reject\"]").await;
    d.type_into("[data-testid=\"reason\"]", "not on a Friday").await;
    d.click("[data-testid=\"confirm-reject\"]").await;
    let done = Scene::answered(waiter).await;
    assert_eq!(done["status"], "rejected", "{done}");
    assert_eq!(done["decision"]["reason"], "not on a Friday");
    assert_eq!(d.text_becomes("[data-testid=\"status-badge\"]", "rejected").await, "rejected");
}

/// A slow load never shows one proposal with buttons that act on another. The app's loads
/// of a proposal are held 1.5 s (a slow machine, or a large proposal); while one is shown,
/// another row is clicked: until it has loaded, nothing of the first and no buttons are on
/// screen, and the approval made once it shows is of the one shown.
async fn a_slow_load_never_shows_one_and_decides_another(sc: &Scene) {
    let d = &sc.d;
    let tool = |title: &str, command: &str| json!({"kind": "tool.call", "title": title, "payload": {"tool": "Bash", "input": {"command": command}}});
    let first = sc.propose(tool("Restart the staging database", "systemctl restart staging-db")).await;
    let second = sc.propose(tool("Say hello", "echo second-proposal")).await;
    sc.open(&first).await;
    eventually("the first proposal shown", || async {
        d.text_now("[data-testid=\"detail\"]").await.is_some_and(|t| t.contains("restart staging-db"))
    })
    .await;
    d.wait_for("[data-testid=\"approve\"]").await;
    let slowed = d
        .execute(
            // Tauri's calls go through the page's `fetch` (its `ipc:` protocol).
            "const real = window.fetch; window.__realFetch = real;
             window.fetch = (url, init) => String(url).includes('get_proposal')
               ? new Promise((r) => setTimeout(r, 1500)).then(() => real(url, init))
               : real(url, init);
             return window.fetch !== real;",
        )
        .await;
    assert_eq!(slowed, json!(true), "the page's calls could not be slowed");
    let clicked = Instant::now();
    sc.open(&second).await;
    let mut looked = 0;
    while clicked.elapsed() < Duration::from_millis(1000) {
        let detail = d.text_now("[data-testid=\"detail\"]").await.unwrap_or_default();
        assert!(!detail.contains("restart staging-db"), "the first proposal is still shown: {detail}");
        assert!(d.find("[data-testid=\"approve\"]").await.is_none(), "buttons while the second loads: {detail}");
        looked += 1;
    }
    assert!(looked >= 2, "the page was looked at {looked} times while it loaded");
    eventually("the second proposal shown", || async {
        d.text_now("[data-testid=\"detail\"]").await.is_some_and(|t| t.contains("echo second-proposal"))
    })
    .await;
    d.execute("window.fetch = window.__realFetch; return true;").await;
    let waiter = sc.wait(&second);
    d.click("[data-testid=\"approve\"]").await;
    let done = Scene::answered(waiter).await;
    assert_eq!((done["id"].as_str(), done["decision"]["outcome"].as_str()), (Some(second.as_str()), Some("approve")));
    let first_now = sc.send(sc.http.get(format!("{}/proposals/{first}", sc.base)).bearer_auth(&sc.token)).await;
    assert_eq!(first_now["status"], "pending", "{first_now}");
}

/// Approve and allow similar: the rule in words first; it then decides the next one. As
/// Claude Code's hook files a Bash call, from a project: a saved rule runs it confined. The
/// rule's id.
async fn approve_and_allow_similar(sc: &Scene) -> String {
    let d = &sc.d;
    // As Claude Code's hook files a Bash call, from a project: a saved rule runs it confined.
    let project = tempfile::tempdir().unwrap();
    let cwd = project.path().canonicalize().unwrap();
    let bash = |title: &str, command: &str| json!({"kind": "tool.call", "title": title, "payload": {"tool": "Bash", "input": {"command": command}, "cwd": cwd, "confinable": true}});
    let id = sc.propose(bash("Run the tests in watch mode", "npm test -- --watch")).await;
    let waiter = sc.wait(&id);
    sc.open(&id).await;
    d.click("[data-testid=\"allow-similar\"]").await;
    let words = d.text("[data-testid=\"similar-words\"]").await;
    // A command that runs code is saved exactly as approved.
    assert!(
        words.contains("allow agent default to run exactly npm test -- --watch with tool Bash, confined (workspace)"),
        "{words}"
    );
    assert!(words.contains("for 1 hour"), "{words}");
    d.screenshot("app-allow-similar.png").await;
    d.click("[data-testid=\"confirm-similar\"]").await;
    let done = Scene::answered(waiter).await;
    assert_eq!((done["status"].as_str(), done["decision"]["channel"].as_str()), (Some("approved"), Some("app")));
    let next = sc.propose(bash("Run the tests again", "npm test -- --watch")).await;
    let next = Scene::answered(sc.wait(&next)).await;
    assert_eq!(
        (next["status"].as_str(), next["decision"]["channel"].as_str()),
        (Some("approved"), Some("rule")),
        "{next}"
    );
    next["decision"]["rule"]["id"].as_str().unwrap().to_string()
}

/// The Rules page: a rule added elsewhere (here the owner API, as the CLI does) shows up
/// while the page is open; a rule removed from the page is gone.
async fn the_rules_page(sc: &Scene, similar_rule: &str) {
    let d = &sc.d;
    d.click("[data-testid=\"nav-rules\"]").await;
    d.wait_for(&format!("[data-testid=\"rule-row\"][data-id=\"{similar_rule}\"]")).await;
    let deny_rm =
        json!({"effect": "deny", "match": {"tool": "Bash", "input": "rm"}, "note": "no deletes from a shell"});
    let added = sc.send(sc.http.post(format!("{}/rules", sc.base)).bearer_auth(&sc.owner).json(&deny_rm)).await;
    let deny = added["id"].as_str().unwrap_or_else(|| panic!("{added}")).to_string();
    let row = d.text(&format!("[data-testid=\"rule-row\"][data-id=\"{deny}\"]")).await;
    assert!(row.contains("refuse to let any agent run rm … with tool Bash"), "{row}");
    assert!(row.contains("no deletes from a shell"), "{row}");
    let similar_row = d.text(&format!("[data-testid=\"rule-row\"][data-id=\"{similar_rule}\"]")).await;
    assert!(similar_row.contains("matched 1") && similar_row.contains("expires in"), "{similar_row}");
    d.screenshot("app-rules.png").await;
    d.click(&format!("[data-testid=\"rule-row\"][data-id=\"{similar_rule}\"] [data-testid=\"remove-rule\"]")).await;
    d.click(&format!("[data-testid=\"rule-row\"][data-id=\"{similar_rule}\"] [data-testid=\"confirm-remove\"]")).await;
    let removed = format!("[data-testid=\"rule-row\"][data-id=\"{similar_rule}\"]");
    let (d_ref, removed) = (&d, &removed);
    eventually("the removed rule is still shown", move || async move { d_ref.find(removed).await.is_none() }).await;
    let rules = sc.send(sc.http.get(format!("{}/rules", sc.base)).bearer_auth(&sc.owner)).await;
    let ids: Vec<&str> = rules["items"].as_array().unwrap().iter().filter_map(|r| r["id"].as_str()).collect();
    assert_eq!(ids, vec!["r_builtin_read_only", deny.as_str()], "the built-in rule and the deny: {rules}");
    d.click("[data-testid=\"nav-inbox\"]").await;
}

/// A few more for the inbox picture, then the credentials page.
async fn inbox_and_credentials(sc: &Scene) {
    let d = &sc.d;
    for (t, c) in [("Run the test suite", "cargo test"), ("Tag the release", "git tag v0.2.0")] {
        sc.propose(json!({"kind": "tool.call", "title": t, "payload": {"tool": "Bash", "input": {"command": c}}}))
            .await;
    }
    d.wait_for("[data-testid=\"row\"][data-status=\"pending\"]").await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    d.screenshot("app-inbox.png").await;
    d.click("[data-testid=\"nav-credentials\"]").await;
    d.wait_for("[data-testid=\"credential-form\"]").await;
    d.screenshot("app-credentials.png").await;
}

/// Settings: the version and commit are the command line's, and "Start Assent when I log in"
/// writes the login item (opening in the tray) and removes it again.
async fn settings(sc: &Scene, env: &Env) {
    let d = &sc.d;
    d.click("[data-testid=\"nav-settings\"]").await;
    // `cargo test --workspace` builds the command line beside the app, from the same commit.
    let cli = Command::new(root().join("target/debug/assent")).arg("--version").output();
    let version = d.text("[data-testid=\"version\"]").await;
    assert!(version.contains(" (commit "), "{version}");
    if let Ok(out) = cli {
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), format!("assent {version}"));
    }
    let item = env._dirs.path().join(".config/autostart/Assent.desktop");
    assert!(!item.exists(), "off by default");
    d.click("[data-testid=\"autostart\"]").await;
    let at = &item;
    eventually(&format!("no login item at {}", item.display()), move || async move { at.exists() }).await;
    let desktop = std::fs::read_to_string(&item).unwrap();
    assert!(desktop.contains("assent-desktop --autostart"), "{desktop}");
    d.screenshot("app-settings.png").await;
    d.click("[data-testid=\"autostart\"]").await;
    eventually("the login item stayed", move || async move { !at.exists() }).await;
}

/// Answering from a phone: turned on from Settings, the app's engine listens on loopback at
/// the port shown, and a pairing link with its QR code appears.
async fn answering_from_a_phone(sc: &Scene) {
    let d = &sc.d;
    let port = free_port();
    let origin = format!("http://localhost:{port}");
    d.type_into("[data-testid=\"remote-origin-input\"]", &origin).await;
    d.click("[data-testid=\"remote-on\"]").await;
    let address = d.text_becomes("[data-testid=\"remote-address\"]", "127.0.0.1:4518").await;
    assert_eq!(address, "127.0.0.1:4518", "the default port");
    // As a tunnel would reach it (the origin's Host, on the listener's port): up, and asking
    // for a passkey session; another Host is refused.
    let me =
        sc.http.get("http://127.0.0.1:4518/api/me").header("Host", format!("localhost:{port}")).send().await.unwrap();
    assert_eq!(me.status(), 401, "no session yet");
    let other = sc.http.get("http://127.0.0.1:4518/api/me").header("Host", "evil.example").send().await.unwrap();
    assert_eq!(other.status(), 421, "the listener answers only its origin");
    d.type_into("[data-testid=\"pair-name\"]", "pixel").await;
    d.click("[data-testid=\"pair\"]").await;
    let link = d.text("[data-testid=\"pair-link\"]").await;
    assert!(link.starts_with(&format!("{origin}/#pair=")) && link.ends_with("&name=pixel"), "{link}");
    d.wait_for("[data-testid=\"pair-qr\"] rect").await;
    d.screenshot("app-settings-remote.png").await;
    d.click("[data-testid=\"remote-off\"]").await;
    d.wait_for("[data-testid=\"remote-on\"]").await;
}
