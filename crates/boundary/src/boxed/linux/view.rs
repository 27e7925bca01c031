//! What the box shows: the mount namespace built for a run (see `ns.rs`), named part by part
//! (an allow-list, never "everything but"). The working folder (read-only for `read`); what
//! programs need to start (the system's folders read-only, the entries of `/etc` a program
//! reads, named); the toolchains' binaries and libraries, never their configuration or
//! credentials; an empty home of the box's own; a private `/tmp`; a minimal `/dev`; `/proc` of
//! the box's own processes. Anything not named here does not exist inside.

use std::path::{Path, PathBuf};

/// System folders a program needs to start and run: read and executed, never written.
const SYSTEM: &[&str] =
    &["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/nix/store", "/snap"];

/// What of `/etc` programs read, each named: users' and groups' names, name resolution, the
/// dynamic linker's cache, time zones, the public certificates, the alternatives' links, what
/// the system is, terminals, and the language runtimes' own settings. Never the password hashes,
/// sudo's rules, SSH host keys, TLS private keys, stored network or VPN passwords, container
/// registries' logins, or a global `npmrc` or `pip.conf` (which hold registry tokens).
const ETC: &[&str] = &[
    "passwd",
    "group",
    "hosts",
    "host.conf",
    "nsswitch.conf",
    "resolv.conf",
    "gai.conf",
    "services",
    "protocols",
    "networks",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "localtime",
    "timezone",
    "os-release",
    "lsb-release",
    "debian_version",
    "alternatives",
    "ssl/certs",
    "ssl/openssl.cnf",
    "ca-certificates",
    "ca-certificates.conf",
    "pki/tls/certs",
    "pki/ca-trust",
    "crypto-policies",
    "mime.types",
    "magic",
    "magic.mime",
    "terminfo",
    "inputrc",
    "bash.bashrc",
    "profile",
    "shells",
    "locale.alias",
    "locale.conf",
    "default/locale",
    "gitconfig",
    "gitattributes",
    "fonts",
    "perl",
    "mailcap",
];

/// Prefixes of `/etc` entries that are a language runtime's own settings (`java-17-openjdk`,
/// `python3.11`).
const ETC_PREFIXES: &[&str] = &["java", "python", "ruby", "php", "node"];

/// Toolchains in the home folder, read and executed: their binaries and libraries, never their
/// credentials or configuration (`~/.cargo/credentials.toml`, `~/.npmrc`,
/// `~/.cargo/config.toml` stay out). nvm's are found per version (see [`nvm`]).
const HOME_TOOLCHAINS: &[&str] = &[
    ".cargo/bin",
    ".cargo/registry",
    ".cargo/git",
    ".rustup",
    ".pyenv",
    ".local/bin",
    ".local/lib",
    ".local/share/pnpm",
    ".bun/bin",
    ".deno/bin",
    "go/bin",
    "go/pkg/mod",
];

/// The parts of a Node.js version nvm installed that run: never its `etc` (a global `npmrc`,
/// which holds the registry's token).
const NODE_PARTS: &[&str] = &["bin", "lib", "include", "share"];

/// The names toolchains keep logins under beyond the secret files' own (see
/// [`assent_commands::secrets`]): npm's global `npmrc`, pnpm's `rc`, cargo's and composer's.
const TOOLCHAIN_LOGINS: &[&str] = &["npmrc", "rc", "credentials.toml", "auth.json"];

/// One part of the view, in the order made (a later mount covers an earlier one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Mount {
    /// `/proc` of the box's own processes.
    Proc(PathBuf),
    /// A minimal `/dev`: null, zero, full, random, urandom, tty, its own terminals.
    Dev(PathBuf),
    /// An empty folder of the box's own.
    Tmpfs(PathBuf),
    /// The system's `from` at `to`: read-only unless `rw`; left out when `from` does not exist
    /// and `may_miss`, else the box is not built.
    Bind { from: PathBuf, to: PathBuf, rw: bool, may_miss: bool },
    /// A link at `at` to `target`.
    Symlink { target: PathBuf, at: PathBuf },
}

/// The view's parts, in order.
#[derive(Debug, Default)]
pub(crate) struct Mounts {
    pub(crate) parts: Vec<Mount>,
}

