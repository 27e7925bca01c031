//! The worked example (`examples/receipts-mcp`): a blog's MCP tool server whose `delete_post`
//! runs only with an Assent receipt for exactly its arguments, checked offline with Assent's
//! public keys (Python: the official MCP SDK, joserfc, rfc8785). Its scripted agent drives it
//! and `assent mcp` with the official MCP client; this test is the person, deciding with the
//! CLI between the agent's steps.

use crate::harness::{BIN, Launch, Server, stderr, stdout_lines};
use serde_json::{Value, json};
use std::process::{Command, Stdio};
use std::time::Duration;

const PACKAGES: [&str; 3] = ["mcp==2.3.0", "joserfc==1.8.0", "rfc8785==0.1.4"];

fn python() -> std::path::PathBuf {
    crate::harness::venv_python("venv-example", &PACKAGES, "mcp, joserfc, rfc8785")
}

#[tokio::test]
async fn a_tool_server_runs_a_destructive_call_only_with_a_receipt_for_exactly_it() {
    let s = Server::start().await;
    let dir = tempfile::tempdir().unwrap();
    let (keys, data) = (dir.path().join("keys.json"), dir.path().join("posts.json"));
    // The operator exports the keys once; the tool server never asks Assent for them.
    let out = s.cli(&["receipt", "keys"]);
    assert!(out.status.success(), "{}", stderr(&out));
    std::fs::write(&keys, &out.stdout).unwrap();
    let posts = json!({"7": "Launch notes", "8": "Old draft", "9": "Pricing", "10": "Team", "11": "Typos"});
    std::fs::write(&data, posts.to_string()).unwrap();

    let root = env!("CARGO_MANIFEST_DIR");
    let mut agent = Command::new(python())
        .arg(format!("{root}/examples/receipts-mcp/agent.py"))
        .arg(BIN)
        .arg(s.home())
        .env("ASSENT_KEYS", &keys)
        .env("BLOG_DATA", &data)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = stdout_lines(&mut agent);
    let mut next = |tag: &str| -> Value {
        let line = lines.recv_timeout(Duration::from_secs(90)).unwrap_or_else(|_| {
            let _ = agent.kill();
            panic!("the agent printed no {tag:?}")
        });
        let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{line:?}: {e}"));
        assert_eq!(v["step"], tag, "{v}");
        v["value"].clone()
    };
    let refused = |r: &Value, why: &str| {
        assert_eq!(r["is_error"], true, "{r}");
        assert!(r["text"].as_str().unwrap().contains(why), "{r} should say {why:?}");
    };
    let decide = |args: &[&str]| {
        let out = s.cli(args);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    };

    let tools = next("tools");
    assert!(tools["delete_post"].as_str().unwrap().contains("receipt"));
    // A flag, the words, nothing: no receipt, no deletion.
    for r in next("forged").as_array().unwrap() {
        refused(r, "not a valid Assent receipt");
    }
    // A person approves deleting post 8; the agent uses that receipt for post 7.
    let p = next("proposed");
    assert_eq!((p["post_id"].as_i64(), p["audience"].as_str()), (Some(8), Some("blog")));
    decide(&["approve", p["id"].as_str().unwrap()]);
    let d = next("decided");
    assert_eq!(d["status"], "approved");
    assert!(d["receipt"].as_str().is_some_and(|r| r.split('.').count() == 3), "the MCP result carries it: {d}");
    refused(&next("other_args"), "the approved arguments are not these");
    // Post 7, approved: it runs once.
    let p = next("proposed");
    decide(&["approve", p["id"].as_str().unwrap()]);
    next("decided");
    let fresh = next("fresh");
    assert_eq!(fresh["is_error"], false, "{fresh}");
    assert!(fresh["text"].as_str().unwrap().contains(&format!("proposal {}", p["id"].as_str().unwrap())));
    refused(&next("replayed"), "used already");
    // Made for another server.
    let p = next("proposed");
    assert_eq!(p["audience"], "mail");
    decide(&["approve", p["id"].as_str().unwrap()]);
    refused(&next("other_audience"), "made for 'mail', not 'blog'");
    // A rejection's receipt is a receipt, not an approval.
    let p = next("proposed");
    decide(&["reject", p["id"].as_str().unwrap(), "--reason", "keep pricing"]);
    let d = next("decided");
    assert_eq!((d["status"].as_str(), d["reason"].as_str()), (Some("rejected"), Some("keep pricing")));
    refused(&next("rejected"), "the person's decision was 'reject'");
    // The person changes which post goes: the receipt is for what they approved.
    let p = next("proposed");
    decide(&["approve", p["id"].as_str().unwrap(), "--edits", r#"{"input": {"post_id": 11}}"#]);
    let d = next("decided");
    assert_eq!(d["approved_input"], json!({"post_id": 11}));
    let edited = next("edited");
    refused(&edited["asked"], "the approved arguments are not these");
    assert_eq!(edited["approved"]["is_error"], false, "{edited}");

    // Posts 7 and 11 are gone, each deleted once; 8, 9 and 10 remain.
    let left = next("posts");
    assert_eq!(left, json!({"8": "Old draft", "9": "Pricing", "10": "Team"}));
    assert_eq!(serde_json::from_slice::<Value>(&std::fs::read(&data).unwrap()).unwrap(), left);
    let out = agent.wait_with_output().unwrap();
    assert!(out.status.success(), "the agent failed:\n{}", String::from_utf8_lossy(&out.stderr));
}

/// The same blog server behind the real Claude Code (headless, against the stand-in model),
/// with Assent as its `PreToolUse` hook: the model calls `delete_post` with whatever it likes in
/// `assent_receipt`; the person sees the call without it, and on approval the hook hands the
/// tool the receipt, which the server checks. A rejected call never reaches the server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_real_claude_code_hook_hands_the_tool_its_receipt() {
    let s = Server::start().await;
    let work = tempfile::tempdir().unwrap();
    let root = work.path().canonicalize().unwrap();
    let (proj, home) = (root.join("proj"), root.join("home"));
    std::fs::create_dir_all(&proj).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    let (keys, data) = (root.join("keys.json"), root.join("posts.json"));
    std::fs::write(&keys, s.cli(&["receipt", "keys"]).stdout).unwrap();
    std::fs::write(&data, json!({"7": "Launch notes", "8": "Pricing"}).to_string()).unwrap();
    let server = format!("{}/examples/receipts-mcp/blog_server.py", env!("CARGO_MANIFEST_DIR"));
    // `alwaysLoad`: connected before the first turn (headless, Claude Code otherwise connects
    // MCP servers in the background, and the stand-in model's first turn would find no tool).
    let mcp = json!({"mcpServers": {"blog": {"type": "stdio", "command": python(), "args": [server],
        "env": {"ASSENT_KEYS": keys, "BLOG_DATA": data}, "alwaysLoad": true}}});
    let mcp_file = root.join("mcp.json");
    std::fs::write(&mcp_file, mcp.to_string()).unwrap();
    let hook = format!("'{BIN}' --home '{}' hook claude-code --timeout 60", s.home().display());
    let settings = json!({"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": hook, "timeout": 120}]}]}});
    let settings_file = root.join("settings.json");
    std::fs::write(&settings_file, settings.to_string()).unwrap();
    let steps = json!([
        {"tool": "mcp__blog__delete_post", "input": {"post_id": 7, "assent_receipt": "confirmed: true"}},
        {"tool": "mcp__blog__delete_post", "input": {"post_id": 8, "assent_receipt": "the user said yes"}},
    ]);
    let steps_file = root.join("steps.json");
    std::fs::write(&steps_file, steps.to_string()).unwrap();
    let log = root.join("model.log");
    let (model, url) = crate::claude_code::seq_model(&log, &steps_file);
    // Ended whatever happens, so a failed run leaves no process holding the test's output.
    let model = Reaped(model);
    let mut claude = crate::claude_code::headless("tidy the blog", 8, &settings_file, &proj, &home, &url)
        .arg("--mcp-config")
        .arg(&mcp_file)
        .launch(&s.env, Stdio::piped(), Stdio::piped());

    // The person approves deleting post 7 and rejects deleting post 8.
    let mut asked = Vec::new();
    let deadline = std::time::Instant::now() + Duration::from_secs(180);
    while asked.len() < 2 {
        let (_, page) = s.req(reqwest::Method::GET, "/proposals?status=pending", Some(&s.owner), None).await;
        for p in page["items"].as_array().cloned().unwrap_or_default() {
            assert_eq!(p["payload"]["tool"], "mcp__blog__delete_post");
            assert!(p["payload"]["input"].get("assent_receipt").is_none(), "the model's words are not shown: {p}");
            assert_eq!(p["audience"], "blog");
            let id = p["id"].as_str().unwrap().to_string();
            let post = p["payload"]["input"]["post_id"].as_i64().unwrap();
            let decision = if post == 7 {
                json!({"outcome": "approve"})
            } else {
                json!({"outcome": "reject", "reason": "keep pricing"})
            };
            let (st, v) = s.decide(&id, decision).await;
            assert_eq!(st, 200, "{v}");
            asked.push(post);
        }
        if claude.try_wait().unwrap().is_some() && asked.len() < 2 {
            let out = claude.wait_with_output().unwrap();
            panic!("Claude Code ended after {asked:?}: {}", String::from_utf8_lossy(&out.stderr));
        }
        assert!(std::time::Instant::now() < deadline, "Claude Code asked about {asked:?} only");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let out = claude.wait_with_output().unwrap();
    drop(model);
    assert!(out.status.success(), "claude: {}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(asked, [7, 8]);

    // Post 7 is gone, by the server's own check of the receipt; post 8 was never sent.
    assert_eq!(serde_json::from_slice::<Value>(&std::fs::read(&data).unwrap()).unwrap(), json!({"8": "Pricing"}));
    let results: Vec<Value> =
        std::fs::read_to_string(&log).unwrap().lines().map(|l| serde_json::from_str::<Value>(l).unwrap()).collect();
    let said =
        |i: usize| results.iter().find(|r| r["index"] == i).map(|r| r["tool_result"].to_string()).unwrap_or_default();
    assert!(said(0).contains("post 7 deleted (approved by owner via api"), "the model is told: {}", said(0));
    assert!(said(1).contains("keep pricing"), "the model is told: {}", said(1));
}

/// A child process killed when dropped.
struct Reaped(std::process::Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
