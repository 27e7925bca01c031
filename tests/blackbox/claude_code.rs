//! The real Claude Code (from the npm registry, installed into `.ci/claude` on first use) runs
//! headless (`claude -p`) against a stand-in model server on loopback, with Assent's
//! PreToolUse hook: the model's Bash call waits in the inbox, and what the person decides is
//! what happens, and what the model is told.

use crate::harness::{BIN, Launch, Server, filed, withdrawn_by_its_hook};
use reqwest::Method;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// The Claude Code release the tests drive.
const CLAUDE_CODE: &str = "@anthropic-ai/claude-code@2.1.330";

/// The `claude` program, installed into `.ci/claude` on first use.
pub(crate) fn claude() -> PathBuf {
    crate::harness::npm_cli("claude", CLAUDE_CODE, "claude")
}

/// `claude -p PROMPT` in `dir`, headless, with `settings`, `home` as its home and the stand-in
/// model at `model_url` (nothing else from this process's environment but `PATH`).
pub(crate) fn headless(
    prompt: &str,
    max_turns: u32,
    settings: &Path,
    dir: &Path,
    home: &Path,
    model_url: &str,
) -> Command {
    let mut cmd = Command::new(claude());
    cmd.args(["-p", prompt, "--max-turns", &max_turns.to_string(), "--settings"])
        .arg(settings)
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("ANTHROPIC_BASE_URL", model_url)
        .env("ANTHROPIC_API_KEY", "test-key")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_AUTOUPDATER", "1");
    cmd
}

/// The stand-in model that makes the calls listed in `steps` (a JSON file), one a turn, and
/// logs each result to `log`: the process and its URL.
pub(crate) fn seq_model(log: &Path, steps: &Path) -> (Child, String) {
    let script = format!("{}/tests/fixtures/claude/fake_model_seq.py", env!("CARGO_MANIFEST_DIR"));
    let mut model = Command::new("python3").arg(script).arg(log).arg(steps).stdout(Stdio::piped()).spawn().unwrap();
    let mut line = String::new();
    BufReader::new(model.stdout.take().unwrap()).read_line(&mut line).unwrap();
    (model, format!("http://127.0.0.1:{}", line.trim()))
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

    /// What the model was told last, as text.
    fn last_told(&self) -> String {
        self.tool_results().last().cloned().unwrap_or(Value::Null).to_string()
    }
}

/// A server, a scratch folder, and the stand-in model asking Claude Code to write `word` into
/// the folder's `marker.txt` (its path).
async fn marker_scene(word: &str) -> (Server, tempfile::TempDir, PathBuf, Model) {
    let s = Server::start().await;
    let work = tempfile::tempdir().unwrap();
    let marker = work.path().join("marker.txt");
    let model = Model::start(work.path(), &format!("echo {word} > {}", marker.display()));
    (s, work, marker, model)
}

