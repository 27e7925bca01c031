//! The routes, one module per resource.

pub mod admin;
pub mod decisions;
pub mod events;
pub mod proposals;
pub mod rules;
