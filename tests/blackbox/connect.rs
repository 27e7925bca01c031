//! `assent connect CLIENT`: one command wires each coding agent (and an MCP client's server)
//! into its own settings, as a person's settings really are (comments, other hooks, other
//! keys): what was there stays, a backup holds the file as it was, a second run changes
//! nothing, `assent doctor` then finds the client wired, and `--undo` gives back the file as it
//! was, byte for byte. What cannot be edited is said and left alone. (The real Gemini CLI and
//! Copilot CLI run the hooks `assent connect` writes: their scenarios wire them with it.)

use crate::harness::BIN;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

/// `assent --home HOME ARGS` with `user` as the home folder, in `cwd`.
fn assent(home: &Path, user: &Path, cwd: &Path, args: &[&str]) -> Output {
    crate::procs::as_user(home, user, cwd).args(args).output().unwrap()
}

fn said(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

/// A client's settings as a person has them before Assent: its file (under the user's home) and
/// what it holds (`None`: no file yet).
struct Before {
    client: &'static str,
    doctor: &'static str,
    file: &'static str,
    text: Option<&'static str>,
}

const BEFORE: &[Before] = &[
    Before {
        client: "claude-code",
        doctor: "claude code",
        file: ".claude/settings.json",
        text: Some(
            "{\n  // my settings\n  \"model\": \"opus\",\n  \"hooks\": {\n    \"PreToolUse\": [\n      { \"matcher\": \"Bash\", \"hooks\": [ { \"type\": \"command\", \"command\": \"my-linter\" } ] } // mine\n    ]\n  }\n}\n",
        ),
    },
    Before {
        client: "gemini-cli",
        doctor: "gemini cli",
        file: ".gemini/settings.json",
        text: Some(
            "{\n  /* theme */ \"ui\": { \"theme\": \"dark\" },\n  \"hooks\": { \"AfterTool\": [ { \"matcher\": \"\", \"hooks\": [ { \"type\": \"command\", \"command\": \"log-it\" } ] } ] },\n}\n",
        ),
    },
    Before { client: "copilot-cli", doctor: "copilot cli", file: ".copilot/hooks/assent.json", text: None },
    Before {
        client: "codex",
        doctor: "codex",
        file: ".codex/config.toml",
        text: Some(
            "# my codex\nmodel = \"gpt-5\"\n\n[features]\nweb_search = true # keep\n\n[[hooks.Stop]]\nmatcher = \"\"\n",
        ),
    },
    Before { client: "opencode", doctor: "opencode", file: ".config/opencode/plugin/assent.js", text: None },
    Before { client: "cline", doctor: "cline", file: ".cline/hooks/PreToolUse", text: None },
];

/// The backups `assent connect` left beside `file`.
fn backups(file: &Path) -> Vec<PathBuf> {
    let name = file.file_name().unwrap().to_string_lossy().to_string();
    let mut b: Vec<PathBuf> = std::fs::read_dir(file.parent().unwrap())
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| p.to_string_lossy().contains(&format!("{name}.assent-backup-")))
                .collect()
        })
        .unwrap_or_default();
    b.sort();
    b
}

#[test]
fn each_client_is_wired_kept_as_it_was_and_unwired_exactly() {
    for b in BEFORE {
        let dir = tempfile::tempdir().unwrap();
        let (user, home) = (dir.path().join("user"), dir.path().join("assent"));
        let file = user.join(b.file);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        if let Some(t) = b.text {
            std::fs::write(&file, t).unwrap();
        }
        let o = assent(&home, &user, &user, &["connect", b.client]);
        assert!(o.status.success(), "{}: {}", b.client, said(&o));
        let now = std::fs::read_to_string(&file).unwrap();
        assert!(now.contains(&format!("hook {}", b.client)), "{}: {now}", b.client);
        if let Some(t) = b.text {
            // What was there stays: every comment and the other hooks.
            for kept in [
                "// my settings",
                "my-linter",
                "// mine",
                "/* theme */",
                "log-it",
                "# my codex",
                "# keep",
                "[[hooks.Stop]]",
            ] {
                assert_eq!(t.contains(kept), now.contains(kept), "{}: {kept:?} in\n{now}", b.client);
            }
            let kept = backups(&file);
            assert_eq!(kept.len(), 1, "{}: one backup", b.client);
            assert_eq!(std::fs::read_to_string(&kept[0]).unwrap(), t, "{}: the backup is the file as it was", b.client);
        }
        // Again: nothing changes.
        let o = assent(&home, &user, &user, &["connect", b.client]);
        assert!(o.status.success() && said(&o).contains("nothing changed"), "{}: {}", b.client, said(&o));
        assert_eq!(std::fs::read_to_string(&file).unwrap(), now, "{}", b.client);
        // Doctor finds the client wired.
        let o = assent(&home, &user, &user, &["doctor", "--json"]);
        let report: Value = serde_json::from_slice(&o.stdout).unwrap_or_default();
        let check = report["checks"].as_array().into_iter().flatten().find(|c| c["name"] == b.doctor).cloned();
        let check = check.unwrap_or_else(|| panic!("{}: doctor says nothing: {report}", b.client));
        assert_eq!(check["status"], "ok", "{}: {check}", b.client);
        // Undone: the file as it was, byte for byte (or gone, where Assent made it).
        let o = assent(&home, &user, &user, &["connect", b.client, "--undo"]);
        assert!(o.status.success(), "{}: {}", b.client, said(&o));
        match b.text {
            Some(t) => assert_eq!(std::fs::read_to_string(&file).unwrap(), t, "{}", b.client),
            None => assert!(!file.exists(), "{}: Assent's own file is removed", b.client),
        }
        let o = assent(&home, &user, &user, &["connect", b.client, "--undo"]);
        assert!(o.status.success() && said(&o).contains("nothing changed"), "{}: {}", b.client, said(&o));
    }
}

