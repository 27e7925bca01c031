//! The Linux box: new user, PID, network, IPC, UTS, cgroup and mount namespaces, made by this
//! process with the kernel's calls (see `ns.rs`), and a mount namespace that shows only what the
//! profile names ([`view`]); inside it, Landlock (where the kernel has it) and a seccomp filter,
//! then the command. When the command's main process ends, the PID namespace's init ends and the
//! kernel kills every process left in it, before anything is cleaned up.

mod etc_view;
// fork, unshare, mount, pivot_root and capset, each with why it is sound beside it: the box's
// processes are forked and build the box themselves, which no safe wrapper of these calls covers
// (rustix's `fork` is unsafe too).
#[allow(unsafe_code)]
mod ns;
mod view;

use super::net;
use crate::boxed::refused::filter;
use crate::boxed::{Confine, Error, Spec};
use landlock::{
    ABI, Access, AccessFs, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset, RulesetAttr,
    RulesetCreatedAttr, Scope,
};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The ABI whose rights the box's Landlock layer handles (an older kernel enforces what it can
/// of them: the layer is best effort, the namespaces are not).
const ABI_USED: ABI = ABI::V6;

/// The highest Landlock ABI this kernel enforces, found by creating (never applying) a ruleset
/// that requires each in turn.
pub(crate) fn landlock_abi() -> u32 {
    for (n, abi) in [(7, ABI::V7), (6, ABI::V6), (5, ABI::V5), (4, ABI::V4), (3, ABI::V3), (2, ABI::V2), (1, ABI::V1)] {
        let created = Ruleset::default()
            .set_compatibility(CompatLevel::HardRequirement)
            .handle_access(AccessFs::from_all(abi))
            .and_then(|r| r.create());
        if created.is_ok() {
            return n;
        }
    }
    0
}

/// Whether the Landlock layer is withheld for a test of the box without it (the variable
/// `ASSENT_TEST_WITHOUT_LANDLOCK`, read by debug builds only: a release build always adds the
/// layer where the kernel has it).
pub(crate) fn landlock_withheld() -> bool {
    cfg!(debug_assertions) && std::env::var_os("ASSENT_TEST_WITHOUT_LANDLOCK").is_some_and(|v| v == "1")
}

/// Whether this kernel takes seccomp filters (it says so in `/proc/self/status`).
pub(crate) fn seccomp_available() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|s| s.lines().any(|l| l.starts_with("Seccomp:")))
}

/// Whether a box can be built here: none when it can, else why not (found once, by building
/// one with nothing in it).
pub(crate) fn namespaces() -> Result<(), String> {
    static WORKS: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    WORKS
        .get_or_init(|| {
            ns::probe().map_err(|said| {
                format!(
                    "the box's namespaces cannot be made here ({said}): unprivileged user namespaces are off or restricted (on Ubuntu 24.04 and later, AppArmor allows them to assent-run through a profile: see docs/security.md)"
                )
            })
        })
        .clone()
}

fn home_dir() -> Option<PathBuf> {
    let home = std::env::var_os("HOME").map(PathBuf::from).filter(|h| h.is_absolute());
    home.map(|h| std::fs::canonicalize(&h).unwrap_or(h))
}

/// What a run starts from: its working folder (resolved, and a project's) and the home folder.
struct Checked {
    cwd: PathBuf,
    home: Option<PathBuf>,
}

fn checked(spec: &Spec) -> Result<Checked, Error> {
    let cwd = std::fs::canonicalize(&spec.cwd)
        .map_err(|e| Error::Folder(format!("the working folder `{}`: {e}", spec.cwd.display())))?;
    let home = home_dir();
    crate::boxed::folder_ok(&cwd, home.as_deref()).map_err(Error::Folder)?;
    if spec.argv.is_empty() {
        return Err(Error::Confine("no command to run".into()));
    }
    Ok(Checked { cwd, home })
}

/// A box made ready to build: its plan, and for a `workspace` run the executable configuration
/// that was there before (what it created is removed after).
struct Boxed {
    plan: ns::Plan,
    before: Option<Vec<PathBuf>>,
    cwd: PathBuf,
    /// The proxy to the named hosts, for as long as the box runs.
    proxy: Option<net::Proxy>,
}

