//! What the rules that confine allow, and what they never do: ordinary reads give their
//! answers confined, a folder that is not a project (or is outside the declared work roots)
//! allows nothing, `assent run` runs only what a rule allowed confined, no input takes the server
//! down, and the build-and-test rule writes only where it may. The scene and the hook's helpers
//! are `confine.rs`'s.

use crate::confine::{Answer, ask_hook, assent_confine_available, run_as_client, scene};
use crate::harness::Server;
use serde_json::{Value, json};
use std::process::Command;
use std::time::{Duration, Instant};

/// The scene and a server with its home, where this kernel can confine as `profile` does.
async fn confining(profile: assent_boundary::Confine) -> Option<(crate::confine::Scene, Server)> {
    let scene = scene();
    let s = Server::start_with("", &[("HOME", scene.home.to_str().unwrap())]).await;
    assent_boundary::boxed::Support::detect().can(profile).then_some((scene, s))
}

/// The hook's answer for `line` (the `n`th asked) where this kernel `can` confine or not: where
/// it can, the line is allowed confined (rewritten to run so), and this is the command to run;
/// where it cannot, the line is not allowed at all.
fn allowed_confined(s: &Server, scene: &crate::confine::Scene, line: &str, n: usize, can: bool) -> Option<String> {
    let answer = ask_hook(s, scene, line, n);
    if !can {
        assert!(matches!(answer, Answer::NotAllowed(_)), "{line:?} allowed where nothing can be confined");
        return None;
    }
    let Answer::Allowed { command, rewritten: true } = answer else {
        panic!("{line:?} is not allowed confined: {answer:?}");
    };
    Some(command)
}

/// Ordinary reads stay quiet and work confined: the answer is the right one.
#[tokio::test]
async fn ordinary_reads_are_allowed_and_give_their_answers() {
    let can_confine = assent_confine_available();
    let scene = scene();
    let s = Server::start_with("", &[("HOME", scene.home.to_str().unwrap())]).await;
    for (n, (line, want)) in [
        ("ls", "README.md"),
        ("cat README.md", "hello readme"),
        ("grep -rn hello .", "README.md:1:hello readme"),
        ("git status --short", ""),
        ("git log --oneline", "first"),
        ("head -1 README.md && wc -l README.md", "2 README.md"),
        ("find . -name '*.rs'", "./src/main.rs"),
        ("ls src | sort", "main.rs"),
    ]
    .iter()
    .enumerate()
    {
        let Some(command) = allowed_confined(&s, &scene, line, 10_000 + n, can_confine) else { continue };
        // The small runner beside `assent`, with `assent`'s own arguments.
        assert!(command.contains("/assent-run") && command.contains(" run p_"), "{command}");
        let before = scene.snapshot();
        let (code, output) = run_as_client(&s, &scene, &command);
        assert_eq!(code, Some(0), "{line:?}: {output}");
        assert!(output.contains(want), "{line:?}: {output:?}");
        assert_eq!(scene.snapshot(), before, "{line:?} changed something");
        if n == 0 {
            // Run again, the ticket used up: the runner hands over to `assent`, which asks the
            // server, and the answer is the same.
            let (code, again) = run_as_client(&s, &scene, &command);
            assert_eq!((code, again.contains(want)), (Some(0), true), "{line:?} again: {again}");
        }
    }
    // Anything but a run is handed to `assent` as it is.
    let runner = std::path::Path::new(env!("CARGO_BIN_EXE_assent")).with_file_name("assent-run");
    let o = Command::new(&runner).arg("--version").output().unwrap();
    assert!(o.status.success() && String::from_utf8_lossy(&o.stdout).starts_with("assent "), "{o:?}");
}

