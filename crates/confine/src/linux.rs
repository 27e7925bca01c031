//! The Linux layers: Landlock (filesystem rights, TCP, scopes), then a seccomp filter, installed
//! by a thread of its own on itself before it spawns the command.

mod roots;

use crate::refused::filter;
use crate::{Error, Profile, Spec};
use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset, RulesetAttr,
    RulesetCreated, RulesetCreatedAttr, RulesetStatus, Scope,
};
use roots::read_roots;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The ABI whose rights the profiles handle (a newer kernel enforces these the same way).
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

/// Whether bubblewrap runs here (a mount namespace for a workspace's read-only configuration),
/// found once.
pub(crate) fn bwrap_works() -> bool {
    static WORKS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *WORKS.get_or_init(|| {
        bwrap().is_some_and(|b| {
            std::process::Command::new(b)
                .args(["--dev-bind", "/", "/", "--", "true"])
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        })
    })
}

/// Where bubblewrap is: the system's own, never one on a PATH an agent may have changed.
fn bwrap() -> Option<PathBuf> {
    ["/usr/bin/bwrap", "/bin/bwrap", "/usr/local/bin/bwrap"].iter().map(PathBuf::from).find(|p| p.is_file())
}

/// Whether this kernel takes seccomp filters (it says so in `/proc/self/status`).
pub(crate) fn seccomp_available() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|s| s.lines().any(|l| l.starts_with("Seccomp:")))
}

fn landlock_err(e: impl std::fmt::Display) -> Error {
    Error::Confine(format!("Landlock: {e}"))
}

/// Confines the calling thread (and what it spawns from now on) to `profile`.
fn landlock(profile: Profile, cwd: &Path, tmp: &Path, home: Option<&Path>) -> Result<(), Error> {
    enforce(ruleset(tmp, home)?, profile, cwd)
}

/// The rights a file takes of `access`: only a file's, unless it is a folder (`dir`, where
/// known already).
fn beneath(path: &Path, dir: Option<bool>, access: BitFlags<AccessFs>) -> Option<PathBeneath<PathFd>> {
    let fd = PathFd::new(path).ok()?;
    let access = if dir.unwrap_or_else(|| path.is_dir()) { access } else { access & AccessFs::from_file(ABI_USED) };
    Some(PathBeneath::new(fd, access))
}

/// The Landlock ruleset of either profile with every rule but the working folder's (see
/// [`enforce`]).
fn ruleset(tmp: &Path, home: Option<&Path>) -> Result<RulesetCreated, Error> {
    let all = AccessFs::from_all(ABI_USED);
    let read = AccessFs::from_read(ABI_USED);
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(all)
        .and_then(|r| r.handle_access(AccessNet::from_all(ABI_USED)))
        .and_then(|r| r.scope(Scope::from_all(ABI_USED)))
        .and_then(|r| r.create())
        .map_err(landlock_err)?;
    let mut rules: Vec<PathBeneath<PathFd>> = Vec::new();
    // Each path once (a toolchain is often named by its variable, the home's list and the PATH).
    let mut seen = std::collections::HashSet::new();
    let roots = read_roots(home).into_iter().filter(|r| seen.insert(r.path.clone()));
    rules.extend(roots.filter_map(|r| beneath(&r.path, r.dir, read)));
    rules.extend(beneath(tmp, Some(true), all));
    rules.extend(beneath(
        Path::new("/dev/null"),
        Some(false),
        AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::Truncate,
    ));
    for r in rules {
        ruleset = ruleset.add_rule(r).map_err(landlock_err)?;
    }
    Ok(ruleset)
}

/// Confines the calling thread with `ruleset` and the working folder's rule of `profile`.
fn enforce(ruleset: RulesetCreated, profile: Profile, cwd: &Path) -> Result<(), Error> {
    let all = AccessFs::from_all(ABI_USED);
    let folder = match profile {
        Profile::Read => AccessFs::from_read(ABI_USED),
        // Everything but devices made in the folder (its executable configuration is mounted
        // read-only over itself by bubblewrap before this).
        Profile::Workspace => all & !(AccessFs::MakeChar | AccessFs::MakeBlock),
    };
    let mut ruleset = ruleset;
    if let Some(rule) = beneath(cwd, None, folder) {
        ruleset = ruleset.add_rule(rule).map_err(landlock_err)?;
    }
    let status = ruleset.restrict_self().map_err(landlock_err)?;
    if status.ruleset != RulesetStatus::FullyEnforced || !status.no_new_privs {
        return Err(Error::Confine(format!("Landlock enforced only in part ({:?})", status.ruleset)));
    }
    Ok(())
}

/// The system calls a confined command is refused (`EPERM`), whatever their arguments but for
/// `ioctl` (only terminal input injection) and `clone` (only new namespaces); installed on the
/// calling thread.
fn seccomp(profile: Profile) -> Result<(), Error> {
    apply(&filter(profile)?)
}

