//! Runs a command in a box: the kernel, not a reading of the command, says what it may touch.
//! bash, git, npm and cargo run code from configuration, options and files in ways no table of
//! programs lists, so every command an agent runs through Assent, allowed by a rule or approved
//! by a person, runs here.
//!
//! - [`Confine`]: what a boxed command sees and may do. `read` sees the working folder
//!   read-only (its secret files hidden), what programs need to start (system folders, the
//!   entries of `/etc` programs read, the toolchains' binaries), an empty home and a private
//!   `/tmp`; no network, no process outside, no capability, an environment cut to an
//!   allow-list. `workspace` is `read` plus writes inside the working folder, except its
//!   executable configuration (`.git`, `package.json`, a `Makefile`, the agents' own `.claude`,
//!   ...), mounted read-only over itself; what the command creates of it is removed after.
//! - [`Support`]: what this system can build (a rule that needs a box the system cannot build
//!   does not allow: the call asks, and `assent doctor` says why).
//! - [`run`] and [`exec`]: the command run in its box.
//!
//! The layers, and what each one stops:
//!
//! | layer | stops |
//! |---|---|
//! | user namespace, capabilities dropped | every capability over anything outside: root inside is not root outside (as root, the box runs as `nobody`) |
//! | PID namespace | seeing, signalling, tracing, limiting (`prlimit`), renicing or pinning any process outside; a process outliving the run (the namespace's init ends with the command, and the kernel kills the rest) |
//! | network namespace | every network but the box's own loopback; abstract UNIX sockets outside; a box given hosts ([`Spec::hosts`]) reaches those alone, through a proxy Assent runs for the run on a socket bound into the box (`linux/net.rs`) |
//! | IPC, UTS, cgroup namespaces | shared memory and queues outside, the host's name, the cgroup tree |
//! | mount namespace | every file not named: the home (an empty one of the box's own), other projects, `/etc` but its named entries, devices but null, zero, full, random, urandom and tty; writes outside the folder (`workspace`) and the private `/tmp` |
//! | Landlock (where the kernel has it, best effort to ABI 6) | the same walls again, should a mount be wrong: writes only to the folder and the box's own folders, signals and abstract sockets only inside |
//! | seccomp | socket families other than UNIX and IP (`vsock` reaches a VM's host whatever the namespace), device nodes, file handles, mounts, namespaces, io_uring, keyrings, `ptrace`, the clock, the host name, the kernel log, fanotify, kexec, modules, quotas, terminal input injection (a reviewed list: `refused.rs`) |
//! | the environment | tokens, keys and secrets in the client's environment |
//!
//! On macOS the box is Seatbelt's: `sandbox-exec` with a policy written for the run from the
//! same profile ([`seatbelt`]: reads, writes inside the folder but its executable configuration,
//! no network). Windows has no box yet: [`Support::detect`] says so, and no rule allows a
//! command that needs one (the call asks).

#[cfg(target_os = "linux")]
mod bpf;
#[cfg(target_os = "linux")]
mod direct;
#[cfg(unix)]
mod found;
#[cfg(unix)]
mod kept;
#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "macos")]
mod macos;
#[cfg(unix)]
mod net;
#[cfg(target_os = "linux")]
mod refused;
pub mod seatbelt;

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// What a boxed command may do: the one profile type, the core's (rules name it, decisions and
/// receipts carry it, the box enforces it).
pub use assent_core::confine::Confine;

/// Why a command could not be run confined.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The kernel cannot enforce the profile; nothing was run.
    #[error("this system cannot confine a command as the `{profile}` profile says: {}", missing.join("; "))]
    Unsupported {
        /// The profile.
        profile: &'static str,
        /// What is missing.
        missing: Vec<String>,
    },
    /// The working folder is not one a confined command may run in.
    #[error("{0}")]
    Folder(String),
    /// Confining failed; nothing was run.
    #[error("cannot confine the command: {0}")]
    Confine(String),
    /// The command could not be started, or waited for.
    #[error("cannot run the command: {0}")]
    Io(#[from] std::io::Error),
}

