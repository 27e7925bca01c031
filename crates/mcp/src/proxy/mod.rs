//! `assent mcp proxy`: a gate in front of any MCP server, for any MCP client, no hooks needed.
//!
//! The client starts the proxy where it would start the server (`assent mcp proxy --name blog --
//! node server.js`, or `--url` for a streamable-HTTP server). Everything passes through as it
//! is, but for `tools/call`: each is filed in Assent as the tool call `mcp__NAME__TOOL` and
//! reaches the server only once the person (or a rule) approved it, with the arguments they
//! approved (their edit included). A rejection comes back to the model as the tool's error,
//! with the person's reason; a call nobody decided in time, or one Assent could not file, is
//! not run, and the model is told why. A tool whose input schema declares `assent_receipt` gets
//! the decision's signed receipt in it.
//!
//! What the server is sent is what the proxy read, written again: a message the proxy cannot
//! read as JSON-RPC never reaches the server (a server's more lenient parser must not see a
//! call the gate did not).

mod rounds;
mod upstream;

use crate::tools::clip;
use assent_client::{Client, Endpoint, Gate, Gated, RECEIPT_ARG, Resolve};
use assent_core::verdict::Verdict;
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::ffi::OsString;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

pub use upstream::Upstream;

/// How the proxy is set up.
#[derive(Debug, Clone)]
pub struct Options {
    /// The server's name in the tools' names (`mcp__NAME__TOOL`): what rules and the person see.
    pub name: String,
    /// How long a call waits for the person before it is withdrawn and not run.
    pub wait: Duration,
    /// The real server.
    pub upstream: Upstream,
}

/// The longest name a server may be given: a tool's name is at most 200 characters.
pub const MAX_NAME: usize = 64;

/// Whether `name` can name a server: letters, digits, `-` and `_`, without `__` (which
/// separates the server from the tool).
pub fn is_server_name(name: &str) -> bool {
    (1..=MAX_NAME).contains(&name.len())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        && !name.contains("__")
}

/// The default name of the server run by `command`: its program's file name, without an
/// extension, made a valid name.
pub fn default_name(command: &[OsString]) -> String {
    let program = command.first().map(std::path::Path::new).and_then(|p| p.file_stem()).unwrap_or_default();
    let name: String = program
        .to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' })
        .take(MAX_NAME)
        .collect();
    let name = name.split("__").collect::<Vec<_>>().join("_");
    if is_server_name(&name) { name } else { "server".into() }
}

/// What the proxy remembers of the conversation.
#[derive(Default)]
struct State {
    /// The client's requests sent on to the server, by id (as JSON text): their method.
    asked: HashMap<String, String>,
    /// The server's tools, by name: whether each declares [`RECEIPT_ARG`].
    receipts: HashMap<String, bool>,
    /// The calls waiting for the person, by request id: what stops each wait.
    gating: HashMap<String, CancellationToken>,
    /// Approved calls in flight, and those a server's question keeps open.
    rounds: rounds::Rounds,
}

/// One proxy between a client (standard input and output) and a server.
#[derive(Clone)]
struct Proxy {
    api: Client,
    name: String,
    wait: Duration,
    state: Arc<Mutex<State>>,
    to_client: UnboundedSender<String>,
    to_server: UnboundedSender<Value>,
    /// Cancelled when the client goes away: waits for it end, and their proposals are withdrawn.
    closing: CancellationToken,
    running: TaskTracker,
}

