use super::*;
use tokio::sync::mpsc::UnboundedReceiver;

/// A proxy with no Assent behind it, and what it sends each way.
fn proxy() -> (Proxy, UnboundedReceiver<String>, UnboundedReceiver<Value>) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let api = Client::new(Arc::new(|| None), Arc::new(|| Some("t".into())), "mcp").expect("client");
    let (to_client, client) = unbounded_channel();
    let (to_server, server) = unbounded_channel();
    let p = Proxy {
        api,
        name: "blog".into(),
        wait: Duration::from_secs(5),
        state: Arc::default(),
        to_client,
        to_server,
        closing: CancellationToken::new(),
        running: TaskTracker::new(),
    };
    (p, client, server)
}

async fn answer(client: &mut UnboundedReceiver<String>) -> Value {
    let line = tokio::time::timeout(Duration::from_secs(10), client.recv()).await.expect("an answer").expect("open");
    serde_json::from_str(&line).expect("json")
}

#[tokio::test]
async fn a_call_assent_cannot_file_is_not_run_and_the_model_is_told() {
    let (p, mut client, mut server) = proxy();
    p.client_said(
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"delete_post","arguments":{"id":1}}}"#,
    );
    let a = answer(&mut client).await;
    assert_eq!(a["id"], 7);
    assert_eq!(a["result"]["isError"], true);
    assert!(a["result"]["content"][0]["text"].as_str().is_some_and(|t| t.contains("not running")), "{a}");
    assert!(server.try_recv().is_err(), "the call never reached the server");
}

#[tokio::test]
async fn everything_else_passes_and_calls_in_a_batch_are_gated_each() {
    let (p, mut client, mut server) = proxy();
    p.client_said(
        r#"[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x"}},{"jsonrpc":"2.0","method":"notifications/initialized"}]"#,
    );
    assert_eq!(server.recv().await.expect("list")["method"], "tools/list");
    assert_eq!(server.recv().await.expect("note")["method"], "notifications/initialized");
    assert_eq!(answer(&mut client).await["result"]["isError"], true);
    assert!(server.try_recv().is_err());
    // A call without an id would run unanswered: dropped.
    p.client_said(r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"x"}}"#);
    assert!(server.try_recv().is_err());
}

#[tokio::test]
async fn what_the_proxy_cannot_read_never_reaches_the_server() {
    let (p, mut client, mut server) = proxy();
    for bad in ["{\"method\":\"tools/call\",", "\u{feff}{\"jsonrpc\":\"2.0\"}", "NaN"] {
        p.client_said(bad);
        let a = answer(&mut client).await;
        assert_eq!(a["error"]["code"], -32700, "{bad}: {a}");
    }
    // A duplicated key reaches the server as the proxy read it (the last one), once.
    p.client_said(r#"{"jsonrpc":"2.0","id":3,"method":"ping","method":"tools/list"}"#);
    let m = server.recv().await.expect("sent");
    assert_eq!(m["method"], "tools/list");
    assert!(server.try_recv().is_err());
    for disguised in ["Tools/Call", "tools/call ", "tools.call", r"tools/call\u0000", "TOOLS_CALL"] {
        p.client_said(&format!(r#"{{"jsonrpc":"2.0","id":5,"method":"{disguised}","params":{{"name":"x"}}}}"#));
        assert_eq!(answer(&mut client).await["error"]["code"], -32601, "{disguised}");
    }
    for bad_params in [r#""params":5"#, r#""params":{"name":1}"#, r#""params":{"name":"x","arguments":[1]}"#] {
        p.client_said(&format!(r#"{{"jsonrpc":"2.0","id":4,"method":"tools/call",{bad_params}}}"#));
        assert_eq!(answer(&mut client).await["error"]["code"], -32602, "{bad_params}");
    }
    assert!(server.try_recv().is_err());
}

#[tokio::test]
async fn tools_that_declare_the_receipt_argument_are_noted_from_the_list() {
    let (p, mut client, _server) = proxy();
    p.client_said(r#"{"jsonrpc":"2.0","id":"l","method":"tools/list"}"#);
    let list = json!({"jsonrpc": "2.0", "id": "l", "result": {"tools": [
        {"name": "delete_post", "inputSchema": {"type": "object", "properties": {"id": {}, "assent_receipt": {"type": "string"}}}},
        {"name": "echo", "inputSchema": {"type": "object", "properties": {"text": {}}}}]}});
    p.server_said(list.to_string());
    assert_eq!(answer(&mut client).await, list, "passed on as it is");
    let r = p.state().receipts.clone();
    assert_eq!((r.get("delete_post"), r.get("echo")), (Some(&true), Some(&false)));
    // An answer to a request of another kind, with the same shape, changes nothing.
    p.server_said(
        json!({"jsonrpc": "2.0", "id": "other", "result": {"tools": [{"name": "echo",
        "inputSchema": {"properties": {"assent_receipt": {}}}}]}})
        .to_string(),
    );
    assert_eq!(p.state().receipts.get("echo"), Some(&false));
}

#[test]
fn server_names() {
    assert_eq!(default_name(&["/usr/bin/blog-server".into()]), "blog-server");
    assert_eq!(default_name(&["server.py".into(), "x".into()]), "server");
    assert_eq!(default_name(&["a b.c".into()]), "a_b");
    assert_eq!(default_name(&["x__y".into()]), "x_y");
    assert_eq!(default_name(&[]), "server");
    assert!(is_server_name("github") && is_server_name("my-api_2"));
    for bad in ["", "a__b", "a b", "x/y", &"n".repeat(65)] {
        assert!(!is_server_name(bad), "{bad}");
    }
}
