//! The Linux layers: Landlock (filesystem rights, TCP, scopes), then a seccomp filter, installed
//! by a thread of its own on itself before it spawns the command.

use crate::{Error, Profile, Spec};
use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset, RulesetAttr,
    RulesetCreatedAttr, RulesetStatus, Scope,
};
use seccompiler::{SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule};
use std::collections::BTreeMap;
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

/// Whether this kernel takes seccomp filters (it says so in `/proc/self/status`).
pub(crate) fn seccomp_available() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|s| s.lines().any(|l| l.starts_with("Seccomp:")))
}

/// System folders a program needs to start and run: read and executed, never written.
const SYSTEM: &[&str] =
    &["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/nix/store", "/snap", "/proc", "/sys"];

/// Entries of `/etc` never read: password hashes, sudo's rules, SSH host keys, TLS private keys,
/// stored network and VPN passwords, container registries' logins.
const ETC_SECRET: &[&str] = &[
    "shadow",
    "shadow-",
    "gshadow",
    "gshadow-",
    "sudoers",
    "sudoers.d",
    "ssh",
    "ssl",
    "security",
    "credstore",
    "credstore.encrypted",
    "NetworkManager",
    "wpa_supplicant",
    "ppp",
    "docker",
    "containers",
    "libvirt",
    ".pwd.lock",
    "machine-id",
];

/// Toolchains in the home folder (read and executed): their binaries, never their credentials
/// (`~/.cargo/credentials.toml`, `~/.npmrc` stay out).
const HOME_TOOLCHAINS: &[&str] = &[
    ".cargo/bin",
    ".cargo/registry",
    ".cargo/git",
    ".rustup",
    ".nvm",
    ".pyenv",
    ".local/bin",
    ".local/lib",
    ".local/share/pnpm",
    ".bun/bin",
    ".deno/bin",
    "go/bin",
    "go/pkg/mod",
];

/// Device files a command may read; `/dev/null` it may also write.
const DEVICES_READ: &[&str] = &["/dev/zero", "/dev/urandom", "/dev/random", "/dev/full"];

/// Every folder and file the profile reads besides the working folder.
fn read_roots(home: Option<&Path>) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = SYSTEM.iter().map(PathBuf::from).collect();
    if let Ok(entries) = std::fs::read_dir("/etc") {
        for e in entries.flatten() {
            let name = e.file_name();
            if !ETC_SECRET.iter().any(|s| name == *s) {
                out.push(e.path());
            }
        }
    }
    // Public certificates, never the private keys beside them.
    for c in ["/etc/ssl/certs", "/etc/ssl/openssl.cnf"] {
        out.push(c.into());
    }
    if let Some(h) = home {
        out.extend(HOME_TOOLCHAINS.iter().map(|t| h.join(t)));
    }
    // The programs on the PATH (a toolchain elsewhere), unless an entry is the root or a
    // top-level folder, or in the home folder (another project's, `~/.config`) and not one of
    // the toolchains above.
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            let in_home = home.is_some_and(|h| dir.starts_with(h));
            if (!in_home && crate::folder_ok(&dir, home).is_ok()) || home.is_some_and(|h| is_toolchain(&dir, h)) {
                out.push(dir);
            }
        }
    }
    out.extend(DEVICES_READ.iter().map(PathBuf::from));
    out
}

fn is_toolchain(dir: &Path, home: &Path) -> bool {
    HOME_TOOLCHAINS.iter().any(|t| dir.starts_with(home.join(t)))
}

fn landlock_err(e: impl std::fmt::Display) -> Error {
    Error::Confine(format!("Landlock: {e}"))
}

