//! The tools: their schemas and descriptions (written for a model to read), and what each does
//! against Assent's API.

use assent_client::{Client, Error, Gate, Gated, gate};
use assent_core::Proposal;
use assent_core::payloads::KindName;
use assent_core::status::Status;
use assent_core::verdict::Verdict;
use rmcp::model::Tool;
use serde_json::{Map, Value, json};

use crate::{DEFAULT_WAIT, MAX_WAIT, PERMISSION_WAIT};
use tokio_util::sync::CancellationToken;

/// Every tool, in the order `tools/list` shows them.
pub const NAMES: [&str; 7] = [
    "propose_file_write",
    "propose_file_delete",
    "propose_http_request",
    "request_approval",
    "get_proposal",
    "wait_for_decision",
    "permission_prompt",
];

/// What a tool answers: a JSON object for the model, and whether it is an error.
pub struct Outcome {
    /// The object (also the text block, pretty-printed).
    pub body: Value,
    /// Whether the call failed.
    pub is_error: bool,
}

fn ok(body: Value) -> Outcome {
    Outcome { body, is_error: false }
}

fn fail(code: &str, message: impl Into<String>) -> Outcome {
    let message = message.into();
    Outcome { body: json!({"error": {"code": code, "message": message}}), is_error: true }
}

/// At most `max` characters of `s`.
pub fn clip(s: &str, max: usize) -> String {
    s.chars().take(max).collect()
}

/// What the model is told when Assent cannot be reached: nothing was proposed, and how the
/// person starts it.
pub const NOT_RUNNING: &str = "Assent is not running on this machine (or was never started in this home), so nothing \
was proposed; ask the person to open the Assent app or run `assent serve`";

/// A failed call to Assent as the model reads it: a stable code and a message.
fn explain(e: &Error) -> (String, String) {
    match e {
        Error::NotRunning | Error::NoToken(_) => ("not_running".into(), NOT_RUNNING.into()),
        Error::Impostor { url } => (
            "not_running".into(),
            format!(
                "the program listening at {url} did not prove it is Assent, so nothing was sent to it; {NOT_RUNNING}"
            ),
        ),
        Error::Api { status: 401, code, message } => {
            (code.clone(), format!("{message} (the agent token this MCP server uses is not accepted)"))
        }
        Error::Api { code, message, .. } => (code.clone(), message.clone()),
        other => (other.code().to_string(), other.to_string()),
    }
}

/// A failed call to Assent, as the tool's error.
fn failure(e: &Error) -> Outcome {
    let (code, message) = explain(e);
    fail(&code, message)
}

fn schema(properties: Value, required: &[&str]) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("type".into(), json!("object"));
    m.insert("properties".into(), properties);
    m.insert("required".into(), json!(required));
    m.insert("additionalProperties".into(), json!(false));
    m
}

/// The fields every proposing tool takes besides its payload.
fn envelope(mut props: Value) -> Value {
    let common = json!({
        "title": {"type": "string", "description": "One line for the person: what this does and why. Shown as your words."},
        "summary": {"type": "string", "description": "Optional longer reasoning for the person. Shown as your words, never as the change itself."},
        "session_id": {"type": "string", "description": "Your task or conversation id, so the person sees related proposals together."},
        "group_id": {"type": "string", "description": "Proposals with the same group_id can be approved or rejected together."},
        "supersedes": {"type": "string", "description": "The id of an earlier proposal this one revises (after the person asked for changes)."},
        "expires_in": {"type": "integer", "minimum": 1, "description": "Seconds before the proposal expires undecided (default: Assent's setting, usually 24 h)."},
        "audience": {"type": "string", "description": "The name of the tool server or API that will check the decision's receipt (when it asks for one): the receipt is made for it alone."}
    });
    if let (Value::Object(p), Value::Object(c)) = (&mut props, common) {
        p.extend(c);
    }
    props
}

fn tool(name: &'static str, description: &'static str, s: Map<String, Value>) -> Tool {
    Tool::new(name, description, s)
}