#[test]
fn a_project_gets_its_own_settings_and_what_cannot_be_edited_is_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let (user, home, work) = (dir.path().join("user"), dir.path().join("assent"), dir.path().join("work"));
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(&user).unwrap();
    let o = assent(&home, &user, &work, &["connect", "claude-code", "--project"]);
    assert!(o.status.success(), "{}", said(&o));
    assert!(std::fs::read_to_string(work.join(".claude/settings.json")).unwrap().contains("hook claude-code"));
    assert!(!user.join(".claude").exists(), "the user's settings are not touched");
    // Not JSON, not an object, a hook file of someone else's, --project where a client has none.
    std::fs::create_dir_all(user.join(".gemini")).unwrap();
    std::fs::write(user.join(".gemini/settings.json"), "{ \"hooks\": [").unwrap();
    std::fs::create_dir_all(user.join(".cline/hooks")).unwrap();
    std::fs::write(user.join(".cline/hooks/PreToolUse"), "#!/bin/sh\nmy-own-hook\n").unwrap();
    for (args, says) in [
        (&["connect", "gemini-cli"][..], "not JSON Assent can edit"),
        (&["connect", "cline"][..], "not Assent's"),
        (&["connect", "codex", "--project"][..], "~/.codex/config.toml alone"),
        (&["connect", "nobody"][..], "invalid value"),
    ] {
        let o = assent(&home, &user, &work, args);
        assert!(!o.status.success() && said(&o).contains(says), "{args:?}: {}", said(&o));
        assert!(!said(&o).contains("panicked"));
    }
    assert_eq!(std::fs::read_to_string(user.join(".gemini/settings.json")).unwrap(), "{ \"hooks\": [");
    assert_eq!(std::fs::read_to_string(user.join(".cline/hooks/PreToolUse")).unwrap(), "#!/bin/sh\nmy-own-hook\n");
}

#[test]
fn an_mcp_clients_server_goes_behind_the_proxy_and_back() {
    let dir = tempfile::tempdir().unwrap();
    let (user, home) = (dir.path().join("user"), dir.path().join("assent"));
    std::fs::create_dir_all(&user).unwrap();
    let config = dir.path().join("claude_desktop_config.json");
    let before = "{\n  \"mcpServers\": {\n    // the blog\n    \"blog\": { \"command\": \"node\", \"args\": [\"/srv/blog/server.js\"], \"env\": { \"X\": \"1\" } },\n    \"web\": { \"url\": \"https://mcp.example.com/mcp\" }\n  }\n}\n";
    std::fs::write(&config, before).unwrap();
    let c = config.display().to_string();
    let o = assent(&home, &user, &user, &["connect", "mcp", "--config", &c, "--server", "blog"]);
    assert!(o.status.success(), "{}", said(&o));
    let now = std::fs::read_to_string(&config).unwrap();
    assert!(now.contains("// the blog") && now.contains("\"X\": \"1\""), "{now}");
    let v: Value = serde_json::from_str(&now.replace("// the blog", "")).unwrap();
    let blog = &v["mcpServers"]["blog"];
    assert_eq!(blog["command"], BIN, "{blog}");
    let args: Vec<&str> = blog["args"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert_eq!(&args[2..], ["mcp", "proxy", "--name", "blog", "--", "node", "/srv/blog/server.js"]);
    let o = assent(&home, &user, &user, &["connect", "mcp", "--config", &c, "--server", "blog"]);
    assert!(said(&o).contains("nothing changed"), "{}", said(&o));
    for (server, says) in [("web", "not started by a command"), ("nope", "no MCP server `nope`")] {
        let o = assent(&home, &user, &user, &["connect", "mcp", "--config", &c, "--server", server]);
        assert!(!o.status.success() && said(&o).contains(says), "{server}: {}", said(&o));
    }
    let o = assent(&home, &user, &user, &["connect", "mcp", "--config", &c, "--server", "blog", "--undo"]);
    assert!(o.status.success(), "{}", said(&o));
    assert_eq!(std::fs::read_to_string(&config).unwrap(), before);
}