/// The box for `spec` (see the module's documentation).
fn boxed(spec: &Spec) -> Result<Boxed, Error> {
    // Whether namespaces work here was found by the server and `assent doctor` (a probe costs a
    // box of its own): where they do not, no box is ever asked for, and the box says why.
    let Checked { cwd, home } = checked(spec)?;
    let found = crate::boxed::found::found(&cwd, spec.profile)?;
    let mut m = view::base(home.as_deref());
    match spec.profile {
        Confine::Read => {
            m.ro(&cwd);
            for s in &found.secrets {
                m.hide(s);
            }
        }
        Confine::Workspace => {
            m.rw(&cwd);
            // A folder such as `.git` stays writable but becomes a mount point, which cannot be
            // moved aside and replaced by one with other configuration; its listed parts are
            // mounted read-only after it (sorted, a parent before what it holds).
            for p in &found.anchors {
                m.rw(p);
            }
            for p in &found.executable {
                m.ro_exact(p);
            }
        }
    }
    let proxy = if spec.hosts.is_empty() { None } else { Some(net::Proxy::start(&spec.hosts)?) };
    if let Some(dir) = proxy.as_ref().and_then(net::Proxy::dir) {
        m.rw_at(dir, Path::new(net::INSIDE));
    }
    let mut env = crate::boxed::environment(std::env::vars_os(), Path::new("/tmp"));
    if spec.profile == Confine::Workspace {
        env.extend(git_identity().into_iter().map(|(k, v)| (OsString::from(k), OsString::from(v))));
    }
    let plan = ns::Plan {
        mounts: m.parts,
        cwd: cwd.clone(),
        home,
        profile: spec.profile,
        argv: spec.argv.clone(),
        env,
        landlock: !landlock_withheld(),
        filter: Some(filter(spec.profile)?),
        bridge: proxy.is_some(),
    };
    let before = (spec.profile == Confine::Workspace).then_some(found.executable);
    Ok(Boxed { plan, before, cwd, proxy })
}

/// An exit status from the code the shell gives it.
fn status(code: i32) -> std::process::ExitStatus {
    use std::os::unix::process::ExitStatusExt;
    if code > 128 && code < 128 + 65 {
        std::process::ExitStatus::from_raw(code - 128)
    } else {
        std::process::ExitStatus::from_raw((code & 0xff) << 8)
    }
}

/// Runs `spec` in its box and waits for it (and for every process of the box to be gone); for
/// `workspace`, what of executable configuration the command created is removed after, and said.
pub(crate) fn run(spec: &Spec) -> Result<std::process::ExitStatus, Error> {
    let Boxed { plan, before, cwd, proxy } = boxed(spec)?;
    // Without a proxy, this process makes the namespaces itself where it can (see `ns::run`).
    let code = ns::run(&plan, proxy.is_none())?;
    drop(proxy);
    if let Some(before) = before {
        crate::boxed::found::remove_created(&cwd, &before);
    }
    Ok(status(code))
}

/// Runs a `read` spec in its box from this process (which must have one thread): the box's
/// namespaces are made by this process itself, which then waits and ends with the command's
/// code. Returns only when nothing could be run, with why.
pub(crate) fn exec(spec: &Spec) -> Error {
    if spec.profile != Confine::Read || !spec.hosts.is_empty() {
        return Error::Confine(
            "only a read with no network runs in place: a workspace run is cleaned up after, and a proxy serves a network".into(),
        );
    }
    match boxed(spec).and_then(|b| ns::run(&b.plan, true)) {
        Ok(code) => {
            use std::io::Write;
            let _ = std::io::stdout().flush();
            std::process::exit(code)
        }
        Err(e) => e,
    }
}

/// The person's git identity from their global configuration (which git inside the box does
/// not see): `user.name` and `user.email` as the author and committer, unless the environment
/// names them already.
fn git_identity() -> Vec<(&'static str, String)> {
    if ["GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"]
        .iter()
        .all(|n| std::env::var_os(n).is_some())
    {
        return Vec::new();
    }
    let found: Vec<(String, String)> = global_user_config()
        .lines()
        .filter_map(|l| l.split_once(' ').map(|(k, v)| (k.to_string(), v.trim().to_string())))
        .filter(|(_, v)| !v.is_empty())
        .collect();
    let get = |key: &str| found.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v.clone());
    let mut env = Vec::new();
    for (key, names) in [
        ("user.name", ["GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"]),
        ("user.email", ["GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"]),
    ] {
        if names.iter().all(|n| std::env::var_os(n).is_some()) {
            continue;
        }
        if let Some(v) = get(key) {
            env.extend(names.iter().filter(|n| std::env::var_os(n).is_none()).map(|n| (*n, v.clone())));
        }
    }
    env
}

