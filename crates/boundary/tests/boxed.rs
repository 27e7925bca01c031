//! The box on this system, with real bash: every attack the reviews brought, run in the box and,
//! as a control, unconfined in the same scratch world (the control must do the harm, or the case
//! proves nothing). Run twice: with Landlock as a layer, and with it withheld (a debug build's
//! switch), so that the namespaces and seccomp are shown to hold alone, as on a kernel older
//! than 6.12.
//!
//! Its own harness (`harness = false`): the box executes this binary again as its second stage,
//! which must be dispatched before anything else. A case that cannot run here says so by name
//! and counts as skipped, never as passed.

#![allow(missing_docs, clippy::unwrap_used, clippy::print_stdout, clippy::print_stderr)]

use assent_boundary::Confine;
use assent_boundary::boxed::{Error, Spec, Support, run};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

const TOKEN: &str = "BOX-TEST-TOKEN-5e1f";

/// A scratch world: a home with secrets and toolchain tokens, a project inside it (a git
/// repository with `.env`, executable configuration and a link out), a folder outside.
struct World {
    _root: tempfile::TempDir,
    home: PathBuf,
    proj: PathBuf,
    outside: PathBuf,
}

fn world() -> World {
    let root = tempfile::Builder::new().prefix("box-").tempdir_in("/tmp").unwrap();
    let base = root.path().canonicalize().unwrap();
    let (home, outside) = (base.join("home"), base.join("outside"));
    let proj = home.join("proj");
    let node = home.join(".nvm/versions/node/v20.0.0");
    for d in [home.join(".ssh"), home.join(".config/git"), proj.join("src"), proj.join(".claude"), outside.clone()] {
        std::fs::create_dir_all(d).unwrap();
    }
    for d in [node.join("bin"), node.join("etc")] {
        std::fs::create_dir_all(d).unwrap();
    }
    let files: &[(PathBuf, String)] = &[
        (home.join(".ssh/id_rsa"), format!("{TOKEN}-ssh\n")),
        (home.join(".npmrc"), format!("//registry.npmjs.org/:_authToken={TOKEN}-npmrc\n")),
        (node.join("etc/npmrc"), format!("//registry.npmjs.org/:_authToken={TOKEN}-nvm\n")),
        (home.join(".config/git/ignore"), "*.log\n".into()),
        (outside.join("secret"), format!("{TOKEN}-outside\n")),
        (proj.join("README.md"), "hello\n".into()),
        (proj.join(".env"), format!("API_KEY={TOKEN}-dotenv\n")),
        (proj.join("src/server.pem"), format!("{TOKEN}-pem\n")),
        (proj.join(".claude/settings.json"), "{}\n".into()),
        (proj.join("Makefile"), "all:\n\ttrue\n".into()),
    ];
    for (p, text) in files {
        std::fs::write(p, text).unwrap();
    }
    std::os::unix::fs::symlink(outside.join("secret"), proj.join("link")).unwrap();
    let git = |args: &[&str]| {
        let ok = Command::new("git").args(args).current_dir(&proj).env("HOME", &home).output().unwrap();
        assert!(ok.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&ok.stderr));
    };
    git(&["init", "-q"]);
    git(&["-c", "user.email=t@e", "-c", "user.name=t", "add", "README.md", "src"]);
    git(&["-c", "user.email=t@e", "-c", "user.name=t", "commit", "-qm", "first"]);
    World { _root: root, home, proj, outside }
}

/// The client's environment: the world's home, this PATH, a secret.
fn env_of(w: &World) -> Vec<(&'static str, OsString)> {
    vec![
        ("HOME", w.home.clone().into_os_string()),
        ("PATH", std::env::var_os("PATH").unwrap_or_default()),
        ("BOX_TEST_SECRET", OsString::from(format!("{TOKEN}-env"))),
    ]
}

/// `script` by bash in `profile`'s box, in a process of its own (this binary, `--box`): its
/// code and both streams.
fn boxed(w: &World, profile: Confine, script: &str) -> (i32, String) {
    boxed_with(w, profile, script, &[])
}

/// [`boxed`], the box reaching `hosts` through Assent's proxy.
fn boxed_with(w: &World, profile: Confine, script: &str, hosts: &[String]) -> (i32, String) {
    let mut c = Command::new(std::env::current_exe().unwrap());
    c.args(["--box", profile.as_str()]).arg(&w.proj).arg(script).env_clear().envs(env_of(w));
    if !hosts.is_empty() {
        c.env("BOX_TEST_HOSTS", hosts.join(","));
    }
    if let Some(v) = std::env::var_os("ASSENT_TEST_WITHOUT_LANDLOCK") {
        c.env("ASSENT_TEST_WITHOUT_LANDLOCK", v);
    }
    output(c)
}

