//! `tool.call`: a decision-only kind. The agent runs the tool itself after approval; this is
//! what coding agents' permission prompts need. Payload: `{"tool": string, "input": any}`.
//! Edits replace `input`; the agent reads the approved input from `approved_payload`.

use super::{Kind, PrepareCtx, Prepared, clip};
use crate::confine::Confine;
use crate::error::CoreError;
use crate::invisible;
use crate::payloads::{self, KindName, Payload};
use crate::preview::{Preview, ToolPreview};

use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// The `tool.call` kind.
pub struct ToolCall;

const MAX_TOOL_NAME: usize = 200;

fn invalid(message: impl Into<String>) -> CoreError {
    CoreError::invalid("invalid_payload", message)
}

/// A tool's name, as the API's description states it (`ToolCall.tool`'s pattern): 1 to 200
/// printable ASCII characters, spaces around it dropped. ASCII only, so that no look-alike
/// letter can make a tool read as another one a rule names.
fn check_tool_name(tool: &Value) -> Result<String, CoreError> {
    let name = tool.as_str().ok_or_else(|| invalid("`tool` must be a string"))?;
    let trimmed = name.trim_matches(' ');
    if trimmed.is_empty() {
        return Err(invalid("`tool` must not be empty"));
    }
    if trimmed.len() > MAX_TOOL_NAME {
        return Err(invalid(format!("`tool` is longer than {MAX_TOOL_NAME} characters")));
    }
    if !trimmed.bytes().all(|b| (b' '..=b'~').contains(&b)) {
        return Err(invalid("`tool` is printable ASCII: letters, digits, punctuation and inner spaces"));
    }
    Ok(trimmed.to_string())
}

fn normalize(payload: Value) -> Result<payloads::ToolCall, CoreError> {
    let Value::Object(mut map) = payload else {
        return Err(invalid("a tool.call payload is an object: {\"tool\": string, \"input\": any}"));
    };
    let tool = check_tool_name(map.get("tool").ok_or_else(|| invalid("`tool` is required"))?)?;
    let input = map.remove("input").unwrap_or_else(|| Value::Object(Map::new()));
    map.remove("tool");
    let cwd = match map.remove("cwd") {
        None | Some(Value::Null) => None,
        Some(Value::String(c)) => {
            if !assent_commands::path::is_absolute(&c)
                || c.chars().count() > payloads::MAX_CWD
                || c.chars().any(|ch| ch.is_control() || invisible::is_flagged(ch))
            {
                return Err(invalid("`cwd` is an absolute path without control or invisible characters"));
            }
            assent_commands::path::tidy(&c, None)
        }
        Some(_) => return Err(invalid("`cwd` must be a string")),
    };
    let client = match map.remove("client") {
        None | Some(Value::Null) => None,
        Some(Value::String(c)) if payloads::clients().contains(&c.as_str()) => Some(c),
        Some(_) => return Err(invalid(format!("`client` is one of {}", payloads::clients().join(", ")))),
    };
    let permission_mode = match map.remove("permission_mode") {
        None | Some(Value::Null) => None,
        Some(Value::String(m)) if is_permission_mode(&m) => Some(m),
        Some(_) => return Err(invalid("`permission_mode` is a word of 1-40 letters, digits, `-` or `_`")),
    };
    let confinable = match map.remove("confinable") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => b,
        Some(_) => return Err(invalid("`confinable` must be true or false")),
    };
    if let Some(extra) = map.keys().next() {
        return Err(invalid(format!("unknown field `{}` in a tool.call payload", clip(extra, 64))));
    }
    Ok(payloads::ToolCall { tool, input, cwd, client, permission_mode, confinable })
}

/// Whether `m` can be a client's permission mode: a word of 1-40 letters, digits, `-` or `_`
/// (the hooks leave out anything else, so a call is never refused for what its client said).
pub fn is_permission_mode(m: &str) -> bool {
    (1..=40).contains(&m.len()) && m.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// How the person reads a client a call came through (one of [`payloads::clients`]).
fn client_in_words(client: &str) -> Option<&'static str> {
    match assent_agents::named(client) {
        Some(agent) => Some(agent.via()),
        None => payloads::MCP_CLIENTS.iter().find(|(name, _)| *name == client).map(|(_, words)| *words),
    }
}

/// Assent's notes on a call, from what its payload says (never from the agent's words).
fn notes(call: &payloads::ToolCall) -> Vec<String> {
    let note = call.client.as_deref().and_then(assent_agents::named).and_then(|a| a.note());
    note.into_iter().map(str::to_string).collect()
}

