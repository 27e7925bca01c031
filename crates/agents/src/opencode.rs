//! OpenCode, through Assent's plugin (`assent hook opencode --plugin` prints it), which runs the
//! hook before every tool call and does what it answers: it throws what is not allowed (the
//! model reads the reason) and runs with the arguments given. It has no prompt to hand a call
//! back to: a call nobody decided is not run.

use crate::agent::{Agent, Answer, Call, Facts, Format, Places, Rewrite, Wiring, carry};
use crate::check::{Check, on_path, printed, when_missing};
use serde_json::{Value, json};
use std::path::Path;

/// OpenCode.
pub(crate) struct Opencode;

const NAME: &str = "opencode";

/// OpenCode's tools that only read (or keep its to-do list, load a skill, start a subagent
/// whose own calls come here): not gated unless named with `--tools`. Its `webfetch` is gated.
const READ_ONLY: [&str; 8] = ["read", "glob", "grep", "list", "todowrite", "todoread", "skill", "task"];

/// The plugin's source, its command line left to fill in.
const PLUGIN: &str = include_str!("opencode_plugin.js");

/// What OpenCode says of itself.
const FACTS: Facts = Facts {
    shell_tool: Some("bash"),
    folder_arg: Some("workdir"),
    hands_back: false,
    ..Facts::new(
        "opencode",
        "OpenCode",
        "Assent's OpenCode plugin",
        "OpenCode, through Assent's plugin (--plugin prints it, to save as ~/.config/opencode/plugin/assent.js)",
        &READ_ONLY,
    )
};

impl Agent for Opencode {
    fn facts(&self) -> &'static Facts {
        &FACTS
    }

    /// `tool.execute.before`, as the plugin hands it over (`tool`, `args`, `directory`,
    /// `sessionID`, `callID`). The call's id keys the proposal, so a call filed again is found.
    fn read(&self, ev: Value) -> Result<Call, String> {
        let tool = ev["tool"].as_str().ok_or("the hook event has no tool (an OpenCode call from Assent's plugin)")?;
        let input = match &ev["args"] {
            Value::Null => json!({}),
            args => args.clone(),
        };
        let mut out = json!({"hook_event_name": "tool.execute.before", "tool_name": tool, "tool_input": input});
        carry(
            &mut out,
            &[(ev.get("directory"), "cwd"), (ev.get("sessionID"), "session_id"), (ev.get("callID"), "tool_use_id")],
        );
        Ok(Call { event: "tool.execute.before", ev: out })
    }

    fn answer(&self, _call: &Call, answer: &Answer, rewrite: &Rewrite) -> Value {
        match answer {
            Answer::Allow(None) => json!({"decision": "allow"}),
            Answer::Allow(Some(input)) => json!({"decision": "allow", "args": input}),
            Answer::Boxed { proposal, .. } => json!({"decision": "allow", "args": rewrite.input(proposal)}),
            Answer::Deny(why) | Answer::Ask(why) => json!({"decision": "deny", "reason": why}),
        }
    }

    fn hook_file(&self, argv: &[String]) -> Option<String> {
        Some(PLUGIN.replace("\"__ASSENT_ARGV__\"", &json!(argv).to_string()))
    }

    fn wiring(&self, places: &Places, project: bool) -> Result<Wiring, String> {
        let file = if project {
            places.cwd.join(".opencode/plugin/assent.js")
        } else {
            places.dir("XDG_CONFIG_HOME", ".config").join("opencode/plugin/assent.js")
        };
        Ok(Wiring { file, format: Format::OwnFile, what: "Assent's plugin" })
    }

    fn check(&self, places: &Places) -> Check {
        check(places)
    }
}

fn check(places: &Places) -> Check {
    let config = places.dir("XDG_CONFIG_HOME", ".config").join("opencode");
    let plugins = ["plugin", "plugins"].map(|d| config.join(d));
    let Some((plugin, program)) = printed(
        &plugins,
        |_| true,
        "Assent's plugin for OpenCode",
        |text| {
            // The program the plugin runs: the first word of its command line.
            let argv = text.lines().find_map(|l| l.trim().strip_prefix("const ARGV = "))?;
            serde_json::from_str::<Vec<String>>(argv).ok()?.into_iter().next()
        },
    ) else {
        return Check::unwired(
            NAME,
            config.exists() || on_path("opencode").is_some(),
            "no Assent plugin in its plugins: its tool calls do not come to Assent",
            "assent connect opencode (writes ~/.config/opencode/plugin/assent.js; docs/clients.md: \"OpenCode\")",
        );
    };
    match program {
        Some(p) if Path::new(&p).is_file() => Check::ok(NAME, format!("plugin {}", places.tilde(&plugin))),
        _ => Check::problem(
            NAME,
            format!(
                "the plugin {} runs a program that is not there: {}",
                places.tilde(&plugin),
                when_missing("OpenCode", false)
            ),
            "write it again with this assent's path: assent connect opencode",
        ),
    }
}
