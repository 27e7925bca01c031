//! `assent mcp proxy` between a real MCP client and a real MCP server (both the `mcp` package
//! from PyPI), over stdio and over streamable HTTP: what the server is asked to run is what the
//! person approved, and nothing else reaches it.

use crate::harness::{BIN, Server, stdout_lines};
use crate::mcp::python;
use crate::receipts::{approved_call, key_set, now};
use assent_receipt::verify;
use reqwest::Method;
use serde_json::{Value, json};
use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

fn fixture(name: &str) -> String {
    format!("{}/tests/fixtures/mcp/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// The client, started with `proxy_args` after `assent mcp proxy`.
struct Client {
    child: Child,
    lines: Receiver<String>,
}

impl Client {
    fn start(s: &Server, proxy_args: &[&str]) -> Client {
        Self::start_with(s, proxy_args, &[])
    }

    /// [`Client::start`], the client (and so the proxy it starts) given `env` too.
    fn start_with(s: &Server, proxy_args: &[&str], env: &[(&str, &str)]) -> Client {
        let mut child = Command::new(python())
            .envs(env.iter().copied())
            .arg(fixture("proxy_client.py"))
            .arg(BIN)
            .arg(s.home())
            .args(proxy_args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let lines = stdout_lines(&mut child);
        let mut c = Client { child, lines };
        assert_eq!(c.next("initialized")["server"], "blog", "the real server answered through the proxy");
        c
    }

    fn send(&mut self, line: &str) {
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    fn next(&mut self, tag: &str) -> Value {
        let line = self.lines.recv_timeout(Duration::from_secs(60)).unwrap_or_else(|_| {
            let _ = self.child.kill();
            panic!("the MCP client printed no {tag:?}")
        });
        let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{line:?}: {e}"));
        assert_eq!(v["step"], tag, "{v}");
        v["value"].clone()
    }

    fn call(&mut self, tool: &str, args: Value) {
        self.send(&format!("call {tool} {args}"));
    }
}

/// A scratch folder (removed when dropped) and in it the file where the server logs the calls
/// that reach it.
fn served_log() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("served.jsonl");
    (dir, log)
}

/// The calls that reached the server.
fn served(log: &Path) -> Vec<Value> {
    std::fs::read_to_string(log).unwrap_or_default().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// The pending proposal, once filed.
async fn pending(s: &Server) -> (String, Value) {
    let p = s.first_pending().await;
    (p["id"].as_str().unwrap().to_string(), p)
}

/// Approve with its receipt, reject with a reason, approve an edit, allow by rule: over `c`.
async fn decide_each_way(s: &Server, c: &mut Client, log: &Path) {
    c.send("list");
    let tools = c.next("tools");
    let delete = tools.as_array().unwrap().iter().find(|t| t["name"] == "delete_post").unwrap();
    assert!(delete["schema"]["properties"].get("assent_receipt").is_some(), "the server's own schema, untouched");

    // Approved: the server runs it, with the decision's receipt.
    c.call("delete_post", json!({"id": 7}));
    let (id, p) = pending(s).await;
    assert_eq!(p["payload"]["tool"], "mcp__blog__delete_post");
    assert_eq!(p["payload"]["input"], json!({"id": 7}), "the receipt's slot is not the person's to read");
    assert_eq!(p["payload"]["client"], "mcp-proxy");
    assert_eq!(p["audience"], "blog");
    assert!(served(log).is_empty(), "nothing reached the server before the decision");
    s.decide(&id, json!({"outcome": "approve"})).await;
    let r = c.next("result");
    assert_eq!(r, json!({"is_error": false, "text": "deleted post 7"}));
    let calls = served(log);
    assert_eq!(calls.len(), 1);
    let token = calls[0]["args"]["assent_receipt"].as_str().unwrap();
    let args = json!({"id": 7});
    let expect = approved_call("blog", "delete_post", &args);
    verify(token, &key_set(s).await, &expect, now()).expect("the server can check what the person approved");

    // Rejected: the model reads the person's reason, and the server never hears of it.
    c.call("publish", json!({"text": "hello"}));
    let (id, _) = pending(s).await;
    s.decide(&id, json!({"outcome": "reject", "reason": "not before Monday"})).await;
    let r = c.next("result");
    assert_eq!(r["is_error"], true);
    assert!(r["text"].as_str().unwrap().contains("not before Monday"), "{r}");
    assert_eq!(served(log).len(), 1);

    // Edited: what runs is the person's edit.
    c.call("publish", json!({"text": "draft"}));
    let (id, _) = pending(s).await;
    s.decide(&id, json!({"outcome": "approve", "edits": {"input": {"text": "final"}}})).await;
    assert_eq!(c.next("result"), json!({"is_error": false, "text": "published: final"}));
    assert_eq!(served(log).last().unwrap()["args"], json!({"text": "final"}));

    // A rule names the server and the tool: allowed without asking; another server's is not.
    let rule = json!({"effect": "allow", "match": {"tool": "mcp__blog__publish"}});
    let (st, _) = s.req(Method::POST, "/rules", Some(&s.owner), Some(rule)).await;
    assert!(st.is_success());
    c.call("publish", json!({"text": "by rule"}));
    assert_eq!(c.next("result"), json!({"is_error": false, "text": "published: by rule"}));
    c.call("delete_post", json!({"id": 8}));
    let (id, _) = pending(s).await;
    s.decide(&id, json!({"outcome": "reject", "reason": "no"})).await;
    assert_eq!(c.next("result")["is_error"], true);
    assert_eq!(served(log).len(), 3, "{:?}", served(log));
}

/// The real client through the proxy to the real stdio server (writing what it serves to `log`).
fn stdio_client(s: &Server, log: &Path) -> Client {
    let py = python();
    let server = [fixture("proxy_server.py"), log.display().to_string(), "stdio".into()];
    let mut args = vec!["--name", "blog", "--", py.to_str().unwrap()];
    args.extend(server.iter().map(String::as_str));
    Client::start(s, &args)
}

#[tokio::test]
async fn a_real_client_and_server_over_stdio_run_only_what_the_person_approved() {
    let s = Server::start().await;
    let (_dir, log) = served_log();
    let mut c = stdio_client(&s, &log);
    decide_each_way(&s, &mut c, &log).await;

    // The client dies while a call waits: the call is withdrawn, never run, and the server ends.
    c.call("delete_post", json!({"id": 9}));
    let (id, _) = pending(&s).await;
    c.child.kill().unwrap();
    c.child.wait().unwrap();
    let killed = Instant::now();
    loop {
        let (_, p) = s.get(&id, &s.owner).await;
        if p["status"] != "pending" {
            assert_eq!(p["status"], "withdrawn", "{p}");
            break;
        }
        assert!(killed.elapsed() < Duration::from_secs(20), "still pending after the client died");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(served(&log).len(), 3);
    let server_gone = (0..100).any(|_| {
        std::thread::sleep(Duration::from_millis(100));
        !running(&log)
    });
    assert!(server_gone, "the server ends with its client");
}

/// The stdio server dies while a call waits for the person: the call is withdrawn, the client
/// gets an error for it at once (not silence until it writes again), and the proxy ends.
#[tokio::test]
async fn a_stdio_server_that_dies_answers_its_client_and_the_proxy_ends() {
    let s = Server::start().await;
    let (_dir, log) = served_log();
    let mut c = stdio_client(&s, &log);
    c.call("delete_post", json!({"id": 9}));
    let (id, _) = pending(&s).await;
    // The server alone (the proxy's and the client's command lines name its log too).
    let out = Command::new("pgrep").args(["-f", &log.display().to_string()]).output().unwrap();
    let server_pid = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .find(|pid| {
            let argv = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            argv.split(|b| *b == 0).nth(1).is_some_and(|a| a.ends_with(b"proxy_server.py"))
        })
        .map(str::to_string)
        .expect("the server runs");
    assert!(Command::new("kill").args(["-KILL", &server_pid]).status().unwrap().success(), "the server was killed");
    let died = Instant::now();
    let answer = c.next("result");
    assert_eq!(answer["mcp_error"]["message"], "the MCP server ended before answering", "{answer}");
    assert!(died.elapsed() < Duration::from_secs(5), "answered {:?} after the server died", died.elapsed());
    loop {
        let (_, p) = s.get(&id, &s.owner).await;
        if p["status"] != "pending" {
            assert_eq!(p["status"], "withdrawn", "{p}");
            break;
        }
        assert!(died.elapsed() < Duration::from_secs(5), "still pending after the server died");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(served(&log).is_empty(), "nothing ran");
    // The proxy (the client's child) ends on its own, without the client writing again.
    let proxy_gone = (0..50).any(|_| {
        std::thread::sleep(Duration::from_millis(100));
        let out = Command::new("pgrep").args(["-f", &format!("{} mcp proxy", s.home().display())]).output().unwrap();
        out.stdout.is_empty()
    });
    assert!(proxy_gone, "the proxy lives on after its server died");
}

/// Whether a server writing to `log` still runs.
fn running(log: &Path) -> bool {
    let out = Command::new("pgrep").args(["-f", &log.display().to_string()]).output().unwrap();
    out.status.success()
}

/// The fixture's server over streamable HTTP on a free port (wanting the header `need`, if any):
/// its process and URL.
fn http_server(log: &Path, need: Option<&str>) -> (Child, String) {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut c = Command::new(python());
    c.arg(fixture("proxy_server.py")).arg(log).args(["http", &port.to_string()]);
    if let Some(n) = need {
        c.env("PROXY_SERVER_HEADER", n);
    }
    let server = c.stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    let up = (0..300).any(|_| {
        std::thread::sleep(Duration::from_millis(50));
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
    assert!(up, "the HTTP server did not start");
    (server, format!("http://127.0.0.1:{port}/mcp"))
}

#[tokio::test]
async fn a_streamable_http_server_is_gated_the_same() {
    let s = Server::start().await;
    let (_dir, log) = served_log();
    let (mut server, url) = http_server(&log, None);
    let mut c = Client::start(&s, &["--name", "blog", "--url", &url]);
    decide_each_way(&s, &mut c, &log).await;
    c.send("quit");
    assert!(c.child.wait().unwrap().success());
    server.kill().unwrap();
    let _ = server.wait();
}

/// An HTTP server that wants a credential gets it from Assent's keychain by name
/// (`--credential`), never from the command line: the secret is not in the proxy's command
/// line, and goes only to an origin the credential names; an unknown credential, or one for
/// other hosts, starts nothing and says why.
#[tokio::test]
async fn an_http_servers_credential_comes_from_the_keychain_by_name() {
    const SECRET: &str = "s3cret-from-the-keychain";
    let bus = crate::harness::private_bus_with_keyring();
    let s = Server::start_with("", &[("DBUS_SESSION_BUS_ADDRESS", &bus.address)]).await;
    let (_dir, log) = served_log();
    let (mut server, url) = http_server(&log, Some(&format!("x-api-key: {SECRET}")));
    let origin = url.trim_end_matches("/mcp").to_string();
    for (name, host) in [("blog-key", origin.as_str()), ("elsewhere", "https://api.example.com")] {
        let body = json!({"name": name, "scheme": "header:x-api-key", "hosts": [host], "secret": SECRET});
        let (st, v) = s.req(Method::POST, "/credentials", Some(&s.owner), Some(body)).await;
        assert!(st.is_success(), "{v}");
    }
    let env = [("DBUS_SESSION_BUS_ADDRESS", bus.address.as_str())];
    for (credential, says) in
        [("elsewhere", "may be sent to https://api.example.com:443, not to"), ("nobody", "no credential of that name")]
    {
        let o = Command::new(BIN)
            .arg("--home")
            .arg(s.home())
            .args(["mcp", "proxy", "--name", "blog", "--url", &url, "--credential", credential])
            .envs(env)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let err = crate::harness::stderr(&o);
        assert!(!o.status.success() && err.contains(says), "{credential}: {err}");
        assert!(!err.contains(SECRET), "{err}");
    }
    assert!(served(&log).is_empty(), "nothing reached the server: {:?}", served(&log));
    let mut c = Client::start_with(&s, &["--name", "blog", "--url", &url, "--credential", "blog-key"], &env);
    let home = s.home().display().to_string();
    let proxies = crate::procs::matching(|cmd| cmd.contains(&home) && cmd.contains("mcp proxy"));
    assert!(!proxies.is_empty());
    for pid in proxies {
        let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        assert!(!String::from_utf8_lossy(&cmd).contains(SECRET), "the secret is on a command line");
    }
    decide_each_way(&s, &mut c, &log).await;
    assert!(served(&log).iter().all(|v| v.get("refused").is_none()), "{:?}", served(&log));
    c.send("quit");
    assert!(c.child.wait().unwrap().success());
    assert!(!s.stderr().contains(SECRET), "the secret is in the server's log");
    server.kill().unwrap();
    let _ = server.wait();
    drop(bus);
}

#[tokio::test]
async fn a_proxy_set_up_wrong_says_so() {
    let s = Server::start().await;
    for (args, says) in [
        (&["mcp", "proxy"][..], "--url"),
        (&["mcp", "proxy", "--name", "a b", "--", "true"], "--name"),
        (&["mcp", "proxy", "--name", "x__y", "--", "true"], "--name"),
        (&["mcp", "proxy", "--url", "ftp://x/"], "http"),
        (&["mcp", "proxy", "--url", "http://127.0.0.1:1/", "--header", "novalue"], "NAME: VALUE"),
        (&["mcp", "proxy", "--", "/nonexistent/server"], "cannot start the server"),
    ] {
        let o = s.cli(args);
        assert!(!o.status.success(), "{args:?}");
        let err = crate::harness::stderr(&o);
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

/// The MCP Inspector release the tests drive.
const INSPECTOR: &str = "@modelcontextprotocol/inspector@2.12.0";

/// The MCP Inspector's command-line mode calling `publish` through the proxy: the call waits
/// for the person.
fn inspector_call(s: &Server, log: &Path, text: &str, dashes: bool) -> Child {
    let works = |b: &Path| Command::new(b).args(["--cli", "--version"]).output().is_ok_and(|o| o.status.success());
    let inspector = crate::harness::npm_program("inspector", INSPECTOR, "mcp-inspector", works);
    Command::new(inspector)
        .args([
            "--cli",
            "--method",
            "tools/call",
            "--tool-name",
            "publish",
            "--tool-arg",
            &format!("text={text}"),
            "--",
        ])
        .arg(BIN)
        .arg("--home")
        .arg(s.home())
        .args(["mcp", "proxy", "--name", "blog"])
        // With the `--` before the server's command, and without (as a launcher that drops it).
        .args(dashes.then_some("--"))
        .arg(python())
        .arg(fixture("proxy_server.py"))
        .arg(log)
        .arg("stdio")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[tokio::test]
async fn the_mcp_inspector_calls_through_the_proxy() {
    let s = Server::start().await;
    let (_dir, log) = served_log();
    let call = inspector_call(&s, &log, "hello", true);
    let (id, p) = pending(&s).await;
    assert_eq!(p["payload"]["input"], json!({"text": "hello"}));
    s.decide(&id, json!({"outcome": "approve"})).await;
    let out = call.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && text.contains("published: hello"), "{text}");

    let call = inspector_call(&s, &log, "again", false);
    let (id, _) = pending(&s).await;
    s.decide(&id, json!({"outcome": "reject", "reason": "once is enough"})).await;
    let out = call.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success() && text.contains("Rejected in Assent: once is enough"), "{text}");
    assert_eq!(served(&log).len(), 1, "only the approved call reached the server");
}

/// A client that writes JSON-RPC itself, as an agent that controls its client could: forms that
/// try to get a call past the gate. None reaches the real server.
#[tokio::test]
async fn hostile_lines_never_reach_the_server() {
    use std::io::{BufRead, BufReader};
    let s = Server::start().await;
    let (_dir, log) = served_log();
    let mut proxy = Command::new(BIN)
        .arg("--home")
        .arg(s.home())
        .args(["mcp", "proxy", "--name", "blog", "--"])
        .arg(python())
        .arg(fixture("proxy_server.py"))
        .arg(&log)
        .arg("stdio")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut input = proxy.stdin.take().unwrap();
    let mut output = BufReader::new(proxy.stdout.take().unwrap());
    let mut say = move |line: &str| writeln!(input, "{line}").and_then(|()| input.flush()).unwrap();
    let mut answer = || {
        let mut line = String::new();
        output.read_line(&mut line).unwrap();
        serde_json::from_str::<Value>(&line).unwrap_or_else(|e| panic!("{line:?}: {e}"))
    };
    say(
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#,
    );
    assert_eq!(answer()["result"]["serverInfo"]["name"], "blog");
    say(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    let call = r#""params":{"name":"delete_post","arguments":{"id":1}}"#;
    // Each answered by the proxy itself, with an error.
    for (line, code) in [
        (format!(r#"{{"jsonrpc":"2.0","id":1,"method":"Tools/Call",{call}}}"#), -32601),
        (format!(r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call ",{call}}}"#), -32601),
        (format!("\u{feff}{{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",{call}}}"), -32700),
        (format!(r#"{{"jsonrpc":"2.0","id":4,"method":"tools/call",{call},}}"#), -32700),
        ("{\"jsonrpc\":\"2.0\",\"id\":5,".to_string(), -32700),
        (format!(r#""method":"tools/call",{call}}}"#), -32700),
    ] {
        say(&line);
        assert_eq!(answer()["error"]["code"], code, "{line}");
    }
    // A notification that would run a call: dropped, no answer; the next request is answered.
    say(&format!(r#"{{"jsonrpc":"2.0","method":"tools/call",{call}}}"#));
    // In a batch, and with a duplicated method whose last is the call: gated, then rejected.
    say(&format!(r#"[{{"jsonrpc":"2.0","id":6,"method":"tools/call",{call}}}]"#));
    let (id, _) = pending(&s).await;
    s.decide(&id, json!({"outcome": "reject", "reason": "no"})).await;
    assert_eq!(answer()["result"]["isError"], true);
    say(&format!(r#"{{"jsonrpc":"2.0","id":7,"method":"ping","method":"tools/call",{call}}}"#));
    let (id, _) = pending(&s).await;
    s.decide(&id, json!({"outcome": "reject", "reason": "no"})).await;
    assert_eq!(answer()["result"]["isError"], true);
    say(r#"{"jsonrpc":"2.0","id":8,"method":"ping"}"#);
    assert_eq!(answer()["id"], 8, "still serving");
    drop(say);
    assert!(proxy.wait().unwrap().success());
    assert!(served(&log).is_empty(), "{:?}", served(&log));
}

/// MCP 2026-07-28 through the proxy: the client finds the version (`server/discover`), and a
/// server that asks the client a question mid-call (`input_required`) gets the client's retry,
/// which continues the approved call: asked once, run once, with the approved arguments.
#[tokio::test]
async fn a_modern_client_answers_the_servers_question_within_one_approval() {
    let s = Server::start().await;
    let (_dir, log) = served_log();
    let py = python();
    let mut child = Command::new(&py)
        .arg(fixture("proxy_modern.py"))
        .arg(BIN)
        .arg(s.home())
        .args(["archive", r#"{"id": 7}"#, "--name", "blog", "--"])
        .arg(&py)
        .arg(fixture("proxy_server.py"))
        .arg(&log)
        .arg("stdio")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let lines = stdout_lines(&mut child);
    let next = |tag: &str| {
        let line = lines.recv_timeout(Duration::from_secs(60)).unwrap_or_else(|_| panic!("no {tag:?}"));
        let v: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["step"], tag, "{v}");
        v["value"].clone()
    };
    assert_eq!(next("protocol"), "2026-07-28");
    let (id, p) = pending(&s).await;
    assert_eq!(p["payload"]["tool"], "mcp__blog__archive");
    s.decide(&id, json!({"outcome": "approve", "edits": {"input": {"id": 8}}})).await;
    assert_eq!(next("asked"), "Really archive post 8?", "the server asks about the approved call");
    assert_eq!(next("result"), json!({"is_error": false, "text": "archived post 8"}));
    assert!(child.wait().unwrap().success());
    assert_eq!(served(&log), [json!({"tool": "archive", "args": {"id": 8, "sure": true}})]);
    let (_, all) = s.req(Method::GET, "/proposals", Some(&s.owner), None).await;
    assert_eq!(all["items"].as_array().unwrap().len(), 1, "asked once: {all}");
}
