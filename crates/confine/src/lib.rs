//! # assent-confine
//!
//! Runs a command confined by the kernel to what a rule allows. A rule's allow is not trusted to
//! a reading of the command: bash, git, npm and cargo run code from configuration, options and
//! files in ways no table of programs lists, so what a rule lets run without a person runs here,
//! where the kernel, not the reader, says what it may touch.
//!
//! - [`Profile`]: what a confined command may do. `read` reads the working folder and what
//!   programs need to start (system folders, toolchains), writes nothing but `/dev/null` and a
//!   private temporary folder, has no network, sends no signal and reaches no socket outside its
//!   sandbox, gains no privilege, and sees an environment cut to an allow-list. `workspace` is
//!   `read` plus writes inside the working folder, except its executable configuration (`.git`,
//!   `package.json`, a `Makefile`, ...), which bubblewrap mounts read-only over itself; what the
//!   command creates of it is removed after.
//! - [`Support`]: what this kernel can enforce, and what is missing for a profile (a rule that
//!   needs a profile the kernel cannot enforce does not allow: the call asks).
//! - [`run`]: the command run under a profile, from a thread of its own that confines itself
//!   (Landlock, then seccomp) and spawns the command, which inherits both and can never shed them.
//!
//! The layers, and what each one stops:
//!
//! | layer | stops |
//! |---|---|
//! | Landlock (ABI 6+) filesystem rights | reads outside the folder and the system, every write but `/dev/null` and the private temporary folder, truncation, device ioctls |
//! | Landlock TCP rights | TCP connect and bind |
//! | Landlock scopes | signals to processes outside the sandbox, abstract UNIX sockets outside it; `ptrace` and `/proc/PID/environ` of outside processes |
//! | seccomp | creating any socket (UDP, netlink, UNIX: the session bus and the keychain behind it), io_uring (which would bypass the rest), kernel keyrings, `ptrace`, terminal input injection (`TIOCSTI`), changing modes, owners, times and extended attributes of files, mounts and namespaces |
//! | the environment | tokens, keys and secrets in the client's environment |
//!
//! Linux only: elsewhere [`Support::detect`] reports nothing can be confined, so no rule allows a
//! command that needs confinement.

#[cfg(target_os = "linux")]
mod bpf;
#[cfg(target_os = "linux")]
mod direct;
#[cfg(target_os = "linux")]
mod found;
#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
mod refused;

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// What a confined command may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Profile {
    /// Reads the working folder and what programs need to start; writes nothing outside a
    /// private temporary folder and `/dev/null`; no network.
    Read,
    /// `Read`, plus writes inside the working folder but to its executable configuration.
    Workspace,
}

impl Profile {
    /// The profile's name (`read`).
    pub fn as_str(self) -> &'static str {
        match self {
            Profile::Read => "read",
            Profile::Workspace => "workspace",
        }
    }

    /// The profile named `s`.
    pub fn parse(s: &str) -> Option<Profile> {
        match s {
            "read" => Some(Profile::Read),
            "workspace" => Some(Profile::Workspace),
            _ => None,
        }
    }

    /// What it allows, in words for a person.
    pub fn in_words(self) -> &'static str {
        match self {
            Profile::Read => {
                "reads the working folder only; writes nothing; no network; no secrets from the environment"
            }
            Profile::Workspace => {
                "writes inside the working folder only, never its executable configuration (.git, package.json, Makefile, ...); no network; no secrets from the environment"
            }
        }
    }
}

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

/// What the kernel can enforce.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Support {
    /// The Landlock ABI version (0: none, or not enabled).
    pub landlock_abi: u32,
    /// Whether seccomp filters can be installed.
    pub seccomp: bool,
}

/// The oldest Landlock ABI a profile is enforced with: 6 (Linux 6.12) brings the signal and
/// abstract-socket scopes; 3 brought truncation, 4 TCP, 5 device ioctls.
pub const MIN_LANDLOCK_ABI: u32 = 6;

impl Support {
    /// What this kernel can enforce (cheap: a ruleset is created and dropped per ABI tried).
    pub fn detect() -> Support {
        #[cfg(target_os = "linux")]
        {
            Support { landlock_abi: linux::landlock_abi(), seccomp: linux::seccomp_available() }
        }
        #[cfg(not(target_os = "linux"))]
        {
            Support { landlock_abi: 0, seccomp: false }
        }
    }

    /// What is missing to enforce `profile` (empty: it can be).
    pub fn missing(&self, profile: Profile) -> Vec<String> {
        let mut out = Vec::new();
        if !cfg!(target_os = "linux") {
            out.push("confinement needs Linux (Landlock and seccomp)".to_string());
            return out;
        }
        if self.landlock_abi == 0 {
            out.push(
                "Landlock is not enabled in this kernel (Linux 6.12 or newer with `lsm=landlock,...`)".to_string(),
            );
        } else if self.landlock_abi < MIN_LANDLOCK_ABI {
            out.push(format!(
                "Landlock ABI {} is older than {MIN_LANDLOCK_ABI} (Linux 6.12), which scopes signals and sockets",
                self.landlock_abi
            ));
        }
        if !self.seccomp {
            out.push("seccomp filters are not available".to_string());
        }
        if profile == Profile::Workspace && !bwrap_works() {
            out.push(
                "bubblewrap (`bwrap`) does not run here, which keeps executable configuration read-only (install it; it needs unprivileged user namespaces)"
                    .to_string(),
            );
        }
        out
    }

    /// Whether `profile` can be enforced.
    pub fn can(&self, profile: Profile) -> bool {
        self.missing(profile).is_empty()
    }
}

