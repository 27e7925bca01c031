//! Which of Claude Code's hooks sees which call, in each of its permission modes: the real
//! Claude Code (headless, against the stand-in model) makes the same four calls (a `Write`, a
//! `touch`, an `ls` and an `rm -rf` inside its folder) with a recording hook on `PreToolUse` and
//! on `PermissionRequest`. Then Assent itself as each hook: `PreToolUse` brings every call to
//! the inbox even in auto mode, and `PermissionRequest` in the default mode brings exactly the
//! calls Claude Code would ask about. The README's "Which hook sees what" says what this finds.

use crate::claude_code::{headless, seq_model};
use crate::harness::{BIN, Launch, Server};
use reqwest::Method;
use serde_json::{Value, json};
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// A hook that writes what it was asked (its event, the tool, the mode) as a JSON line to
/// `events.jsonl` beside it, and decides nothing.
const RECORDER: &str = r#"import json, os, sys
e = json.load(sys.stdin)
line = {"hook": sys.argv[1], "tool": e.get("tool_name"), "mode": e.get("permission_mode"),
        "command": (e.get("tool_input") or {}).get("command")}
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "events.jsonl"), "a") as f:
    f.write(json.dumps(line) + "\n")
"#;

/// The calls the stand-in model makes, in order, in the project folder `proj`.
fn steps(proj: &Path) -> Value {
    json!([
        {"tool": "Write", "input": {"file_path": proj.join("made-by-write.txt"), "content": "hi\n"}},
        "touch made-by-touch",
        "ls",
        format!("rm -rf {}", proj.join("build").display()),
    ])
}

/// What one headless run with the recording hooks saw: each hook's calls (`Write`, or the
/// Bash command's first word), the mode they reported, and which calls took effect.
struct Seen {
    pre: Vec<String>,
    asked: Vec<String>,
    modes: Vec<String>,
    ran: Vec<&'static str>,
}

