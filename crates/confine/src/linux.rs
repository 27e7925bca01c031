//! The Linux box: bubblewrap builds new user, PID, network, IPC, UTS and cgroup namespaces and a
//! mount namespace that shows only what the profile names ([`view`]); inside it, this binary's
//! second stage adds Landlock (where the kernel has it) and a seccomp filter, then executes the
//! command. When the command's main process ends, the PID namespace's init ends and the kernel
//! kills every process left in it, before anything is cleaned up.

mod etc_view;
mod net;
mod view;

use crate::refused::filter;
use crate::{Error, Profile, Spec};
use landlock::{
    ABI, Access, AccessFs, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset, RulesetAttr,
    RulesetCreatedAttr, Scope,
};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The ABI whose rights the box's Landlock layer handles (an older kernel enforces what it can
/// of them: the layer is best effort, the namespaces are not).
const ABI_USED: ABI = ABI::V6;

/// Where the second stage's binary is shown inside the box.
const STAGE: &str = "/run/assent-box/stage";

/// The user a box runs as when Assent runs as root: `nobody`, mapped to root outside only for
/// the files root owns, with no capability (root inside is not root outside).
const ROOT_MAPPED_TO: &str = "65534";

/// The namespaces and flags of every box: a user namespace of its own (no capability over
/// anything outside, no nested one), its own processes (it sees, signals, limits and renices
/// only its own, and none outlives it), no network but its own loopback, its own IPC, host name
/// and cgroup view, a session of its own (no terminal to type into), gone if its parent dies.
const BOX_FLAGS: &[&str] = &[
    "--unshare-user",
    "--unshare-pid",
    "--unshare-net",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    "--die-with-parent",
    "--new-session",
    "--cap-drop",
    "ALL",
    "--hostname",
    "assent-box",
];

/// The flags of every box this bubblewrap takes: [`BOX_FLAGS`], and `--disable-userns` (no user
/// namespace inside the box) where it has it (0.8 and later; Ubuntu 22.04's 0.6 has not, and
/// there the seccomp filter alone refuses a nested user namespace). Found in the program's own
/// text (its help names every option), which costs a read rather than a process per box.
fn box_flags(bwrap: &Path) -> Vec<&'static str> {
    static DISABLES: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let disables = *DISABLES.get_or_init(|| {
        std::fs::read(bwrap).is_ok_and(|b| b.windows(b"--disable-userns".len()).any(|w| w == b"--disable-userns"))
    });
    let mut flags = BOX_FLAGS.to_vec();
    if disables {
        flags.push("--disable-userns");
    }
    flags
}

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

/// Where bubblewrap is: the system's own, never one on a PATH an agent may have changed.
fn bwrap() -> Option<PathBuf> {
    ["/usr/bin/bwrap", "/bin/bwrap", "/usr/local/bin/bwrap"].iter().map(PathBuf::from).find(|p| p.is_file())
}

/// Whether a box can be built here: none when it can, else why not (found once, by building one
/// that runs `true`).
pub(crate) fn namespaces() -> Result<(), String> {
    static WORKS: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    WORKS
        .get_or_init(|| {
            let b = bwrap().ok_or_else(|| {
                "bubblewrap is not installed (`apt install bubblewrap`, `dnf install bubblewrap`)".to_string()
            })?;
            let out = std::process::Command::new(&b)
                .args(box_flags(&b))
                .args(["--ro-bind", "/", "/", "--", "true"])
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .output()
                .map_err(|e| format!("bubblewrap could not be started: {e}"))?;
            if out.status.success() {
                return Ok(());
            }
            let said = String::from_utf8_lossy(&out.stderr).trim().to_string();
            Err(format!(
                "bubblewrap cannot make the box's namespaces here ({said}): unprivileged user namespaces are off or restricted (on Ubuntu 24.04 and later, AppArmor allows them to bubblewrap through a profile: see docs/security.md)"
            ))
        })
        .clone()
}

/// The user the box runs as, when it is not the caller's own (root).
fn mapped_user() -> Option<&'static str> {
    use std::os::unix::fs::MetadataExt;
    let root = std::fs::metadata("/proc/self").map_or(true, |m| m.uid() == 0);
    root.then_some(ROOT_MAPPED_TO)
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
    crate::folder_ok(&cwd, home.as_deref()).map_err(Error::Folder)?;
    if spec.argv.is_empty() {
        return Err(Error::Confine("no command to run".into()));
    }
    Ok(Checked { cwd, home })
}