/// The box a command runs in when a person approves it without choosing: `read` when the
/// command only reads inside its working folder (as the reader says), else `workspace`, with the
/// hosts the reader says it reaches (see [`assent_commands::reach`]). None for a call that is
/// not a command the client runs through Assent (`confinable`); `Err` with Assent's note, in
/// words, for one no box can hold here: this host builds no box of that profile (`can_box`), or
/// the call has no folder a box can be built around.
pub fn default_box(call: &payloads::ToolCall, can_box: &[Confine]) -> Option<Result<Boxed, String>> {
    let command = call.input.get("command").and_then(crate::verdict::command_text).filter(|_| call.confinable)?;
    let home = crate::rules::home();
    // A box is built around a folder: one the client reported and Assent could vouch for.
    let Some(dir) = call.cwd.as_deref() else { return Some(Err(NO_FOLDER_NOTE.to_string())) };
    if let Err(why) = assent_commands::path::project_folder(dir, home.as_deref()) {
        return Some(Err(format!(
            "No box can be built around this folder ({why}): approving runs this command as the client runs it, unconfined."
        )));
    }
    // A host that builds no box reads no command for one (the rules read it again anyway).
    if can_box.is_empty() {
        return Some(Err(NO_BOX_NOTE.to_string()));
    }
    let ctx = assent_commands::Context { cwd: Some(dir.to_string()), home };
    let line = (command.len() <= assent_commands::shell::MAX_LEN).then(|| assent_commands::analyze(&command, &ctx));
    let reads = line.as_ref().is_some_and(|l| l.only_reads_inside(dir));
    let want = if reads { Confine::Read } else { Confine::Workspace };
    let reaches = line.as_ref().and_then(|l| assent_commands::reach::hosts(l, Some(dir))).unwrap_or_default();
    Some(if can_box.contains(&want) { Ok(Boxed { confine: want, reaches }) } else { Err(NO_BOX_NOTE.to_string()) })
}

/// A box an approval runs a command in: its profile and the hosts it reaches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Boxed {
    /// The profile.
    pub confine: Confine,
    /// The hosts (none: no network).
    pub reaches: Vec<String>,
}

/// Assent's note on a command the client runs through Assent that no box can hold here.
pub const NO_BOX_NOTE: &str = "This system cannot build a box (see `assent doctor`): approving runs this command as the client runs it, unconfined.";

/// Assent's note on a command with no working folder Assent vouches for (the client named one
/// outside the session's folder).
pub const NO_FOLDER_NOTE: &str = "The call names a folder outside the session's (or none): no box can be built around it, so approving runs this command as the client runs it, unconfined.";

/// The preview: the tool and its input, pretty-printed, with invisible characters flagged, and
/// the box an approval runs a command in (`can_box`: the boxes this host can build).
pub fn preview(call: &payloads::ToolCall, can_box: &[Confine]) -> Preview {
    let mut found = BTreeMap::new();
    invisible::scan_str(&call.tool, &mut found);
    invisible::scan_json(&call.input, &mut found);
    let input_text = serde_json::to_string_pretty(&call.input).unwrap_or_default();
    let mut notes = notes(call);
    // What the project's own settings do to the client's hooks, read from the disk by Assent.
    if call.client.is_some()
        && let Some(dir) = call.cwd.as_deref()
    {
        notes.extend(super::project_hooks::findings(std::path::Path::new(dir)).iter().map(|f| f.words()));
    }
    let (runs_in, reaches) = match default_box(call, can_box) {
        Some(Ok(b)) => (Some(b.confine), b.reaches),
        Some(Err(note)) => {
            notes.push(note);
            (None, Vec::new())
        }
        None => (None, Vec::new()),
    };
    Preview::ToolCall(ToolPreview {
        tool: call.tool.clone(),
        input: call.input.clone(),
        input_text: invisible::make_visible(&input_text),
        invisible_characters: invisible::report(&found),
        content_pruned: false,
        cwd: call.cwd.clone(),
        client: call.client.as_deref().and_then(client_in_words).map(str::to_string),
        permission_mode: call.permission_mode.clone(),
        runs_in,
        reaches,
        notes,
    })
}

#[async_trait::async_trait]
impl Kind for ToolCall {
    fn name(&self) -> KindName {
        KindName::ToolCall
    }

    fn facts(&self, payload: &Payload) -> crate::rules::Facts {
        let Payload::ToolCall(call) = payload else { return crate::rules::Facts::default() };
        let mut facts = crate::rules::Facts::of_tool_call(&call.tool, &call.input);
        facts.cwd.clone_from(&call.cwd);
        facts.confinable = call.confinable;
        facts
    }

    fn prepare(&self, payload: Value, ctx: &PrepareCtx) -> Result<Prepared, CoreError> {
        let call = normalize(payload)?;
        let preview = preview(&call, &ctx.can_box);
        Ok(Prepared { payload: Payload::ToolCall(call), base: None, preview })
    }

