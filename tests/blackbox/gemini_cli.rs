//! The real Gemini CLI (from the npm registry, installed into `.ci/gemini` on first use) runs
//! headless (`gemini -p`) against a stand-in Gemini API on loopback, with Assent's BeforeTool
//! hook: the model's shell call waits in the inbox, and what the person decides is what runs,
//! and what the model is told.

use crate::harness::{BIN, Server, filed, withdrawn_by_its_hook};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// The Gemini CLI release the tests drive.
const GEMINI_CLI: &str = "@google/gemini-cli@0.61.0";

fn gemini() -> PathBuf {
    let works = |b: &Path| Command::new(b).arg("--version").output().is_ok_and(|o| o.status.success());
    crate::harness::npm_program("gemini", GEMINI_CLI, "gemini", works)
}

/// The stand-in model: it asks for `command` in the shell, then says what came back.
struct Model {
    child: Child,
    url: String,
    log: PathBuf,
}

impl Model {
    fn start(dir: &Path, command: &str) -> Model {
        let log = dir.join("model.log");
        let script = format!("{}/tests/fixtures/gemini/fake_gemini.py", env!("CARGO_MANIFEST_DIR"));
        let mut child =
            Command::new("python3").arg(script).arg(&log).arg(command).stdout(Stdio::piped()).spawn().unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        Model { child, url: format!("http://127.0.0.1:{}", line.trim()), log }
    }

    /// What the model was told of its call, once Gemini sent it back.
    fn told(&self) -> Option<Value> {
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        log.lines().filter_map(|l| serde_json::from_str::<Value>(l).ok()).find_map(|r| {
            r["body"]["contents"]
                .as_array()?
                .iter()
                .flat_map(|c| c["parts"].as_array().into_iter().flatten())
                .find_map(|p| p.get("functionResponse").map(|f| f["response"].clone()))
        })
    }
}

impl Drop for Model {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A project folder (a git repository) and a home for Gemini CLI, with the hook in its user
/// settings.
struct Scene {
    _dir: tempfile::TempDir,
    work: PathBuf,
    home: PathBuf,
}

fn scene(s: &Server) -> Scene {
    let dir = tempfile::Builder::new().prefix("gemini-").tempdir_in("/tmp").unwrap();
    let base = dir.path().canonicalize().unwrap();
    let (work, home) = (base.join("work"), base.join("home"));
    std::fs::create_dir_all(home.join(".gemini")).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(work.join("notes.txt"), "hello from the notes\n").unwrap();
    let git = Command::new("git").args(["init", "-q"]).current_dir(&work).status().unwrap();
    assert!(git.success());
    // As docs/clients.md has it: every tool through the hook (it lets Gemini's read-only tools
    // be), its wait under the hook's own timeout.
    let runner = Path::new(BIN).with_file_name("assent-run");
    let hook = format!("'{}' --home '{}' hook gemini-cli --timeout 50", runner.display(), s.home().display());
    let settings = json!({
        "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": false}},
        "privacy": {"usageStatisticsEnabled": false}, "telemetry": {"enabled": false},
        "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
        "hooks": {"BeforeTool": [{"matcher": "", "hooks": [{"name": "assent", "type": "command", "command": hook, "timeout": 60000}]}]},
    });
    std::fs::write(home.join(".gemini/settings.json"), settings.to_string()).unwrap();
    Scene { _dir: dir, work, home }
}