/// git's answer for `user.name` and `user.email` of the global configuration, in one run of git
/// (a process costs a box a millisecond or more), kept (see `kept.rs`) while the global
/// configuration files are as they were (their size, times and inode; an `include` they name is
/// not watched: an identity changed there shows at the next change of these).
fn global_user_config() -> String {
    use std::hash::{Hash, Hasher};
    use std::os::unix::fs::MetadataExt;
    let home = home_dir();
    let files = [
        std::env::var_os("GIT_CONFIG_GLOBAL")
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|h| h.join(".gitconfig"))),
        std::env::var_os("XDG_CONFIG_HOME")
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|h| h.join(".config")))
            .map(|c| c.join("git/config")),
    ];
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for f in &files {
        f.hash(&mut h);
        if let Some(m) = f.as_ref().and_then(|f| std::fs::metadata(f).ok()) {
            (m.size(), m.mtime(), m.mtime_nsec(), m.ctime(), m.ctime_nsec(), m.ino()).hash(&mut h);
        }
    }
    let kept = crate::boxed::kept::folder("git").map(|d| d.join(format!("{:016x}", h.finish())));
    if let Some(text) = kept.as_ref().and_then(|k| std::fs::read_to_string(k).ok()) {
        return text;
    }
    let text = std::process::Command::new("git")
        .args(["config", "--global", "--get-regexp", r"^user\.(name|email)$"])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success() || o.status.code() == Some(1))
        .and_then(|o| String::from_utf8(o.stdout).ok());
    let Some(text) = text else { return String::new() };
    if let Some(k) = kept
        && let Ok(mut tmp) = tempfile::NamedTempFile::new_in(k.parent().unwrap_or(Path::new("/")))
        && std::io::Write::write_all(&mut tmp, text.as_bytes()).is_ok()
        && tmp.persist(&k).is_ok()
    {
        crate::boxed::kept::prune(k.parent().unwrap_or(Path::new("/")), &k, 8);
    }
    text
}

fn landlock_err(e: impl std::fmt::Display) -> Error {
    Error::Confine(format!("Landlock: {e}"))
}

/// The rights a path takes of `access`: only a file's, unless it is a folder.
fn beneath(path: &Path, access: BitFlags<AccessFs>) -> Option<PathBeneath<PathFd>> {
    let fd = PathFd::new(path).ok()?;
    let access = if path.is_dir() { access } else { access & AccessFs::from_file(ABI_USED) };
    Some(PathBeneath::new(fd, access))
}

/// The Landlock layer inside the box (best effort: what this kernel has of ABI 6): everything
/// the box shows is read and executed, writes go only to the private temporary folders, the
/// box's home, `/dev/null` and `/dev/shm`, and for `workspace` the working folder; signals and
/// abstract sockets stay inside. A second wall should the mounts be wrong.
fn landlock(profile: Confine, cwd: &Path, home: Option<&Path>) -> Result<(), Error> {
    let all = AccessFs::from_all(ABI_USED);
    let read = AccessFs::from_read(ABI_USED);
    let no_devices = all & !(AccessFs::MakeChar | AccessFs::MakeBlock);
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(all)
        .and_then(|r| r.scope(Scope::from_all(ABI_USED)))
        .and_then(|r| r.create())
        .map_err(landlock_err)?;
    let mut rules: Vec<PathBeneath<PathFd>> = Vec::new();
    rules.extend(beneath(Path::new("/"), read));
    for w in ["/tmp", "/dev/shm"] {
        rules.extend(beneath(Path::new(w), no_devices));
    }
    if let Some(h) = home {
        rules.extend(beneath(h, no_devices));
    }
    rules.extend(beneath(Path::new("/dev/null"), AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::Truncate));
    if profile == Confine::Workspace {
        rules.extend(beneath(cwd, no_devices));
    }
    for r in rules {
        ruleset = ruleset.add_rule(r).map_err(landlock_err)?;
    }
    ruleset.restrict_self().map_err(landlock_err)?;
    Ok(())
}

/// A `bash -c` line of plain words as bash would execute it: the program it finds on the
/// command's `PATH` and the words (see [`crate::boxed::direct`]); none where bash is to run the line.
fn unshelled(argv: &[OsString], env: &[(OsString, OsString)]) -> Option<(OsString, Vec<OsString>)> {
    let words = crate::boxed::direct::unshelled(argv)?;
    let path = env.iter().rev().find(|(k, _)| k == "PATH").map(|(_, v)| v.clone())?;
    let (name, args) = words.split_first()?;
    Some((crate::boxed::direct::on_path(name, &path)?.into_os_string(), args.to_vec()))
}

/// `program` as the command's environment finds it: itself if it names a path, else the first
/// executable file of that name on the environment's `PATH`, else itself (the spawn then fails
/// as it would have).
fn on_path(program: &OsString, env: &[(OsString, OsString)]) -> OsString {
    if program.as_encoded_bytes().contains(&b'/') {
        return program.clone();
    }
    let path = env.iter().rev().find(|(k, _)| k == "PATH").map(|(_, v)| v.clone()).unwrap_or_default();
    crate::boxed::direct::on_path(program, &path).map_or_else(|| program.clone(), PathBuf::into_os_string)
}
