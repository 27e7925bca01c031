//! A list of commands each run on its own (Cline's `run_commands`): allowed only when a rule
//! allows every command in it, and read as no command when one could reach into the next.

#![allow(clippy::unwrap_used)]
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

/// Runs each command of `list` on its own with real bash in `work` (as Cline runs a list), and
/// says whether `outside/secret.txt`, beside `work`, survived.
fn run_each(work: &std::path::Path, list: &[&str]) -> bool {
    let outside = work.parent().unwrap().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret.txt"), "s3cret").unwrap();
    for c in list {
        let _ = std::process::Command::new("bash").arg("-c").arg(c).current_dir(work).output().unwrap();
    }
    outside.join("secret.txt").exists()
}

/// The attacks on reading a list as one line, run for real: each list below, run command by
/// command as Cline runs it, deletes a folder outside the project, and read naively as one line
/// (the commands joined, what the reader would see without the check) a rule allowing `cat`
/// would let it through; with the check each names no command and asks. And for every list here,
/// forms the check was not written for among them: whatever the rules allow runs without harm.
#[test]
fn a_list_that_reaches_into_the_next_command_is_never_allowed_run_for_real() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("project");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(work.join("notes.txt"), "notes\n").unwrap();
    let cwd = work.display().to_string();
    let allow = set(vec![rule("r1", Effect::Allow, input("cat"))]);
    let cline = ["run", "commands"].join("_");
    let as_list = |list: &[&str]| {
        let mut f = Facts::of_tool_call(&cline, &serde_json::json!({"commands": list}));
        f.cwd = Some(cwd.clone());
        Subject::new("default", KindName::ToolCall, f)
    };
    let bleeds: [&[&str]; 4] = [
        &["cat <<EOF", "rm -rf ../outside", "EOF"],
        &["cat <<-'EOF'", "rm -rf ../outside", "EOF"],
        &["cat notes.txt \\", "rm -rf ../outside"],
        &["cat notes.txt && cat <<EOF", "rm -rf ../outside", "EOF"],
    ];
    for list in bleeds {
        assert!(!run_each(&work, list), "{list:?}: run command by command, it deletes outside");
        // The control: read as one line, `cat` alone shows, and the rule would allow it.
        assert!(pick(&allow, &bash_at(&cwd, &list.join("\n"))).is_some(), "{list:?}: the naive reading allows");
        assert_eq!(pick(&allow, &as_list(list)), None, "{list:?}: the list asks");
    }
    let others: [&[&str]; 9] = [
        &["cat <<EOF", "rm -rf ../outside"],
        &["cat notes.txt \\ ", "rm -rf ../outside"],
        &["cat notes.txt \\\r", "rm -rf ../outside"],
        &["cat notes.txt |", "rm -rf ../outside"],
        &["cat 'notes.txt", "'; rm -rf ../outside; '"],
        &["cat notes.txt $(", "rm -rf ../outside)"],
        &["cat notes.txt; rm -rf ../outside"],
        &["cat notes.txt", "cat notes.txt # rm -rf ../outside"],
        &["cat notes.txt", "rm -rf ../outside"],
    ];
    for list in others {
        let harmless = run_each(&work, list);
        if pick(&allow, &as_list(list)).is_some() {
            assert!(harmless, "{list:?}: allowed, and it deleted outside");
        }
    }
}