/// What this system can build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Support {
    /// Whether a box's namespaces can be made (unprivileged user
    /// namespaces allowed); why not, when they cannot.
    pub namespaces: Result<(), String>,
    /// The Landlock ABI version (0: none, or not enabled, or withheld for a test): a layer
    /// inside the box where there is one.
    pub landlock_abi: u32,
    /// Whether seccomp filters can be installed.
    pub seccomp: bool,
    /// Whether macOS's Seatbelt can confine a command (`/usr/bin/sandbox-exec`).
    pub seatbelt: bool,
}

/// Where macOS keeps Seatbelt's command.
pub const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

/// What Windows lacks, in the words `assent doctor` and the server's start say.
pub const NO_BOX: &str = "Windows has no box yet (an approval runs a command only unconfined, marked on the proposal)";

/// The Landlock ABI the box's Landlock layer is written for (6, Linux 6.12: the signal and
/// abstract-socket scopes); an older one enforces what it has of it, and none leaves the box to
/// its namespaces and seccomp.
pub const LANDLOCK_ABI_USED: u32 = 6;

impl Support {
    /// What this system can build (found once per process: a box is built that runs `true`).
    pub fn detect() -> Support {
        #[cfg(target_os = "linux")]
        {
            let landlock_abi = if linux::landlock_withheld() { 0 } else { linux::landlock_abi() };
            Support {
                namespaces: linux::namespaces(),
                landlock_abi,
                seccomp: linux::seccomp_available(),
                seatbelt: false,
            }
        }
        #[cfg(not(target_os = "linux"))]
        {
            Support {
                namespaces: Err("the box is built from Linux namespaces; this system has none".into()),
                landlock_abi: 0,
                seccomp: false,
                seatbelt: cfg!(target_os = "macos") && Path::new(SANDBOX_EXEC).is_file(),
            }
        }
    }

    /// What is missing to build a box of `profile` (empty: it can be). Both profiles need the
    /// same: the namespaces and seccomp; Landlock is a layer added where there is one.
    pub fn missing(&self, _profile: Confine) -> Vec<String> {
        let mut out = Vec::new();
        if cfg!(target_os = "macos") {
            if !self.seatbelt {
                out.push(format!("Seatbelt's {SANDBOX_EXEC} is not on this Mac"));
            }
            return out;
        }
        if !cfg!(target_os = "linux") {
            out.push(NO_BOX.to_string());
            return out;
        }
        if let Err(why) = &self.namespaces {
            out.push(why.clone());
        }
        if !self.seccomp {
            out.push("seccomp filters are not available".to_string());
        }
        out
    }

    /// Whether a box of `profile` can be built.
    pub fn can(&self, profile: Confine) -> bool {
        self.missing(profile).is_empty()
    }

    /// The layers a box has here, in words (`namespaces, seccomp, Landlock ABI 7`).
    pub fn layers(&self) -> String {
        if cfg!(target_os = "macos") {
            return "Seatbelt (sandbox-exec), a policy written for each run".into();
        }
        let mut l = vec!["user, PID, network, IPC, UTS and mount namespaces".to_string()];
        if self.seccomp {
            l.push("seccomp".into());
        }
        l.push(match self.landlock_abi {
            0 => "no Landlock (the kernel has none: the namespaces and seccomp hold alone)".to_string(),
            n => format!("Landlock ABI {n}"),
        });
        l.join(", ")
    }
}

/// A command to run confined.
#[derive(Debug, Clone)]
pub struct Spec {
    /// The profile.
    pub profile: Confine,
    /// The working folder (the only folder of the person's it reads).
    pub cwd: PathBuf,
    /// The program and its arguments.
    pub argv: Vec<OsString>,
    /// The hosts it may reach (`registry.npmjs.org`, or `host:port` for a port other than 443,
    /// 80 and 9418), through a proxy Assent runs for the run; none: no network at all.
    pub hosts: Vec<String>,
}

/// Environment variables a confined command keeps (besides `LC_*`): none names a secret.
pub const ENV_KEPT: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "TERM",
    "COLORTERM",
    "NO_COLOR",
    "TZ",
    "COLUMNS",
    "LINES",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
    "CARGO_HOME",
    "NVM_DIR",
    "PYENV_ROOT",
    "VIRTUAL_ENV",
    // The person's git identity, read outside the confinement (the global configuration is
    // not given to git inside it): a confined commit is theirs.
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
];