/// Installs `filter` on the calling thread.
fn apply(filter: &seccompiler::BpfProgram) -> Result<(), Error> {
    seccompiler::apply_filter(filter).map_err(|e| Error::Confine(format!("seccomp: {e}")))
}

fn home_dir() -> Option<PathBuf> {
    let home = std::env::var_os("HOME").map(PathBuf::from).filter(|h| h.is_absolute());
    home.map(|h| std::fs::canonicalize(&h).unwrap_or(h))
}

/// What a run starts from: its working folder (resolved, and a project's), the home folder, the
/// program and its arguments.
struct Checked<'a> {
    cwd: PathBuf,
    home: Option<PathBuf>,
    program: &'a OsString,
    args: &'a [OsString],
}

fn checked(spec: &Spec) -> Result<Checked<'_>, Error> {
    let cwd = std::fs::canonicalize(&spec.cwd)
        .map_err(|e| Error::Folder(format!("the working folder `{}`: {e}", spec.cwd.display())))?;
    let home = home_dir();
    crate::folder_ok(&cwd, home.as_deref()).map_err(Error::Folder)?;
    let Some((program, args)) = spec.argv.split_first() else {
        return Err(Error::Confine("no command to run".into()));
    };
    Ok(Checked { cwd, home, program, args })
}

/// Runs `spec` confined: `read` from a thread that confines itself first, `workspace` through
/// bubblewrap and a second stage; the temporary folder is removed after.
pub(crate) fn run(spec: &Spec) -> Result<std::process::ExitStatus, Error> {
    let Checked { cwd, home, program, args } = checked(spec)?;
    if spec.profile == Profile::Workspace {
        return workspace(&cwd, &spec.argv);
    }
    let tmp = tempfile::Builder::new().prefix("assent-run-").tempdir()?;
    let env = crate::environment(std::env::vars_os(), tmp.path());
    let (profile, tmp_path) = (spec.profile, tmp.path().to_path_buf());
    // The program found on the command's own `PATH` here: with a path, the standard library
    // spawns it with `posix_spawn` (no copy of this process's memory map) rather than `fork`.
    let (direct, shelled) = (unshelled(&spec.argv, &env), (on_path(program, &env), args.to_vec()));
    let folder = cwd.clone();
    let command = move |(program, args): &(OsString, Vec<OsString>)| {
        let mut c = std::process::Command::new(program);
        c.args(args).current_dir(&folder).env_clear().envs(env.iter().cloned());
        c
    };
    let confined = std::thread::Builder::new().name("assent-confined".into()).spawn(move || {
        landlock(profile, &cwd, &tmp_path, home.as_deref())?;
        seccomp(profile)?;
        match direct.as_ref().map(|d| command(d).status()) {
            // A program the kernel cannot execute (a script with no `#!`) bash runs as a script.
            Some(Err(e)) if e.raw_os_error() == Some(libc::ENOEXEC) => Ok(command(&shelled).status()?),
            Some(status) => Ok(status?),
            None => Ok::<_, Error>(command(&shelled).status()?),
        }
    })?;
    let status = confined.join().map_err(|_| Error::Confine("the confining thread panicked".into()))?;
    drop(tmp);
    status
}

/// What a `read` run in this process needs besides what it runs (see [`crate::exec`]): its
/// private temporary folder made, its Landlock ruleset but the working folder's rule, its
/// seccomp filter compiled.
pub(crate) struct Ready {
    tmp: PathBuf,
    ruleset: RulesetCreated,
    filter: seccompiler::BpfProgram,
}

/// Makes a `read` run in this process ready (see [`Ready`]), its temporary folder in `tmp_root`.
pub(crate) fn ready(tmp_root: &Path) -> Result<Ready, Error> {
    use std::os::unix::fs::DirBuilderExt;
    let me = crate::process(std::process::id())
        .ok_or_else(|| Error::Confine("this process is not in the process table".into()))?;
    let tmp = tmp_root.join(format!("{}-{}", std::process::id(), me.start));
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(tmp_root).and_then(|()| {
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::DirBuilder::new().mode(0o700).create(&tmp)
    })?;
    let home = home_dir();
    Ok(Ready { ruleset: ruleset(&tmp, home.as_deref())?, filter: filter(Profile::Read)?, tmp })
}