impl Mounts {
    fn bind(&mut self, from: &Path, to: &Path, rw: bool, may_miss: bool) {
        self.parts.push(Mount::Bind { from: from.to_path_buf(), to: to.to_path_buf(), rw, may_miss });
    }
    /// `p` read-only, where it exists.
    pub(crate) fn ro(&mut self, p: &Path) {
        self.bind(p, p, false, true);
    }
    /// `p` read-only over itself; the box is not built if it is gone.
    pub(crate) fn ro_exact(&mut self, p: &Path) {
        self.bind(p, p, false, false);
    }
    /// `p` writable.
    pub(crate) fn rw(&mut self, p: &Path) {
        self.bind(p, p, true, false);
    }
    fn tmpfs(&mut self, p: &Path) {
        self.parts.push(Mount::Tmpfs(p.to_path_buf()));
    }
    fn symlink(&mut self, target: PathBuf, at: &Path) {
        self.parts.push(Mount::Symlink { target, at: at.to_path_buf() });
    }
    /// `p` as it is on the system: a link as the same link, a folder or file read-only.
    fn system(&mut self, p: &Path) {
        match std::fs::symlink_metadata(p) {
            Ok(m) if m.file_type().is_symlink() => {
                if let Ok(target) = std::fs::read_link(p) {
                    self.symlink(target, p);
                }
            }
            // An empty folder (`/opt` often is) costs a mount and shows nothing.
            Ok(m) if m.is_dir() && std::fs::read_dir(p).is_ok_and(|mut d| d.next().is_none()) => {}
            Ok(_) => self.ro(p),
            Err(_) => {}
        }
    }
    /// The folder `from` writable at `to` inside.
    pub(crate) fn rw_at(&mut self, from: &Path, to: &Path) {
        self.bind(from, to, true, false);
    }
    /// An empty file in place of `p`.
    pub(crate) fn hide(&mut self, p: &Path) {
        self.bind(Path::new("/dev/null"), p, false, false);
    }
}

/// What a box shows besides its working folder: see the module's documentation.
pub(crate) fn base(home: Option<&Path>) -> Mounts {
    let mut m = Mounts::default();
    m.parts.push(Mount::Proc("/proc".into()));
    m.parts.push(Mount::Dev("/dev".into()));
    // The box's own temporary folder (`TMPDIR`); `/var/tmp` is not shown (a mount each costs).
    m.tmpfs(Path::new("/tmp"));
    for s in SYSTEM {
        m.system(Path::new(s));
    }
    etc(&mut m);
    // How many processors there are (`nproc` falls back to it, and so do runtimes).
    m.ro(Path::new("/sys/devices/system/cpu"));
    if let Some(h) = home.filter(|h| h.is_absolute() && h.parent().is_some()) {
        // An empty home of the box's own, for the caches and logs tools write there.
        m.tmpfs(h);
    }
    for t in toolchains(home) {
        m.ro(&t);
    }
    if let Some(h) = home {
        for login in toolchain_logins(&h.join(".local/share/pnpm"), 4) {
            m.hide(&login);
        }
    }
    m
}

/// The names of `/etc`'s entries the box shows (see [`ETC`], [`ETC_PREFIXES`]).
fn etc_names() -> Vec<String> {
    let mut names: Vec<String> = ETC.iter().map(|e| e.to_string()).collect();
    let Ok(entries) = std::fs::read_dir("/etc") else { return names };
    let mut runtimes: Vec<String> = entries
        .flatten()
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .filter(|n| ETC_PREFIXES.iter().any(|p| n.starts_with(p)))
        .collect();
    runtimes.sort();
    names.extend(runtimes);
    names
}

/// `/etc`'s named entries: one copy of them mounted (see `etc_view.rs`), else each mounted.
fn etc(m: &mut Mounts) {
    let names = etc_names();
    if let Some(v) = super::etc_view::view(&names) {
        m.bind(&v, Path::new("/etc"), false, false);
        return;
    }
    for e in &names {
        m.ro(&Path::new("/etc").join(e));
    }
    m.symlink("/proc/self/mounts".into(), Path::new("/etc/mtab"));
}

/// Every toolchain folder the box shows (see [`HOME_TOOLCHAINS`]), each once.
pub(crate) fn toolchains(home: Option<&Path>) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    if let Some(h) = home {
        out.extend(HOME_TOOLCHAINS.iter().map(|t| h.join(t)));
        out.extend(nvm(&h.join(".nvm")));
    }
    // Toolchains installed where their variables say (`RUSTUP_HOME`, and of `CARGO_HOME` its
    // binaries and sources only, never its credentials).
    for (var, parts) in
        [("RUSTUP_HOME", &[""][..]), ("CARGO_HOME", &["bin", "registry", "git"][..]), ("PYENV_ROOT", &[""][..])]
    {
        let Some(dir) = std::env::var_os(var).map(PathBuf::from).filter(|d| d.is_absolute()) else { continue };
        if allowed_elsewhere(&dir, home) {
            out.extend(parts.iter().map(|p| if p.is_empty() { dir.clone() } else { dir.join(p) }));
        }
    }
    if let Some(dir) = std::env::var_os("NVM_DIR").map(PathBuf::from).filter(|d| d.is_absolute())
        && allowed_elsewhere(&dir, home)
    {
        out.extend(nvm(&dir));
    }
    // The programs on the PATH (a toolchain elsewhere), unless an entry is the root or a
    // top-level folder, or in the home folder (another project's, `~/.config`) and not one of
    // the toolchains above.
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            let in_home = home.is_some_and(|h| dir.starts_with(h));
            let ok = if in_home { home.is_some_and(|h| is_toolchain(&dir, h)) } else { allowed_elsewhere(&dir, home) };
            // A version's `bin` of nvm is shown with its libraries, by `nvm`.
            if ok && !dir.components().any(|c| c.as_os_str() == ".nvm") {
                // A version manager's shims (pyenv's, rbenv's) run the manager beside them.
                match dir.parent().filter(|p| dir.ends_with("shims") && p.join("libexec").is_dir()) {
                    Some(manager) => out.push(manager.to_path_buf()),
                    None => out.push(dir),
                }
            }
        }
    }
    // Each once, only what exists, and nothing the system's folders show already (a mount costs
    // a box about a quarter of a millisecond).
    let mut seen = std::collections::HashSet::new();
    out.retain(|p| !SYSTEM.iter().any(|s| p.starts_with(s)) && p.exists() && seen.insert(p.clone()));
    // Nor what another of them shows already (pyenv's `bin` and plugins inside `~/.pyenv`).
    let all = out.clone();
    out.retain(|p| !all.iter().any(|q| q != p && p.starts_with(q)));
    out
}

