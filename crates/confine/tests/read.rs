//! The `read` profile on this kernel, with real bash: what a confined command can and cannot do.
//! Skipped (with a line saying so) where the kernel cannot confine; there `run` must refuse.

#![allow(missing_docs, clippy::unwrap_used)]

use assent_confine::{Error, Profile, Spec, Support, run};
use std::path::{Path, PathBuf};

struct World {
    _root: tempfile::TempDir,
    proj: PathBuf,
    outside: PathBuf,
}

fn world() -> World {
    let root = tempfile::Builder::new().prefix("confine-read-").tempdir_in("/tmp").unwrap();
    let base = root.path().canonicalize().unwrap();
    let proj = base.join("proj");
    let outside = base.join("outside");
    std::fs::create_dir_all(proj.join("src")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(proj.join("README.md"), "hello\n").unwrap();
    std::fs::write(outside.join("secret"), "TOP-SECRET\n").unwrap();
    std::os::unix::fs::symlink(outside.join("secret"), proj.join("link")).unwrap();
    World { _root: root, proj, outside }
}

/// Runs `script` with bash under `read` in `cwd`, both ways a read runs (a confined thread
/// spawning it, and this process becoming it): the first's exit code, and both's streams. Both
/// must end alike.
fn sh(cwd: &Path, script: &str) -> (i32, String) {
    let tmp_root = tempfile::tempdir().unwrap();
    let mut outs = Vec::new();
    for in_place in [false, true] {
        let mut c = std::process::Command::new(std::env::current_exe().unwrap());
        c.env("CONFINE_CHILD_CWD", cwd).env("CONFINE_CHILD_SCRIPT", script).env("CONFINE_TEST_TOKEN", "tok-5e1f");
        if in_place {
            c.env("CONFINE_CHILD_IN_PLACE", tmp_root.path());
        }
        let o = c.args(["--exact", "child", "--nocapture", "--include-ignored"]).output().unwrap();
        let text = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
        let code = if in_place {
            o.status.code().unwrap_or(-1)
        } else {
            text.lines()
                .find_map(|l| l.strip_prefix("CONFINED-EXIT "))
                .and_then(|c| c.trim().parse().ok())
                .unwrap_or(-1)
        };
        outs.push((code, text));
    }
    let ((code, text), (in_place, in_place_text)) = (outs[0].clone(), outs[1].clone());
    assert_eq!(code == 0, in_place == 0, "{script}: run {code}, in place {in_place}: {text}\n{in_place_text}");
    assert!(!in_place_text.contains("CONFINED-ERROR"), "{in_place_text}");
    // What the in-place run left is gone once it has ended.
    assent_confine::prune_temporary(tmp_root.path());
    assert_eq!(std::fs::read_dir(tmp_root.path()).unwrap().count(), 0, "{script}: its temporary folder stayed");
    (code, format!("{text}\n{in_place_text}"))
}

/// Runs in a process of its own (the test binary again): confining is for life.
#[test]
#[ignore = "run by the other tests, in a process of its own"]
fn child() {
    let (Ok(cwd), Ok(script)) = (std::env::var("CONFINE_CHILD_CWD"), std::env::var("CONFINE_CHILD_SCRIPT")) else {
        return;
    };
    let spec = Spec { profile: Profile::Read, cwd: cwd.into(), argv: vec!["bash".into(), "-c".into(), script.into()] };
    if let Some(tmp_root) = std::env::var_os("CONFINE_CHILD_IN_PLACE") {
        // Returns only when nothing ran.
        println!("CONFINED-ERROR {}", assent_confine::exec(&spec, Path::new(&tmp_root)));
        std::process::exit(125);
    }
    match run(&spec) {
        // On a line of its own, whatever the command printed last.
        Ok(status) => println!("\nCONFINED-EXIT {}", status.code().unwrap_or(-2)),
        Err(e) => println!("CONFINED-ERROR {e}"),
    }
}

fn can() -> bool {
    let ok = Support::detect().can(Profile::Read);
    if !ok {
        eprintln!("skipped: this kernel cannot confine ({:?})", Support::detect().missing(Profile::Read));
    }
    ok
}

#[test]
fn reads_inside_the_folder_and_nothing_outside() {
    if !can() {
        return;
    }
    let w = world();
    let mut holder = std::process::Command::new("sh")
        .args(["-c", "sleep 60 # tok-5e1f"])
        .env("HELD_TOKEN", "tok-5e1f")
        .spawn()
        .unwrap();
    let (code, out) = sh(&w.proj, "cat README.md && ls src && git --version >/dev/null");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("hello"), "{out}");
    for attack in [
        format!("cat {}/secret", w.outside.display()),
        "cat link".to_string(),
        "cat ../outside/secret".to_string(),
        "cat ~/.ssh/id_rsa ~/.bash_history ~/.gitconfig".to_string(),
        "cat /etc/shadow".to_string(),
        "cat /proc/$PPID/environ".to_string(),
        // Another process of the same user, whose environment and command line hold a token.
        format!("cat /proc/{}/environ", holder.id()),
        format!("tr '\\0' '\\n' < /proc/{}/environ", holder.id()),
        "cat /proc/*/environ".to_string(),
        format!("cat /proc/{}/cmdline", holder.id()),
        "cat /proc/self/environ".to_string(),
        "ls ~".to_string(),
    ] {
        let (code, out) = sh(&w.proj, &attack);
        assert_ne!(code, 0, "{attack}: {out}");
        assert!(!out.contains("TOP-SECRET") && !out.contains("root:") && !out.contains("tok-5e1f"), "{attack}: {out}");
    }
    let _ = holder.kill();
    let _ = holder.wait();
    // What programs read of `/proc` is there.
    let (code, out) = sh(&w.proj, "head -1 /proc/cpuinfo && cat /proc/sys/kernel/ostype && nproc");
    assert_eq!(code, 0, "{out}");
}