/// The tool list.
pub fn list() -> Vec<Tool> {
    let id = json!({"type": "string", "description": "The proposal id returned when you proposed (p_...)."});
    vec![
        tool(
            "propose_file_write",
            "Propose creating or replacing a text file. Nothing is written now: a person reviews a diff of the \
             current file against your content in Assent, and Assent writes it only if they approve. Returns a \
             proposal id at once; then call wait_for_decision with it. The path must be absolute.",
            schema(
                envelope(json!({
                    "path": {"type": "string", "description": "Absolute path of the file."},
                    "content": {"type": "string", "description": "The complete new content of the file (not a patch)."}
                })),
                &["path", "content"],
            ),
        ),
        tool(
            "propose_file_delete",
            "Propose deleting a file. Nothing is deleted now: a person reviews it in Assent and Assent deletes it \
             only if they approve. Returns a proposal id at once; then call wait_for_decision with it.",
            schema(
                envelope(json!({"path": {"type": "string", "description": "Absolute path of the file."}})),
                &["path"],
            ),
        ),
        tool(
            "propose_http_request",
            "Propose an HTTP request to an API (for example creating an issue or updating a record). Nothing is \
             sent now: a person reviews the exact request in Assent, and Assent sends it only if they approve, \
             adding the named credential from the system keychain (you never see or pass secrets; do not put \
             Authorization headers in). Returns a proposal id at once; then call wait_for_decision with it to get \
             the response status and body.",
            schema(
                envelope(json!({
                    "method": {"type": "string", "description": "GET, POST, PUT, PATCH or DELETE."},
                    "url": {"type": "string", "description": "The full https:// URL."},
                    "headers": {"type": "object", "additionalProperties": {"type": "string"}, "description": "Extra headers (no credentials)."},
                    "json": {"description": "A JSON body (use this or body)."},
                    "body": {"type": "string", "description": "A text body (use this or json)."},
                    "credential": {"type": "string", "description": "Name of a credential the person stored in Assent for this host."}
                })),
                &["method", "url"],
            ),
        ),
        tool(
            "request_approval",
            "Ask a person to approve a consequential action you would run yourself (a shell command, a deploy, a \
             tool of another server). Returns a proposal id at once; call wait_for_decision with it, and run the \
             action only if the status becomes approved, using approved_input (the person may have edited it).",
            schema(
                envelope(json!({
                    "tool": {"type": "string", "description": "The tool or action name, e.g. Bash or deploy."},
                    "input": {"description": "Its exact arguments."}
                })),
                &["tool", "input"],
            ),
        ),
        tool(
            "get_proposal",
            "Get the current status of one of your proposals without waiting: pending, approved, applying, applied, \
             failed, rejected (with the person's reason), refined (with their feedback), expired or withdrawn.",
            schema(json!({"id": id}), &["id"]),
        ),
        tool(
            "wait_for_decision",
            "Wait for the person's decision on one of your proposals. Returns as soon as it is settled, or after \
             timeout_seconds with status pending: then call it again. When settled it says what happened and what to \
             do next (for example the person's reason or requested changes, or the HTTP response).",
            schema(
                json!({
                    "id": id,
                    "timeout_seconds": {"type": "integer", "minimum": 1, "maximum": MAX_WAIT,
                        "description": format!("How long to wait in this call (default {DEFAULT_WAIT}, at most {MAX_WAIT}); keep it under your tool-call timeout.")}
                }),
                &["id"],
            ),
        ),
        tool(
            "permission_prompt",
            "Permission prompt for Claude Code (--permission-prompt-tool): asks a person in Assent whether a tool call \
             may run and waits for the answer. Returns {\"behavior\": \"allow\", \"updatedInput\": ...} or \
             {\"behavior\": \"deny\", \"message\": ...}.",
            schema(
                json!({
                    "tool_name": {"type": "string", "description": "The tool that wants to run."},
                    "input": {"type": "object", "description": "Its input."},
                    "tool_use_id": {"type": "string", "description": "The tool use id (makes retries idempotent)."}
                }),
                &["tool_name", "input"],
            ),
        ),
    ]
}

/// Checks a tool's arguments against the input schema it declares: required fields, types,
/// bounds, and no field the schema does not name. The error names the field.
pub fn check_arguments(name: &str, args: &Map<String, Value>) -> Result<(), String> {
    static VALIDATORS: std::sync::OnceLock<Vec<(String, jsonschema::Validator)>> = std::sync::OnceLock::new();
    let all = VALIDATORS.get_or_init(|| {
        list()
            .into_iter()
            .filter_map(|t| {
                let schema = Value::Object((*t.input_schema).clone());
                jsonschema::validator_for(&schema).ok().map(|v| (t.name.to_string(), v))
            })
            .collect()
    });
    let Some((_, v)) = all.iter().find(|(n, _)| n == name) else { return Ok(()) };
    let instance = Value::Object(args.clone());
    let problems: Vec<String> = v
        .iter_errors(&instance)
        .map(|e| {
            let at = e.instance_path().to_string();
            if at.is_empty() || at == "/" { e.to_string() } else { format!("`{}`: {e}", at.trim_start_matches('/')) }
        })
        .collect();
    if problems.is_empty() { Ok(()) } else { Err(format!("invalid arguments for {name}: {}", problems.join("; "))) }
}

fn string(args: &Map<String, Value>, key: &str) -> Result<Option<String>, Outcome> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(fail("invalid_arguments", format!("`{key}` must be a string"))),
    }
}

fn required(args: &Map<String, Value>, key: &str) -> Result<String, Outcome> {
    string(args, key)?.ok_or_else(|| fail("invalid_arguments", format!("`{key}` is required")))
}

