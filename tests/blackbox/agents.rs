//! What every coding agent wired through its own hook must do, driven with the real agent (from
//! the npm registry) against a stand-in model on loopback: a call the person approves runs; one
//! they reject does not, and the model reads their reason; their edit is what runs; a call a
//! rule allows runs without asking (a read the built-in rule allows, confined, where the agent
//! can run a call confined); and the agent killed while its call waits leaves no question behind. Each agent's module says how to set it up and run it.

use crate::harness::{BIN, Launch, Server, filed, withdrawn_by_its_hook};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// The scenarios as tests of the agent `$agent` (an [`Agent`]), in the module that invokes it:
/// each test, named as its scenario is (in this module) said of the agent.
macro_rules! agent_tests {
    ($agent:expr) => {
        crate::agents::agent_tests!($agent,
            runs_what_the_person_approved: runs_what_the_person_approved,
            is_refused_with_the_persons_reason_and_runs_the_persons_edit: is_refused_with_the_reason_and_runs_the_edit,
            a_rule_allows_without_asking: a_rule_allows_without_asking,
            killed_while_waiting_leaves_no_question_behind: killed_leaves_no_question_behind,
            its_hook_killed_withdraws_the_question_at_once: hook_killed_withdraws_at_once,
            a_missing_hook_program_does_what_doctor_says: missing_hook_does_what_doctor_says,
        );
    };
    ($agent:expr, $($test:ident: $scenario:ident,)*) => {
        $(
            #[tokio::test]
            async fn $test() {
                crate::agents::$scenario(&$agent).await;
            }
        )*
    };
}
pub(crate) use agent_tests;

/// A coding agent, as the scenarios drive it.
pub(crate) struct Agent {
    /// Its name, for messages.
    pub name: &'static str,
    /// The client a proposal says it came through.
    pub client: &'static str,
    /// Its shell tool.
    pub shell: Shell,
    /// Whether it can run a call confined (its hook rewrites the call).
    pub confines: bool,
    /// Whether it runs a call whose hook was killed outright (as docs/clients.md and `assent
    /// doctor` say it does: Gemini CLI and Cline do, the others refuse it).
    pub runs_when_its_hook_dies: bool,
    /// Whether it runs a call whose hook program is not there (as `assent doctor` says it does).
    pub runs_when_its_hook_is_missing: bool,
    /// The stand-in model's script (in `tests/fixtures`), and what follows its port in its URL.
    pub model: (&'static str, &'static str),
    /// What the model was told of its call, from one logged request.
    pub told: fn(&Value) -> Option<String>,
    /// Writes the agent's settings, with Assent's hook, into the scene's home.
    pub wire: fn(&Server, &Scene, &str),
    /// Starts the agent in the scene against the model at the URL.
    pub run: fn(&Server, &Scene, &str) -> Command,
}

/// A coding agent's shell tool, as the stand-in model calls it.
pub(crate) struct Shell {
    /// Its name.
    pub tool: &'static str,
    /// The input the stand-in model gives it for a command.
    pub input: fn(&str) -> Value,
}

/// The stand-in for a model behind OpenAI's chat completions API (as [`Agent::model`] names it).
pub(crate) const OPENAI_MODEL: (&str, &str) = ("agents/fake_openai.py", "/v1");

/// A project folder (a git repository with a notes file) and a home for the agent.
pub(crate) struct Scene {
    _dir: tempfile::TempDir,
    pub work: PathBuf,
    pub home: PathBuf,
}

/// The stand-in model: it asks for `command` in the shell, then says what came back.
struct Model {
    child: Child,
    url: String,
    log: PathBuf,
}

impl Drop for Model {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `assent ARGS` for the server's home, as the scene's person runs it (their home, in the project).
fn as_the_user(s: &Server, scene: &Scene, args: &[&str]) -> std::process::Output {
    Command::new(BIN)
        .arg("--home")
        .arg(s.home())
        .args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", &scene.home)
        .current_dir(&scene.work)
        .output()
        .unwrap()
}

/// Wires `client` into the scene's home as a person would: `assent connect CLIENT` (its hook
/// waiting 50 seconds, as [`hook_command`]'s), run with the scene's home as the user's.
pub(crate) fn connect(s: &Server, scene: &Scene, client: &str) {
    let o = as_the_user(s, scene, &["connect", client, "--timeout", "50"]);
    let said = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success() && said.contains(client), "assent connect {client}: {said}");
}

