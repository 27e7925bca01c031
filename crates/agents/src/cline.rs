//! Cline: a `PreToolUse` hook file (`assent hook cline --script` prints it). Cline runs a call
//! whose hook takes more than 120 s, so the hook waits at most 110 s. Allowed calls run with
//! the input given; it has no way to refuse one call with a reason the model reads, nor a
//! prompt to hand a call back to.

use crate::agent::{Agent, Answer, Call, Facts, Format, Places, Rewrite, Wiring, carry};
use crate::check::{Check, on_path, printed, when_killed, when_missing};
use serde_json::{Value, json};
use std::path::Path;

/// Cline.
pub(crate) struct Cline;

const NAME: &str = "cline";

/// The longest a Cline hook waits (Cline runs a call whose hook takes more than 120 s).
pub const MOST_WAIT: u64 = 110;

/// Cline's tools that only read (or ask the person a question, start a subagent whose own calls
/// come here): not gated unless named with `--tools`. Its `fetch_web_content` is gated.
const READ_ONLY: [&str; 4] = ["read_files", "search_codebase", "ask_question", "spawn_agent"];

/// What Cline says of itself.
const FACTS: Facts = Facts {
    // No shell tool a box can take (its `run_commands` runs a list), no prompt to go back to.
    hands_back: false,
    most_wait: Some(MOST_WAIT),
    ..Facts::new(
        "cline",
        "Cline",
        "Cline's PreToolUse hook",
        "Cline's PreToolUse hook (--script prints the hook file; it waits at most 110 s, under Cline's 120)",
        &READ_ONLY,
    )
};

impl Agent for Cline {
    fn facts(&self) -> &'static Facts {
        &FACTS
    }

    /// Its event: `tool_call` with its `id`, `name` and `input`; the workspace; the task.
    fn read(&self, ev: Value) -> Result<Call, String> {
        let call = &ev["tool_call"];
        let tool = call["name"].as_str().ok_or("the hook event has no tool_call.name (a Cline PreToolUse event)")?;
        let input = match &call["input"] {
            Value::Null => json!({}),
            input => input.clone(),
        };
        let mut out = json!({"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": input});
        let cwd = ev.pointer("/workspaceInfo/rootPath").or_else(|| ev.pointer("/workspaceRoots/0"));
        carry(&mut out, &[(cwd, "cwd"), (ev.get("taskId"), "session_id"), (call.get("id"), "tool_use_id")]);
        Ok(Call { event: "PreToolUse", ev: out })
    }

    // Its own tools that need an input (`run_commands`, `editor`: given one without it, Cline
    // refuses the call and runs nothing) are given one that is not, and the reason as context;
    // any other call is stopped with the task (`cancel`).
    fn answer(&self, call: &Call, answer: &Answer, _rewrite: &Rewrite) -> Value {
        let needs_input = matches!(call.tool(), "run_commands" | "editor");
        match answer {
            Answer::Allow(None) => json!({"cancel": false}),
            Answer::Allow(Some(input)) => json!({"overrideInput": input}),
            Answer::Deny(why) | Answer::Ask(why) if needs_input => {
                json!({"overrideInput": {"refused_in_assent": why}, "contextModification": why})
            }
            Answer::Deny(why) | Answer::Ask(why) => json!({"cancel": true, "errorMessage": why}),
            Answer::Boxed { proposal, .. } => {
                json!({"cancel": true, "errorMessage": format!("{proposal} was allowed only in a box, which Cline cannot run")})
            }
        }
    }

    fn hook_file(&self, argv: &[String]) -> Option<String> {
        let quoted: Vec<String> =
            argv.iter().map(|w| shlex::try_quote(w).map(|q| q.into_owned()).unwrap_or_else(|_| w.clone())).collect();
        Some(format!(
            "#!/bin/sh\n# Assent's PreToolUse hook for Cline: every tool call waits for Assent (a person, or a\n# rule of theirs). Made by `assent hook cline --script`; saved as ~/.cline/hooks/PreToolUse.\nexec {}\n",
            quoted.join(" ")
        ))
    }

    fn wiring(&self, places: &Places, project: bool) -> Result<Wiring, String> {
        if project {
            return Err("Cline reads its hooks from ~/.cline/hooks alone: leave out --project".into());
        }
        let file = places.dir("CLINE_DIR", ".cline").join("hooks/PreToolUse");
        Ok(Wiring { file, format: Format::OwnFile, what: "the PreToolUse hook file" })
    }

    fn check(&self, places: &Places) -> Check {
        check(places)
    }
}

fn check(places: &Places) -> Check {
    let dir = places.dir("CLINE_DIR", ".cline");
    let user = &places.user;
    // Cline runs a file named for the event, with or without an extension, in either folder.
    let folders = [dir.join("hooks"), user.join("Documents/Cline/Hooks")];
    let event = |p: &Path| p.file_stem().is_some_and(|n| n.eq_ignore_ascii_case("PreToolUse"));
    let Some((hook, program)) = printed(&folders, event, "hook cline", |text| {
        // The program the hook file runs: the first word after `exec`.
        let exec = text.lines().find_map(|l| l.trim().strip_prefix("exec "))?;
        shlex::split(exec)?.into_iter().next()
    }) else {
        return Check::unwired(
            NAME,
            dir.exists() || on_path("cline").is_some(),
            "no Assent hook in its hooks: its tool calls do not come to Assent",
            "assent connect cline (writes ~/.cline/hooks/PreToolUse; docs/clients.md: \"Cline\")",
        );
    };
    match program {
        Some(p) if Path::new(&p).is_file() || (!p.contains('/') && on_path(&p).is_some()) => {
            Check::ok(NAME, format!("hook {}; {}", places.tilde(&hook), when_killed("Cline")))
        }
        _ => Check::problem(
            NAME,
            format!(
                "the hook {} runs a program that is not there: {}",
                places.tilde(&hook),
                when_missing("Cline", true)
            ),
            "write it again with this assent's path: assent connect cline",
        ),
    }
}
