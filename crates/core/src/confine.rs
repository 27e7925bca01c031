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
