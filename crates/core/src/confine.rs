//! How a rule's allow runs a command: confined by the kernel to a profile. A leaf of the core:
//! rules name it, decisions record it, receipts carry it, and `assent run` enforces it.

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
