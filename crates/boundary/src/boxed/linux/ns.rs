//! The box's namespaces and mounts, made by this process with the kernel's own calls (those
//! bubblewrap makes), so that a boxed call starts no program but the command: a box costs the
//! kernel's work, a `fork` and a `posix_spawn`, not two more programs' start-up (bubblewrap's and a second
//! stage's, a millisecond each on a virtual machine where the C library's start asks the
//! processor what it is).
//!
//! Three processes, as bubblewrap has them:
//!
//! - the caller: it makes the new user, PID, network, IPC, UTS and cgroup namespaces (itself,
//!   for a box that reaches no host; a child of it where the caller keeps the system's network
//!   for the proxy, or has threads), maps its user to the box's, and waits;
//! - the box's init (PID 1 of the new PID namespace): it makes the mount namespace and the view
//!   ([`Mount`]), pivots into it, names the host `assent-box`, brings up the loopback, drops every
//!   capability, adds Landlock and the seccomp filter, starts the command, and reaps until the
//!   command ends, then ends (and the kernel kills whatever of the box is left, before the
//!   caller's wait returns);
//! - the command, started by `posix_spawn`, in the init's session (a new one, with no terminal).
//!
//! What goes wrong before the command starts is written to a pipe the caller reads (closed on
//! the command's `exec`), so the caller says why no box was built rather than a bare exit code.

use crate::boxed::{Confine, Error};
use std::ffi::{CString, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// The box's host name.
const HOSTNAME: &str = "assent-box";

mod mounts;
use super::view::Mount;
use mounts::view;

/// Everything a box needs, found before any process is forked.
pub(crate) struct Plan {
    pub(crate) mounts: Vec<Mount>,
    pub(crate) cwd: PathBuf,
    pub(crate) home: Option<PathBuf>,
    pub(crate) profile: Confine,
    /// The command (`bash -c LINE`); none for a probe, which ends as soon as the box is built.
    pub(crate) argv: Vec<OsString>,
    pub(crate) env: Vec<(OsString, OsString)>,
    pub(crate) landlock: bool,
    pub(crate) filter: Option<seccompiler::BpfProgram>,
    /// Whether a bridge to the proxy listens on the box's loopback.
    pub(crate) bridge: bool,
}

/// An error of the call `what`, with the system's reason.
fn os(what: &str) -> String {
    format!("{what}: {}", std::io::Error::last_os_error())
}

fn cstr(p: &Path) -> Result<CString, String> {
    CString::new(p.as_os_str().as_bytes()).map_err(|_| format!("`{}` holds a NUL byte", p.display()))
}

/// The process's exit status as the shell gives it (128 + the signal that ended it).
fn code_of(status: libc::c_int) -> i32 {
    if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else if libc::WIFSIGNALED(status) {
        128 + libc::WTERMSIG(status)
    } else {
        1
    }
}

/// Waits for `pid`; its status as the shell gives it.
fn wait_for(pid: libc::pid_t) -> Result<i32, String> {
    let mut status = 0;
    loop {
        // SAFETY: waits for our own child; `status` is ours to write.
        let r = unsafe { libc::waitpid(pid, &raw mut status, 0) };
        if r == pid {
            return Ok(code_of(status));
        }
        if r < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return Err(os("waitpid"));
        }
    }
}

/// Ends this forked process at once (no destructor, no buffered output of the parent's run
/// twice), after writing `why` to the error pipe.
fn fail(err: libc::c_int, why: &str) -> ! {
    let msg = why.as_bytes();
    // SAFETY: writes our own buffer to our own descriptor, then ends the process.
    unsafe {
        libc::write(err, msg.as_ptr().cast(), msg.len());
        libc::_exit(126)
    }
}

/// Dies with the parent (the one that forked this process is `parent`): a box never outlives
/// the call that started it.
/// (The box's init sees no parent, `None`: its parent is outside its PID namespace.)
fn die_with_parent(parent: Option<libc::pid_t>) -> Result<(), String> {
    // SAFETY: plain process attributes.
    unsafe {
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
            return Err(os("prctl(PR_SET_PDEATHSIG)"));
        }
        if parent.is_some_and(|p| libc::getppid() != p) {
            libc::_exit(137);
        }
    }
    Ok(())
}