#[test]
fn writes_nothing_but_its_temporary_folder_and_dev_null() {
    if !can() {
        return;
    }
    let w = world();
    let (code, out) = sh(&w.proj, "echo x > \"$TMPDIR/t\" && cat \"$TMPDIR/t\" && echo y > /dev/null");
    assert_eq!(code, 0, "{out}");
    for attack in [
        "touch new".to_string(),
        "echo x >> README.md".to_string(),
        "rm README.md".to_string(),
        "mkdir d".to_string(),
        format!("touch {}/pwned", w.outside.display()),
        "truncate -s0 README.md".to_string(),
        "chmod 000 README.md".to_string(),
        "touch -d 2000-01-01 README.md".to_string(),
        "ln -s /etc x".to_string(),
        "mv README.md R".to_string(),
        "echo x > /tmp/confine-pwned".to_string(),
        "echo x > /dev/shm/confine-pwned".to_string(),
    ] {
        let before = std::fs::metadata(w.proj.join("README.md")).unwrap();
        let (code, out) = sh(&w.proj, &attack);
        assert_ne!(code, 0, "{attack}: {out}");
        let after = std::fs::metadata(w.proj.join("README.md")).unwrap();
        assert_eq!((before.len(), before.modified().unwrap()), (after.len(), after.modified().unwrap()), "{attack}");
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(before.permissions().mode(), after.permissions().mode(), "{attack}");
    }
    assert!(!w.proj.join("new").exists() && !w.outside.join("pwned").exists());
    assert!(!Path::new("/tmp/confine-pwned").exists() && !Path::new("/dev/shm/confine-pwned").exists());
}

#[test]
fn no_network_no_signals_no_secrets_from_the_environment() {
    if !can() {
        return;
    }
    let w = world();
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    l.set_nonblocking(true).unwrap();
    let mut sleeper = std::process::Command::new("sleep").arg("60").spawn().unwrap();
    let secret_name = "CONFINE_TEST_TOKEN";
    for attack in [
        format!("echo hi > /dev/tcp/127.0.0.1/{port}"),
        format!("python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}))\""),
        format!(
            "python3 -c \"import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ('127.0.0.1', {port}))\""
        ),
        "python3 -c \"import socket; socket.socket(socket.AF_UNIX).connect('/run/dbus/system_bus_socket')\""
            .to_string(),
        format!("kill -9 {}", sleeper.id()),
        format!("kill -STOP {}", sleeper.id()),
    ] {
        let (code, out) = sh(&w.proj, &attack);
        assert_ne!(code, 0, "{attack}: {out}");
    }
    assert!(l.accept().is_err(), "a connection reached the listener");
    assert!(sleeper.try_wait().unwrap().is_none(), "the process outside was signalled");
    let _ = sleeper.kill();
    let (_, out) = sh(&w.proj, &format!("env; echo ${secret_name}"));
    assert!(out.contains("PATH="), "{out}");
    assert!(!out.contains("CONFINE_CHILD_SCRIPT") && !out.contains("tok-5e1f"), "{out}");
}

#[test]
fn a_folder_that_is_not_a_project_is_refused() {
    for cwd in ["/", "/tmp", "/etc"] {
        let spec = Spec { profile: Profile::Read, cwd: cwd.into(), argv: vec!["true".into()] };
        match run(&spec) {
            Err(Error::Folder(_)) | Err(Error::Unsupported { .. }) => {}
            other => panic!("{cwd}: {other:?}"),
        }
    }
}