/// `script` by bash unconfined, as the client would run it: the control.
fn plain(w: &World, script: &str) -> (i32, String) {
    let mut c = Command::new("bash");
    c.args(["-c", script]).current_dir(&w.proj).env_clear().envs(env_of(w));
    output(c)
}

fn output(mut c: Command) -> (i32, String) {
    let o = c.stdin(Stdio::null()).output().unwrap();
    (
        o.status.code().unwrap_or(-1),
        format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr)),
    )
}

fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// A case's outcome: passed, or skipped with why.
type Outcome = Result<Option<String>, String>;

fn check(ok: bool, what: impl FnOnce() -> String) -> Result<(), String> {
    if ok { Ok(()) } else { Err(what()) }
}

/// An attack: harmful unconfined (`plain` shows `harm`), harmless in the box.
fn attack(w: &World, profile: Confine, script: &str, harm: impl Fn(i32, &str) -> bool) -> Result<(), String> {
    let (code, out) = plain(w, script);
    check(harm(code, &out), || format!("the control did no harm, so the case proves nothing: {script}: {code} {out}"))?;
    let (code, out) = boxed(w, profile, script);
    check(!harm(code, &out), || format!("in the box: {script}: {code} {out}"))
}

fn prints_token(_: i32, out: &str) -> bool {
    out.contains(TOKEN)
}

fn succeeds(code: i32, _: &str) -> bool {
    code == 0
}

/// Reads of every secret the reviews found: outside the folder, through a link, the home's keys
/// and tokens, a toolchain's global `npmrc`, the folder's own `.env` and keys (`read` hides
/// them), the environment.
fn secrets_stay_out(w: &World) -> Outcome {
    let o = w.outside.display();
    for script in [
        format!("cat {o}/secret"),
        "cat link".into(),
        "cat ../../outside/secret".into(),
        "cat ~/.ssh/id_rsa".into(),
        "cat ~/.npmrc".into(),
        "cat ~/.nvm/versions/node/*/etc/npmrc".into(),
        "cat .env".into(),
        "grep -r API_KEY . ; cat src/*.pem".into(),
        "env".into(),
    ] {
        attack(w, Confine::Read, &script, prints_token)?;
    }
    // What a read needs is there: the folder, git (with `~/.config/git` in the home), the system.
    let (code, out) =
        boxed(w, Confine::Read, "cat README.md && git status --short && git log --oneline | wc -l && nproc && id -un");
    check(code == 0 && out.contains("hello"), || format!("an ordinary read failed: {out}"))?;
    Ok(None)
}

/// `/etc` is shown by name: a secret file an administrator put there is not (root only: a file
/// is written in `/etc` for the case, and removed).
fn etc_is_named(w: &World) -> Outcome {
    attack(w, Confine::Read, "cat /etc/shadow", |c, out| c == 0 && out.contains("root:"))
        .or_else(|e| if is_root() { Err(e) } else { Ok(()) })?;
    if !is_root() {
        return Ok(Some("the planted /etc secret needs root to plant (the /etc/shadow part ran)".into()));
    }
    let planted = Path::new("/etc/assent-box-test-wg0.conf");
    std::fs::write(planted, format!("PrivateKey = {TOKEN}-wg\n")).unwrap();
    let r = attack(w, Confine::Read, &format!("cat {}", planted.display()), prints_token);
    let _ = std::fs::remove_file(planted);
    r.map(|()| None)
}

/// Processes outside cannot be named: no signal, limit, priority, affinity or I/O class reaches
/// one (the review's `prlimit --pid SERVER --fsize=0:0` killed the server).
fn processes_outside_are_out_of_reach(w: &World) -> Outcome {
    let mut target = Command::new("sleep").arg("300").spawn().unwrap();
    let pid = target.id();
    let r = (|| {
        for script in [
            format!("prlimit --pid {pid} --nofile=512:512"),
            format!("renice -n 5 -p {pid}"),
            format!("taskset -p 1 {pid}"),
            format!("ionice -c 3 -p {pid}"),
            format!("kill -0 {pid}"),
            format!("cat /proc/{pid}/environ"),
        ] {
            attack(w, Confine::Workspace, &script, succeeds)?;
        }
        // A sweep needs no pid: the box's /proc lists its own processes only.
        let (_, out) = boxed(w, Confine::Read, "ls /proc | grep -c '^[0-9]'");
        let n: u32 = out.trim().parse().unwrap_or(u32::MAX);
        check(n <= 4, || format!("the box sees {n} processes"))
    })();
    let alive = target.try_wait().unwrap().is_none();
    let _ = target.kill();
    let _ = target.wait();
    r?;
    check(alive, || "the process outside died".into()).map(|()| None)
}