/// A command to run confined.
#[derive(Debug, Clone)]
pub struct Spec {
    /// The profile.
    pub profile: Profile,
    /// The working folder (the only folder of the person's it reads).
    pub cwd: PathBuf,
    /// The program and its arguments.
    pub argv: Vec<OsString>,
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

/// The environment a confined command gets: the kept variables of `from`, the private temporary
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

/// Whether bubblewrap runs here (it mounts a workspace's executable configuration read-only;
/// it needs user namespaces unless run as root). Tried once, with a process: only a `workspace`
/// profile asks.
pub fn bwrap_works() -> bool {
    #[cfg(target_os = "linux")]
    {
        linux::bwrap_works()
    }
    #[cfg(not(target_os = "linux"))]
    {
        false
    }
}

/// Runs `spec` confined and waits for it: its exit status. Standard input, output and error
/// are the caller's. Nothing runs unless every layer is in force.
pub fn run(spec: &Spec) -> Result<std::process::ExitStatus, Error> {
    let support = Support::detect();
    let missing = support.missing(spec.profile);
    if !missing.is_empty() {
        return Err(Error::Unsupported { profile: spec.profile.as_str(), missing });
    }
    #[cfg(target_os = "linux")]
    {
        linux::run(spec)
    }
    #[cfg(not(target_os = "linux"))]
    {
        Err(Error::Unsupported { profile: spec.profile.as_str(), missing: vec!["not Linux".into()] })
    }
}

/// Runs a `read` spec confined in this process, which becomes the command (no second process
/// waits on it): for a process with one thread. Its private temporary folder is made in
/// `tmp_root`, named after this process and when it started, and stays until
/// [`prune_temporary`] finds that process gone. Returns only when nothing could be run, with why.
///
/// All of it is done on this thread: a second thread that made the ruleset while the caller
/// checked the ticket started a third of a millisecond late (an idle core woken), which cost
/// more than it saved.
pub fn exec(spec: &Spec, tmp_root: &Path) -> Error {
    #[cfg(target_os = "linux")]
    {
        // The ruleset requires what the profile needs (it fails where the kernel cannot); what
        // is missing is looked up only then, for the message.
        match linux::ready(tmp_root) {
            Ok(ready) => linux::exec(spec, ready),
            Err(e) => {
                let missing = Support::detect().missing(Profile::Read);
                if missing.is_empty() { e } else { Error::Unsupported { profile: Profile::Read.as_str(), missing } }
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = tmp_root;
        Error::Unsupported { profile: spec.profile.as_str(), missing: vec!["not Linux".into()] }
    }
}

/// Removes the temporary folders [`exec`] made in `tmp_root` whose command has ended.
pub fn prune_temporary(tmp_root: &Path) {
    let Ok(entries) = std::fs::read_dir(tmp_root) else { return };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some((pid, start)) = name.to_str().and_then(|n| n.split_once('-')) else { continue };
        let alive = pid.parse().ok().and_then(process).is_some_and(|p| p.start == start);
        if !alive {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// A live process, as the system's process table says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Process {
    /// Its parent's id.
    pub parent: u32,
    /// When it started (in the system's clock ticks since boot: with the id, it names one
    /// process, never a later one given the same id).
    pub start: String,
}

/// The process `pid`; none once it has exited (a zombie included), or where there is no
/// process table to read (not Linux).
pub fn process(pid: u32) -> Option<Process> {
    if !cfg!(target_os = "linux") {
        return None;
    }
    // Read at once (the file says it is empty, so a plain read would grow its buffer from 32 bytes,
    // a call each time).
    let mut s = String::with_capacity(1024);
    std::io::Read::read_to_string(&mut std::fs::File::open(format!("/proc/{pid}/stat")).ok()?, &mut s).ok()?;
    // After the command name (in parentheses, which may hold anything): state, ppid, ...
    let rest = s.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    if matches!(fields.first(), Some(&"Z") | Some(&"X")) {
        return None;
    }
    Some(Process { parent: fields.get(1)?.parse().ok()?, start: fields.get(19)?.to_string() })
}

/// The first argument that makes a binary the second stage of a `workspace` run: inside
/// bubblewrap's mounts, it confines itself and executes the command ([`stage_two`]). A binary
/// that runs `workspace` commands dispatches it before anything else (before any thread).
pub const STAGE_TWO: &str = "__assent-confined-exec";

/// The second stage of a `workspace` run (`args`: what follows [`STAGE_TWO`]): confines this
/// process and executes the command; returns only on failure, with why.
pub fn stage_two(args: &[OsString]) -> Error {
    #[cfg(target_os = "linux")]
    {
        linux::stage_two(args)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = args;
        Error::Unsupported { profile: "workspace", missing: vec!["not Linux".into()] }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_os = "linux")]
    #[test]
    fn temporary_folders_of_ended_commands_are_pruned() {
        let root = std::env::temp_dir().join(format!("assent-tmp-prune-{}", std::process::id()));
        let me = process(std::process::id()).expect("this process");
        let (live, ended, reused) = (
            root.join(format!("{}-{}", std::process::id(), me.start)),
            root.join("4194304-1"),
            // The same id, started at another time: another process.
            root.join(format!("{}-{}0", std::process::id(), me.start)),
        );
        for d in [&live, &ended, &reused] {
            std::fs::create_dir_all(d).expect("made");
        }
        prune_temporary(&root);
        assert!(live.exists() && !ended.exists() && !reused.exists());
        let _ = std::fs::remove_dir_all(&root);
    }

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

    #[test]
    fn profiles_by_name() {
        assert_eq!(Profile::parse("workspace"), Some(Profile::Workspace));
        assert_eq!(Profile::parse("read"), Some(Profile::Read));
        assert_eq!(Profile::parse("none"), None);
        assert_eq!(Profile::Read.as_str(), "read");
    }
}