/// `gemini -p` in the scene, against `model`, with every tool on offer (`--approval-mode yolo`:
/// Gemini's own prompt is off, so only Assent stands between the model and the shell).
fn run_gemini(s: &Server, scene: &Scene, model: &Model) -> Child {
    Command::new(gemini())
        .args(["-m", "gemini-2.5-flash", "-p", "run the command", "--approval-mode", "yolo"])
        .current_dir(&scene.work)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", &scene.home)
        .env("GOOGLE_GEMINI_BASE_URL", &model.url)
        .env("GEMINI_API_KEY", "test-key")
        .envs(s.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits for Gemini CLI to end; what it printed.
fn finish(child: Child) -> String {
    let out = child.wait_with_output().unwrap();
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

#[tokio::test]
async fn gemini_cli_runs_what_the_person_approved() {
    let s = Server::start().await;
    let scene = scene(&s);
    let marker = scene.work.join("marker.txt");
    let model = Model::start(&scene.work, &format!("echo approved > {}", marker.display()));
    let mut g = run_gemini(&s, &scene, &model);
    let p = filed(&s, &mut g, "Gemini CLI").await;
    assert_eq!(p["payload"]["tool"], "run_shell_command");
    assert_eq!(p["payload"]["input"]["command"], format!("echo approved > {}", marker.display()));
    assert_eq!(p["payload"]["client"], "gemini-cli");
    assert_eq!(p["payload"]["cwd"], scene.work.display().to_string());
    assert!(!marker.exists(), "nothing runs before the decision");
    s.decide(p["id"].as_str().unwrap(), json!({"outcome": "approve"})).await;
    let said = finish(g);
    assert_eq!(std::fs::read_to_string(&marker).unwrap_or_default(), "approved\n", "{said}");
}

#[tokio::test]
async fn gemini_cli_is_refused_with_the_persons_reason_and_runs_the_persons_edit() {
    let s = Server::start().await;
    let scene = scene(&s);
    let marker = scene.work.join("marker.txt");
    let model = Model::start(&scene.work, &format!("echo original > {}", marker.display()));
    let mut g = run_gemini(&s, &scene, &model);
    let p = filed(&s, &mut g, "Gemini CLI").await;
    s.decide(p["id"].as_str().unwrap(), json!({"outcome": "reject", "reason": "not in this repository"})).await;
    let said = finish(g);
    assert!(!marker.exists(), "{said}");
    let told = model.told().expect("the model was told");
    assert!(told.to_string().contains("not in this repository"), "{told}");

    let model = Model::start(&scene.work, &format!("echo original > {}", marker.display()));
    let mut g = run_gemini(&s, &scene, &model);
    let p = filed(&s, &mut g, "Gemini CLI").await;
    let edited = format!("echo edited > {}", marker.display());
    s.decide(p["id"].as_str().unwrap(), json!({"outcome": "approve", "edits": {"input": {"command": edited}}})).await;
    let said = finish(g);
    assert_eq!(std::fs::read_to_string(&marker).unwrap_or_default(), "edited\n", "{said}");
}

#[tokio::test]
async fn a_read_the_rules_allow_runs_confined_without_asking() {
    let s = Server::start().await;
    let scene = scene(&s);
    let model = Model::start(&scene.work, "cat notes.txt");
    let g = run_gemini(&s, &scene, &model);
    let said = finish(g);
    let told = model.told().unwrap_or_else(|| panic!("the model was told nothing:\n{said}"));
    assert!(told.to_string().contains("hello from the notes"), "{told}\n{said}");
    let (_, page) = s.req(reqwest::Method::GET, "/proposals", Some(&s.owner), None).await;
    let p = &page["items"][0];
    assert_eq!(p["status"], "approved", "{p}");
    assert_eq!(p["decision"]["confine"], "read", "allowed only confined: {p}");
}

#[tokio::test]
async fn a_killed_gemini_cli_leaves_no_question_behind() {
    let s = Server::start().await;
    let scene = scene(&s);
    let marker = scene.work.join("marker.txt");
    let model = Model::start(&scene.work, &format!("echo never > {}", marker.display()));
    let mut g = run_gemini(&s, &scene, &model);
    let p = filed(&s, &mut g, "Gemini CLI").await;
    let id = p["id"].as_str().unwrap().to_string();
    // Gemini CLI relaunches itself in a child process, which runs the hook: the one killed is
    // the `gemini` a person started, and the hook sees it gone.
    let relaunched = Command::new("pgrep").args(["-P", &g.id().to_string()]).output().unwrap();
    g.kill().unwrap();
    let _ = g.wait();
    withdrawn_by_its_hook(&s, &id, "Gemini CLI").await;
    for pid in String::from_utf8_lossy(&relaunched.stdout).split_whitespace() {
        let _ = Command::new("kill").args(["-KILL", pid]).status();
    }
    assert!(!marker.exists());
}
