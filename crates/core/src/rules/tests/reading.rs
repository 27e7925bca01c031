//! How a rule reads a proposal before it matches: paths normalized and resolved, hosts read as
//! the HTTP client reads them, a tool call's commands and paths taken from its input.

use super::*;

#[test]
fn paths_are_normalized_and_real() {
    let edit = |p: &str| edit_in("/proj", p);
    let m = |p: &str| RuleMatch { tool: Some("Edit".into()), path: Some(p.into()), ..Default::default() };
    let allow = set(vec![rule("a", Effect::Allow, m("/proj/src/**"))]);
    assert!(pick(&allow, &edit("/proj/src/a.rs")).is_some());
    assert!(pick(&allow, &edit("src/a.rs")).is_some(), "relative to the working folder");
    assert!(pick(&allow, &edit("/proj/src/../../../etc/passwd")).is_none());
    assert!(pick(&allow, &edit("src/../../etc/passwd")).is_none());
    let deny = set(vec![rule("d", Effect::Deny, m("~/.ssh/**"))]);
    for p in ["~/.ssh/id_rsa", "~/./.ssh/id_rsa", "~//.ssh/id_rsa", "~/.ssh", "~/.ssh/", "~/x/../.ssh/id_rsa"] {
        assert!(pick(&deny, &edit(p)).is_some(), "{p}");
    }
    assert!(pick(&deny, &edit("~/.sshx")).is_none());
}

#[test]
fn hosts_are_read_as_the_http_client_reads_them() {
    let fetch = |url: &str| {
        let facts = Facts::of_tool_call("WebFetch", &serde_json::json!({"url": url}));
        Subject::new("a", KindName::ToolCall, facts)
    };
    let deny = |h: &str| set(vec![rule("d", Effect::Deny, RuleMatch { host: Some(h.into()), ..Default::default() })]);
    let evil = deny("evil.example");
    for u in
        ["https://evil.example/", "https://evil.example./", "https://EVIL.example/", "https://evil\u{3002}example/"]
    {
        assert!(pick(&evil, &fetch(u)).is_some(), "{u}");
    }
    let lo = deny("127.0.0.1");
    for u in ["http://[::ffff:127.0.0.1]/", "http://0x7f.1/", "http://2130706433/", "http://127.0.0.1./"] {
        assert!(pick(&lo, &fetch(u)).is_some(), "{u}");
    }
}

#[test]
fn tool_call_facts_read_commands_and_paths() {
    let f = Facts::of_tool_call("Bash", &serde_json::json!({"command": "npm test", "description": "x"}));
    assert_eq!(f.command.as_deref(), Some("npm test"));
    let f = Facts::of_tool_call("shell", &serde_json::json!({"command": ["bash", "-lc", "npm test"]}));
    assert_eq!(f.command.as_deref(), Some("npm test"));
    let f = Facts::of_tool_call("shell", &serde_json::json!({"command": ["ls", "-la", "a b"]}));
    assert_eq!(f.command.as_deref(), Some("ls -la 'a b'"));
    let f = Facts::of_tool_call("Edit", &serde_json::json!({"file_path": "/w/a.rs"}));
    assert_eq!(f.path.as_deref(), Some("/w/a.rs"));
    let f = Facts::of_tool_call("WebFetch", &serde_json::json!({"url": "https://Docs.Example.com./a", "prompt": "x"}));
    assert_eq!(f.host.as_deref(), Some("docs.example.com"));
}