/// The working folder is not the agent's word alone: `/`, the home and `~/.ssh` make no read
/// "inside".
#[tokio::test]
async fn a_folder_that_is_not_a_project_allows_no_read() {
    let scene = scene();
    let s = Server::start_with("", &[("HOME", scene.home.to_str().unwrap())]).await;
    for cwd in ["/".into(), scene.home.clone(), scene.home.join(".ssh"), "/tmp".into()] {
        let body = json!({"kind": "tool.call", "payload": {"tool": "Bash", "input": {"command": "cat id_rsa"},
            "cwd": cwd, "client": "claude-code", "confinable": true}});
        let p = s.propose(body).await;
        assert_eq!(p["status"], "pending", "{cwd:?}: {p}");
    }
}

/// Declared work roots (`work_roots` in config.toml): a project outside them gets no read
/// allowed; inside them, as before.
#[tokio::test]
async fn a_project_outside_the_declared_work_roots_allows_no_read() {
    let scene = scene();
    let body = json!({"kind": "tool.call", "payload": {"tool": "Bash", "input": {"command": "ls"},
        "cwd": scene.proj, "client": "claude-code", "confinable": true}});
    let home = scene.home.to_str().unwrap();
    let elsewhere = format!("work_roots = [\"{}/elsewhere\"]\n", scene.root.path().display());
    let s = Server::start_with(&elsewhere, &[("HOME", home)]).await;
    assert_eq!(s.propose(body.clone()).await["status"], "pending");
    let inside = format!("work_roots = [\"{}\"]\n", scene.home.display());
    let s = Server::start_with(&inside, &[("HOME", home)]).await;
    let want = if assent_confine_available() { "approved" } else { "pending" };
    assert_eq!(s.propose(body).await["status"], want);
}

/// `assent run` runs only what was approved in a box: not a pending proposal, not one a person
/// approved unconfined, not one that does not exist.
#[tokio::test]
async fn assent_run_refuses_what_was_not_allowed_confined() {
    let scene = scene();
    let s = Server::start_with("", &[("HOME", scene.home.to_str().unwrap())]).await;
    let body = |c: &str| {
        json!({"kind": "tool.call", "payload": {"tool": "Bash", "input": {"command": c},
        "cwd": scene.proj, "client": "claude-code", "confinable": true}})
    };
    let pending = s.propose(body("rm -rf src")).await;
    let id = pending["id"].as_str().unwrap();
    let run = |id: &str| s.cli(&["run", id]);
    let o = run(id);
    assert_eq!(o.status.code(), Some(126), "{}", crate::harness::stderr(&o));
    assert!(crate::harness::stderr(&o).contains("not an approved tool call"));
    s.decide(id, json!({"outcome": "approve", "run": "unconfined"})).await;
    let o = run(id);
    assert_eq!(o.status.code(), Some(126));
    assert!(crate::harness::stderr(&o).contains("not confined"), "{}", crate::harness::stderr(&o));
    assert!(scene.proj.join("src").exists(), "nothing ran");
    let o = run("p_doesnotexist");
    assert_ne!(o.status.code(), Some(0));
}