/// A `read` run in this process, made ready (see [`crate::exec`]).
pub(crate) fn exec(spec: &Spec, ready: Ready) -> Error {
    use std::os::unix::process::CommandExt;
    if spec.profile != Profile::Read {
        return Error::Confine("only a read runs in place: a workspace run is cleaned up after".into());
    }
    let Checked { cwd, program, args, .. } = match checked(spec) {
        Ok(c) => c,
        Err(e) => return e,
    };
    let Ready { tmp, ruleset, filter } = ready;
    let env = crate::environment(std::env::vars_os(), &tmp);
    let (direct, shelled) = (unshelled(&spec.argv, &env), (on_path(program, &env), args.to_vec()));
    if let Err(e) = enforce(ruleset, Profile::Read, &cwd).and_then(|()| apply(&filter)) {
        return e;
    }
    let exec = |(program, args): &(OsString, Vec<OsString>)| {
        std::process::Command::new(program).args(args).current_dir(&cwd).env_clear().envs(env.iter().cloned()).exec()
    };
    if let Some(d) = &direct {
        let e = exec(d);
        // A program the kernel cannot execute (a script with no `#!`) bash runs as a script.
        if e.raw_os_error() != Some(libc::ENOEXEC) {
            return Error::Io(e);
        }
    }
    Error::Io(exec(&shelled))
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
    use std::os::unix::fs::PermissionsExt;
    if program.as_encoded_bytes().contains(&b'/') {
        return program.clone();
    }
    let path = env.iter().rev().find(|(k, _)| k == "PATH").map(|(_, v)| v.clone()).unwrap_or_default();
    std::env::split_paths(&path)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(program))
        .find(|p| std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0))
        .map_or_else(|| program.clone(), PathBuf::into_os_string)
}

/// A `workspace` run: bubblewrap mounts the folder's executable configuration read-only over
/// itself, then this binary's second stage confines itself and executes the command; what of
/// executable configuration the command created is removed after, and said.
fn workspace(cwd: &Path, argv: &[OsString]) -> Result<std::process::ExitStatus, Error> {
    let bwrap = bwrap().ok_or_else(|| Error::Confine("bubblewrap is not installed".into()))?;
    let (before, anchors) = crate::found::executable_configuration(cwd)?;
    let tmp = tempfile::Builder::new().prefix("assent-run-").tempdir()?;
    let exe = std::env::current_exe()?;
    let mut c = std::process::Command::new(bwrap);
    c.args(["--dev-bind", "/", "/"]);
    // A folder such as `.git` stays writable but becomes a mount point, which cannot be moved
    // aside and replaced by one with other configuration; its listed parts are mounted
    // read-only after it (sorted, a parent before what it holds).
    for p in &anchors {
        c.arg("--bind").arg(p).arg(p);
    }
    for p in &before {
        c.arg("--ro-bind").arg(p).arg(p);
    }
    c.args(["--die-with-parent", "--"]).arg(&exe).arg(crate::STAGE_TWO).arg("workspace").arg(cwd).arg(tmp.path());
    c.arg("--").args(argv).current_dir(cwd);
    c.envs(git_identity());
    let status = c.status()?;
    let after = crate::found::executable_configuration(cwd).map(|(found, _)| found).unwrap_or_default();
    for p in after.iter().filter(|p| !before.contains(p)) {
        let removed = if p.is_dir() && !p.is_symlink() { std::fs::remove_dir_all(p) } else { std::fs::remove_file(p) };
        match removed {
            Ok(()) => eprintln!(
                "assent run: removed {}: the confined command created executable configuration, which it may not leave behind",
                p.display()
            ),
            Err(e) => {
                eprintln!("assent run: the confined command created {}, which could not be removed: {e}", p.display())
            }
        }
    }
    drop(tmp);
    Ok(status)
}

/// The person's git identity from their global configuration (which git inside the
/// confinement does not read): `user.name` and `user.email` as the author and committer, unless
/// the environment names them already.
fn git_identity() -> Vec<(&'static str, String)> {
    let get = |key: &str| {
        let out = std::process::Command::new("git")
            .args(["config", "--global", "--get", key])
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .output()
            .ok()?;
        let v = String::from_utf8(out.stdout).ok()?.trim().to_string();
        (out.status.success() && !v.is_empty()).then_some(v)
    };
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

/// The second stage (inside bubblewrap's mounts): `PROFILE CWD TMP -- ARGV...`. Confines this
/// process (single-threaded: the binary dispatches here first) and executes the command.
pub(crate) fn stage_two(args: &[OsString]) -> Error {
    let [profile, cwd, tmp, dashes, argv @ ..] = args else {
        return Error::Confine("the second stage takes PROFILE CWD TMP -- COMMAND".into());
    };
    let Some(profile) = profile.to_str().and_then(Profile::parse) else {
        return Error::Confine("the second stage names no profile it knows".into());
    };
    let Some((program, rest)) = argv.split_first().filter(|_| dashes == "--") else {
        return Error::Confine("the second stage has no command".into());
    };
    let (cwd, tmp) = (Path::new(cwd), Path::new(tmp));
    let home = home_dir();
    if let Err(e) = crate::folder_ok(cwd, home.as_deref()) {
        return Error::Folder(e);
    }
    let env = crate::environment(std::env::vars_os(), tmp);
    if let Err(e) = landlock(profile, cwd, tmp, home.as_deref()).and_then(|()| seccomp(profile)) {
        return e;
    }
    use std::os::unix::process::CommandExt;
    let e = std::process::Command::new(program).args(rest).current_dir(cwd).env_clear().envs(env).exec();
    Error::Io(e)
}
