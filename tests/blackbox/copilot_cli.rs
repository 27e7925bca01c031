//! The real GitHub Copilot CLI (from the npm registry, installed into `.ci/copilot` on first
//! use) runs headless (`copilot -p`) against a stand-in OpenAI-compatible model on loopback (its
//! own-model mode), with Assent's preToolUse hook: the model's shell call waits in the inbox, and
//! what the person decides is what runs, and what the model is told.

use crate::harness::{BIN, Server, filed, withdrawn_by_its_hook};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// The Copilot CLI release the tests drive.
const COPILOT_CLI: &str = "@github/copilot@1.0.102";

fn copilot() -> PathBuf {
    let works = |b: &Path| Command::new(b).arg("--version").output().is_ok_and(|o| o.status.success());
    crate::harness::npm_program("copilot", COPILOT_CLI, "copilot", works)
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
        let script = format!("{}/tests/fixtures/copilot/fake_openai.py", env!("CARGO_MANIFEST_DIR"));
        let mut child =
            Command::new("python3").arg(script).arg(&log).arg(command).stdout(Stdio::piped()).spawn().unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        Model { child, url: format!("http://127.0.0.1:{}/v1", line.trim()), log }
    }

    /// What the model was told of its call, once Copilot sent it back.
    fn told(&self) -> Option<String> {
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        log.lines().filter_map(|l| serde_json::from_str::<Value>(l).ok()).find_map(|r| {
            let messages = r["body"]["messages"].as_array()?.clone();
            messages.iter().find(|m| m["role"] == "tool").map(|m| m["content"].to_string())
        })
    }
}