/// Nothing outlives the call: a double-forked writer is killed with the box.
fn nothing_outlives_the_call(w: &World) -> Outcome {
    let script = "(setsid bash -c 'sleep 1; echo late > late.txt; echo late > .envrc' >/dev/null 2>&1 &); echo started";
    let (code, out) = boxed(w, Confine::Workspace, script);
    check(code == 0 && out.contains("started"), || format!("the box did not run: {out}"))?;
    std::thread::sleep(Duration::from_millis(2500));
    check(!w.proj.join("late.txt").exists() && !w.proj.join(".envrc").exists(), || {
        "a process of the box wrote after the call".into()
    })?;
    let (code, _) = plain(w, script);
    std::thread::sleep(Duration::from_millis(2500));
    let did = code == 0 && w.proj.join("late.txt").exists();
    let _ = std::fs::remove_file(w.proj.join("late.txt"));
    let _ = std::fs::remove_file(w.proj.join(".envrc"));
    check(did, || "the control left no process behind".into()).map(|()| None)
}

/// Root inside is not root outside: no capability, another user, no device node, no host name.
fn no_power_inside(w: &World) -> Outcome {
    let (_, out) = boxed(w, Confine::Workspace, "grep CapEff /proc/self/status; id -u");
    check(out.contains("CapEff:\t0000000000000000"), || format!("capabilities inside: {out}"))?;
    if is_root() {
        check(!out.lines().any(|l| l.trim() == "0"), || format!("root inside: {out}"))?;
        attack(w, Confine::Workspace, "mknod blk b 7 0 && ls -l blk && rm blk", succeeds)?;
    }
    // Changes to the machine itself: no control runs them (it would change this machine).
    for script in ["hostname assent-pwned", "date -s '2001-01-01'", "dmesg > /dev/null", "unshare -U true"] {
        let (code, out) = boxed(w, Confine::Workspace, script);
        check(code != 0, || format!("in the box: {script}: {out}"))?;
    }
    Ok((!is_root()).then(|| "the root-only parts (uid, mknod) need root".to_string()))
}

/// No network but the box's own loopback: a listener outside, an abstract socket outside, vsock.
fn no_network_out(w: &World) -> Outcome {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    attack(w, Confine::Workspace, &format!("echo hi > /dev/tcp/127.0.0.1/{port}"), succeeds)?;
    use std::os::linux::net::SocketAddrExt;
    let name = format!("assent-box-test-{}", std::process::id());
    let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
    let _u = std::os::unix::net::UnixListener::bind_addr(&addr).unwrap();
    let py = format!("python3 -c \"import socket; socket.socket(socket.AF_UNIX).connect('\\0{name}')\"");
    attack(w, Confine::Workspace, &py, succeeds)?;
    // A test's own server on the box's loopback works.
    let (code, out) = boxed(
        w,
        Confine::Workspace,
        "python3 -c \"import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); s.listen(); c=socket.create_connection(s.getsockname()); print('loopback ok')\"",
    );
    check(code == 0 && out.contains("loopback ok"), || format!("the box's own loopback: {out}"))?;
    let vsock = "python3 -c \"import socket; socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM)\"";
    let (code, out) = boxed(w, Confine::Workspace, vsock);
    check(code != 0, || format!("vsock in the box: {out}"))?;
    Ok((plain(w, vsock).0 != 0)
        .then(|| "vsock's control: this kernel has no vsock, so only the box's refusal ran".into()))
}