/// Confines the calling thread (and what it spawns from now on) to `profile`.
fn landlock(profile: Profile, cwd: &Path, tmp: &Path, home: Option<&Path>) -> Result<(), Error> {
    let all = AccessFs::from_all(ABI_USED);
    let read = AccessFs::from_read(ABI_USED);
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(all)
        .and_then(|r| r.handle_access(AccessNet::from_all(ABI_USED)))
        .and_then(|r| r.scope(Scope::from_all(ABI_USED)))
        .and_then(|r| r.create())
        .map_err(landlock_err)?;
    let rule = |path: &Path, access: BitFlags<AccessFs>| -> Option<PathBeneath<PathFd>> {
        let fd = PathFd::new(path).ok()?;
        // A file takes only a file's rights.
        let access = if path.is_dir() { access } else { access & AccessFs::from_file(ABI_USED) };
        Some(PathBeneath::new(fd, access))
    };
    let mut rules: Vec<PathBeneath<PathFd>> = Vec::new();
    match profile {
        Profile::Read => {
            rules.extend(read_roots(home).iter().filter_map(|p| rule(p, read)));
            rules.extend(rule(cwd, read));
        }
    }
    rules.extend(rule(tmp, all));
    rules.extend(rule(Path::new("/dev/null"), AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::Truncate));
    for r in rules {
        ruleset = ruleset.add_rule(r).map_err(landlock_err)?;
    }
    let status = ruleset.restrict_self().map_err(landlock_err)?;
    if status.ruleset != RulesetStatus::FullyEnforced || !status.no_new_privs {
        return Err(Error::Confine(format!("Landlock enforced only in part ({:?})", status.ruleset)));
    }
    Ok(())
}

/// The system calls a confined command is refused (`EPERM`), whatever their arguments but for
/// `ioctl` (only terminal input injection) and `clone` (only new namespaces).
fn seccomp(profile: Profile) -> Result<(), Error> {
    let err = |e: seccompiler::Error| Error::Confine(format!("seccomp: {e}"));
    let backend = |e: seccompiler::BackendError| Error::Confine(format!("seccomp: {e}"));
    let mut denied: Vec<i64> = vec![
        // Sockets of every family: UDP and raw networks (Landlock covers TCP only), netlink, and
        // UNIX sockets, through which the session bus reaches the keychain. A pair of connected
        // sockets reaches nothing outside, so `socketpair` stays.
        libc::SYS_socket,
        // io_uring would open and connect sockets and files past this filter.
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        // Kernel keyrings hold secrets too.
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_keyctl,
        // Other processes' memory.
        libc::SYS_ptrace,
        libc::SYS_process_vm_readv,
        libc::SYS_process_vm_writev,
        // Mounts and namespaces (Landlock already refuses mounts; a new user namespace would give
        // back capabilities inside it).
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_pivot_root,
        libc::SYS_unshare,
        libc::SYS_setns,
        // Owners and extended attributes of files, which Landlock does not mediate.
        libc::SYS_chown,
        libc::SYS_fchown,
        libc::SYS_fchownat,
        libc::SYS_lchown,
        libc::SYS_setxattr,
        libc::SYS_lsetxattr,
        libc::SYS_fsetxattr,
        libc::SYS_removexattr,
        libc::SYS_lremovexattr,
        libc::SYS_fremovexattr,
        // The kernel itself.
        libc::SYS_bpf,
        libc::SYS_perf_event_open,
        libc::SYS_userfaultfd,
        libc::SYS_init_module,
        libc::SYS_finit_module,
        libc::SYS_delete_module,
        libc::SYS_kexec_load,
        libc::SYS_reboot,
        libc::SYS_swapon,
        libc::SYS_swapoff,
        libc::SYS_acct,
        libc::SYS_settimeofday,
        libc::SYS_clock_settime,
    ];
    match profile {
        // A read changes no file's mode or times either (Landlock does not mediate them).
        Profile::Read => denied.extend([
            libc::SYS_chmod,
            libc::SYS_fchmod,
            libc::SYS_fchmodat,
            libc::SYS_utime,
            libc::SYS_utimes,
            libc::SYS_utimensat,
            libc::SYS_futimesat,
        ]),
    }
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = denied.into_iter().map(|n| (n, Vec::new())).collect();
    // Typing into the terminal the command was started from (`TIOCSTI`, `TIOCLINUX`).
    let ioctl = |req: u64| {
        SeccompCondition::new(1, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, req).and_then(|c| SeccompRule::new(vec![c]))
    };
    // The request's type is the C library's (`c_ulong` on glibc, `c_int` on musl).
    #[allow(clippy::unnecessary_cast)]
    let (sti, linux) = (libc::TIOCSTI as u64, libc::TIOCLINUX as u64);
    rules.insert(libc::SYS_ioctl, vec![ioctl(sti).map_err(backend)?, ioctl(linux).map_err(backend)?]);
    // `clone` making a namespace (each flag its own rule: any one of them set).
    let mut clone_rules = Vec::new();
    for flag in [
        libc::CLONE_NEWUSER,
        libc::CLONE_NEWNS,
        libc::CLONE_NEWNET,
        libc::CLONE_NEWPID,
        libc::CLONE_NEWIPC,
        libc::CLONE_NEWUTS,
        libc::CLONE_NEWCGROUP,
    ] {
        let f = flag as u64;
        let c = SeccompCondition::new(0, SeccompCmpArgLen::Qword, SeccompCmpOp::MaskedEq(f), f).map_err(backend)?;
        clone_rules.push(SeccompRule::new(vec![c]).map_err(backend)?);
    }
    rules.insert(libc::SYS_clone, clone_rules);
    let arch = std::env::consts::ARCH.try_into().map_err(backend)?;
    let filter = SeccompFilter::new(rules, SeccompAction::Allow, SeccompAction::Errno(libc::EPERM as u32), arch)
        .map_err(backend)?;
    let program: seccompiler::BpfProgram = filter.try_into().map_err(backend)?;
    seccompiler::apply_filter(&program).map_err(err)?;
    // `clone3` passes its flags in memory a filter cannot read: it answers "not implemented", on
    // which the C library falls back to `clone`, whose flags the filter above reads.
    let clone3: BTreeMap<i64, Vec<SeccompRule>> = [(libc::SYS_clone3, Vec::new())].into_iter().collect();
    let filter = SeccompFilter::new(clone3, SeccompAction::Allow, SeccompAction::Errno(libc::ENOSYS as u32), arch)
        .map_err(backend)?;
    let program: seccompiler::BpfProgram = filter.try_into().map_err(backend)?;
    seccompiler::apply_filter(&program).map_err(err)
}