/// Runs `plan` in a box and waits for it: the command's status as the shell gives it. With
/// `in_place`, this process makes the namespaces itself where it has one thread (it is then in
/// the box's user and network namespaces, with the system's files, for what it does after);
/// otherwise a child makes them.
pub(crate) fn run(plan: &Plan, in_place: bool) -> Result<i32, Error> {
    // A process with threads cannot make a user namespace: a child makes it.
    let in_place = in_place && one_thread();
    let mut fds = [0; 2];
    // SAFETY: `fds` is ours to fill.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(Error::Confine(os("pipe2")));
    }
    let (read_end, write_end) = (fds[0], fds[1]);
    let me = std::process::id() as libc::pid_t;
    let waited = if in_place {
        match enter(plan, write_end) {
            Ok(init) => Ok(init),
            Err(e) => {
                // SAFETY: our own descriptors.
                unsafe {
                    libc::close(read_end);
                    libc::close(write_end);
                }
                return Err(Error::Confine(e));
            }
        }
    } else {
        // SAFETY: the child only makes namespaces, forks and waits (see `enter`), and ends with
        // `_exit`.
        match unsafe { libc::fork() } {
            -1 => Err(os("fork")),
            0 => {
                // SAFETY: our own descriptor.
                unsafe { libc::close(read_end) };
                if let Err(e) = die_with_parent(Some(me)) {
                    fail(write_end, &e);
                }
                let code = match enter(plan, write_end).and_then(wait_for) {
                    Ok(code) => code,
                    Err(e) => fail(write_end, &e),
                };
                // SAFETY: ends this child.
                unsafe { libc::_exit(code) }
            }
            child => Ok(child),
        }
    };
    // SAFETY: our copy of the write end: the read below ends when the box's copies close.
    unsafe { libc::close(write_end) };
    let said = read_all(read_end);
    let code = waited.and_then(wait_for);
    if !said.is_empty() {
        return Err(Error::Confine(said));
    }
    code.map_err(Error::Confine)
}

/// Whether this process has one thread.
fn one_thread() -> bool {
    std::fs::read_dir("/proc/self/task").is_ok_and(|d| d.count() == 1)
}

fn read_all(fd: libc::c_int) -> String {
    use std::io::Read;
    use std::os::fd::FromRawFd;
    // SAFETY: `fd` is ours and owned by the file from here.
    let mut f = unsafe { std::fs::File::from_raw_fd(fd) };
    let mut s = String::new();
    let _ = f.read_to_string(&mut s);
    s
}

/// Makes the namespaces (all but the mounts') in this process, maps its user, and forks the box's
/// init; the init's process id.
fn enter(plan: &Plan, err: libc::c_int) -> Result<libc::pid_t, String> {
    // SAFETY: plain identity queries.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    // As root, the box runs as `nobody`, with no capability over anything outside.
    let (in_uid, in_gid) = if uid == 0 { (65534, 65534) } else { (uid, gid) };
    let flags = libc::CLONE_NEWUSER | libc::CLONE_NEWPID | libc::CLONE_NEWNET | libc::CLONE_NEWIPC | libc::CLONE_NEWUTS;
    // SAFETY: this process has one thread (the caller's promise, or a fresh child).
    unsafe {
        if libc::unshare(flags | libc::CLONE_NEWCGROUP) != 0 && libc::unshare(flags) != 0 {
            return Err(os("unshare"));
        }
    }
    std::fs::write("/proc/self/setgroups", "deny").map_err(|e| format!("/proc/self/setgroups: {e}"))?;
    std::fs::write("/proc/self/uid_map", format!("{in_uid} {uid} 1")).map_err(|e| format!("uid_map: {e}"))?;
    std::fs::write("/proc/self/gid_map", format!("{in_gid} {gid} 1")).map_err(|e| format!("gid_map: {e}"))?;
    // SAFETY: the child builds the box and ends with `_exit`.
    match unsafe { libc::fork() } {
        -1 => Err(os("fork")),
        0 => {
            let e = init(plan, err);
            fail(err, &e)
        }
        pid => Ok(pid),
    }
}

