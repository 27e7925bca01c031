//! How an approved command runs: in a box built by the kernel to a profile. A leaf of the core:
//! rules name it, previews say it before the decision, decisions record it, receipts carry it,
//! and `assent run` enforces it.

use serde::{Deserialize, Serialize};

/// How an allow runs the command it allows: confined by the kernel to a profile (`assent run`),
/// whatever the command line says. A rule without one allows the command to run as the client
/// runs it; only the person makes such a rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum Confine {
    /// Reads the working folder and what programs need to start; writes nothing outside a
    /// private temporary folder; no network; no secrets from the environment.
    Read,
    /// `Read`, plus writes inside the working folder but to its executable configuration
    /// (`.git`, `package.json`, a `Makefile`, ...).
    Workspace,
}

impl Confine {
    /// `read`, `workspace`.
    pub fn as_str(self) -> &'static str {
        match self {
            Confine::Read => "read",
            Confine::Workspace => "workspace",
        }
    }
}

impl Confine {
    /// The profile named `s`.
    pub fn parse(s: &str) -> Option<Confine> {
        Confine::ALL.into_iter().find(|c| c.as_str() == s)
    }

    /// What it allows, in words for a person.
    pub fn in_words(self) -> &'static str {
        match self {
            Confine::Read => {
                "in a box: reads the working folder only (its secret files hidden); writes nothing; no network; no process outside; no secrets from the environment"
            }
            Confine::Workspace => {
                "in a box: writes inside the working folder only, never its executable configuration (.git, package.json, Makefile, .claude, ...); no network; no process outside; no secrets from the environment"
            }
        }
    }

    /// Every confinement.
    pub const ALL: [Confine; 2] = [Confine::Read, Confine::Workspace];
}

/// Where a person's approval runs a command (the decision's `run`): in a box of a profile, or,
/// chosen apart and marked as such, unconfined (as the client runs it). Without one, an approval
/// runs the command in the box its preview names (`runs_in`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum RunIn {
    /// In the `read` box.
    Read,
    /// In the `workspace` box.
    Workspace,
    /// As the client runs it: no box. The person's explicit choice, never a default.
    Unconfined,
}

impl RunIn {
    /// The box it names; none for `unconfined`.
    pub fn boxed(self) -> Option<Confine> {
        match self {
            RunIn::Read => Some(Confine::Read),
            RunIn::Workspace => Some(Confine::Workspace),
            RunIn::Unconfined => None,
        }
    }

    /// `read`, `workspace`, `unconfined`.
    pub fn as_str(self) -> &'static str {
        match self {
            RunIn::Read => "read",
            RunIn::Workspace => "workspace",
            RunIn::Unconfined => "unconfined",
        }
    }

    /// The choice named `s`.
    pub fn parse(s: &str) -> Option<RunIn> {
        match s {
            "read" => Some(RunIn::Read),
            "workspace" => Some(RunIn::Workspace),
            "unconfined" => Some(RunIn::Unconfined),
            _ => None,
        }
    }
}

/// The most hosts a box may reach.
pub const MAX_HOSTS: usize = 16;

/// Hosts a box may reach as a person named them, checked and put in one form: each a host name
/// or address as rules compare it (lower case, IDNA, IPv4 forms as dotted decimal), reached on
/// HTTPS, HTTP or git's port, or `host:port` for one other port; sorted, each once.
pub fn check_hosts(hosts: &[String]) -> Result<Vec<String>, String> {
    if hosts.len() > MAX_HOSTS {
        return Err(format!("a box reaches at most {MAX_HOSTS} hosts"));
    }
    let mut out = std::collections::BTreeSet::new();
    for h in hosts {
        let shown: String = h.chars().take(80).collect();
        let bad = || format!("`{shown}` is not a host name or `host:port`");
        let (name, port) = match h.rsplit_once(':') {
            Some((n, _)) if !n.ends_with(']') && n.contains(':') => (h.as_str(), None),
            Some((n, p)) => (n, Some(p.parse::<u16>().ok().filter(|p| *p > 0).ok_or_else(bad)?)),
            None => (h.as_str(), None),
        };
        let name = assent_commands::host::normalize(name).ok_or_else(bad)?;
        out.insert(match port {
            Some(p) => format!("{name}:{p}"),
            None => name,
        });
    }
    Ok(out.into_iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_by_name() {
        assert_eq!(Confine::parse("workspace"), Some(Confine::Workspace));
        assert_eq!(Confine::parse("read"), Some(Confine::Read));
        assert_eq!(Confine::parse("none"), None);
        assert_eq!(Confine::Read.as_str(), "read");
    }

    #[test]
    fn hosts_are_checked_and_put_in_one_form() {
        let v = |hs: &[&str]| hs.iter().map(|h| h.to_string()).collect::<Vec<_>>();
        assert_eq!(
            check_hosts(&v(&["Registry.NPMjs.org.", "pypi.org", "pypi.org", "127.0.0.1:8080", "0x7f.1:9"])),
            Ok(v(&["127.0.0.1:8080", "127.0.0.1:9", "pypi.org", "registry.npmjs.org"]))
        );
        for bad in ["", "https://x.org", "x.org/path", "x.org:0", "x.org:99999", "x.org:", "a b", "user@x.org"] {
            assert!(check_hosts(&v(&[bad])).is_err(), "{bad:?} taken");
        }
        assert!(check_hosts(&vec!["a.org".to_string(); MAX_HOSTS + 1]).is_err());
    }
}