impl Drop for Model {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A project folder (a git repository) and a Copilot home with the hook in its user hooks.
struct Scene {
    _dir: tempfile::TempDir,
    work: PathBuf,
    home: PathBuf,
}

fn scene(s: &Server) -> Scene {
    let dir = tempfile::Builder::new().prefix("copilot-").tempdir_in("/tmp").unwrap();
    let base = dir.path().canonicalize().unwrap();
    let (work, home) = (base.join("work"), base.join("home"));
    std::fs::create_dir_all(home.join(".copilot/hooks")).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(work.join("notes.txt"), "hello from the notes\n").unwrap();
    let git = Command::new("git").args(["init", "-q"]).current_dir(&work).status().unwrap();
    assert!(git.success());
    // As docs/clients.md has it: the hook's wait under the hook's own timeout.
    let runner = Path::new(BIN).with_file_name("assent-run");
    let hook = format!("'{}' --home '{}' hook copilot-cli --timeout 50", runner.display(), s.home().display());
    let hooks = json!({"version": 1, "hooks": {"preToolUse": [{"type": "command", "bash": hook, "timeoutSec": 60}]}});
    std::fs::write(home.join(".copilot/hooks/assent.json"), hooks.to_string()).unwrap();
    Scene { _dir: dir, work, home }
}

/// `copilot -p` in the scene, against `model`. No `--allow-all-tools`: only the hook allows.
fn run_copilot(s: &Server, scene: &Scene, model: &Model) -> Child {
    Command::new(copilot())
        .args(["-p", "run the command"])
        .current_dir(&scene.work)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", &scene.home)
        .env("COPILOT_HOME", scene.home.join(".copilot"))
        .env("COPILOT_OFFLINE", "true")
        .env("COPILOT_AUTO_UPDATE", "false")
        .env("COPILOT_PROVIDER_BASE_URL", &model.url)
        .env("COPILOT_PROVIDER_API_KEY", "test-key")
        .env("COPILOT_MODEL", "gpt-4.1")
        .envs(s.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits for Copilot CLI to end; what it printed.
fn finish(child: Child) -> String {
    let out = child.wait_with_output().unwrap();
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

#[tokio::test]
async fn copilot_cli_runs_what_the_person_approved() {
    let s = Server::start().await;
    let scene = scene(&s);
    let marker = scene.work.join("marker.txt");
    let model = Model::start(&scene.work, &format!("echo approved > {}", marker.display()));
    let mut c = run_copilot(&s, &scene, &model);
    let p = filed(&s, &mut c, "Copilot CLI").await;
    assert_eq!(p["payload"]["tool"], "bash");
    assert_eq!(p["payload"]["input"]["command"], format!("echo approved > {}", marker.display()));
    assert_eq!(p["payload"]["client"], "copilot-cli");
    assert_eq!(p["payload"]["cwd"], scene.work.display().to_string());
    assert!(!marker.exists(), "nothing runs before the decision");
    s.decide(p["id"].as_str().unwrap(), json!({"outcome": "approve"})).await;
    let said = finish(c);
    assert_eq!(std::fs::read_to_string(&marker).unwrap_or_default(), "approved\n", "{said}");
}

#[tokio::test]
async fn copilot_cli_is_refused_with_the_persons_reason_and_runs_the_persons_edit() {
    let s = Server::start().await;
    let scene = scene(&s);
    let marker = scene.work.join("marker.txt");
    let model = Model::start(&scene.work, &format!("echo original > {}", marker.display()));
    let mut c = run_copilot(&s, &scene, &model);
    let p = filed(&s, &mut c, "Copilot CLI").await;
    s.decide(p["id"].as_str().unwrap(), json!({"outcome": "reject", "reason": "not in this repository"})).await;
    let said = finish(c);
    assert!(!marker.exists(), "{said}");
    let told = model.told().unwrap_or_else(|| panic!("the model was told nothing:\n{said}"));
    assert!(told.contains("not in this repository"), "{told}");

    let model = Model::start(&scene.work, &format!("echo original > {}", marker.display()));
    let mut c = run_copilot(&s, &scene, &model);
    let p = filed(&s, &mut c, "Copilot CLI").await;
    let edited = json!({"command": format!("echo edited > {}", marker.display()), "description": "run it"});
    s.decide(p["id"].as_str().unwrap(), json!({"outcome": "approve", "edits": {"input": edited}})).await;
    let said = finish(c);
    assert_eq!(std::fs::read_to_string(&marker).unwrap_or_default(), "edited\n", "{said}");
}

#[tokio::test]
async fn a_read_the_rules_allow_runs_confined_without_asking() {
    let s = Server::start().await;
    let scene = scene(&s);
    let model = Model::start(&scene.work, "cat notes.txt");
    let said = finish(run_copilot(&s, &scene, &model));
    let told = model.told().unwrap_or_else(|| panic!("the model was told nothing:\n{said}"));
    assert!(told.contains("hello from the notes"), "{told}\n{said}");
    let (_, page) = s.req(reqwest::Method::GET, "/proposals", Some(&s.owner), None).await;
    let p = &page["items"][0];
    assert_eq!(p["status"], "approved", "{p}");
    assert_eq!(p["decision"]["confine"], "read", "allowed only confined: {p}");
}

#[tokio::test]
async fn a_killed_copilot_cli_leaves_no_question_behind() {
    let s = Server::start().await;
    let scene = scene(&s);
    let marker = scene.work.join("marker.txt");
    let model = Model::start(&scene.work, &format!("echo never > {}", marker.display()));
    let mut c = run_copilot(&s, &scene, &model);
    let p = filed(&s, &mut c, "Copilot CLI").await;
    let id = p["id"].as_str().unwrap().to_string();
    // `copilot` (a loader) runs the native Copilot CLI, which runs the hook: the one killed is
    // the `copilot` a person started, and the hook sees it gone.
    let native = Command::new("pgrep").args(["-P", &c.id().to_string()]).output().unwrap();
    c.kill().unwrap();
    let _ = c.wait();
    withdrawn_by_its_hook(&s, &id, "Copilot CLI").await;
    for pid in String::from_utf8_lossy(&native.stdout).split_whitespace() {
        let _ = Command::new("kill").args(["-KILL", pid]).status();
    }
    assert!(!marker.exists());
}
