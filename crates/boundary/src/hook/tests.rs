use super::*;
use serde_json::json;

fn agent(name: &str) -> &'static dyn Agent {
    assent_agents::named(name).unwrap()
}

fn args(tools: &[&str], skip: &[&str]) -> HookArgs {
    HookArgs {
        tools: tools.iter().map(|s| s.to_string()).collect(),
        skip: skip.iter().map(|s| s.to_string()).collect(),
        timeout: Some(1),
        auth: AgentAuth { token_file: None },
    }
}

/// The hook of `client` for the event `raw`, gated or not.
fn hook(client: &str, raw: Value) -> Hook {
    let a = agent(client);
    Hook { agent: a, args: args(&[], &[]), call: a.read(raw).unwrap() }
}

#[test]
fn a_hook_waits_55_s_unless_told_and_cline_110() {
    let mut a = args(&[], &[]);
    a.timeout = None;
    assert_eq!((wait(agent("gemini-cli"), &a), wait(agent("cline"), &a)), (DEFAULT_WAIT, 110));
    a.timeout = Some(500);
    assert_eq!(wait(agent("cline"), &a), 110, "capped under Cline's 120 s");
    assert_eq!(wait(agent("claude-code"), &a), 500);
}

#[test]
fn gating_rules() {
    let (claude, gemini) = (agent("claude-code"), agent("gemini-cli"));
    assert!(gated(claude, "Bash", &args(&[], &[])));
    assert!(gated(claude, "mcp__github__create_issue", &args(&[], &[])));
    assert!(!gated(claude, "Read", &args(&[], &[])));
    assert!(!gated(claude, "Bash", &args(&[], &["Bash"])));
    assert!(gated(claude, "Edit", &args(&["Bash", "Edit"], &[])));
    assert!(!gated(claude, "Write", &args(&["Bash", "Edit"], &[])));
    // Each client's own read-only tools.
    assert!(gated(gemini, "run_shell_command", &args(&[], &[])));
    assert!(gated(gemini, "web_fetch", &args(&[], &[])));
    assert!(!gated(gemini, "read_file", &args(&[], &[])));
    // What changes only Gemini's own state asks nothing; what widens or writes does.
    for quiet in ["update_topic", "list_background_processes", "enter_plan_mode", "tracker_list_tasks"] {
        assert!(!gated(gemini, quiet, &args(&[], &[])), "{quiet}");
    }
    for asks in ["exit_plan_mode", "save_memory", "tracker_create_task", "write_file", "replace"] {
        assert!(gated(gemini, asks, &args(&[], &[])), "{asks}");
    }
    assert!(gated(gemini, "Read", &args(&[], &[])), "another client's names mean nothing here");
}

#[test]
fn opencode_calls_read_in_the_others_names_and_key_their_proposal() {
    let (_root, w) = project_with_sub();
    let h = hook(
        "opencode",
        json!({"tool": "bash", "args": {"command": "ls", "workdir": "sub"}, "directory": w,
            "sessionID": "ses_1", "callID": "call_9"}),
    );
    let g = h.gate();
    assert_eq!(g.cwd, Some(format!("{w}/sub")));
    assert_eq!(g.idempotency_key.as_deref(), Some("hook:ses_1:call_9"));
    assert!(g.confinable);
    let oc = agent("opencode");
    assert!(!gated(oc, "read", &args(&[], &[])) && gated(oc, "webfetch", &args(&[], &[])));
    assert!(oc.read(json!({"args": {}})).is_err(), "no tool");
}

/// A project folder with a `sub` folder: the folder (kept while the first lives) and its path.
fn project_with_sub() -> (tempfile::TempDir, String) {
    let root = tempfile::tempdir().expect("tmp");
    let w = root.path().canonicalize().expect("real");
    std::fs::create_dir_all(w.join("sub")).expect("made");
    let w = w.to_str().expect("utf-8").to_string();
    (root, w)
}