/// Runs the proxy until the client closes its input or the server ends.
pub async fn run(endpoint: Resolve<Endpoint>, token: Resolve<String>, opts: Options) -> anyhow::Result<()> {
    let api = Client::new(endpoint, token, "mcp")?;
    let (to_client, mut client_out) = unbounded_channel::<String>();
    let (to_server, server_in) = unbounded_channel::<Value>();
    let (from_server, mut server_out) = unbounded_channel::<String>();
    let server = opts.upstream.start(server_in, from_server).await?;
    let proxy = Proxy {
        api,
        name: opts.name,
        wait: opts.wait,
        state: Arc::default(),
        to_client,
        to_server,
        closing: CancellationToken::new(),
        running: TaskTracker::new(),
    };
    let writer = tokio::spawn(async move {
        let mut out = tokio::io::stdout();
        while let Some(mut line) = client_out.recv().await {
            line.push('\n');
            if out.write_all(line.as_bytes()).await.is_err() || out.flush().await.is_err() {
                break;
            }
        }
    });
    let from_server_task = {
        let proxy = proxy.clone();
        tokio::spawn(async move {
            while let Some(line) = server_out.recv().await {
                proxy.server_said(line);
            }
        })
    };
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    let server_ended = tokio::select! {
        () = async {
            while let Ok(Some(line)) = lines.next_line().await {
                proxy.client_said(&line);
            }
        } => false,
        _ = from_server_task => true,
    };
    if server_ended {
        // Every request the client is still waiting on gets its answer now: an error saying the
        // server ended (a call waiting for the person is withdrawn below, and answered too).
        proxy.server_ended();
    }
    // The client is gone (or the server ended): no wait goes on for nobody.
    proxy.closing.cancel();
    proxy.running.close();
    let _ = tokio::time::timeout(Duration::from_secs(5), proxy.running.wait()).await;
    drop(proxy);
    server.finish().await;
    let _ = tokio::time::timeout(Duration::from_secs(2), writer).await;
    Ok(())
}

/// Whether `method`, not `tools/call` itself, reads as it to a forgiving reader: other case,
/// spaces, another separator.
fn is_call_in_disguise(method: &str) -> bool {
    let folded: String = method.chars().filter(|c| c.is_ascii_alphanumeric()).map(|c| c.to_ascii_lowercase()).collect();
    method != "tools/call" && (folded == "toolscall" || folded == "toolcall")
}

/// A request's id as a map key.
fn key(id: &Value) -> String {
    id.to_string()
}

impl Proxy {
    /// The server ended: each request sent to it and not answered, and each call still waiting
    /// for the person, is answered with an error, so the client is not left waiting.
    fn server_ended(&self) {
        let ids: Vec<String> = {
            let mut state = self.state();
            let mut ids: Vec<String> = state.asked.drain().map(|(id, _)| id).collect();
            ids.extend(state.gating.drain().map(|(id, stop)| {
                stop.cancel();
                id
            }));
            ids
        };
        for id in ids {
            let id: Value = serde_json::from_str(&id).unwrap_or(Value::Null);
            self.reply_error(&id, -32000, "the MCP server ended before answering");
        }
    }

    /// A line the client sent.
    fn client_said(&self, line: &str) {
        if line.trim().is_empty() {
            return;
        }
        match serde_json::from_str::<Value>(line) {
            Ok(Value::Array(batch)) => batch.into_iter().for_each(|m| self.message_from_client(m)),
            Ok(m) => self.message_from_client(m),
            Err(e) => self.reply_error(&Value::Null, -32700, &format!("not JSON: {}", clip(&e.to_string(), 200))),
        }
    }

    fn message_from_client(&self, m: Value) {
        let Some(method) = m.get("method").and_then(Value::as_str).map(str::to_owned) else {
            // A response to the server's own request (or something the server will refuse).
            let _ = self.to_server.send(m);
            return;
        };
        let id = m.get("id").filter(|id| !id.is_null()).cloned();
        match (method.as_str(), id) {
            ("tools/call", Some(id)) if self.continued(&id, &m) => {}
            ("tools/call", Some(id)) => {
                let stop = CancellationToken::new();
                self.state().gating.insert(key(&id), stop.clone());
                let proxy = self.clone();
                self.running.spawn(async move { proxy.gate(id, m, stop).await });
            }
            // A call without an id gets no answer, so it would run unseen: it is dropped.
            ("tools/call", None) => tracing::warn!("a tools/call without an id was dropped"),
            // A spelling a lenient server might take for a call is never passed by.
            (other, id) if is_call_in_disguise(other) => {
                if let Some(id) = id {
                    self.reply_error(
                        &id,
                        -32601,
                        &format!("no method {:?}; a tool call is `tools/call`", clip(other, 64)),
                    );
                }
            }
            ("notifications/cancelled", _) => {
                let waiting = m.pointer("/params/requestId").and_then(|r| self.state().gating.remove(&key(r)));
                match waiting {
                    Some(stop) => stop.cancel(),
                    None => {
                        let _ = self.to_server.send(m);
                    }
                }
            }
            (_, Some(id)) => {
                self.state().asked.insert(key(&id), method);
                let _ = self.to_server.send(m);
            }
            (_, None) => {
                let _ = self.to_server.send(m);
            }
        }
    }