/// Whether a toolchain named outside the home may be shown: never the root, a top-level folder,
/// the home or a hidden folder of it, unless one of the toolchains above.
fn allowed_elsewhere(dir: &Path, home: Option<&Path>) -> bool {
    crate::boxed::folder_ok(dir, home).is_ok() || home.is_some_and(|h| is_toolchain(dir, h))
}

fn is_toolchain(dir: &Path, home: &Path) -> bool {
    HOME_TOOLCHAINS.iter().any(|t| dir.starts_with(home.join(t))) || dir.starts_with(home.join(".nvm/versions"))
}

/// The parts that run of each Node.js version under an nvm folder (see [`NODE_PARTS`]).
fn nvm(dir: &Path) -> Vec<PathBuf> {
    let Ok(versions) = std::fs::read_dir(dir.join("versions/node")) else { return Vec::new() };
    let mut out: Vec<PathBuf> = versions
        .flatten()
        .flat_map(|v| NODE_PARTS.iter().map(move |p| v.path().join(p)))
        .filter(|p| p.exists())
        .collect();
    out.sort();
    out
}

/// Files of a toolchain folder, down to `depth`, named as logins are kept (see
/// [`TOOLCHAIN_LOGINS`]).
fn toolchain_logins(dir: &Path, depth: usize) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![(dir.to_path_buf(), 0)];
    while let Some((d, n)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for e in entries.flatten() {
            let Ok(t) = e.file_type() else { continue };
            if t.is_dir() && n + 1 < depth && e.file_name() != "node_modules" && e.file_name() != "store" {
                stack.push((e.path(), n + 1));
            } else if t.is_file()
                && e.file_name()
                    .to_str()
                    .is_some_and(|f| TOOLCHAIN_LOGINS.contains(&f) || assent_commands::secrets::is_secret(f))
            {
                out.push(e.path());
            }
        }
    }
    out.sort();
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn nvm_versions_show_what_runs_and_not_their_npmrc() {
        let d = tempfile::tempdir().unwrap();
        let v = d.path().join("versions/node/v20.1.0");
        for p in ["bin", "lib/node_modules", "etc"] {
            std::fs::create_dir_all(v.join(p)).unwrap();
        }
        std::fs::write(v.join("etc/npmrc"), "//registry.npmjs.org/:_authToken=npm_x\n").unwrap();
        let shown = nvm(d.path());
        assert_eq!(shown, vec![v.join("bin"), v.join("lib")]);
    }

    #[test]
    fn a_toolchain_inside_another_is_not_mounted_twice() {
        let d = tempfile::tempdir().unwrap();
        let home = d.path();
        for p in [".pyenv/bin", ".pyenv/plugins/x/shims", ".cargo/bin"] {
            std::fs::create_dir_all(home.join(p)).unwrap();
        }
        let shown = toolchains(Some(home));
        assert!(shown.contains(&home.join(".pyenv")) && shown.contains(&home.join(".cargo/bin")), "{shown:?}");
        assert!(!shown.iter().any(|p| p.starts_with(home.join(".pyenv")) && *p != home.join(".pyenv")), "{shown:?}");
    }

    #[test]
    fn toolchain_logins_are_found_to_hide() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("global/5")).unwrap();
        std::fs::write(d.path().join("global/5/.npmrc"), "token").unwrap();
        std::fs::write(d.path().join("rc"), "token").unwrap();
        std::fs::write(d.path().join("pnpm"), "bin").unwrap();
        assert_eq!(toolchain_logins(d.path(), 4), vec![d.path().join("global/5/.npmrc"), d.path().join("rc")]);
    }

    #[test]
    fn etc_is_named_never_its_secrets() {
        let names = etc_names();
        for secret in ["shadow", "ssh", "ssl/private", "npmrc", "pip.conf", "wireguard", "sudoers", "gshadow"] {
            assert!(!names.iter().any(|n| n == secret || n.starts_with(&format!("{secret}/"))), "{secret}");
        }
        assert!(names.iter().any(|n| n == "passwd"));
    }
}