/// A workspace box writes the folder, never its executable configuration (the agents' own
/// included), and nothing outside; what it creates of configuration is removed after.
fn workspace_keeps_configuration(w: &World) -> Outcome {
    let (code, out) = boxed(w, Confine::Workspace, "echo built > out.txt && mkdir -p target && cat out.txt");
    check(code == 0 && w.proj.join("out.txt").exists(), || format!("a build's write failed: {out}"))?;
    let o = w.outside.display();
    for (script, planted) in [
        (format!("echo x > {o}/pwned"), w.outside.join("pwned")),
        (
            "echo '{\"disableAllHooks\": true}' > .claude/settings.local.json".into(),
            w.proj.join(".claude/settings.local.json"),
        ),
        ("echo 'script-shell=/tmp/x' > .npmrc".into(), w.proj.join(".npmrc")),
        ("printf 'all:\\n\\ttrue\\n' > GNUmakefile".into(), w.proj.join("GNUmakefile")),
        ("mkdir -p .vscode && echo '{}' > .vscode/tasks.json".into(), w.proj.join(".vscode")),
        (
            "echo '[core]' >> .git/config && echo hooked > .git/hooks/pre-commit".into(),
            w.proj.join(".git/hooks/pre-commit"),
        ),
        ("echo x > ~/.bashrc".into(), w.home.join(".bashrc")),
    ] {
        let before = std::fs::read(w.proj.join(".git/config")).unwrap();
        let _ = boxed(w, Confine::Workspace, &script);
        check(!planted.exists(), || format!("left behind by the box: {}", planted.display()))?;
        check(std::fs::read(w.proj.join(".git/config")).unwrap() == before, || ".git/config changed".into())?;
        let (code, _) = plain(w, &script);
        check(code == 0 && planted.exists(), || format!("the control could not plant {}", planted.display()))?;
        let _ = if planted.is_dir() { std::fs::remove_dir_all(&planted) } else { std::fs::remove_file(&planted) };
    }
    Ok(None)
}

/// A read writes nothing, not even inside the folder.
fn read_writes_nothing(w: &World) -> Outcome {
    for script in ["touch new", "echo x >> README.md", "rm README.md", "chmod 000 README.md", "mv README.md R"] {
        attack(w, Confine::Read, script, succeeds)?;
        // Undo what the control did.
        let _ = plain(w, "rm -f new R; chmod 644 README.md 2>/dev/null; git checkout -q -- README.md 2>/dev/null");
    }
    let (code, out) = boxed(w, Confine::Read, "echo x > /tmp/t && cat /tmp/t && echo y > /dev/null");
    check(code == 0, || format!("the box's own /tmp: {out}")).map(|()| None)
}

/// A web server on the host's loopback that answers every request with `word`: its port.
fn server(word: &'static str) -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for c in l.incoming().flatten() {
            std::thread::spawn(move || {
                use std::io::{BufRead, Write};
                let mut r = std::io::BufReader::new(c.try_clone().unwrap());
                let mut line = String::new();
                while r.read_line(&mut line).is_ok_and(|n| n > 2) {
                    line.clear();
                }
                let mut c = c;
                let _ =
                    write!(c, "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{word}", word.len());
            });
        }
    });
    port
}

/// Network by name: a box given hosts reaches those, through Assent's proxy (plain HTTP and a
/// CONNECT tunnel), and nothing else: another host is refused by the proxy, and going around it
/// reaches nothing (the box's network has only its own loopback).
fn network_by_name(w: &World) -> Outcome {
    let (named, other) = (server("hello-from-named"), server("hello-from-other"));
    let hosts = vec![format!("localhost:{named}")];
    let (code, out) = boxed_with(
        w,
        Confine::Workspace,
        &format!("curl -s http://localhost:{named}/ && echo && curl -sp http://localhost:{named}/"),
        &hosts,
    );
    check(code == 0 && out.matches("hello-from-named").count() == 2, || {
        format!("the named host, through the proxy: {code} {out}")
    })?;
    for script in [
        format!("curl -sf http://localhost:{other}/"),
        format!("curl -sfp http://localhost:{other}/"),
        format!("curl -s --noproxy '*' http://localhost:{named}/"),
        format!("curl -s --noproxy '*' http://127.0.0.1:{other}/"),
    ] {
        let (_, out) = boxed_with(w, Confine::Workspace, &script, &hosts);
        check(!out.contains("hello-from"), || format!("in the box: {script}: {out}"))?;
        let (_, out) = plain(w, &script.replace("-sfp", "-sf").replace(" -p ", " "));
        check(out.contains("hello-from"), || format!("the control reached nothing: {script}: {out}"))?;
    }
    Ok(None)
}

/// A commit in the workspace box is the person's: git inside sees no home of theirs, so Assent
/// names their global `user.name` and `user.email` (kept between runs while the configuration is
/// as it was: a change of it shows at the next run).
fn commits_as_the_person(w: &World) -> Outcome {
    let author = |name: &str| -> Result<(), String> {
        std::fs::write(w.home.join(".gitconfig"), format!("[user]\n\tname = {name}\n\temail = person@example.com\n"))
            .unwrap();
        let (code, out) = boxed(w, Confine::Workspace, "git commit -q --allow-empty -m boxed && echo committed");
        check(code == 0 && out.contains("committed"), || format!("no commit in the box: {code} {out}"))?;
        let (_, log) = plain(w, "git log -1 --format='%an <%ae> %cn'");
        check(log.trim() == format!("{name} <person@example.com> {name}"), || format!("committed as {log}"))
    };
    author("Box Person A")?;
    author("Box Person B")?;
    Ok(None)
}

