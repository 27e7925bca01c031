//! The box on macOS: each profile written as a Seatbelt policy (the sandbox profile language
//! `sandbox-exec -p` takes), generated per run for its folder. Written and tested on every
//! platform (the text is what each profile promises); run only on a Mac (`macos.rs`).
//!
//! What a policy says, in order (Seatbelt takes the last rule that matches, so each narrowing
//! comes after what it narrows):
//!
//! - nothing by default (`deny default`);
//! - start programs and fork; signal, trace and inspect only processes of the same box;
//! - read the system's folders, the toolchains' (never their logins), the working folder and
//!   the private temporary folder; not the files of the folder that hold secrets (`read`);
//! - write `/dev/null`, the private temporary folder and, for `workspace`, the working folder,
//!   but never its executable configuration (`.git`, `package.json`, a `Makefile`, `.claude`, ...);
//! - no network at all, or, for a box given hosts, only the loopback port of the proxy that
//!   reaches those hosts alone (the same proxy as on Linux);
//! - the few system services a program needs to start and to look up its user.

use crate::Confine;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// What one run's policy is made from.
#[derive(Debug, Clone)]
pub struct Policy {
    /// The profile.
    pub profile: Confine,
    /// The working folder (its real path: `/private/tmp/...`, not `/tmp/...`).
    pub cwd: PathBuf,
    /// The box's private temporary folder.
    pub tmp: PathBuf,
    /// Folders programs need to read to start and run: the system's and the toolchains'.
    pub reads: Vec<PathBuf>,
    /// Files of the folder that hold secrets: never read (`read`; a `workspace` box hides
    /// them too).
    pub hidden: Vec<PathBuf>,
    /// The folder's executable configuration: never written.
    pub protected: Vec<PathBuf>,
    /// The loopback port of the proxy to the box's hosts (none: no network).
    pub proxy_port: Option<u16>,
}

/// The folders of the system a program reads on macOS, and the toolchains' binaries under
/// `home` (never their logins or caches of credentials).
pub fn system_reads(home: Option<&Path>) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = [
        "/usr",
        "/bin",
        "/sbin",
        "/System",
        "/Library/Apple",
        "/Library/Developer/CommandLineTools",
        "/Applications/Xcode.app/Contents/Developer",
        "/private/etc",
        "/private/var/db/timezone",
        "/private/var/db/dyld",
        "/opt/homebrew",
        "/usr/local",
        "/dev",
    ]
    .iter()
    .map(PathBuf::from)
    .collect();
    if let Some(h) = home {
        for t in [".cargo/bin", ".rustup/toolchains", ".nvm/versions", ".pyenv/versions", ".local/bin", ".bun/bin"] {
            out.push(h.join(t));
        }
    }
    out
}