/// The command the hook runs, as the README's settings name it (`assent-run`, the small binary
/// that hands waits to `assent`), waiting `wait` seconds.
pub(crate) fn hook_command(s: &Server, hook: &str, wait: u64) -> String {
    let runner = Path::new(BIN).with_file_name("assent-run");
    format!("'{}' --home '{}' hook {hook} --timeout {wait}", runner.display(), s.home().display())
}

impl Agent {
    fn scene(&self, s: &Server) -> Scene {
        self.scene_hooked(s, &hook_command(s, self.client, 50))
    }

    /// A scene whose hook runs `hook`.
    fn scene_hooked(&self, s: &Server, hook: &str) -> Scene {
        let dir = tempfile::Builder::new().prefix(self.client).tempdir_in("/tmp").unwrap();
        let base = dir.path().canonicalize().unwrap();
        let (work, home) = (base.join("work"), base.join("home"));
        std::fs::create_dir_all(&work).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(work.join("notes.txt"), "hello from the notes\n").unwrap();
        let git = Command::new("git").args(["init", "-q"]).current_dir(&work).status().unwrap();
        assert!(git.success());
        let scene = Scene { _dir: dir, work, home };
        (self.wire)(s, &scene, hook);
        scene
    }

    fn model(&self, scene: &Scene, command: &str) -> Model {
        let log = scene.work.join("model.log");
        let _ = std::fs::remove_file(&log);
        let script = format!("{}/tests/fixtures/{}", env!("CARGO_MANIFEST_DIR"), self.model.0);
        let mut child =
            Command::new("python3").arg(script).arg(&log).arg(command).stdout(Stdio::piped()).spawn().unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        Model { child, url: format!("http://127.0.0.1:{}{}", line.trim(), self.model.1), log }
    }

    /// The stand-in model asking for `echo WORD > marker.txt` in the project: the marker's path,
    /// and the model.
    fn marker_model(&self, scene: &Scene, word: &str) -> (PathBuf, Model) {
        let marker = scene.work.join("marker.txt");
        let model = self.model(scene, &format!("echo {word} > {}", marker.display()));
        (marker, model)
    }

    /// [`Agent::start`], and the call it filed in the inbox.
    async fn run_until_filed(&self, s: &Server, scene: &Scene, model: &Model) -> (Child, Value) {
        let mut run = self.start(s, scene, model);
        let p = filed(s, &mut run, self.name).await;
        (run, p)
    }

    fn start(&self, s: &Server, scene: &Scene, model: &Model) -> Child {
        (self.run)(s, scene, &model.url).current_dir(&scene.work).launch(&s.env, Stdio::piped(), Stdio::piped())
    }

    /// What the model was told of its call.
    fn told(&self, model: &Model, said: &str) -> String {
        let log = std::fs::read_to_string(&model.log).unwrap_or_default();
        let told = log.lines().filter_map(|l| serde_json::from_str::<Value>(l).ok()).find_map(|r| (self.told)(&r));
        told.unwrap_or_else(|| panic!("{} told its model nothing:\n{said}", self.name))
    }
}

