//! # assent-boundary
//!
//! Where an allow becomes a run, read in one crate: everything between a decision (a rule's or
//! a person's) and the command it lets run, on the path of every tool call an agent makes. It
//! depends on neither the command line nor the host, and `assent-run`, the small binary a
//! client starts for each hook and each confined call, is built from it alone.
//!
//! - [`hook`]: the hook's fast path for the agent clients (`assent_agents`: one module per
//!   client, the registry every other part reads its clients from). An event read into one shape, the call filed in one blocking exchange (`assent_client::loopback`), the answer written
//!   in the client's shape; a call that waits for the person is handed to the whole `assent`.
//! - [`ticket`]: what a hook leaves for the confined run (the settled proposal), how the run
//!   claims it (used once) and checks it (the receipt, signed by this Assent, for exactly the
//!   approved payload and the same box), the key set that follows a rotation, the pruning.
//! - [`boxed`]: the box the kernel builds from namespaces for a command, to one profile
//!   ([`Confine`], the core's: rules name it, receipts carry it, the box enforces it).
//! - [`run`]: `assent-run`'s own work: a ticket run in its box, a hook answered at once, or the
//!   same arguments handed to the whole `assent` beside it.
//! - [`procs`], [`exits`]: the process table and the system's exit events, by which a waiting
//!   hook sees its client die (`hook::Watch`).
//! - [`home`]: the data directory's files (where the hook finds its server, token, tickets and
//!   keys), [`exit`]: the exit codes both binaries end with.

pub mod boxed;
pub mod exit;
pub mod exits;
pub mod home;
pub mod hook;
pub mod procs;
pub mod program;
pub mod run;
pub mod ticket;

pub use assent_core::confine::Confine;
pub use exit::ExitError;
