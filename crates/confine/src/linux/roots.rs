//! What the `read` profile lets a confined command read: the system's folders, the parts of
//! `/proc` and `/dev` programs need, `/etc` but its secrets, and the home's toolchains.

use std::path::{Path, PathBuf};

/// System folders a program needs to start and run: read and executed, never written.
const SYSTEM: &[&str] =
    &["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/nix/store", "/snap", "/sys"];

/// What of `/proc` a command reads: the system's figures, never a process's folder. Landlock
/// alone does not keep a confined command from reading another process's `/proc/PID/environ`
/// of the same user (measured: `crates/confine/tests/read.rs`), the agent's client's secrets
/// included; `/proc/self` is a process's folder too (and would be the one that confined it).
const PROC_READ: &[&str] = &[
    "/proc/cpuinfo",
    "/proc/meminfo",
    "/proc/stat",
    "/proc/loadavg",
    "/proc/uptime",
    "/proc/version",
    "/proc/filesystems",
    "/proc/cgroups",
    "/proc/swaps",
    "/proc/sys",
];

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

/// A path a profile reads, and whether it is a folder when that is known already (an entry
/// of a folder listing says so without another system call).
pub(super) struct Root {
    pub(super) path: PathBuf,
    pub(super) dir: Option<bool>,
}

impl From<PathBuf> for Root {
    fn from(path: PathBuf) -> Root {
        Root { path, dir: None }
    }
}

impl From<&str> for Root {
    fn from(path: &str) -> Root {
        Root { path: path.into(), dir: None }
    }
}

/// Every folder and file the profile reads besides the working folder.
pub(super) fn read_roots(home: Option<&Path>) -> Vec<Root> {
    let mut out: Vec<Root> = SYSTEM.iter().map(|p| Root::from(*p)).collect();
    // For anyone but root the system keeps those secrets of `/etc` unreadable already: one rule
    // for the whole folder. Root reads everything, so each entry but the secrets is named.
    if !is_root() {
        out.push("/etc".into());
    } else if let Ok(entries) = std::fs::read_dir("/etc") {
        for e in entries.flatten() {
            let name = e.file_name();
            if !ETC_SECRET.iter().any(|s| name == *s) {
                // A link is taken where it leads (the rule is on what it names).
                let dir = e.file_type().ok().filter(|t| !t.is_symlink()).map(|t| t.is_dir());
                out.push(Root { path: e.path(), dir });
            }
        }
    }
    // Public certificates, never the private keys beside them.
    for c in ["/etc/ssl/certs", "/etc/ssl/openssl.cnf"] {
        out.push(c.into());
    }
    if let Some(h) = home {
        out.extend(HOME_TOOLCHAINS.iter().map(|t| Root::from(h.join(t))));
    }
    // Toolchains installed where their variables say (`RUSTUP_HOME`, and of `CARGO_HOME` its
    // binaries and sources only, never its credentials).
    for (var, parts) in [
        ("RUSTUP_HOME", &[""][..]),
        ("CARGO_HOME", &["bin", "registry", "git"][..]),
        ("NVM_DIR", &[""][..]),
        ("PYENV_ROOT", &[""][..]),
    ] {
        let Some(dir) = std::env::var_os(var).map(PathBuf::from).filter(|d| d.is_absolute()) else { continue };
        // Never the root, the home or a hidden folder of it (`~/.ssh`), but the toolchains'.
        if crate::folder_ok(&dir, home).is_ok() || home.is_some_and(|h| is_toolchain(&dir, h)) {
            out.extend(parts.iter().map(|p| Root::from(if p.is_empty() { dir.clone() } else { dir.join(p) })));
        }
    }
    // The programs on the PATH (a toolchain elsewhere), unless an entry is the root or a
    // top-level folder, or in the home folder (another project's, `~/.config`) and not one of
    // the toolchains above.
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            let in_home = home.is_some_and(|h| dir.starts_with(h));
            if (!in_home && crate::folder_ok(&dir, home).is_ok()) || home.is_some_and(|h| is_toolchain(&dir, h)) {
                out.push(dir.into());
            }
        }
    }
    out.extend(DEVICES_READ.iter().chain(PROC_READ).map(|d| Root::from(*d)));
    out
}

/// Whether this process runs as root: its effective user, which the kernel gives its own folder
/// of `/proc` (one call, no unsafe one). Taken for root when `/proc` does not say (the stricter
/// ruleset: each entry of `/etc` but its secrets).
fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").map_or(true, |m| m.uid() == 0)
}

fn is_toolchain(dir: &Path, home: &Path) -> bool {
    HOME_TOOLCHAINS.iter().any(|t| dir.starts_with(home.join(t)))
}