#[cfg(unix)]
#[test]
fn a_client_folder_must_resolve_inside_the_session() {
    let root = tempfile::tempdir().expect("tmp");
    let base = root.path().canonicalize().expect("real");
    let (proj, other) = (base.join("proj"), base.join("other"));
    for d in [proj.join("sub"), other.clone()] {
        std::fs::create_dir_all(d).expect("made");
    }
    std::os::unix::fs::symlink(&other, proj.join("link")).expect("link");
    assert_eq!(folder_inside(&proj, "sub"), Some(proj.join("sub")));
    assert_eq!(folder_inside(&proj, "."), Some(proj.clone()));
    for escape in ["link", "..", "../other", other.to_str().expect("utf-8"), "/etc", "missing"] {
        assert_eq!(folder_inside(&proj, escape), None, "{escape}");
    }
    let h = hook(
        "opencode",
        json!({"tool": "bash", "args": {"command": "cat x", "workdir": "link"}, "directory": proj,
            "sessionID": "s", "callID": "c"}),
    );
    assert_eq!(h.gate().cwd, None);
}

#[test]
fn gemini_calls_are_filed_in_the_folder_its_shell_runs_in() {
    let (_root, w) = project_with_sub();
    let h = hook(
        "gemini-cli",
        json!({"hook_event_name": "BeforeTool", "cwd": w, "tool_name": "run_shell_command",
            "tool_input": {"command": "ls", "dir_path": "sub"}, "session_id": "s"}),
    );
    let g = h.gate();
    assert_eq!(g.cwd, Some(format!("{w}/sub")));
    assert_eq!(g.client.as_deref(), Some("gemini-cli"));
    assert!(g.confinable && g.idempotency_key.is_none());
    let h = hook(
        "gemini-cli",
        json!({"hook_event_name": "BeforeTool", "cwd": "/w", "tool_name": "run_shell_command",
            "tool_input": {"command": "ls", "dir_path": ""}}),
    );
    assert_eq!(h.gate().cwd.as_deref(), Some("/w"));
}

#[test]
fn a_boxed_allow_is_the_call_rewritten_to_the_runner_in_every_client_that_runs_one() {
    let home = Home { dir: "/h o/me".into() };
    let boxed = Verdict::Confined {
        proposal: "p_1".into(),
        confine: assent_core::confine::Confine::Read,
        by_rule: true,
        hosts: Vec::new(),
    };
    let events = [
        ("claude-code", json!({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}})),
        (
            "gemini-cli",
            json!({"hook_event_name": "BeforeTool", "tool_name": "run_shell_command", "tool_input": {"command": "ls"}}),
        ),
        ("copilot-cli", json!({"toolName": "bash", "toolArgs": "{\"command\": \"ls\"}"})),
        ("opencode", json!({"tool": "bash", "args": {"command": "ls"}})),
    ];
    for (client, ev) in events {
        let out = written(&home, &hook(client, ev), &boxed).to_string();
        assert!(out.contains("--home '/h o/me' run p_1"), "{client}: {out}");
    }
    // Codex and Cline cannot run a rewritten call: they are told so, and nothing is rewritten.
    let codex = written(
        &home,
        &hook("codex", json!({"hook_event_name": "PermissionRequest", "tool_name": "shell", "tool_input": {}})),
        &boxed,
    );
    assert!(codex["systemMessage"].as_str().unwrap().contains("which Codex cannot run"));
    let cline = written(
        &home,
        &hook("cline", json!({"tool_call": {"name": "execute_command", "input": {"command": "ls"}}})),
        &boxed,
    );
    assert_eq!(cline["cancel"], true);
}

#[test]
fn a_client_that_cannot_go_back_to_its_prompt_is_told_the_call_is_not_run() {
    let home = Home { dir: "/h".into() };
    for (client, back) in [("claude-code", true), ("gemini-cli", false), ("opencode", false), ("cline", false)] {
        let Verdict::Ask(why) = not_running(agent(client), &home) else { panic!("an ask") };
        assert_eq!(why.ends_with("; not run"), !back, "{client}: {why}");
    }
}