    /// A line the server sent: passed on as it is, and read for the tools' declarations.
    fn server_said(&self, line: String) {
        if let Ok(m) = serde_json::from_str::<Value>(&line) {
            for m in if let Value::Array(b) = &m { b.iter().collect() } else { vec![&m] } {
                self.note_answer(m);
            }
        }
        let _ = self.to_client.send(line);
    }

    /// Remembers which tools declare [`RECEIPT_ARG`], from the server's answers to `tools/list`.
    fn note_answer(&self, m: &Value) {
        let (Some(id), None) = (m.get("id"), m.get("method")) else { return };
        let mut state = self.state();
        state.rounds.answered(&key(id), m.get("result"));
        if state.asked.remove(&key(id)).as_deref() != Some("tools/list") {
            return;
        }
        for tool in m.pointer("/result/tools").and_then(Value::as_array).into_iter().flatten() {
            if let Some(name) = tool["name"].as_str() {
                let declares = tool.pointer(&format!("/inputSchema/properties/{RECEIPT_ARG}")).is_some();
                state.receipts.insert(name.to_string(), declares);
            }
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Files the call `m` (request `id`), waits for the person, and sends it on or answers it.
    async fn gate(&self, id: Value, m: Value, stop: CancellationToken) {
        let answer = self.decide(&id, &m, &stop).await;
        self.state().gating.remove(&key(&id));
        match answer {
            Ok(Some(arguments)) => {
                let tool = m.pointer("/params/name").and_then(Value::as_str).unwrap_or_default().to_string();
                let asked_with = m.pointer("/params/arguments").cloned().unwrap_or(json!({}));
                self.send_approved(&id, m, &tool, asked_with, arguments);
            }
            // Cancelled by the client: it expects no answer.
            Ok(None) => {}
            Err(Refusal::Params(why)) => self.reply_error(&id, -32602, &why),
            Err(Refusal::NotRun(why)) => {
                let result = json!({"content": [{"type": "text", "text": why}], "isError": true});
                let _ = self.to_client.send(json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string());
            }
        }
    }

    /// Sends the approved call `m` (request `id`) on, with the `approved` arguments.
    fn send_approved(&self, id: &Value, mut m: Value, tool: &str, asked_with: Value, approved: Value) {
        m["params"]["arguments"] = approved.clone();
        {
            let mut state = self.state();
            state.asked.insert(key(id), "tools/call".into());
            state.rounds.sent(key(id), tool, asked_with, approved);
        }
        let _ = self.to_server.send(m);
    }

    /// Sends `m` on at once when it is the retry of an approved call the server asked input for
    /// (see [`rounds`]); whether it did.
    fn continued(&self, id: &Value, m: &Value) -> bool {
        let Some(params) = m.get("params") else { return false };
        let Some((tool, approved)) = self.state().rounds.continues(params) else { return false };
        let asked_with = params.get("arguments").cloned().unwrap_or(json!({}));
        self.send_approved(id, m.clone(), &tool, asked_with, approved);
        true
    }

    /// The arguments to run the call with, once approved; none when the client cancelled it.
    async fn decide(&self, id: &Value, m: &Value, stop: &CancellationToken) -> Result<Option<Value>, Refusal> {
        let params = m.get("params").and_then(Value::as_object).ok_or(Refusal::params("`params` must be an object"))?;
        let tool =
            params.get("name").and_then(Value::as_str).ok_or(Refusal::params("`params.name` must be a string"))?;
        let mut input = match params.get("arguments") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(a)) => a.clone(),
            Some(_) => return Err(Refusal::params("`params.arguments` must be an object")),
        };
        let declares = self.state().receipts.get(tool).copied().unwrap_or(false);
        if declares {
            input.entry(RECEIPT_ARG).or_insert(json!(""));
        }
        let g = Gate {
            tool: format!("mcp__{}__{tool}", self.name),
            input: Value::Object(input),
            cwd: std::env::current_dir().ok().map(|d| d.display().to_string()),
            client: Some("mcp-proxy".into()),
            permission_mode: None,
            session_id: None,
            idempotency_key: None,
            expires_in: self.wait.as_secs() + 120,
            wait: self.wait,
            carry_receipt: declares,
            confinable: false,
        };
        let progress = self.progress(params.get("_meta").and_then(|m| m.get("progressToken")).cloned(), stop);
        let closing = self.closing.clone();
        let stopped = async move {
            tokio::select! {
                () = stop.cancelled() => {}
                () = closing.cancelled() => {}
            }
        };
        let gated = tokio::select! {
            g = assent_client::gate(&self.api, g, stopped) => g,
            () = progress => unreachable!("progress never ends"),
        };
        tracing::debug!(id = %id, "gated: {gated:?}");
        let wait = self.wait.as_secs();
        match gated {
            Gated::Decided { verdict: Verdict::Allow(edited), .. } => {
                Ok(Some(edited.unwrap_or_else(|| params.get("arguments").cloned().unwrap_or(json!({})))))
            }
            Gated::Decided { verdict: Verdict::Deny(why), .. } => Err(Refusal::NotRun(why)),
            Gated::Decided { verdict: Verdict::Ask(why), .. } => Err(Refusal::NotRun(format!("Not run: {why}"))),
            Gated::Decided { verdict: Verdict::Confined { .. }, .. } => {
                Err(Refusal::NotRun("Not run: a confined run is for commands, not MCP tools".into()))
            }
            Gated::Stopped { .. } => Ok(None),
            Gated::TimedOut { id } => Err(Refusal::NotRun(format!(
                "Not run: no decision in Assent within {wait} s (proposal {id} withdrawn)"
            ))),
            Gated::NotRunning(_) => {
                Err(Refusal::NotRun("Not run: Assent is not running, so no person saw this call".into()))
            }
            Gated::Refused(e) => Err(Refusal::NotRun(format!("Not run: Assent refused the call ({e})"))),
            Gated::Lost { id, error } => {
                Err(Refusal::NotRun(format!("Not run: lost contact with Assent while waiting on {id} ({error})")))
            }
        }
    }

    /// Tells a client that asked for progress (`_meta.progressToken`) that the call is waiting
    /// for a person, every 10 s, so a client that times calls out on silence waits on. Never ends.
    async fn progress(&self, token: Option<Value>, stop: &CancellationToken) {
        let Some(token) = token.filter(|t| t.is_string() || t.is_number()) else {
            return std::future::pending().await;
        };
        let mut n = 0u64;
        loop {
            tokio::time::sleep(Duration::from_secs(10)).await;
            if stop.is_cancelled() {
                return std::future::pending().await;
            }
            n += 1;
            let note = json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {
                "progressToken": token, "progress": n, "message": "Waiting for a person to decide in Assent"}});
            let _ = self.to_client.send(note.to_string());
        }
    }

    fn reply_error(&self, id: &Value, code: i64, message: &str) {
        let e = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
        let _ = self.to_client.send(e.to_string());
    }
}

/// Why a call was not sent on.
enum Refusal {
    /// The request is malformed: a JSON-RPC error.
    Params(String),
    /// Not run: the tool's error result, which the model reads.
    NotRun(String),
}

impl Refusal {
    fn params(why: &str) -> Self {
        Refusal::Params(why.into())
    }
}

#[cfg(test)]
mod tests;