/// `p` as a string of the policy language: in double quotes, `\` and `"` escaped.
fn quoted(p: &Path) -> String {
    let s = p.to_string_lossy();
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// One rule over paths, `(VERB OPERATION (subpath "...") ...)`; nothing for no paths.
fn rule(out: &mut String, verb: &str, operation: &str, filter: &str, paths: &[&Path]) {
    if paths.is_empty() {
        return;
    }
    let _ = write!(out, "({verb} {operation}");
    for p in paths {
        let _ = write!(out, "\n    ({filter} {})", quoted(p));
    }
    out.push_str(")\n");
}

/// The policy of `p`, as `sandbox-exec -p` takes it.
pub fn policy(p: &Policy) -> String {
    let mut out = String::from(
        ";; Assent's box (made for one run). Seatbelt takes the last rule that matches.\n(version 1)\n(deny default)\n",
    );
    out.push_str(";; Programs: started and forked; only this box's processes signalled or looked at.\n");
    out.push_str("(allow process-exec)\n(allow process-fork)\n");
    out.push_str("(allow signal (target same-sandbox))\n(allow process-info* (target same-sandbox))\n");
    out.push_str("(allow sysctl-read)\n");
    out.push_str(";; What a program needs of the system to start and to know its user.\n");
    out.push_str(
        "(allow mach-lookup\n    (global-name \"com.apple.system.opendirectoryd.libinfo\")\n    (global-name \"com.apple.system.notification_center\")\n    (global-name \"com.apple.system.logger\"))\n",
    );
    out.push_str("(allow file-read-metadata (literal \"/\"))\n");
    out.push_str(";; Reading: the system, the toolchains, the working folder, the private temporary folder.\n");
    let mut reads: Vec<&Path> = p.reads.iter().map(PathBuf::as_path).collect();
    reads.extend([p.cwd.as_path(), p.tmp.as_path()]);
    rule(&mut out, "allow", "file-read*", "subpath", &reads);
    out.push_str(";; Never the folder's secrets.\n");
    let hidden: Vec<&Path> = p.hidden.iter().map(PathBuf::as_path).collect();
    rule(&mut out, "deny", "file-read*", "literal", &hidden);
    out.push_str(";; Writing: /dev/null and the private temporary folder");
    let mut writes = vec![p.tmp.as_path()];
    if p.profile == Confine::Workspace {
        out.push_str(", and the working folder");
        writes.push(p.cwd.as_path());
    }
    out.push_str(".\n");
    rule(&mut out, "allow", "file-write*", "literal", &[Path::new("/dev/null")]);
    rule(&mut out, "allow", "file-write*", "subpath", &writes);
    if p.profile == Confine::Workspace {
        out.push_str(";; Never its executable configuration, nor its secrets.\n");
        let mut kept: Vec<&Path> = p.protected.iter().map(PathBuf::as_path).collect();
        kept.extend(hidden.iter().copied());
        rule(&mut out, "deny", "file-write*", "subpath", &kept);
    }
    match p.proxy_port {
        None => out.push_str(";; No network.\n"),
        Some(port) => {
            out.push_str(";; The network: only the proxy that reaches the box's hosts.\n");
            let _ = writeln!(out, "(allow network-outbound (remote tcp \"localhost:{port}\"))");
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn of(profile: Confine, proxy_port: Option<u16>) -> String {
        policy(&Policy {
            profile,
            cwd: "/Users/ann/src/app".into(),
            tmp: "/private/var/folders/xy/T/assent-box-1".into(),
            reads: system_reads(Some(Path::new("/Users/ann"))),
            hidden: vec!["/Users/ann/src/app/.env".into()],
            protected: vec!["/Users/ann/src/app/.git".into(), "/Users/ann/src/app/package.json".into()],
            proxy_port,
        })
    }

    /// The rules of `text` that start with `head`, each whole (its first line and the filter
    /// lines under it).
    fn rules(text: &str, head: &str) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let mut inside = false;
        for line in text.lines() {
            if line.starts_with(head) {
                out.push(line.to_string());
                inside = true;
            } else if inside && line.starts_with("    ") {
                if let Some(last) = out.last_mut() {
                    last.push_str(line);
                }
            } else {
                inside = false;
            }
        }
        out
    }

    #[test]
    fn read_writes_nothing_of_the_person_and_reaches_no_network() {
        let p = of(Confine::Read, None);
        assert!(p.starts_with(";; Assent's box") && p.contains("(deny default)"));
        let writes = rules(&p, "(allow file-write*").concat();
        assert!(!writes.contains("/Users/ann"), "a read box writes nothing of the person's:\n{writes}");
        assert!(writes.contains("\"/dev/null\"") && writes.contains("assent-box-1"));
        assert!(rules(&p, "(allow file-read*").concat().contains("(subpath \"/Users/ann/src/app\")"));
        assert!(!p.contains("network-outbound") && !p.contains("network*"), "no network");
        // The home is never read whole: only the toolchains' folders in it.
        assert!(!p.contains("(subpath \"/Users/ann\")"));
        assert!(p.contains("(subpath \"/Users/ann/.cargo/bin\")"));
    }

    #[test]
    fn a_secret_is_denied_after_its_folder_is_allowed() {
        let p = of(Confine::Read, None);
        let allow = p.find("(allow file-read*").unwrap();
        let deny = p.find("(deny file-read*").unwrap();
        assert!(deny > allow, "Seatbelt takes the last rule that matches: the deny must come after");
        assert!(rules(&p, "(deny file-read*").concat().contains("(literal \"/Users/ann/src/app/.env\")"));
    }

    #[test]
    fn workspace_writes_the_folder_but_never_its_executable_configuration() {
        let p = of(Confine::Workspace, None);
        let allow = rules(&p, "(allow file-write*").concat();
        assert!(allow.contains("(subpath \"/Users/ann/src/app\")"));
        let deny_at = p.find("(deny file-write*").unwrap();
        assert!(deny_at > p.rfind("(allow file-write*").unwrap(), "the narrowing comes last");
        let deny = rules(&p, "(deny file-write*").concat();
        for kept in [".git", "package.json", ".env"] {
            assert!(deny.contains(&format!("/Users/ann/src/app/{kept}\"")), "{kept} is not protected:\n{deny}");
        }
    }

    #[test]
    fn a_box_given_hosts_reaches_only_its_proxy() {
        let p = of(Confine::Read, Some(41234));
        let net: Vec<&str> = p.lines().filter(|l| l.contains("network") && !l.starts_with(";;")).collect();
        assert_eq!(net, ["(allow network-outbound (remote tcp \"localhost:41234\"))"]);
    }

    #[test]
    fn a_path_cannot_break_out_of_its_string() {
        let mut policy_of = Policy {
            profile: Confine::Workspace,
            cwd: "/Users/ann/a\") (allow default) (\"".into(),
            tmp: "/t".into(),
            reads: Vec::new(),
            hidden: Vec::new(),
            protected: Vec::new(),
            proxy_port: None,
        };
        let p = policy(&policy_of);
        // The quote in the name is escaped: no quote ends the string before the name does.
        assert!(!p.contains("a\") (allow default)"), "{p}");
        assert!(p.contains(r#"(subpath "/Users/ann/a\") (allow default) (\"")"#));
        policy_of.cwd = r"/Users/ann/back\slash".into();
        assert!(policy(&policy_of).contains(r#""/Users/ann/back\\slash""#));
    }
}
