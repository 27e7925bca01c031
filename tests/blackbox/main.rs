//! Black-box tests: each starts the real `assent serve` on port 0 with a temporary home and
//! talks to it over loopback HTTP and through the real CLI.

#![allow(missing_docs, clippy::unwrap_used, dead_code)]

mod harness;
mod pg;
mod procs;
mod services;
#[path = "../support/shell.rs"]
mod shell;

mod agents;
mod batches;
mod boundary;
mod boxed_approval;
mod claude_code;
mod claude_modes;
mod cli;
mod clients;
mod cline;
mod confine;
mod confine_rules;
mod connect;
mod copilot_cli;
#[cfg(feature = "crash-points")]
mod crash;
mod doctor;
mod durability;
mod errors;
mod events;
mod files;
mod gemini_cli;
mod hooks;
mod http;
mod keychain;
mod leases;
mod lifecycle;
mod mcp;
mod mcp_proxy;
mod mcp_tasks;
mod notify;
mod openapi;
mod opencode;
mod path_forms;
mod receipts;
mod receipts_carried;
mod receipts_example;
mod remote;
mod remote_doors;
mod remote_flood;
mod remote_page;
mod remote_push;
mod rules;
mod sdk_python;
mod sdk_typescript;
mod security;
mod session;
mod team;
mod team_outage;
mod upgrade;
mod wire;