fn refuses_folders_that_are_not_projects(_: &World) -> Outcome {
    for cwd in ["/", "/tmp", "/etc"] {
        let spec = Spec { profile: Confine::Read, cwd: cwd.into(), argv: vec!["true".into()], hosts: Vec::new() };
        match run(&spec) {
            Err(Error::Folder(_)) => {}
            other => return Err(format!("{cwd}: {other:?}")),
        }
    }
    Ok(None)
}

type Case = (&'static str, fn(&World) -> Outcome);

const CASES: &[Case] = &[
    ("secrets_stay_out", secrets_stay_out),
    ("etc_is_named", etc_is_named),
    ("processes_outside_are_out_of_reach", processes_outside_are_out_of_reach),
    ("nothing_outlives_the_call", nothing_outlives_the_call),
    ("no_power_inside", no_power_inside),
    ("no_network_out", no_network_out),
    ("workspace_keeps_configuration", workspace_keeps_configuration),
    ("read_writes_nothing", read_writes_nothing),
    ("network_by_name", network_by_name),
    ("commits_as_the_person", commits_as_the_person),
    ("refuses_folders_that_are_not_projects", refuses_folders_that_are_not_projects),
];

fn main() {
    let args: Vec<OsString> = std::env::args_os().collect();
    if let [_, flag, profile, cwd, script] = args.as_slice()
        && flag == "--box"
    {
        let profile = Confine::parse(profile.to_str().unwrap()).unwrap();
        let hosts =
            std::env::var("BOX_TEST_HOSTS").map(|h| h.split(',').map(str::to_string).collect()).unwrap_or_default();
        let spec = Spec { profile, cwd: cwd.into(), argv: vec!["bash".into(), "-c".into(), script.clone()], hosts };
        match run(&spec) {
            Ok(status) => std::process::exit(status.code().unwrap_or(-2)),
            Err(e) => {
                println!("BOX-ERROR {e}");
                std::process::exit(125);
            }
        }
    }
    let filters: Vec<String> =
        args.iter().skip(1).filter_map(|a| a.to_str()).filter(|a| !a.starts_with('-')).map(str::to_string).collect();
    let without = std::env::var_os("ASSENT_TEST_WITHOUT_LANDLOCK").is_some();
    let pass = if without { "without Landlock" } else { "with Landlock" };
    let support = Support::detect();
    let (mut passed, mut failed, mut skipped) = (0, 0, 0);
    for (name, case) in
        CASES.iter().filter(|(n, _)| filters.is_empty() || filters.iter().any(|f| n.contains(f.as_str())))
    {
        if !support.can(Confine::Workspace) {
            println!(
                "test {name} ({pass}) ... skipped: no box here: {}",
                support.missing(Confine::Workspace).join("; ")
            );
            skipped += 1;
            continue;
        }
        let w = world();
        match case(&w) {
            Ok(None) => {
                println!("test {name} ({pass}) ... ok");
                passed += 1;
            }
            Ok(Some(part)) => {
                println!("test {name} ({pass}) ... ok, with a part skipped: {part}");
                passed += 1;
            }
            Err(why) => {
                println!("test {name} ({pass}) ... FAILED: {why}");
                failed += 1;
            }
        }
    }
    // Again with Landlock withheld: the namespaces and seccomp alone.
    let mut child_failed = false;
    if !without && support.landlock_abi > 0 && cfg!(debug_assertions) {
        let s = Command::new(std::env::current_exe().unwrap())
            .args(&args[1..])
            .env("ASSENT_TEST_WITHOUT_LANDLOCK", "1")
            .status()
            .unwrap();
        child_failed = !s.success();
    } else if !without {
        println!(
            "the pass without Landlock is skipped: {}",
            if cfg!(debug_assertions) {
                "this kernel has no Landlock (this pass was without it)"
            } else {
                "a release build never withholds Landlock"
            }
        );
    }
    println!("\ntest result ({pass}): {passed} passed; {failed} failed; {skipped} skipped");
    if failed > 0 || child_failed {
        std::process::exit(101);
    }
}