impl Drop for Model {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `claude -p` in `work` with Assent's hook (`--timeout` seconds) in its settings.
fn run_claude(s: &Server, model: &Model, work: &std::path::Path, timeout: u64) -> Child {
    // Claude Code's home beside the project, never inside it (a folder that holds the home is no
    // project: no box is built around it).
    let home = s.home().join("claude-home");
    std::fs::create_dir_all(&home).unwrap();
    // The small binary, as the README's settings name it: what waits it hands to `assent`.
    let runner = std::path::Path::new(BIN).with_file_name("assent-run");
    let hook = format!("'{}' --home '{}' hook claude-code --timeout {timeout}", runner.display(), s.home().display());
    let settings = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": hook, "timeout": 120}]}]}});
    let file = work.join("settings.json");
    std::fs::write(&file, settings.to_string()).unwrap();
    headless("write the marker file", 20, &file, work, &home, &model.url).launch(&s.env, Stdio::piped(), Stdio::piped())
}

/// [`run_claude`], and the call it filed in the inbox.
async fn run_until_filed(s: &Server, model: &Model, work: &Path, timeout: u64) -> (Child, Value) {
    let mut claude_run = run_claude(s, model, work, timeout);
    let p = filed(s, &mut claude_run, "Claude Code").await;
    (claude_run, p)
}

fn finish(child: Child) -> String {
    let out = child.wait_with_output().unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "claude failed: {text}");
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_runs_the_call_the_person_approved_and_not_the_one_rejected() {
    let (s, work, marker, model) = marker_scene("approved").await;

    // Approved in the inbox: the call runs.
    let (claude_run, p) = run_until_filed(&s, &model, work.path(), 60).await;
    assert_eq!(p["payload"]["input"]["command"], format!("echo approved > {}", marker.display()));
    assert_eq!(p["title"], Value::Null, "no words of the agent");
    assert_eq!(p["preview"]["cwd"], work.path().display().to_string(), "the working folder");
    assert_eq!(p["payload"]["client"], "claude-code");
    // Approved, it runs in the box the proposal named (the marker is inside the project).
    assert_eq!(p["preview"]["runs_in"], "workspace", "{p}");
    let (_, decided) = s.decide(p["id"].as_str().unwrap(), json!({"outcome": "approve"})).await;
    assert_eq!(decided["decision"]["confine"], "workspace", "{decided}");
    finish(claude_run);
    assert_eq!(std::fs::read_to_string(&marker).unwrap().trim(), "approved");

    // Rejected with a reason: nothing runs, and the model reads the reason.
    std::fs::remove_file(&marker).unwrap();
    let (claude_run, p) = run_until_filed(&s, &model, work.path(), 60).await;
    s.decide(p["id"].as_str().unwrap(), json!({"outcome": "reject", "reason": "not on the build box"})).await;
    finish(claude_run);
    assert!(!marker.exists(), "a rejected call never runs");
    let told = model.last_told();
    assert!(told.contains("Rejected in Assent: not on the build box"), "{told}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headless_claude_code_is_told_the_truth_when_nobody_decides() {
    let (s, work, marker, model) = marker_scene("ran").await;
    let (claude_run, p) = run_until_filed(&s, &model, work.path(), 2).await;
    finish(claude_run);
    assert!(!marker.exists(), "headless, an undecided call is denied");
    let told = model.last_told();
    assert!(told.contains("No decision in Assent within 2 s"), "{told}");
    assert!(told.contains("a headless run denies it"), "the model is told what really happened: {told}");
    assert_eq!(s.get(p["id"].as_str().unwrap(), &s.owner).await.1["status"], "withdrawn");
}

/// Claude Code killed with SIGKILL while its hook waits (no signal reaches the hook): the hook
/// sees its client gone and withdraws the proposal within seconds, long before its lease would.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_claude_code_leaves_no_question_behind() {
    let (s, work, marker, model) = marker_scene("never").await;
    let (mut claude_run, p) = run_until_filed(&s, &model, work.path(), 60).await;
    let id = p["id"].as_str().unwrap().to_string();
    claude_run.kill().unwrap();
    let _ = claude_run.wait();
    withdrawn_by_its_hook(&s, &id, "Claude Code").await;
    assert!(!marker.exists());
}

/// Claude Code's hook killed outright while it waits: the question leaves the inbox at once, and
/// Claude Code treats the dead hook as a failed one, falling back to its own permission settings
/// (headless and asked: the call is not run).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn its_hook_killed_withdraws_the_question_at_once() {
    let (s, work, marker, model) = marker_scene("never").await;
    let (claude_run, p) = run_until_filed(&s, &model, work.path(), 60).await;
    let id = p["id"].as_str().unwrap().to_string();
    s.until_waiting(1).await;
    let home = s.home().display().to_string();
    let hooks = crate::procs::matching(|cmd| cmd.contains(&home) && cmd.contains(" hook claude-code"));
    assert!(!hooks.is_empty(), "the hook is not running");
    for pid in &hooks {
        let _ = Command::new("kill").args(["-KILL", &pid.to_string()]).status();
    }
    let killed = std::time::Instant::now();
    while s.get(&id, &s.owner).await.1["status"] == "pending" {
        assert!(killed.elapsed() < std::time::Duration::from_secs(2), "still pending after its hook was killed");
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    let (_, audit) = s.req(Method::GET, &format!("/proposals/{id}/audit"), Some(&s.owner), None).await;
    let last = audit["items"].as_array().and_then(|a| a.last()).cloned().unwrap_or_default();
    assert_eq!((&last["to"], &last["detail"]["reason"]), (&json!("withdrawn"), &json!("waiter_lost")), "{last}");
    let out = claude_run.wait_with_output().unwrap();
    assert!(
        !marker.exists(),
        "Claude Code ran the call its dead hook never answered: {}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// Permission entries a person might have in Claude Code, and command lines an agent sends:
/// everyday ones and the forms that try to get more out of an allow (quoting, chaining,
/// redirections, wrappers, options that write, run code or force).
const SETTINGS_ALLOW: &[&str] = &[
    "Bash(git status:*)",
    "Bash(git diff:*)",
    "Bash(git log:*)",
    "Bash(ls:*)",
    "Bash(cat:*)",
    "Bash(echo:*)",
    "Bash(grep:*)",
    "Bash(find:*)",
    "Bash(head:*)",
    "Bash(wc:*)",
    "Bash(sort:*)",
    "Bash(sed -n:*)",
    "Bash(mkdir:*)",
    "Bash(touch:*)",
    "Bash(npm run test:*)",
    "Bash(pwd)",
];

/// The corpus's first lines, before the ways to delete by `rm` and [`CORPUS_TAIL`].
const CORPUS_HEAD: &[&str] = &[
    "ls",
    "ls -la",
    "ls -la src",
    "ls src/*.txt",
    "ls -R",
    "ls ~",
    "ls ..",
    "ls /",
    "ls > out1.txt",
    "ls >> out2.txt",
    "ls 2>/dev/null",
    "ls && touch t1",
    "ls; touch t2",
    "ls || touch t3",
    "ls | sh",
    "ls $(touch t4)",
    "ls `touch t5`",
    "ls $'\\'' ; touch t6 #'",
    "ls & touch t7",
    "ls\ntouch t8",
    "ls -la | head -3",
    "cat README.md",
    "cat src/a.txt",
    "cat ~/.bashrc",
    "cat ../x",
    "cat README.md > copy.txt",
    "cat README.md | tee tee.txt",
    "cat <(touch t9)",
    "cat README.md | sh",
    "echo hi",
    "echo hi > echo.txt",
    "echo $(touch t10)",
    "echo hi; touch t11",
    "echo 'a;b'",
    "echo \"$(touch t12)\"",
    "grep -rn TODO .",
    "grep -rn TODO src",
    "grep -c a README.md",
    "grep -rn x ..",
    "grep x README.md > g.txt",
    "find . -name '*.txt'",
    "find . -type f",
    "find . -delete",
    "find . -name t1 -exec touch {}.x \\;",
    "find . -fprint f.txt",
    "find . -name '*.md' | xargs touch",
    "head -3 README.md",
    "head -n 2 README.md src/a.txt",
    "wc -l README.md",
    "wc -l src/*.txt",
    "sort README.md",
    "sort -o sorted.txt README.md",
    "sort --output=sorted2.txt README.md",
    "sort README.md | uniq",
    "sed -n '1,2p' README.md",
    "sed -n '1p' README.md > s.txt",
    "sed -n '1e touch t13' README.md",
    "sed -n 's/a/b/w sw.txt' README.md",
    "sed -i 's/a/b/' README.md",
    "git status",
    "git status --short",
    "git status; touch t14",
    "git diff",
    "git diff --stat",
    "git diff > d.txt",
    "git diff --output=d2.txt",
    "git diff --ext-diff",
    "git log --oneline",
    "git log --oneline -3",
    "git log --output=l.txt",
    "git -c core.pager='touch t15' log",
    "git log | sh",
    "git -C .. log",
    "git push origin main",
    "git push --force origin main",
    "git checkout -- README.md",
    "git reset --hard",
    "git commit -m x",
    "mkdir newdir",
    "mkdir -p a/b/c",
    "mkdir ../outside",
    "touch new.txt",
    "touch ../outside.txt",
    "touch ~/home.txt",
];

/// The corpus's lines after [`CORPUS_HEAD`] and the ways to delete by `rm`
/// ([`crate::shell::RM_FORMS`], which the core's bash test sends too).
const CORPUS_TAIL: &[&str] = &[
    "sh -c 'touch t16'",
    "(touch t17)",
    "{ touch t18; }",
    "if true; then touch t19; fi",
    "for f in a; do touch t20; done",
    "timeout 5 touch t21",
    "env touch t22",
    "sudo ls",
    "nohup ls",
    "command ls",
    "FOO=1 ls",
    "NODE_ENV=test npm run test",
    "npm run test",
    "npm run test -- --watch",
    "npm run test && touch t23",
    "npm run build",
    "npx prettier --check .",
    "node -e 'x'",
    "python3 -c 'x'",
    "curl -s http://127.0.0.1:9/",
    "wget http://127.0.0.1:9/",
    "eval 'touch t24'",
    "$(echo touch) t25",
    "ls${IFS}-la",
    "pwd",
    "pwd; touch t26",
    "cd src && ls",
    "cd .. && ls",
    "cd src && touch t27",
    "echo hi | tee t28",
    "awk '{print $1}' README.md",
    "xargs -a README.md touch",
    "watch -n 1 ls",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_imported_rules_never_allow_what_claude_code_would_ask_for() {
    // Claude Code alone, with these permissions: which of the corpus it runs without asking.
    let corpus = crate::shell::around_rm_forms(CORPUS_HEAD, CORPUS_TAIL);
    let work = tempfile::tempdir().unwrap();
    let root = work.path().canonicalize().unwrap();
    let proj = root.join("proj");
    std::fs::create_dir_all(proj.join("src")).unwrap();
    std::fs::create_dir_all(proj.join(".claude")).unwrap();
    std::fs::write(proj.join("README.md"), "alpha\nbeta TODO\n").unwrap();
    std::fs::write(proj.join("src/a.txt"), "a\n").unwrap();
    let git = |args: &[&str]| {
        let ok = Command::new("git").args(args).current_dir(&proj).env("HOME", root.join("home")).output();
        assert!(ok.is_ok_and(|o| o.status.success()), "git {args:?}");
    };
    std::fs::create_dir_all(root.join("home")).unwrap();
    git(&["init", "-q"]);
    git(&["-c", "user.email=a@b", "-c", "user.name=a", "add", "."]);
    git(&["-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "init"]);
    let settings = json!({"permissions": {
        "allow": SETTINGS_ALLOW,
        "deny": ["Bash(rm:*)", "Bash(curl:*)"],
        "ask": ["Bash(git push:*)"],
    }});
    let file = proj.join(".claude/settings.json");
    std::fs::write(&file, settings.to_string()).unwrap();
    let commands = root.join("commands.json");
    std::fs::write(&commands, serde_json::to_string(&corpus).unwrap()).unwrap();
    let log = root.join("model.log");
    let (mut model, url) = seq_model(&log, &commands);
    let out = headless("run the steps", 400, &file, &proj, &root.join("home"), &url).output().unwrap();
    let _ = model.kill();
    let _ = model.wait();
    assert!(out.status.success(), "claude: {}", String::from_utf8_lossy(&out.stderr));
    // A call Claude Code ran answers with its output, or `Exit code N` when the command failed;
    // one it would ask about is refused headless, with the reason.
    let mut ran = vec![None; corpus.len()];
    for l in std::fs::read_to_string(&log).unwrap().lines() {
        let v: Value = serde_json::from_str(l).unwrap();
        let i = v["index"].as_u64().unwrap() as usize;
        let r = &v["tool_result"];
        let text = match &r["content"] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let text = text.trim_start_matches(|c: char| !c.is_alphanumeric());
        ran[i] = Some(!r["is_error"].as_bool().unwrap_or(false) || text.starts_with("Exit code"));
    }
    assert!(ran.iter().all(Option::is_some), "every command reached Claude Code: {ran:?}");

    // Assent, with the same file imported and its built-in rule turned off: what it allows.
    let s = Server::start().await;
    let imported = s.cli(&["rule", "import", "claude-code", file.to_str().unwrap(), "--yes"]);
    assert!(imported.status.success(), "{}", String::from_utf8_lossy(&imported.stderr));
    let (st, _) = s.req(Method::DELETE, "/rules/r_builtin_read_only", Some(&s.owner), None).await;
    assert_eq!(st, 204);
    let mut allowed = Vec::new();
    let mut wider = Vec::new();
    for (i, cmd) in corpus.iter().enumerate() {
        // As Claude Code's hook files it: an imported allow runs confined, through a client
        // that can run it so.
        let body = json!({"kind": "tool.call", "payload": {"tool": "Bash", "input": {"command": cmd}, "cwd": proj, "confinable": true}});
        let (st, v) = s.req(Method::POST, "/rules/test", Some(&s.owner), Some(body)).await;
        assert_eq!(st, 200, "{cmd}: {v}");
        if v["effect"] == "allow" {
            allowed.push(*cmd);
            if ran[i] != Some(true) {
                wider.push(*cmd);
            }
        }
    }
    let claude_ran = ran.iter().filter(|r| **r == Some(true)).count();
    eprintln!(
        "{} commands: Claude Code alone ran {claude_ran}; Assent's imported rules allow {}",
        corpus.len(),
        allowed.len()
    );
    assert!(wider.is_empty(), "Assent allowed what Claude Code would ask for: {wider:?}");
    assert!(allowed.len() >= 30, "the imported rules allow the everyday commands: {allowed:?}");
}
