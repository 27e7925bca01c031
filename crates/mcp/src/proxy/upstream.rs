//! The real server behind the proxy: a program spoken to on its standard input and output, or
//! a streamable-HTTP endpoint. Either way the proxy hands it messages and gets back lines.

use anyhow::Context;
use futures_util::StreamExt;
use serde_json::{Value, json};
use std::ffi::OsString;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// Where the real server is.
#[derive(Debug, Clone)]
pub enum Upstream {
    /// A program and its arguments, started by the proxy, spoken to over stdio.
    Command(Vec<OsString>),
    /// A streamable-HTTP endpoint, with headers sent on every request.
    Url {
        /// The endpoint's URL.
        url: String,
        /// Headers for every request (`NAME: VALUE`), an authorization header for one.
        headers: Vec<(String, String)>,
    },
}

/// A started upstream.
pub(super) struct Running {
    close: CancellationToken,
    tasks: Vec<JoinHandle<()>>,
    child: Option<tokio::process::Child>,
    http: Option<Http>,
}

impl Upstream {
    /// Starts talking to the server: what arrives on `messages` is sent to it, and each message
    /// it sends is handed to `lines`, a line each.
    pub(super) async fn start(
        self,
        messages: UnboundedReceiver<Value>,
        lines: UnboundedSender<String>,
    ) -> anyhow::Result<Running> {
        match self {
            Upstream::Command(command) => stdio(&command, messages, lines),
            Upstream::Url { url, headers } => http(url, headers, messages, lines),
        }
    }
}

impl Running {
    /// Ends the conversation: what was sent before is delivered, then the server is told (its
    /// input closed, or its session deleted) and given five seconds to end.
    pub(super) async fn finish(mut self) {
        self.close.cancel();
        if let Some(h) = &self.http {
            h.delete().await;
        }
        if let Some(child) = &mut self.child
            && tokio::time::timeout(Duration::from_secs(5), child.wait()).await.is_err()
        {
            let _ = child.kill().await;
        }
        for t in self.tasks {
            if tokio::time::timeout(Duration::from_secs(2), &mut Box::pin(t)).await.is_err() {
                tracing::debug!("an upstream task did not end");
            }
        }
    }
}

fn stdio(
    command: &[OsString],
    mut messages: UnboundedReceiver<Value>,
    lines: UnboundedSender<String>,
) -> anyhow::Result<Running> {
    let (program, args) = command.split_first().context("no server command after `--`")?;
    let mut child = tokio::process::Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .with_context(|| format!("cannot start the server `{}`", program.to_string_lossy()))?;
    let mut stdin = child.stdin.take().context("the server's input")?;
    let stdout = child.stdout.take().context("the server's output")?;
    let close = CancellationToken::new();
    let closing = close.clone();
    let writer = tokio::spawn(async move {
        let mut write = async |m: Value| {
            let mut line = m.to_string();
            line.push('\n');
            stdin.write_all(line.as_bytes()).await.and(stdin.flush().await)
        };
        loop {
            tokio::select! {
                m = messages.recv() => {
                    let Some(m) = m else { return };
                    if write(m).await.is_err() {
                        return;
                    }
                }
                () = closing.cancelled() => break,
            }
        }
        // What was queued before the end is delivered; then the input closes (dropped here).
        while let Ok(m) = messages.try_recv() {
            if write(m).await.is_err() {
                return;
            }
        }
    });
    let reader = tokio::spawn(async move {
        let mut out = BufReader::new(stdout).lines();
        while let Ok(Some(line)) = out.next_line().await {
            if !line.trim().is_empty() && lines.send(line).is_err() {
                return;
            }
        }
    });
    Ok(Running { close, tasks: vec![writer, reader], child: Some(child), http: None })
}

/// The HTTP side's shared state.
#[derive(Clone)]
struct Http {
    client: reqwest::Client,
    url: String,
    headers: Vec<(String, String)>,
    /// `Mcp-Session-Id`, once the server gave one.
    session: Arc<Mutex<Option<String>>>,
    /// The protocol version agreed at initialization.
    version: Arc<Mutex<Option<String>>>,
}

fn http(
    url: String,
    headers: Vec<(String, String)>,
    mut messages: UnboundedReceiver<Value>,
    lines: UnboundedSender<String>,
) -> anyhow::Result<Running> {
    // No redirects: a header the proxy sends (a credential among them) goes to the URL it was
    // given and nowhere a server's answer points.
    let client = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        .redirect(reqwest::redirect::Policy::none())
        .build()?;
    let h = Http { client, url, headers, session: Arc::default(), version: Arc::default() };
    let close = CancellationToken::new();
    let (closing, http) = (close.clone(), h.clone());
    let sender = tokio::spawn(async move {
        let posts = tokio_util::task::TaskTracker::new();
        loop {
            let m = tokio::select! {
                m = messages.recv() => m,
                () = closing.cancelled() => messages.try_recv().ok(),
            };
            let Some(m) = m else { break };
            let initialized = m["method"] == "notifications/initialized";
            // Each request on its own: a call that takes minutes holds up no other.
            let (h, out) = (http.clone(), lines.clone());
            posts.spawn(async move { h.post(m, &out).await });
            if initialized {
                let (h, out, closing) = (http.clone(), lines.clone(), closing.clone());
                tokio::spawn(async move {
                    tokio::select! {
                        () = h.listen(&out) => {}
                        () = closing.cancelled() => {}
                    }
                });
            }
        }
        posts.close();
        let _ = tokio::time::timeout(Duration::from_secs(5), posts.wait()).await;
    });
    Ok(Running { close, tasks: vec![sender], child: None, http: Some(h) })
}