fn run_recorded(mode: Option<&str>) -> Seen {
    let work = tempfile::tempdir().unwrap();
    let root = work.path().canonicalize().unwrap();
    let (proj, home) = (root.join("proj"), root.join("home"));
    std::fs::create_dir_all(proj.join("build")).unwrap();
    std::fs::write(proj.join("build/keep.txt"), "x").unwrap();
    std::fs::create_dir_all(&home).unwrap();
    let recorder = root.join("record.py");
    std::fs::write(&recorder, RECORDER).unwrap();
    let hook = |event: &str| json!([{"matcher": "*", "hooks": [{"type": "command", "command": format!("python3 '{}' {event}", recorder.display())}]}]);
    let settings = root.join("settings.json");
    let hooks = json!({"hooks": {"PreToolUse": hook("PreToolUse"), "PermissionRequest": hook("PermissionRequest")}});
    std::fs::write(&settings, hooks.to_string()).unwrap();
    let steps_file = root.join("steps.json");
    std::fs::write(&steps_file, steps(&proj).to_string()).unwrap();
    let (mut model, url) = seq_model(&root.join("model.log"), &steps_file);
    let mut cmd = headless("do the steps", 12, &settings, &proj, &home, &url);
    if let Some(m) = mode {
        cmd.args(["--permission-mode", m]);
    }
    let out = cmd.output().unwrap();
    let _ = model.kill();
    let _ = model.wait();
    assert!(out.status.success(), "claude ({mode:?}): {}", String::from_utf8_lossy(&out.stderr));
    let events: Vec<Value> = std::fs::read_to_string(root.join("events.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let name = |e: &Value| match e["command"].as_str() {
        Some(c) => c.split_whitespace().next().unwrap_or_default().to_string(),
        None => e["tool"].as_str().unwrap_or_default().to_string(),
    };
    let of = |hook: &str| events.iter().filter(|e| e["hook"] == hook).map(name).collect::<Vec<_>>();
    let mut modes: Vec<String> = events.iter().map(|e| e["mode"].as_str().unwrap_or("?").to_string()).collect();
    modes.dedup();
    let mut ran = Vec::new();
    if proj.join("made-by-write.txt").exists() {
        ran.push("Write");
    }
    if proj.join("made-by-touch").exists() {
        ran.push("touch");
    }
    if !proj.join("build").exists() {
        ran.push("rm");
    }
    Seen { pre: of("PreToolUse"), asked: of("PermissionRequest"), modes, ran }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn which_hook_sees_what_in_each_permission_mode() {
    let every = ["Write", "touch", "ls", "rm"];
    // Nothing set: the mode Claude Code starts in with no settings of its own.
    let cases: [(Option<&str>, &str, &[&str]); 4] = [
        (None, "default", &["Write", "touch", "rm"]),
        (Some("auto"), "auto", &[]),
        (Some("acceptEdits"), "acceptEdits", &[]),
        (Some("dontAsk"), "dontAsk", &[]),
    ];
    for (mode, reported, asked) in cases {
        let seen = run_recorded(mode);
        eprintln!(
            "mode {reported:<12} PreToolUse saw {:?}; PermissionRequest saw {:?}; took effect without a person {:?}",
            seen.pre, seen.asked, seen.ran
        );
        assert_eq!(seen.pre, every, "{reported}: PreToolUse is asked about every call, whatever the mode");
        assert_eq!(seen.modes, [reported], "{reported}: the mode each hook is told");
        assert_eq!(seen.asked, asked, "{reported}: what PermissionRequest is asked about");
        match reported {
            // Headless, with no hook deciding, whatever would be asked about is refused.
            "default" | "dontAsk" => assert!(seen.ran.is_empty(), "{reported}: {:?} ran", seen.ran),
            // The edit runs with no question anybody could answer: Assent must be a PreToolUse hook.
            _ => assert!(seen.ran.contains(&"Write"), "{reported}: {:?}", seen.ran),
        }
    }
}

/// `claude -p` in a fresh project with Assent as the hook for `event`, making `steps`.
fn run_with_assent(s: &Server, root: &Path, event: &str, mode: Option<&str>, settings: Value) -> (Child, Child) {
    let (proj, home) = (root.join("proj"), root.join("home"));
    std::fs::create_dir_all(proj.join("build")).unwrap();
    std::fs::write(proj.join("build/keep.txt"), "x").unwrap();
    std::fs::create_dir_all(&home).unwrap();
    let hook = format!("'{BIN}' --home '{}' hook claude-code --timeout 60", s.home().display());
    let mut settings = settings;
    settings["hooks"] =
        json!({event: [{"matcher": "*", "hooks": [{"type": "command", "command": hook, "timeout": 120}]}]});
    let file = root.join("settings.json");
    std::fs::write(&file, settings.to_string()).unwrap();
    let steps_file = root.join("steps.json");
    std::fs::write(&steps_file, steps(&proj).to_string()).unwrap();
    let (model, url) = seq_model(&root.join("model.log"), &steps_file);
    let mut cmd = headless("do the steps", 12, &file, &proj, &home, &url);
    if let Some(m) = mode {
        cmd.args(["--permission-mode", m]);
    }
    let claude = cmd.launch(&s.env, Stdio::piped(), Stdio::piped());
    (claude, model)
}

/// Decides each proposal as it arrives, by what `decide` says of its call, until Claude Code
/// ends; returns the calls that reached the inbox (`Write` or the command's first word).
async fn answer(s: &Server, mut claude: Child, decide: impl Fn(&str) -> &'static str) -> Vec<String> {
    let mut seen = Vec::new();
    let mut done = std::collections::HashSet::new();
    let deadline = Instant::now() + Duration::from_secs(180);
    loop {
        let (_, page) = s.req(Method::GET, "/proposals?status=pending", Some(&s.owner), None).await;
        for p in page["items"].as_array().cloned().unwrap_or_default() {
            let id = p["id"].as_str().unwrap().to_string();
            if !done.insert(id.clone()) {
                continue;
            }
            let call = match p["payload"]["input"]["command"].as_str() {
                Some(c) => c.split_whitespace().next().unwrap_or_default().to_string(),
                None => p["payload"]["tool"].as_str().unwrap_or_default().to_string(),
            };
            let (st, v) = s.decide(&id, json!({"outcome": decide(&call), "reason": "not today"})).await;
            assert_eq!(st, 200, "{v}");
            seen.push(call);
        }
        if claude.try_wait().unwrap().is_some() {
            break;
        }
        assert!(Instant::now() < deadline, "Claude Code did not finish");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let out = claude.wait_with_output().unwrap();
    assert!(out.status.success(), "claude: {}", String::from_utf8_lossy(&out.stderr));
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_auto_mode_the_pretooluse_hook_still_brings_every_call_to_the_person() {
    let s = Server::start().await;
    let work = tempfile::tempdir().unwrap();
    let root = work.path().canonicalize().unwrap();
    let (claude, mut model) = run_with_assent(&s, &root, "PreToolUse", Some("auto"), json!({}));
    let seen = answer(&s, claude, |call| if call == "Write" { "approve" } else { "reject" }).await;
    let _ = model.kill();
    let _ = model.wait();
    // `ls` only reads inside the folder: Assent's built-in rule allows it without asking.
    assert_eq!(seen, ["Write", "touch", "rm"], "every call but the read reached the person");
    let proj = root.join("proj");
    assert!(proj.join("made-by-write.txt").exists(), "the approved edit ran");
    assert!(!proj.join("made-by-touch").exists(), "a rejected call never runs, even in auto mode");
    assert!(proj.join("build/keep.txt").exists(), "the rejected rm -rf never ran");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_the_default_mode_the_permission_request_hook_gets_what_claude_code_would_ask() {
    let s = Server::start().await;
    let work = tempfile::tempdir().unwrap();
    let root = work.path().canonicalize().unwrap();
    let settings = json!({"permissions": {"defaultMode": "default"}});
    let (claude, mut model) = run_with_assent(&s, &root, "PermissionRequest", None, settings);
    let seen = answer(&s, claude, |call| if call == "rm" { "reject" } else { "approve" }).await;
    let _ = model.kill();
    let _ = model.wait();
    assert_eq!(seen, ["Write", "touch", "rm"], "what Claude Code would ask about, and only that");
    let proj = root.join("proj");
    assert!(proj.join("made-by-write.txt").exists() && proj.join("made-by-touch").exists(), "approved calls ran");
    assert!(proj.join("build/keep.txt").exists(), "the rejected rm -rf never ran");
}