/// Whether an environment variable reaches a confined command.
pub fn env_kept(name: &str) -> bool {
    ENV_KEPT.contains(&name) || name.starts_with("LC_")
}

/// The environment a boxed command gets: the kept variables of `from`, the private temporary
/// folder as `TMPDIR`, and git told to take no global configuration and no optional locks.
pub fn environment(from: impl IntoIterator<Item = (OsString, OsString)>, tmp: &Path) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> =
        from.into_iter().filter(|(k, _)| k.to_str().is_some_and(env_kept)).collect();
    for k in ["TMPDIR", "TMP", "TEMP"] {
        env.push((k.into(), tmp.as_os_str().to_owned()));
    }
    env.push(("GIT_CONFIG_GLOBAL".into(), "/dev/null".into()));
    env.push(("GIT_OPTIONAL_LOCKS".into(), "0".into()));
    env
}

/// Whether `dir` may be a confined command's working folder (see
/// [`assent_commands::path::project_folder`]): a `read` of the root, the home folder or
/// `~/.ssh` would read secrets.
pub fn folder_ok(dir: &Path, home: Option<&Path>) -> Result<(), String> {
    let d = dir.to_str().ok_or_else(|| format!("the working folder `{}` is not UTF-8", dir.display()))?;
    assent_commands::path::project_folder(d, home.and_then(Path::to_str))
}

/// Runs `spec` in its box and waits for it (and for every process of the box to end): its exit
/// status. Standard input, output and error are the caller's. Nothing runs unless the box is
/// built.
pub fn run(spec: &Spec) -> Result<std::process::ExitStatus, Error> {
    // Whether a box can be built here is [`Support::detect`]'s to say, once, where boxes are
    // decided (a probe builds a box of its own); here the box says why it cannot.
    #[cfg(target_os = "linux")]
    {
        linux::run(spec)
    }
    #[cfg(target_os = "macos")]
    {
        macos::run(spec)
    }
    #[cfg(not(any(target_os = "linux", target_os = "macos")))]
    {
        Err(Error::Unsupported { profile: spec.profile.as_str(), missing: vec![NO_BOX.into()] })
    }
}

/// Runs a `read` spec in its box from this process, which becomes the box (no second process
/// waits on it, and a read leaves nothing to clean up). Returns only when nothing could be run,
/// with why.
pub fn exec(spec: &Spec) -> Error {
    #[cfg(target_os = "linux")]
    {
        linux::exec(spec)
    }
    #[cfg(target_os = "macos")]
    {
        macos::exec(spec)
    }
    #[cfg(not(any(target_os = "linux", target_os = "macos")))]
    {
        Error::Unsupported { profile: spec.profile.as_str(), missing: vec![NO_BOX.into()] }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_that_are_not_projects() {
        let home = Path::new("/home/ann");
        for bad in ["/", "/home", "/home/ann", "/etc", "/tmp", "/home/ann/.ssh", "/home/ann/.config/x", "rel/x"] {
            assert!(folder_ok(Path::new(bad), Some(home)).is_err(), "{bad}");
        }
        for good in ["/home/ann/src/app", "/home/ann/app", "/tmp/x", "/srv/work/app"] {
            assert!(folder_ok(Path::new(good), Some(home)).is_ok(), "{good}");
        }
    }

    #[test]
    fn the_environment_keeps_no_secret() {
        let from = [("PATH", "/usr/bin"), ("GITHUB_TOKEN", "t"), ("AWS_SECRET_ACCESS_KEY", "k"), ("LC_ALL", "C")]
            .map(|(k, v)| (OsString::from(k), OsString::from(v)));
        let env = environment(from, Path::new("/tmp/x"));
        let names: Vec<_> = env.iter().map(|(k, _)| k.to_string_lossy().into_owned()).collect();
        assert!(names.contains(&"PATH".to_string()) && names.contains(&"LC_ALL".to_string()));
        assert!(!names.iter().any(|n| n.contains("TOKEN") || n.contains("SECRET")));
        assert!(env.contains(&("TMPDIR".into(), "/tmp/x".into())));
    }
}