/// What the hook leaves for `assent run` (`runs/ID.json`) is checked as the server's answer is:
/// a ticket whose command was changed, one moved under another proposal's name, or one for a
/// proposal approved unconfined runs nothing of its own; `assent run` asks the server instead,
/// and runs only what was decided. A ticket is used once.
#[tokio::test]
async fn a_forged_or_swapped_ticket_runs_only_what_was_decided() {
    let Some((scene, s)) = confining(assent_boundary::Confine::Read).await else { return };
    let out = scene.out.display().to_string();
    let Answer::Allowed { command, rewritten: true } = ask_hook(&s, &scene, "cat README.md", 30_000) else {
        panic!("a read is allowed confined")
    };
    let id = command.rsplit(' ').next().unwrap().to_string();
    let ticket = s.home().join("runs").join(format!("{id}.json"));
    assert!(ticket.is_file(), "the hook left the proposal for assent run");
    // The command changed in the ticket: the receipt no longer matches; the server's copy runs.
    let mut forged: Value = serde_json::from_str(&std::fs::read_to_string(&ticket).unwrap()).unwrap();
    forged["payload"]["input"]["command"] = json!(format!("touch {out}/pwned-ticket"));
    forged["approved_payload"] = forged["payload"].clone();
    std::fs::write(&ticket, forged.to_string()).unwrap();
    let (code, output) = run_as_client(&s, &scene, &command);
    assert_eq!(code, Some(0), "{output}");
    assert!(output.contains("hello readme"), "what was decided ran: {output}");
    assert!(!ticket.exists(), "a ticket is used once");
    // Another proposal's genuine ticket under this one's name, and one approved unconfined.
    let Answer::Allowed { command: other, .. } = ask_hook(&s, &scene, "ls src", 30_001) else { panic!() };
    let other_id = other.rsplit(' ').next().unwrap().to_string();
    std::fs::rename(s.home().join("runs").join(format!("{other_id}.json")), &ticket).unwrap();
    let (code, output) = run_as_client(&s, &scene, &command);
    assert_eq!(code, Some(0), "{output}");
    assert!(output.contains("hello readme") && !output.contains("main.rs"), "{output}");
    let pending = s
        .propose(json!({"kind": "tool.call", "payload": {"tool": "Bash", "input": {"command": format!("touch {out}/pwned-approved")},
            "cwd": scene.proj, "client": "claude-code", "confinable": true}}))
        .await;
    let pid = pending["id"].as_str().unwrap().to_string();
    let (_, approved) = s.decide(&pid, json!({"outcome": "approve", "run": "unconfined"})).await;
    std::fs::create_dir_all(s.home().join("runs")).unwrap();
    std::fs::write(s.home().join("runs").join(format!("{pid}.json")), approved.to_string()).unwrap();
    let o = s.cli(&["run", &pid]);
    assert_eq!(o.status.code(), Some(126), "{}", crate::harness::stderr(&o));
    assert!(
        std::fs::read_dir(&scene.out).unwrap().all(|e| !e.unwrap().file_name().to_string_lossy().starts_with("pwned"))
    );
}