/// Waits for the agent to end; what it printed.
fn finish(child: Child) -> String {
    let out = child.wait_with_output().unwrap();
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// The call is filed as the agent reports it, and runs once approved.
pub(crate) async fn runs_what_the_person_approved(agent: &Agent) {
    let s = Server::start().await;
    let scene = agent.scene(&s);
    let (marker, model) = agent.marker_model(&scene, "approved");
    let command = format!("echo approved > {}", marker.display());
    let (run, p) = agent.run_until_filed(&s, &scene, &model).await;
    assert_eq!(p["payload"]["tool"], agent.shell.tool);
    for (k, v) in (agent.shell.input)(&command).as_object().unwrap() {
        assert_eq!(&p["payload"]["input"][k], v, "{p}");
    }
    assert_eq!(p["payload"]["client"], agent.client);
    assert_eq!(p["payload"]["cwd"], scene.work.display().to_string());
    assert!(!marker.exists(), "nothing runs before the decision");
    s.decide(p["id"].as_str().unwrap(), json!({"outcome": "approve"})).await;
    let said = finish(run);
    assert_eq!(std::fs::read_to_string(&marker).unwrap_or_default(), "approved\n", "{said}");
}

/// A rejected call does not run and the model reads the reason; an edited one runs as edited.
pub(crate) async fn is_refused_with_the_reason_and_runs_the_edit(agent: &Agent) {
    let s = Server::start().await;
    let scene = agent.scene(&s);
    let (marker, model) = agent.marker_model(&scene, "original");
    let (run, p) = agent.run_until_filed(&s, &scene, &model).await;
    s.decide(p["id"].as_str().unwrap(), json!({"outcome": "reject", "reason": "not in this repository"})).await;
    let said = finish(run);
    assert!(!marker.exists(), "{said}");
    let told = agent.told(&model, &said);
    assert!(told.contains("not in this repository"), "{told}");

    let (_, model) = agent.marker_model(&scene, "original");
    let (run, p) = agent.run_until_filed(&s, &scene, &model).await;
    let mut edited = p["payload"]["input"].clone();
    for (k, v) in (agent.shell.input)(&format!("echo edited > {}", marker.display())).as_object().unwrap() {
        edited[k] = v.clone();
    }
    s.decide(p["id"].as_str().unwrap(), json!({"outcome": "approve", "edits": {"input": edited}})).await;
    let said = finish(run);
    assert_eq!(std::fs::read_to_string(&marker).unwrap_or_default(), "edited\n", "{said}");
}

/// A call a rule allows runs without asking: a read the built-in rule allows, confined, where the
/// agent can run a call confined; else a rule of the person's that names the shell tool and the
/// command (`cat`: for Cline, whose `run_commands` sends a list, the list of one).
pub(crate) async fn a_rule_allows_without_asking(agent: &Agent) {
    let s = Server::start().await;
    let scene = agent.scene(&s);
    if !agent.confines {
        let rule = json!({"effect": "allow", "match": {"tool": agent.shell.tool, "input": "cat"}});
        let (st, _) = s.req(reqwest::Method::POST, "/rules", Some(&s.owner), Some(rule)).await;
        assert!(st.is_success());
    }
    let model = agent.model(&scene, "cat notes.txt");
    let said = finish(agent.start(&s, &scene, &model));
    let told = agent.told(&model, &said);
    assert!(told.contains("hello from the notes"), "{told}\n{said}");
    let (_, page) = s.req(reqwest::Method::GET, "/proposals", Some(&s.owner), None).await;
    let p = &page["items"][0];
    assert_eq!(p["status"], "approved", "{p}");
    if agent.confines {
        assert_eq!(p["decision"]["confine"], "read", "allowed only confined: {p}");
    } else {
        assert!(p["decision"]["rule"]["id"].is_string(), "by the rule: {p}");
    }
}

/// The agent's hook killed outright (SIGKILL: nothing of it runs) while its call waits: the
/// question leaves the inbox at once, since nobody may decide a call the agent has by then run or
/// dropped, and the agent does with the call what docs/clients.md says it does with a dead hook.
pub(crate) async fn hook_killed_withdraws_at_once(agent: &Agent) {
    let s = Server::start().await;
    let scene = agent.scene(&s);
    let (marker, model) = agent.marker_model(&scene, "ran");
    let (run, p) = agent.run_until_filed(&s, &scene, &model).await;
    let id = p["id"].as_str().unwrap();
    // Killed once it waits (between the filing and its wait, the lease alone covers it).
    s.until_waiting(1).await;
    let home = s.home().display().to_string();
    let hooks: Vec<u32> =
        crate::procs::matching(|cmd| cmd.contains(&home) && cmd.contains(&format!(" hook {}", agent.client)));
    assert!(!hooks.is_empty(), "{}'s hook is not running", agent.name);
    for pid in &hooks {
        let _ = Command::new("kill").args(["-KILL", &pid.to_string()]).status();
    }
    let killed = std::time::Instant::now();
    let settled = loop {
        let (_, now) = s.get(id, &s.owner).await;
        if now["status"] != "pending" {
            break now;
        }
        assert!(
            killed.elapsed() < std::time::Duration::from_secs(2),
            "still pending {:?} after its hook was killed: {now}",
            killed.elapsed()
        );
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    };
    assert_eq!(settled["status"], "withdrawn", "{settled}");
    let (_, audit) = s.req(reqwest::Method::GET, &format!("/proposals/{id}/audit"), Some(&s.owner), None).await;
    let last = audit["items"].as_array().and_then(|a| a.last()).cloned().unwrap_or_default();
    assert_eq!(last["detail"]["reason"], "waiter_lost", "{last}");
    let said = finish(run);
    assert_eq!(
        marker.exists(),
        agent.runs_when_its_hook_dies,
        "{} with its hook killed ran the call: {}\n{said}",
        agent.name,
        marker.exists()
    );
}

/// The agent wired to a hook program that is not there (moved, uninstalled): it does with the
/// call what `assent doctor` says it does (run it, or refuse it), and doctor finds the hook's
/// program missing.
pub(crate) async fn missing_hook_does_what_doctor_says(agent: &Agent) {
    let s = Server::start().await;
    let gone = s.home().join("moved/assent-run");
    let scene = agent.scene(&s);
    // Every file the wiring wrote (settings, a printed plugin or hook file) now names a program
    // that is not there.
    let runner = Path::new(BIN).with_file_name("assent-run").display().to_string();
    let mut files = vec![scene.home.clone()];
    while let Some(f) = files.pop() {
        if f.is_dir() {
            files.extend(std::fs::read_dir(&f).unwrap().flatten().map(|e| e.path()));
        } else if let Ok(text) = std::fs::read_to_string(&f).map(|t| t.replace(&runner, &gone.display().to_string())) {
            std::fs::write(&f, text).unwrap();
        }
    }
    let (marker, model) = agent.marker_model(&scene, "ran");
    let mut run = agent.start(&s, &scene, &model);
    let ended = crate::procs::ended_within(&mut run, std::time::Duration::from_secs(120));
    if !ended {
        let _ = run.kill();
    }
    let said = finish(run);
    assert!(ended, "{} never ended with its hook missing:\n{said}", agent.name);
    assert_eq!(
        marker.exists(),
        agent.runs_when_its_hook_is_missing,
        "{} with its hook missing ran the call: {}\n{said}",
        agent.name,
        marker.exists()
    );
    let doctor = as_the_user(&s, &scene, &["doctor", "--json"]);
    let report: Value = serde_json::from_slice(&doctor.stdout).unwrap_or_default();
    let name = agent.client.replace('-', " ");
    let line = report["checks"].as_array().into_iter().flatten().find(|c| c["name"] == name.as_str());
    let line = line.unwrap_or_else(|| panic!("doctor says nothing of {}: {report}", agent.name));
    assert_eq!(line["status"], "problem", "{line}");
    let detail = line["detail"].as_str().unwrap_or_default();
    let says_runs = detail.contains("runs every call whose hook fails");
    let says_refuses = detail.contains("refuses every call");
    assert!(says_runs != says_refuses, "doctor says neither or both: {detail}");
    assert_eq!(
        says_runs, agent.runs_when_its_hook_is_missing,
        "doctor's words against what {} did: {detail}",
        agent.name
    );
}

/// The agent a person started, killed while its call waits: its hook withdraws the call.
pub(crate) async fn killed_leaves_no_question_behind(agent: &Agent) {
    let s = Server::start().await;
    let scene = agent.scene(&s);
    let (marker, model) = agent.marker_model(&scene, "never");
    let (mut run, p) = agent.run_until_filed(&s, &scene, &model).await;
    // Agents that relaunch themselves (a loader, a second process) run the hook in a child:
    // the one killed is the one the person started; its children are cleaned up after.
    let children = Command::new("pgrep").args(["-P", &run.id().to_string()]).output().unwrap();
    run.kill().unwrap();
    let _ = run.wait();
    withdrawn_by_its_hook(&s, p["id"].as_str().unwrap(), agent.name).await;
    for pid in String::from_utf8_lossy(&children.stdout).split_whitespace() {
        let _ = Command::new("kill").args(["-KILL", pid]).status();
    }
    assert!(!marker.exists());
}
