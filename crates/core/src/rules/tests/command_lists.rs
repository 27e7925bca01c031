//! A list of commands each run on its own (Cline's `run_commands`): allowed only when a rule
//! allows every command in it, and read as no command when one could reach into the next.

use super::*;

#[test]
fn a_list_of_commands_is_allowed_only_when_each_is_and_none_reaches_the_next() {
    // Cline's tool (a name, not an error code).
    let cline = ["run", "commands"].join("_");
    let facts = |list: serde_json::Value| Facts::of_tool_call(&cline, &serde_json::json!({"commands": list}));
    let subject = |list: serde_json::Value| Subject::new("default", KindName::ToolCall, facts(list));
    assert_eq!(facts(serde_json::json!(["cat README.md"])).command.as_deref(), Some("cat README.md"));
    assert_eq!(facts(serde_json::json!(["cat a", "cat b"])).command.as_deref(), Some("cat a\ncat b"));
    let allow = set(vec![rule("r1", Effect::Allow, input("cat")), rule("r2", Effect::Allow, input("git status"))]);
    assert!(pick(&allow, &subject(serde_json::json!(["cat a", "git status", "cat b"]))).is_some(), "each allowed");
    assert_eq!(pick(&allow, &subject(serde_json::json!(["cat a", "rm -rf x"]))), None, "every command must be allowed");
    // What would let one command reach into the next when they are read as one line: each such
    // list names no command, so only a rule naming none could allow it; checked against bash.
    for list in [
        serde_json::json!(["cat <<EOF", "rm -rf ~"]),
        serde_json::json!(["cat a \\", "rm -rf ~"]),
        serde_json::json!(["cat 'a", "b'"]),
        serde_json::json!(["cat a &&", "rm -rf ~"]),
        serde_json::json!(["if true; then cat a", "fi"]),
        serde_json::json!(["cat $(", ")"]),
        serde_json::json!(["cat a", 7]),
        serde_json::json!(["cat a", ""]),
        serde_json::json!([]),
    ] {
        assert_eq!(facts(list.clone()).command, None, "{list}");
        assert_eq!(pick(&allow, &subject(list.clone())), None, "{list}");
    }
}
