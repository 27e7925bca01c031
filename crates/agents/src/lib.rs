//! # assent-agents
//!
//! The agent clients Assent speaks for, each one module: everything that is particular to a
//! client lives in its file, behind [`Agent`], and every other part reads its clients from
//! [`all`]. A new client is one file here and its line in [`all`] (and a line in
//! docs/clients.md, whose table [`table`] writes).
//!
//! What a client says about itself: its name (`claude-code`, in a proposal's `client` and in
//! `assent hook NAME`), how the person reads it, its tools that only read, its shell tool and
//! the argument that names the shell's folder, how its hook event reads in the names the rest
//! of the hook uses ([`Call`]), how an answer is written back in its shape ([`Answer`]), what it
//! does with a call when nobody decided, the file its hook runs from (OpenCode's plugin,
//! Cline's hook file), where its settings are ([`Wiring`], for `assent connect`), and its line
//! in `assent doctor` ([`Check`]).
//!
//! A leaf: the core reads its client list from here (which clients a `tool.call` may say it
//! came through, and how the person reads each), the hook (`assent-boundary`) its events and
//! answers, the command line its wiring and checks.

mod agent;
pub mod check;
mod claude_code;
mod cline;
mod codex;
mod copilot_cli;
mod gemini_cli;
mod opencode;

pub use agent::{Agent, Answer, Call, Facts, Format, Places, RECEIPT_ARG, Rewrite, Wiring, boxed_reason, command_text};
pub use check::{Check, Status};
use std::path::PathBuf;

/// Every client, in the order `assent doctor` checks them.
pub fn all() -> &'static [&'static dyn Agent] {
    &[
        &claude_code::ClaudeCode,
        &gemini_cli::GeminiCli,
        &copilot_cli::CopilotCli,
        &codex::Codex,
        &opencode::Opencode,
        &cline::Cline,
    ]
}

/// The client named `name` (`claude-code`).
pub fn named(name: &str) -> Option<&'static dyn Agent> {
    all().iter().copied().find(|a| a.name() == name)
}

/// The table of clients in docs/clients.md: each client's name, the hook's command and where
/// `assent connect` writes it.
pub fn table() -> String {
    let mut out = String::from("| client | `assent hook` | `assent connect` writes |\n|---|---|---|\n");
    let places = Places { user: PathBuf::from("~"), cwd: PathBuf::from("."), env: |_| None };
    for a in all() {
        let file = a.wiring(&places, false).map(|w| w.file.display().to_string()).unwrap_or_default();
        out.push_str(&format!("| {} | `{}` | `{file}` |\n", a.title(), a.name()));
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::path::Path;

    #[test]
    fn every_client_has_its_own_name_and_a_line_in_the_docs() {
        let mut names: Vec<&str> = all().iter().map(|a| a.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), all().len(), "two clients share a name");
        for a in all() {
            assert_eq!(named(a.name()).map(|n| n.title()), Some(a.title()));
        }
        // docs/clients.md carries the table as the registry writes it (ASSENT_UPDATE_DOCS=1
        // writes it there).
        let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/clients.md");
        let text = std::fs::read_to_string(&docs).unwrap();
        let (start, end) = ("<!-- clients: written by assent-agents -->\n", "<!-- /clients -->");
        let (Some(a), Some(b)) = (text.find(start), text.find(end)) else {
            panic!("docs/clients.md has no table of clients between `{start}` and `{end}`")
        };
        let now = &text[a + start.len()..b];
        if now != table() {
            if std::env::var_os("ASSENT_UPDATE_DOCS").is_some() {
                std::fs::write(&docs, format!("{}{}{}", &text[..a + start.len()], table(), &text[b..])).unwrap();
            } else {
                panic!(
                    "docs/clients.md's table of clients is not the registry's: run ASSENT_UPDATE_DOCS=1 cargo test -p assent-agents"
                );
            }
        }
    }

    #[test]
    fn commands_read_as_a_person_reads_them() {
        assert_eq!(command_text(&json!("ls -la")).as_deref(), Some("ls -la"));
        assert_eq!(command_text(&json!(["bash", "-lc", "git push"])).as_deref(), Some("git push"));
        assert_eq!(command_text(&json!(["git", "status"])).as_deref(), Some("git status"));
        assert_eq!(command_text(&json!([])), None);
    }

    #[test]
    fn a_rewrite_replaces_the_command_alone() {
        let r = Rewrite { prefix: "'/x/assent-run' --home '/h'".into(), input: json!({"command": "ls", "timeout": 5}) };
        assert_eq!(r.input("p_1"), json!({"command": "'/x/assent-run' --home '/h' run p_1", "timeout": 5}));
    }
}