/// A box made ready to start: bubblewrap's command, and for a `workspace` run the executable
/// configuration that was there before (what it created is removed after).
struct Boxed {
    command: std::process::Command,
    before: Option<Vec<PathBuf>>,
    cwd: PathBuf,
    /// The proxy to the named hosts, for as long as the box runs.
    _proxy: Option<net::Proxy>,
}

/// The box for `spec` (see the module's documentation).
fn boxed(spec: &Spec) -> Result<Boxed, Error> {
    // Whether namespaces work here was found by the server and `assent doctor` (a probe costs a
    // box of its own): where they do not, no box is ever asked for, and bubblewrap says why.
    let Checked { cwd, home } = checked(spec)?;
    let bwrap = bwrap().ok_or_else(|| Error::Confine("bubblewrap is not installed".into()))?;
    let exe = std::env::current_exe()?;
    let found = crate::found::found(&cwd, spec.profile)?;
    let mut m = view::base(home.as_deref(), &exe, Path::new(STAGE));
    match spec.profile {
        Profile::Read => {
            m.ro(&cwd);
            for s in &found.secrets {
                m.hide(s);
            }
        }
        Profile::Workspace => {
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
    if let Some(p) = &proxy {
        m.rw_at(p.dir(), Path::new(net::INSIDE));
    }
    let mut c = std::process::Command::new(&bwrap);
    c.args(box_flags(&bwrap));
    if let Some(uid) = mapped_user() {
        c.args(["--uid", uid, "--gid", uid]);
    }
    c.args(&m.args).arg("--chdir").arg(&cwd).arg("--");
    let landlock = if landlock_withheld() { "without-landlock" } else { "landlock" };
    let network = if proxy.is_some() { "proxy" } else { "none" };
    c.arg(STAGE).arg(crate::STAGE_TWO).arg(spec.profile.as_str()).arg(&cwd).arg(landlock).arg(network);
    c.arg("--").args(&spec.argv);
    let mut env = crate::environment(std::env::vars_os(), Path::new("/tmp"));
    if spec.profile == Profile::Workspace {
        env.extend(git_identity().into_iter().map(|(k, v)| (OsString::from(k), OsString::from(v))));
    }
    c.env_clear().envs(env).current_dir(&cwd);
    let before = (spec.profile == Profile::Workspace).then_some(found.executable);
    Ok(Boxed { command: c, before, cwd, _proxy: proxy })
}

/// Runs `spec` in its box and waits for it (and for every process of the box to be gone); for
/// `workspace`, what of executable configuration the command created is removed after, and said.
pub(crate) fn run(spec: &Spec) -> Result<std::process::ExitStatus, Error> {
    let Boxed { mut command, before, cwd, _proxy } = boxed(spec)?;
    let status = command.status()?;
    if let Some(before) = before {
        remove_created(&cwd, &before);
    }
    Ok(status)
}

/// Runs a `read` spec in its box from this process, which becomes bubblewrap (nothing is left to
/// clean up after a read). Returns only when nothing could be run, with why.
pub(crate) fn exec(spec: &Spec) -> Error {
    use std::os::unix::process::CommandExt;
    if spec.profile != Profile::Read || !spec.hosts.is_empty() {
        return Error::Confine(
            "only a read with no network runs in place: a workspace run is cleaned up after, and a proxy serves a network".into(),
        );
    }
    match boxed(spec) {
        Ok(mut b) => Error::Io(b.command.exec()),
        Err(e) => e,
    }
}

/// Removes what of executable configuration appeared in `cwd` during a run (the box's processes
/// are all gone by then: nothing writes after this).
fn remove_created(cwd: &Path, before: &[PathBuf]) {
    let after = crate::found::found(cwd, Profile::Workspace).map(|f| f.executable).unwrap_or_default();
    for p in after.iter().filter(|p| !before.contains(p)) {
        let removed = if p.is_dir() && !p.is_symlink() { std::fs::remove_dir_all(p) } else { std::fs::remove_file(p) };
        match removed {
            Ok(()) => eprintln!(
                "assent run: removed {}: the boxed command created executable configuration, which it may not leave behind",
                p.display()
            ),
            Err(e) => {
                eprintln!("assent run: the boxed command created {}, which could not be removed: {e}", p.display())
            }
        }
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
    let kept = crate::kept::folder("git").map(|d| d.join(format!("{:016x}", h.finish())));
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
        crate::kept::prune(k.parent().unwrap_or(Path::new("/")), &k, 8);
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
fn landlock(profile: Profile, cwd: &Path) -> Result<(), Error> {
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
    if let Some(h) = home_dir() {
        rules.extend(beneath(&h, no_devices));
    }
    rules.extend(beneath(Path::new("/dev/null"), AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::Truncate));
    if profile == Profile::Workspace {
        rules.extend(beneath(cwd, no_devices));
    }
    for r in rules {
        ruleset = ruleset.add_rule(r).map_err(landlock_err)?;
    }
    ruleset.restrict_self().map_err(landlock_err)?;
    Ok(())
}

/// The second stage, inside the box: `PROFILE CWD LANDLOCK NETWORK -- ARGV`. Adds Landlock
/// (unless withheld for a test by a debug build, or the kernel has none) and the seccomp filter
/// to this process (single-threaded: the binary dispatches here first), starts the bridge to the
/// proxy where the box has a network (`proxy`), and executes the command: a line of plain words
/// directly, anything else by bash. `bridge` alone is the bridge (see [`net::bridge`]).
pub(crate) fn stage_two(args: &[OsString]) -> Error {
    use std::os::unix::process::CommandExt;
    if let [only] = args
        && only == "bridge"
    {
        return net::bridge();
    }
    let [profile, cwd, landlock_arg, network, dashes, argv @ ..] = args else {
        return Error::Confine("the second stage takes PROFILE CWD LANDLOCK NETWORK -- COMMAND".into());
    };
    let Some(profile) = profile.to_str().and_then(Profile::parse) else {
        return Error::Confine("the second stage names no profile it knows".into());
    };
    let Some((program, rest)) = argv.split_first().filter(|_| dashes == "--") else {
        return Error::Confine("the second stage has no command".into());
    };
    let cwd = Path::new(cwd);
    let withheld = cfg!(debug_assertions) && landlock_arg == "without-landlock";
    if !withheld
        && landlock_abi() > 0
        && let Err(e) = landlock(profile, cwd)
    {
        return e;
    }
    if let Err(e) =
        filter(profile).and_then(|f| seccompiler::apply_filter(&f).map_err(|e| Error::Confine(format!("seccomp: {e}"))))
    {
        return e;
    }
    let proxy_env = if network == "proxy" {
        match bridge() {
            Ok(url) => ["HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy"].map(|k| (k, url.clone())).to_vec(),
            Err(e) => return e,
        }
    } else {
        Vec::new()
    };
    let env: Vec<(OsString, OsString)> = std::env::vars_os().collect();
    let exec = |(program, args): &(OsString, Vec<OsString>)| {
        std::process::Command::new(program).args(args).current_dir(cwd).envs(proxy_env.iter().cloned()).exec()
    };
    if let Some(d) = unshelled(argv, &env) {
        let e = exec(&d);
        // A program the kernel cannot execute (a script with no `#!`) bash runs as a script.
        if e.raw_os_error() != Some(libc::ENOEXEC) {
            return Error::Io(e);
        }
    }
    Error::Io(exec(&(on_path(program, &env), rest.to_vec())))
}

/// Starts the box's bridge to the proxy (this binary again, as `bridge`, with a listener on the
/// box's loopback as its standard input): the proxy's URL for the command.
fn bridge() -> Result<String, Error> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    let port = listener.local_addr()?.port();
    std::process::Command::new(STAGE)
        .arg(crate::STAGE_TWO)
        .arg("bridge")
        .stdin(std::process::Stdio::from(std::os::fd::OwnedFd::from(listener)))
        .stdout(std::process::Stdio::null())
        .spawn()?;
    Ok(format!("http://127.0.0.1:{port}"))
}

/// A `bash -c` line of plain words as bash would execute it: the program it finds on the
/// command's `PATH` and the words (see [`crate::direct`]); none where bash is to run the line.
fn unshelled(argv: &[OsString], env: &[(OsString, OsString)]) -> Option<(OsString, Vec<OsString>)> {
    let words = crate::direct::unshelled(argv)?;
    let path = env.iter().rev().find(|(k, _)| k == "PATH").map(|(_, v)| v.clone())?;
    let (name, args) = words.split_first()?;
    Some((crate::direct::on_path(name, &path)?.into_os_string(), args.to_vec()))
}

/// `program` as the command's environment finds it: itself if it names a path, else the first
/// executable file of that name on the environment's `PATH`, else itself (the spawn then fails
/// as it would have).
fn on_path(program: &OsString, env: &[(OsString, OsString)]) -> OsString {
    if program.as_encoded_bytes().contains(&b'/') {
        return program.clone();
    }
    let path = env.iter().rev().find(|(k, _)| k == "PATH").map(|(_, v)| v.clone()).unwrap_or_default();
    crate::direct::on_path(program, &path).map_or_else(|| program.clone(), PathBuf::into_os_string)
}