/// No input takes the server down: the lines that overflowed the reader's stack, and a path of
/// nearly 4 MB, each get an answer (asked, or a clear 4xx), and `/v1/health` answers within
/// 100 ms all the while.
#[tokio::test]
async fn nested_lines_and_a_huge_path_neither_crash_nor_stall_the_server() {
    let scene = scene();
    let s = Server::start_with("", &[("HOME", scene.home.to_str().unwrap())]).await;
    let huge_path = format!("{}/{}", scene.proj.display(), "a/".repeat(1_900_000));
    let bodies = vec![
        json!({"tool": "Bash", "input": {"command": format!("[[ {}x ]]", "! ".repeat(3000))}}),
        json!({"tool": "Bash", "input": {"command": format!("{}true", "npx ".repeat(3000))}}),
        json!({"tool": "Bash", "input": {"command": format!("echo {}1{}", "$[".repeat(2000), "]".repeat(2000))}}),
        json!({"tool": "Bash", "input": {"command": format!("[[ {}a ]]", "a && ".repeat(3000))}}),
        json!({"tool": "Read", "input": {"file_path": huge_path}}),
        json!({"tool": "Edit", "input": {"file_path": huge_path, "old_string": "a", "new_string": "b"}}),
    ];
    for payload in bodies {
        let mut payload = payload;
        payload["cwd"] = json!(scene.proj);
        payload["client"] = json!("claude-code");
        payload["confinable"] = json!(true);
        let body = json!({"kind": "tool.call", "payload": payload});
        let url = format!("{}/v1/proposals", s.url);
        let (http, agent) = (s.http.clone(), s.agent.clone());
        let post = tokio::spawn(async move { http.post(url).bearer_auth(agent).json(&body).send().await });
        // Health, every 20 ms, while the proposal is read. A slow answer is asked once more at
        // once: a stalled server is slow twice in a row, where a test machine's other work
        // (two cores, the suite in parallel) delays one answer now and then.
        let mut worst = Duration::ZERO;
        while !post.is_finished() {
            let health = || async {
                let t = Instant::now();
                let (st, _) = s.req(reqwest::Method::GET, "/health", None, None).await;
                assert_eq!(st, reqwest::StatusCode::OK, "the server stopped answering");
                t.elapsed()
            };
            let mut took = health().await;
            if took >= Duration::from_millis(100) {
                took = took.min(health().await);
            }
            worst = worst.max(took);
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let r = post.await.unwrap().expect("the server answered");
        let st = r.status();
        let v: Value = r.json().await.unwrap_or(Value::Null);
        assert!(st.is_success() || st.is_client_error(), "{st}: {v}");
        if st.is_success() {
            assert_eq!(v["status"], "pending", "asked, never allowed: {}", v["status"]);
        } else {
            assert!(v["error"]["code"].is_string(), "a stable code: {v}");
        }
        assert!(worst < Duration::from_millis(100), "health took {worst:?}");
    }
    let (st, _) = s.req(reqwest::Method::GET, "/health", None, None).await;
    assert_eq!(st, reqwest::StatusCode::OK);
}

/// The built-in build-and-test rule, off until the person adds it: builds and tests run without
/// asking, confined to writing the folder, never its executable configuration, never outside.
#[tokio::test]
async fn the_build_and_test_rule_runs_builds_confined_to_the_folder() {
    let scene = scene();
    let out = scene.out.display().to_string();
    std::fs::write(
        scene.proj.join("Makefile"),
        format!(
            "all:\n\ttouch {out}/pwned-make\nbuild:\n\techo built > build.txt\nhook:\n\techo 'touch {out}/pwned-hook' > .git/hooks/pre-commit\ncfg:\n\techo '# more' >> Makefile\nnewcfg:\n\techo 'touch {out}/pwned-envrc' > .envrc\nsub:\n\tmkdir -p pkg && echo '{{}}' > pkg/package.json\n\
             commit:\n\tgit add build.txt && git commit -qm built\n\
             gitcfg:\n\tgit config core.fsmonitor 'touch {out}/pwned-fsmonitor'\n\
             gitmove:\n\tmv .git .git-aside\n\
             commondir:\n\tmkdir -p evil && echo ../evil > .git/commondir\n"
        ),
    )
    .unwrap();
    let s = Server::start_with("", &[("HOME", scene.home.to_str().unwrap())]).await;
    // Off by default: a build asks.
    assert!(matches!(ask_hook(&s, &scene, "make build", 20_000), Answer::NotAllowed(_)));
    let (st, rule) = s
        .req(
            reqwest::Method::POST,
            "/rules",
            Some(&s.owner),
            Some(json!({"effect": "allow", "match": {"builtin": "build_test"}})),
        )
        .await;
    assert_eq!(st, reqwest::StatusCode::CREATED, "{rule}");
    assert!(rule["description"].as_str().unwrap().contains("never its executable configuration"), "{rule}");
    let can = assent_boundary::boxed::Support::detect().can(assent_boundary::Confine::Workspace);
    let makefile = std::fs::read_to_string(scene.proj.join("Makefile")).unwrap();
    for (n, (line, expect_ok)) in [
        ("make build", true),
        ("make", false),
        ("make hook", false),
        ("make cfg", false),
        ("make newcfg", true),
        ("make sub", true),
        // Objects, refs and the index are data: a commit is written; the configuration, the
        // hooks and the folder's place are not, and a pointer to another repository is removed.
        ("make commit", true),
        ("make gitcfg", false),
        ("make gitmove", false),
        ("make commondir", true),
        ("npm test", false),
    ]
    .into_iter()
    .enumerate()
    {
        let Some(command) = allowed_confined(&s, &scene, line, 20_001 + n, can) else { continue };
        let (code, output) = run_as_client(&s, &scene, &command);
        assert_eq!(code == Some(0), expect_ok, "{line}: {code:?} {output}");
        if line == "make commondir" {
            assert!(output.contains("removed") && output.contains("commondir"), "{output}");
        }
        if line == "make newcfg" {
            assert!(output.contains("removed") && output.contains(".envrc"), "{output}");
        }
    }
    if !can {
        return;
    }
    // What it was let write, it wrote; nothing else anywhere.
    assert_eq!(std::fs::read_to_string(scene.proj.join("build.txt")).unwrap(), "built\n");
    assert!(
        std::fs::read_dir(&scene.out).unwrap().all(|e| !e.unwrap().file_name().to_string_lossy().starts_with("pwned"))
    );
    assert!(!scene.proj.join(".git/hooks/pre-commit").exists());
    assert!(!scene.proj.join(".git/commondir").exists() && scene.proj.join(".git/config").is_file());
    let log = Command::new("git").args(["log", "-1", "--format=%s %an"]).current_dir(&scene.proj).output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&log.stdout).trim(),
        "built t",
        "the confined commit is in the repository, the person's"
    );
    let status = Command::new("git").args(["status", "--short"]).current_dir(&scene.proj).output().unwrap();
    assert!(status.status.success(), "the repository is whole: {}", String::from_utf8_lossy(&status.stderr));
    assert!(!scene.proj.join(".envrc").exists(), "a new executable configuration was removed");
    assert!(!scene.proj.join("pkg/package.json").exists(), "one in a new folder too");
    assert_eq!(std::fs::read_to_string(scene.proj.join("Makefile")).unwrap(), makefile);
    // A line that is more than builds and tests still asks.
    assert!(matches!(ask_hook(&s, &scene, "make build && curl -s http://127.0.0.1:9/", 20_100), Answer::NotAllowed(_)));
    assert!(matches!(ask_hook(&s, &scene, "make build > ~/.bashrc", 20_101), Answer::NotAllowed(_)));
}