impl Http {
    fn request(&self, method: reqwest::Method) -> reqwest::RequestBuilder {
        let mut r = self.client.request(method, &self.url);
        for (k, v) in &self.headers {
            r = r.header(k, v);
        }
        if let Some(s) = self.session.lock().unwrap_or_else(|e| e.into_inner()).clone() {
            r = r.header("mcp-session-id", s);
        }
        if let Some(v) = self.version.lock().unwrap_or_else(|e| e.into_inner()).clone() {
            r = r.header("mcp-protocol-version", v);
        }
        r
    }

    /// Sends one message; what comes back (a JSON answer or an event stream) goes to `lines`.
    async fn post(&self, m: Value, lines: &UnboundedSender<String>) {
        let id = m.get("method").and(m.get("id")).cloned();
        let is_init = m["method"] == "initialize";
        let sent = self
            .request(reqwest::Method::POST)
            .header("accept", "application/json, text/event-stream")
            .json(&m)
            .send()
            .await;
        let failed = |why: String| {
            if let Some(id) = &id {
                let e = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603, "message": why}});
                let _ = lines.send(e.to_string());
            }
        };
        let r = match sent {
            Ok(r) if r.status().is_success() => r,
            Ok(r) => return failed(format!("the server answered HTTP {}", r.status().as_u16())),
            Err(e) => return failed(format!("cannot reach the server: {e}")),
        };
        if is_init && let Some(s) = r.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()) {
            *self.session.lock().unwrap_or_else(|e| e.into_inner()) = Some(s.to_string());
        }
        let sse = r
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.starts_with("text/event-stream"));
        if sse {
            self.events(r, lines, is_init).await;
        } else if let Ok(body) = r.text().await
            && !body.trim().is_empty()
        {
            self.deliver(body, lines, is_init);
        }
    }

    /// The messages of an event stream, each handed on as it ends.
    async fn events(&self, r: reqwest::Response, lines: &UnboundedSender<String>, is_init: bool) {
        let mut stream = r.bytes_stream();
        let (mut buf, mut data) = (Vec::<u8>::new(), String::new());
        while let Some(Ok(chunk)) = stream.next().await {
            buf.extend_from_slice(&chunk);
            while let Some(end) = buf.iter().position(|b| *b == b'\n') {
                let raw: Vec<u8> = buf.drain(..=end).collect();
                let line = String::from_utf8_lossy(&raw);
                let line = line.trim_end_matches(['\n', '\r']);
                if line.is_empty() {
                    if !data.is_empty() {
                        self.deliver(std::mem::take(&mut data), lines, is_init);
                    }
                } else if let Some(d) = line.strip_prefix("data:") {
                    if !data.is_empty() {
                        data.push('\n');
                    }
                    data.push_str(d.strip_prefix(' ').unwrap_or(d));
                }
            }
        }
        if !data.is_empty() {
            self.deliver(data, lines, is_init);
        }
    }

    /// Hands one message on (on one line), noting the protocol version an initialization agreed.
    fn deliver(&self, body: String, lines: &UnboundedSender<String>, is_init: bool) {
        let Ok(v) = serde_json::from_str::<Value>(&body) else {
            tracing::warn!("the server sent something that is not JSON");
            return;
        };
        if is_init && let Some(version) = v.pointer("/result/protocolVersion").and_then(Value::as_str) {
            *self.version.lock().unwrap_or_else(|e| e.into_inner()) = Some(version.to_string());
        }
        let _ = lines.send(v.to_string());
    }

    /// The server's own stream (requests and notifications not tied to a request), where it
    /// offers one.
    async fn listen(&self, lines: &UnboundedSender<String>) {
        let r = self.request(reqwest::Method::GET).header("accept", "text/event-stream").send().await;
        if let Ok(r) = r
            && r.status().is_success()
        {
            self.events(r, lines, false).await;
        }
    }

    /// Ends the session, where the server gave one.
    async fn delete(&self) {
        if self.session.lock().unwrap_or_else(|e| e.into_inner()).is_some() {
            let _ = tokio::time::timeout(Duration::from_secs(3), self.request(reqwest::Method::DELETE).send()).await;
        }
    }
}