/// The box's init: builds the box, starts the command, reaps, and ends with the command's
/// status. Returns only with why the box could not be built.
fn init(plan: &Plan, err: libc::c_int) -> String {
    match build(plan) {
        Ok(()) => {}
        Err(e) => return e,
    }
    let listener = if plan.bridge {
        match std::net::TcpListener::bind("127.0.0.1:0") {
            Ok(l) => Some(l),
            Err(e) => return format!("the bridge to the proxy: {e}"),
        }
    } else {
        None
    };
    let mut env = plan.env.clone();
    if let Some(l) = listener {
        let url = match l.local_addr() {
            Ok(a) => format!("http://127.0.0.1:{}", a.port()),
            Err(e) => return format!("the bridge to the proxy: {e}"),
        };
        for k in super::net::PROXY_VARS {
            env.push((k.into(), url.clone().into()));
        }
        // SAFETY: the bridge runs its loop and never returns.
        match unsafe { libc::fork() } {
            -1 => return os("fork"),
            0 => {
                // SAFETY: the bridge writes nothing: its standard streams are closed.
                unsafe {
                    libc::close(err);
                    libc::close(0);
                    libc::close(1);
                    libc::close(2);
                }
                super::net::bridge(l);
                // SAFETY: ends the bridge.
                unsafe { libc::_exit(0) }
            }
            _ => drop(l),
        }
    }
    if plan.argv.is_empty() {
        // A probe: the box was built.
        // SAFETY: ends the init.
        unsafe { libc::_exit(0) }
    }
    // A session of its own, which the command shares: no terminal of the caller's to type into.
    // SAFETY: a plain process attribute.
    unsafe { libc::setsid() };
    let command = match command(plan, &env) {
        Ok(pid) => pid,
        Err(e) => return e,
    };
    // SAFETY: the init's copies of what the command and the caller use.
    unsafe {
        libc::close(err);
        libc::close(0);
    }
    let mut status = 0;
    loop {
        // SAFETY: reaps any process of the box (orphans come to the init).
        let r = unsafe { libc::waitpid(-1, &raw mut status, 0) };
        if r == command {
            // SAFETY: ends the init: the kernel kills what is left of the box.
            unsafe { libc::_exit(code_of(status)) }
        }
        if r < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            // SAFETY: as above.
            unsafe { libc::_exit(1) }
        }
    }
}

/// Starts the command (by `posix_spawn`, which copies nothing of this process): its process
/// id, or why it could not be started.
fn command(plan: &Plan, env: &[(OsString, OsString)]) -> Result<libc::pid_t, String> {
    let spawn = |(program, args): &(OsString, Vec<OsString>)| {
        std::process::Command::new(program)
            .args(args)
            .env_clear()
            .envs(env.iter().cloned())
            .current_dir(&plan.cwd)
            .spawn()
    };
    let pid = |c: std::process::Child| libc::pid_t::try_from(c.id()).map_err(|e| e.to_string());
    if let Some(d) = super::unshelled(&plan.argv, env) {
        match spawn(&d) {
            Ok(c) => return pid(c),
            // A program the kernel cannot execute (a script with no `#!`) bash runs as a script.
            Err(e) if e.raw_os_error() == Some(libc::ENOEXEC) => {}
            Err(e) => return Err(format!("`{}`: {e}", d.0.to_string_lossy())),
        }
    }
    let (program, rest) =
        plan.argv.split_first().map_or((OsString::new(), Vec::new()), |(p, r)| (p.clone(), r.to_vec()));
    let program = super::on_path(&program, env);
    match spawn(&(program.clone(), rest)) {
        Ok(c) => pid(c),
        Err(e) => Err(format!("`{}`: {e}", program.to_string_lossy())),
    }
}