/// A saved rule for a project script pins the script's definition: "allow similar" on `npm run
/// build` allows it again while `package.json` is as it was, in that project only; once an
/// edit changes the script, the call asks again.
#[tokio::test]
async fn a_saved_rule_for_a_project_script_asks_again_once_the_script_changed() {
    let Some((scene, s)) = confining(assent_boundary::Confine::Workspace).await else { return };
    let pkg = scene.proj.join("package.json");
    std::fs::write(&pkg, r#"{"name": "p", "scripts": {"build": "echo built"}}"#).unwrap();
    let call = |c: &str, cwd: &std::path::Path| json!({"kind": "tool.call", "payload": {"tool": "Bash", "input": {"command": c}, "cwd": cwd, "client": "claude-code", "confinable": true}});
    let first = s.propose(call("npm run build", &scene.proj)).await;
    let id = first["id"].as_str().unwrap();
    let (st, d) = s.decide(id, json!({"outcome": "approve", "allow_similar": {}})).await;
    assert_eq!(st, reqwest::StatusCode::OK, "{d}");
    assert_eq!(d["rule"]["match"]["script"]["file"], pkg.to_str().unwrap(), "{d}");
    assert!(d["rule"]["description"].as_str().unwrap().contains("is as it was"), "{d}");
    assert_eq!(s.propose(call("npm run build", &scene.proj)).await["status"], "approved");
    // Another project with the same script: not this rule's.
    let other = scene.home.join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::copy(&pkg, other.join("package.json")).unwrap();
    assert_eq!(s.propose(call("npm run build", &other)).await["status"], "pending");
    // The script changed: asked again.
    std::fs::write(&pkg, format!(r#"{{"name": "p", "scripts": {{"build": "touch {}/pwned"}}}}"#, scene.out.display()))
        .unwrap();
    assert_eq!(s.propose(call("npm run build", &scene.proj)).await["status"], "pending");
}