/// Runs `spec` from a thread that confines itself first; the temporary folder is removed after.
pub(crate) fn run(spec: &Spec) -> Result<std::process::ExitStatus, Error> {
    let cwd = std::fs::canonicalize(&spec.cwd)
        .map_err(|e| Error::Folder(format!("the working folder `{}`: {e}", spec.cwd.display())))?;
    let home = std::env::var_os("HOME").map(PathBuf::from).filter(|h| h.is_absolute());
    let home = home.map(|h| std::fs::canonicalize(&h).unwrap_or(h));
    crate::folder_ok(&cwd, home.as_deref()).map_err(Error::Folder)?;
    let Some((program, args)) = spec.argv.split_first() else {
        return Err(Error::Confine("no command to run".into()));
    };
    let tmp = tempfile::Builder::new().prefix("assent-run-").tempdir()?;
    let env = crate::environment(std::env::vars_os(), tmp.path());
    let (profile, tmp_path) = (spec.profile, tmp.path().to_path_buf());
    let mut command = std::process::Command::new(program);
    command.args(args).current_dir(&cwd).env_clear().envs(env);
    let confined = std::thread::Builder::new().name("assent-confined".into()).spawn(move || {
        landlock(profile, &cwd, &tmp_path, home.as_deref())?;
        seccomp(profile)?;
        Ok::<_, Error>(command.status()?)
    })?;
    let status = confined.join().map_err(|_| Error::Confine("the confining thread panicked".into()))?;
    drop(tmp);
    status
}