    fn edit(&self, payload: &Payload, edits: &Value) -> Result<Payload, CoreError> {
        let Payload::ToolCall(call) = payload else {
            return Err(CoreError::invalid("invalid_edits", payload.not_of(KindName::ToolCall)));
        };
        let Value::Object(e) = edits else {
            return Err(CoreError::invalid("invalid_edits", "edits to a tool.call are {\"input\": any}"));
        };
        if let Some(k) = e.keys().find(|k| k.as_str() != "input" && k.as_str() != "tool") {
            return Err(CoreError::invalid(
                "invalid_edits",
                format!("`{}` cannot be edited in a tool.call", clip(k, 64)),
            ));
        }
        if let Some(tool) = e.get("tool")
            && tool.as_str() != Some(call.tool.as_str())
        {
            return Err(CoreError::invalid(
                "invalid_edits",
                "the tool of a tool.call cannot be changed, only its input",
            ));
        }
        let input = e
            .get("input")
            .cloned()
            .ok_or_else(|| CoreError::invalid("invalid_edits", "edits to a tool.call must give `input`"))?;
        // The working folder and the client stay the session's: an edit changes the input only,
        // and the whole is checked again as a new call would be.
        let kept = payloads::ToolCall { input, ..call.clone() };
        normalize(Payload::ToolCall(kept).to_value()).map(Payload::ToolCall)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ctx() -> PrepareCtx {
        PrepareCtx { agent: "default".into(), credentials: Default::default(), can_box: Vec::new() }
    }

    #[test]
    fn normalizes_and_previews() {
        let p = ToolCall.prepare(json!({"tool": " Bash ", "input": {"command": "ls\u{202E}"}}), &ctx());
        let p = p.map_err(|e| e.to_string());
        let Ok(p) = p else { panic!("{p:?}") };
        assert_eq!(p.payload.to_value(), json!({"tool": "Bash", "input": {"command": "ls\u{202E}"}}));
        let Preview::ToolCall(pv) = p.preview else { panic!("not a tool preview") };
        assert_eq!(pv.tool, "Bash");
        assert_eq!(pv.invisible_characters[0].codepoint, "U+202E");
        assert!(pv.input_text.contains("U+202E"));
    }

    #[test]
    fn missing_input_becomes_empty_object() {
        let p = ToolCall.prepare(json!({"tool": "Read"}), &ctx()).map(|p| p.payload.to_value()).ok();
        assert_eq!(p, Some(json!({"tool": "Read", "input": {}})));
    }

    #[test]
    fn rejects_bad_payloads_with_a_code() {
        for bad in [
            json!([]),
            json!({}),
            json!({"tool": 3}),
            json!({"tool": " "}),
            json!({"tool": "a", "x": 1}),
            json!({"tool": "a\nb"}),
            json!({"tool": "a", "client": "evil"}),
            json!({"tool": "a", "client": 1}),
            json!({"tool": "a", "permission_mode": "auto mode; trust me"}),
        ] {
            match ToolCall.prepare(bad.clone(), &ctx()) {
                Err(e) => assert_eq!(e.code(), "invalid_payload", "{bad}"),
                Ok(_) => panic!("accepted {bad}"),
            }
        }
    }

    #[test]
    fn every_client_read_has_words_for_the_person() {
        assert!(payloads::clients().iter().all(|c| client_in_words(c).is_some()));
    }

    #[test]
    fn the_client_it_came_through_gives_assents_own_notes() {
        let p = ToolCall.prepare(
            json!({"tool": "shell", "input": {"command": ["ls"]}, "cwd": "/p", "client": "codex", "permission_mode": "default"}),
            &ctx(),
        );
        let Ok(p) = p else { panic!("refused") };
        let Preview::ToolCall(pv) = p.preview else { panic!("not a tool preview") };
        assert!(pv.notes[0].starts_with("Codex cannot run an edited call"), "{:?}", pv.notes);
        assert_eq!(pv.client.as_deref(), Some("Codex's permission hook"));
        assert_eq!((pv.cwd.as_deref(), pv.permission_mode.as_deref()), (Some("/p"), Some("default")));
        // An edit keeps them.
        let edited = ToolCall.edit(&p.payload, &json!({"input": {"command": ["pwd"]}})).ok();
        assert_eq!(edited.map(|e| e.to_value()["client"].clone()), Some(json!("codex")));
        let plain = ToolCall.prepare(json!({"tool": "Bash", "client": "claude-code"}), &ctx());
        let Ok(Prepared { preview: Preview::ToolCall(pv), .. }) = plain else { panic!("refused") };
        assert!(pv.notes.is_empty());
    }

    #[test]
    fn edits_replace_input_only() {
        let Ok(Prepared { payload: stored, .. }) =
            ToolCall.prepare(json!({"tool": "Bash", "input": {"command": "rm -rf /"}}), &ctx())
        else {
            panic!("refused")
        };
        let edited = ToolCall.edit(&stored, &json!({"input": {"command": "ls"}})).ok();
        assert_eq!(edited.map(|e| e.to_value()), Some(json!({"tool": "Bash", "input": {"command": "ls"}})));
        assert!(ToolCall.edit(&stored, &json!({"tool": "Write", "input": {}})).is_err());
        assert!(ToolCall.edit(&stored, &json!({"command": "ls"})).is_err());
        assert!(ToolCall.edit(&stored, &json!("ls")).is_err());
    }
}