/// The init's work before the command: the mounts, the host name, the loopback, and the layers
/// (capabilities dropped, Landlock, seccomp), which the command inherits.
fn build(plan: &Plan) -> Result<(), String> {
    die_with_parent(None)?;
    // SAFETY: this process has one thread.
    if unsafe { libc::unshare(libc::CLONE_NEWNS) } != 0 {
        return Err(os("unshare(CLONE_NEWNS)"));
    }
    view(&plan.mounts)?;
    // SAFETY: a name of the box's own UTS namespace.
    if unsafe { libc::sethostname(HOSTNAME.as_ptr().cast(), HOSTNAME.len()) } != 0 {
        return Err(os("sethostname"));
    }
    loopback_up()?;
    std::env::set_current_dir(&plan.cwd).map_err(|e| format!("the working folder `{}`: {e}", plan.cwd.display()))?;
    drop_capabilities()?;
    if plan.landlock && super::landlock_abi() > 0 {
        super::landlock(plan.profile, &plan.cwd, plan.home.as_deref()).map_err(|e| e.to_string())?;
    }
    if let Some(f) = &plan.filter {
        seccompiler::apply_filter(f).map_err(|e| format!("seccomp: {e}"))?;
    }
    Ok(())
}

/// Brings up the box's loopback (its network namespace has it, down).
fn loopback_up() -> Result<(), String> {
    // SAFETY: an ioctl on a socket of our own with an `ifreq` we own.
    unsafe {
        let s = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        if s < 0 {
            return Err(os("the loopback"));
        }
        let mut req: libc::ifreq = std::mem::zeroed();
        for (i, b) in b"lo".iter().enumerate() {
            req.ifr_name[i] = *b as libc::c_char;
        }
        let ok = libc::ioctl(s, libc::SIOCGIFFLAGS, &raw mut req) == 0 && {
            req.ifr_ifru.ifru_flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
            libc::ioctl(s, libc::SIOCSIFFLAGS, &raw mut req) == 0
        };
        let e = os("the loopback");
        libc::close(s);
        if ok { Ok(()) } else { Err(e) }
    }
}

/// Drops every capability this process has in the box's user namespace: the bounding set (none
/// can come back through a program's file capabilities), the ambient, inheritable, permitted and
/// effective sets.
fn drop_capabilities() -> Result<(), String> {
    #[repr(C)]
    struct Header {
        version: u32,
        pid: libc::c_int,
    }
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    // SAFETY: capability calls on this process with structures of the kernel's layout (v3).
    unsafe {
        let mut cap = 0;
        while libc::prctl(libc::PR_CAPBSET_READ, cap, 0, 0, 0) >= 0 {
            if libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 {
                return Err(os("dropping a capability"));
            }
            cap += 1;
        }
        if libc::prctl(libc::PR_CAP_AMBIENT, libc::PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 {
            return Err(os("clearing the ambient capabilities"));
        }
        let header = Header { version: 0x2008_0522, pid: 0 };
        let data = [Data { effective: 0, permitted: 0, inheritable: 0 }; 2];
        if libc::syscall(libc::SYS_capset, &raw const header, data.as_ptr()) != 0 {
            return Err(os("capset"));
        }
    }
    Ok(())
}

/// Whether a box can be built here: a probe builds one with nothing in it and ends.
pub(crate) fn probe() -> Result<(), String> {
    let plan = Plan {
        mounts: vec![Mount::Proc("/proc".into()), Mount::Dev("/dev".into()), Mount::Tmpfs("/tmp".into())],
        cwd: "/".into(),
        home: None,
        profile: Confine::Read,
        argv: Vec::new(),
        env: Vec::new(),
        landlock: false,
        filter: None,
        bridge: false,
    };
    match run(&plan, false) {
        Ok(0) => Ok(()),
        Ok(code) => Err(format!("the probe ended with {code}")),
        Err(e) => Err(e.to_string()),
    }
}