/// The proposal body for `kind` with the payload taken from `fields`, plus the envelope.
fn proposal_body(kind: &str, args: &Map<String, Value>, fields: &[&str]) -> Result<Value, Outcome> {
    let mut payload = Map::new();
    for f in fields {
        if let Some(v) = args.get(*f).filter(|v| !v.is_null()) {
            payload.insert((*f).into(), v.clone());
        }
    }
    let mut body = json!({"kind": kind, "payload": payload});
    for k in ["title", "summary", "session_id", "group_id", "supersedes", "audience"] {
        if let Some(v) = string(args, k)? {
            body[k] = json!(v);
        }
    }
    match args.get("expires_in") {
        None | Some(Value::Null) => {}
        Some(v) if v.as_u64().is_some_and(|n| n > 0) => body["expires_in"] = v.clone(),
        Some(_) => return Err(fail("invalid_arguments", "`expires_in` must be a positive integer")),
    }
    Ok(body)
}

/// What the model is told about a proposal: status, the decision, the outcome, and one line of
/// advice. Never the payload.
pub fn view(p: &Proposal) -> Value {
    let (id, kind, status) = (p.id.as_str(), p.kind.as_str(), p.status);
    let d = p.decision.as_ref();
    let mut v = json!({"id": id, "kind": kind, "status": status, "settled": p.settled});
    if let Some(d) = d {
        v["outcome"] = json!(d.outcome);
        if let Some(r) = &d.reason {
            v["reason"] = json!(r);
        }
        if let Some(f) = &d.feedback {
            v["feedback"] = json!(f);
        }
        v["edited_by_person"] = json!(d.edited_payload.is_some());
        if let Some(r) = &d.receipt {
            v["receipt"] = json!(r);
        }
    }
    if kind == KindName::ToolCall.as_str() && status == Status::Approved {
        v["approved_input"] = p.approved_input().unwrap_or(Value::Null);
    }
    if let Some(r) = &p.result {
        v["result"] = r.clone();
    }
    if let Some(e) = &p.error {
        v["error"] = json!(e);
    }
    let reason = d.and_then(|d| d.reason.as_deref()).map(|r| format!(": {r}")).unwrap_or_default();
    let message = match status {
        Status::Pending => format!(
            "Waiting for a person to review it in Assent. Call wait_for_decision with id {id} (call again while it is pending)."
        ),
        Status::Approved if kind == KindName::ToolCall.as_str() => {
            "Approved. Run it now with approved_input (the person may have edited it); a tool that asks for \
             Assent's receipt gets the receipt above."
                .to_string()
        }
        Status::Approved | Status::Applying => {
            format!("Approved; Assent is applying it. Call wait_for_decision with id {id} for the result.")
        }
        Status::Applied => "Approved and applied by Assent. The change is done; see result.".to_string(),
        Status::Failed => format!(
            "Approved, but applying it failed ({}). Nothing more will happen unless the person retries it.",
            p.error.as_ref().map(|e| e.message.as_str()).unwrap_or("see error")
        ),
        Status::Rejected => {
            format!("Rejected by the person{reason}. Do not make this change; do not re-propose it unchanged.")
        }
        Status::Refined => format!(
            "The person asks for changes: {}. Propose a revised version with supersedes set to {id}.",
            d.and_then(|d| d.feedback.as_deref()).unwrap_or("(no feedback)")
        ),
        Status::Expired => "Nobody decided before it expired. Nothing was done.".to_string(),
        Status::Withdrawn => "It was withdrawn. Nothing was done.".to_string(),
    };
    v["message"] = json!(message);
    v
}

/// What ends a tool call's wait early: the client cancelling this call, or going away.
pub struct Stop {
    /// The call's own cancellation (`notifications/cancelled`).
    pub request: CancellationToken,
    /// The client closed its end.
    pub client_gone: CancellationToken,
}

impl Stop {
    /// Resolves when either happens.
    pub async fn cancelled(&self) {
        tokio::select! {
            _ = self.request.cancelled() => {}
            _ = self.client_gone.cancelled() => {}
        }
    }
}

