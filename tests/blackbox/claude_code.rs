//! The real Claude Code (from the npm registry, installed into `.ci/claude` on first use) runs
//! headless (`claude -p`) against a stand-in model server on loopback, with Assent's
//! PreToolUse hook: the model's Bash call waits in the inbox, and what the person decides is
//! what happens, and what the model is told.

use crate::harness::{BIN, Server};
use reqwest::Method;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The Claude Code release the tests drive.
const CLAUDE_CODE: &str = "@anthropic-ai/claude-code@2.1.330";

static INSTALL: Mutex<Option<PathBuf>> = Mutex::new(None);

fn claude() -> PathBuf {
    let mut guard = INSTALL.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = guard.as_ref() {
        return p.clone();
    }
    let prefix = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".ci/claude");
    let bin = prefix.join("node_modules/.bin/claude");
    let works = |b: &PathBuf| Command::new(b).arg("--version").output().is_ok_and(|o| o.status.success());
    if !works(&bin) {
        let out = Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--prefix"])
            .arg(&prefix)
            .arg(CLAUDE_CODE)
            .output()
            .unwrap();
        assert!(out.status.success(), "npm install {CLAUDE_CODE}: {}", String::from_utf8_lossy(&out.stderr));
        assert!(works(&bin), "claude --version fails after installing it");
    }
    *guard = Some(bin.clone());
    bin
}

/// The stand-in model server: its URL and the log of tool results.
struct Model {
    child: Child,
    url: String,
    log: PathBuf,
}

impl Model {
    fn start(dir: &std::path::Path, command: &str) -> Model {
        let log = dir.join("model.log");
        let script = format!("{}/tests/fixtures/claude/fake_model.py", env!("CARGO_MANIFEST_DIR"));
        let mut child = Command::new("python3")
            .arg(script)
            .arg(&log)
            .arg(command)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        Model { child, url: format!("http://127.0.0.1:{}", line.trim()), log }
    }

    /// What the model was told about its tool call.
    fn tool_results(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .map(|v| v["tool_result"].clone())
            .collect()
    }
}

impl Drop for Model {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `claude -p` in `work` with Assent's hook (`--timeout` seconds) in its settings.
fn run_claude(s: &Server, model: &Model, work: &std::path::Path, timeout: u64) -> Child {
    let home = work.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let hook = format!("'{BIN}' --home '{}' hook claude-code --timeout {timeout}", s.home().display());
    let settings = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": hook, "timeout": 120}]}]}});
    let file = work.join("settings.json");
    std::fs::write(&file, settings.to_string()).unwrap();
    Command::new(claude())
        .args(["-p", "write the marker file", "--settings"])
        .arg(&file)
        .current_dir(work)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", &home)
        .env("ANTHROPIC_BASE_URL", &model.url)
        .env("ANTHROPIC_API_KEY", "test-key")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .envs(s.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

async fn pending(s: &Server, claude_run: &mut Child) -> Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        let (_, page) = s.req(Method::GET, "/proposals?status=pending", Some(&s.owner), None).await;
        if let Some(p) = page["items"].as_array().and_then(|a| a.first()) {
            return p.clone();
        }
        if claude_run.try_wait().ok().flatten().is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let _ = claude_run.kill();
    let mut out = String::new();
    if let Some(mut o) = claude_run.stdout.take() {
        let _ = std::io::Read::read_to_string(&mut o, &mut out);
    }
    if let Some(mut e) = claude_run.stderr.take() {
        let _ = std::io::Read::read_to_string(&mut e, &mut out);
    }
    panic!("Claude Code's tool call never reached the inbox; Claude Code said:\n{out}");
}

fn finish(child: Child) -> String {
    let out = child.wait_with_output().unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "claude failed: {text}");
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_runs_the_call_the_person_approved_and_not_the_one_rejected() {
    let s = Server::start().await;
    let work = tempfile::tempdir().unwrap();
    let marker = work.path().join("marker.txt");
    let model = Model::start(work.path(), &format!("echo approved > {}", marker.display()));

    // Approved in the inbox: the call runs.
    let mut claude_run = run_claude(&s, &model, work.path(), 60);
    let p = pending(&s, &mut claude_run).await;
    assert_eq!(p["title"], format!("Bash: echo approved > {}", marker.display()));
    assert!(p["summary"].as_str().unwrap().contains(&work.path().display().to_string()), "the working folder");
    s.decide(p["id"].as_str().unwrap(), json!({"outcome": "approve"})).await;
    finish(claude_run);
    assert_eq!(std::fs::read_to_string(&marker).unwrap().trim(), "approved");

    // Rejected with a reason: nothing runs, and the model reads the reason.
    std::fs::remove_file(&marker).unwrap();
    let mut claude_run = run_claude(&s, &model, work.path(), 60);
    let p = pending(&s, &mut claude_run).await;
    s.decide(p["id"].as_str().unwrap(), json!({"outcome": "reject", "reason": "not on the build box"})).await;
    finish(claude_run);
    assert!(!marker.exists(), "a rejected call never runs");
    let told = model.tool_results().last().cloned().unwrap_or(Value::Null).to_string();
    assert!(told.contains("Rejected in Assent: not on the build box"), "{told}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headless_claude_code_is_told_the_truth_when_nobody_decides() {
    let s = Server::start().await;
    let work = tempfile::tempdir().unwrap();
    let marker = work.path().join("marker.txt");
    let model = Model::start(work.path(), &format!("echo ran > {}", marker.display()));
    let mut claude_run = run_claude(&s, &model, work.path(), 2);
    let p = pending(&s, &mut claude_run).await;
    finish(claude_run);
    assert!(!marker.exists(), "headless, an undecided call is denied");
    let told = model.tool_results().last().cloned().unwrap_or(Value::Null).to_string();
    assert!(told.contains("No decision in Assent within 2 s"), "{told}");
    assert!(told.contains("a headless run denies it"), "the model is told what really happened: {told}");
    assert_eq!(s.get(p["id"].as_str().unwrap(), &s.owner).await.1["status"], "withdrawn");
}
