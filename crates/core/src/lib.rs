//! # assent-core
//!
//! The domain of Assent, with no dependency on a web framework, a database or a GUI toolkit.
//!
//! A request flows through it like this:
//!
//! 1. A host (the API, the desktop app) authenticates the caller with
//!    [`Engine::authenticate`], which yields a [`Principal`]: the owner or a named agent.
//! 2. [`Engine::propose`] checks the envelope, asks the [`kinds::Kind`] to validate and
//!    normalize the payload and compute its preview, and hands a [`store::NewRecord`] to the
//!    [`store::Store`], which persists it durably before anyone is told it exists.
//! 3. [`Engine::decide`] (owner only) computes the new status with the pure status machine
//!    [`status::next`] and asks the store for a compare-and-set [`store::Transition`] that also
//!    appends an audit row.
//! 4. Every change is announced as an [`events::Event`] on a broadcast bus and wakes the waits
//!    on that proposal through [`events::Waiters`] ([`Engine::wait`]).
//! 5. [`Engine::run_expiry`] expires what nobody decided.
//!
//! Modules, in three layers that never import upward (`tests/layers.rs` checks it):
//!
//! - values: [`time`], [`canonical`] (hashing payloads), [`invisible`] (flagging hidden
//!   characters), [`names`], [`confine`] (how an allow runs a command), [`status`] (the
//!   machine), [`proposal`] (wire and storage types), [`payloads`] and [`preview`] (typed per kind), [`stored`] (previews as stored),
//!   [`credentials`] (and origin rules), [`secret`] (tokens), [`verdict`] (what agent hooks are
//!   told), [`error`], [`crash`];
//! - contracts: [`store`] (the storage contract), [`kinds`] (the kind registry and
//!   `tool.call`), [`events`];
//! - [`engine`].

pub mod canonical;
pub mod confine;
pub mod crash;
pub mod credentials;
pub mod decided;
pub mod engine;
pub mod error;
pub mod events;
pub mod held;
pub mod invisible;
pub mod kinds;
pub mod light;
pub mod names;
pub mod payloads;
pub mod preview;
pub mod proposal;
pub mod remote;
pub mod rules;
pub mod secret;
pub mod status;
pub mod store;
pub mod stored;
pub mod strict;
pub mod time;
pub mod verdict;

pub use credentials::CredentialMeta;
pub use engine::{Actor, Engine, EngineConfig, EngineParts, Page, Principal};
pub use error::{CoreError, StoreError};
pub use proposal::{AgentInfo, AuditEntry, Channel, Decision, DecisionRequest, NewProposal, Outcome, Proposal};
pub use status::{KindClass, Status};