/// Runs tool `name`; `stop` ends a wait early (the client cancelled the call or went away);
/// `as_task`: `wait_for_decision` waits until the proposal is settled, not one wait's time.
pub async fn call(api: &Client, name: &str, args: Map<String, Value>, stop: &Stop, as_task: bool) -> Outcome {
    let r = match name {
        "propose_file_write" => propose(api, KindName::FileWrite.as_str(), &args, &["path", "content"]).await,
        "propose_file_delete" => propose(api, KindName::FileDelete.as_str(), &args, &["path"]).await,
        "propose_http_request" => {
            let fields = ["method", "url", "headers", "json", "body", "credential"];
            propose(api, KindName::HttpRequest.as_str(), &args, &fields).await
        }
        "request_approval" => propose(api, KindName::ToolCall.as_str(), &args, &["tool", "input"]).await,
        "get_proposal" => status(api, &args, 0).await,
        "wait_for_decision" => {
            let wait = match args.get("timeout_seconds") {
                None | Some(Value::Null) => Ok(DEFAULT_WAIT),
                Some(v) => match v.as_u64() {
                    Some(n) if n >= 1 => Ok(n.min(MAX_WAIT)),
                    _ => Err(fail("invalid_arguments", "`timeout_seconds` must be a positive integer")),
                },
            };
            let wait = async {
                let w = wait?;
                if !as_task {
                    return status(api, &args, w).await;
                }
                loop {
                    let out = status(api, &args, MAX_WAIT).await?;
                    if out.body["settled"] == true {
                        return Ok(out);
                    }
                }
            };
            tokio::select! {
                r = wait => r,
                _ = stop.cancelled() => Err(fail("cancelled", "the wait was cancelled; the proposal is still there")),
            }
        }
        "permission_prompt" => Ok(permission_prompt(api, &args, stop).await),
        other => Err(fail("unknown_tool", format!("no tool named {:?}", clip(other, 64)))),
    };
    r.unwrap_or_else(|e| e)
}

async fn propose(api: &Client, kind: &str, args: &Map<String, Value>, fields: &[&str]) -> Result<Outcome, Outcome> {
    let body = proposal_body(kind, args, fields)?;
    let p = api.propose(&body, None).await.map_err(|e| failure(&e))?;
    Ok(ok(view(&p)))
}

async fn status(api: &Client, args: &Map<String, Value>, wait: u64) -> Result<Outcome, Outcome> {
    let id = required(args, "id")?;
    if id.is_empty() || id.len() > 64 || !id.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        return Err(fail("invalid_arguments", "`id` is not a proposal id"));
    }
    let p = if wait == 0 { api.get(&id).await } else { api.wait_once(&id, wait).await };
    Ok(ok(view(&p.map_err(|e| failure(&e))?)))
}

/// The permission prompt's answer; `asked` is the input the client asked about (the contract
/// wants `updatedInput` on every allow: the person's edit, or the input unchanged).
fn permission(v: Verdict, asked: &Value) -> Value {
    match v {
        Verdict::Allow(edited) => json!({"behavior": "allow", "updatedInput": edited.unwrap_or_else(|| asked.clone())}),
        Verdict::Deny(m) | Verdict::Ask(m) => json!({"behavior": "deny", "message": m}),
        // The prompt tool does not say it runs calls confined, so no rule that confines allows
        // its calls; should one, it is not run unconfined.
        Verdict::Confined { proposal, .. } => json!({"behavior": "deny",
            "message": format!("Assent allowed {proposal} only confined, which this client cannot run")}),
    }
}

/// Claude Code's permission prompt: always one answer, allow or deny, never an error (an
/// error would leave the client without a decision).
async fn permission_prompt(api: &Client, args: &Map<String, Value>, stop: &Stop) -> Outcome {
    let deny = |m: String| ok(permission(Verdict::Deny(m), &Value::Null));
    let tool = match args.get("tool_name").and_then(Value::as_str) {
        Some(t) if !t.is_empty() => t.to_string(),
        _ => return deny("Assent: the permission request names no tool".into()),
    };
    let input = args.get("input").cloned().unwrap_or_else(|| json!({}));
    let key = args.get("tool_use_id").and_then(Value::as_str).map(|id| format!("mcp:{}", clip(id, 200)));
    let g = Gate {
        tool,
        input: input.clone(),
        cwd: None,
        client: Some("mcp-permission-prompt".into()),
        permission_mode: None,
        session_id: None,
        idempotency_key: key,
        expires_in: PERMISSION_WAIT.as_secs() + 60,
        wait: PERMISSION_WAIT,
        carry_receipt: true,
        confinable: false,
    };
    match gate(api, g, stop.cancelled()).await {
        Gated::Decided { verdict, .. } => ok(permission(verdict, &input)),
        Gated::NotRunning(e) => deny(format!("{}; denied for safety", explain(&e).1)),
        Gated::Refused(e) => deny(format!("Assent refused the request ({}: {})", e.code(), explain(&e).1)),
        Gated::TimedOut { id } => deny(format!(
            "No decision in Assent within {} minutes (proposal {id} withdrawn)",
            PERMISSION_WAIT.as_secs() / 60
        )),
        Gated::Stopped { id } => deny(format!("The permission request was cancelled (proposal {id} withdrawn)")),
        Gated::Lost { id, error } => {
            deny(format!("Lost contact with Assent while waiting on {id} ({})", explain(&error).1))
        }
    }
}

#[cfg(test)]
mod tests;
