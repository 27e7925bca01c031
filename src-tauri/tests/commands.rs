//! The window's commands are named in three places that must agree: the build script (which
//! makes each one a permission), the handler list in `lib.rs`, and the capability that allows
//! them. A command missing from one of them is either uncallable or callable without leave.

#![allow(missing_docs, clippy::unwrap_used)]

fn read(path: &str) -> String {
    std::fs::read_to_string(format!("{}/{path}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn between<'a>(text: &'a str, start: &str, end: &str) -> &'a str {
    let from = text.find(start).unwrap_or_else(|| panic!("no {start:?}")) + start.len();
    let len = text[from..].find(end).unwrap_or_else(|| panic!("no {end:?} after {start:?}"));
    &text[from..from + len]
}

fn sorted(v: impl Iterator<Item = String>) -> Vec<String> {
    let mut v: Vec<String> = v.collect();
    v.sort();
    v
}

/// The names of a comma-separated list, each as `name` reads it, sorted.
fn names(list: &str, name: impl Fn(&str) -> &str) -> Vec<String> {
    sorted(list.split(',').map(|s| name(s.trim()).to_string()).filter(|s| !s.is_empty()))
}

#[test]
fn build_script_handlers_capability_and_commands_agree() {
    let build = read("build.rs");
    let declared = names(between(&build, "let commands = &[", "];"), |s| s.trim_matches('"'));
    let lib = read("src/lib.rs");
    let handled = names(between(&lib, "generate_handler![", "]"), |s| s.trim_start_matches("commands::"));
    let cap: serde_json::Value = serde_json::from_str(&read("capabilities/main.json")).unwrap();
    let allowed = sorted(
        cap["permissions"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|p| p.as_str()?.strip_prefix("allow-").map(|c| c.replace('-', "_"))),
    );
    let source = read("src/commands.rs");
    let defined = sorted(
        source
            .split("#[tauri::command]")
            .skip(1)
            .filter_map(|rest| rest.split("fn ").nth(1)?.split(['(', '<']).next().map(|n| n.trim().to_string())),
    );
    assert_eq!(declared, handled, "build.rs vs generate_handler!");
    assert_eq!(declared, allowed, "build.rs vs capabilities/main.json");
    assert_eq!(declared, defined, "build.rs vs the #[tauri::command] functions");
}
