//! The dependency rule between the crates, checked on their manifests: a host never leans on
//! another host, and the core leans on no other crate of Assent but the leaves below it (crates
//! that lean on no crate of Assent themselves: the command reader).

#![allow(missing_docs, clippy::unwrap_used)]

fn deps(manifest: &str) -> Vec<String> {
    let path = format!("{}/../../{manifest}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    let deps = text.split("[dependencies]").nth(1).unwrap_or("").split("\n[").next().unwrap_or("").to_string();
    deps.lines()
        .filter_map(|l| l.split(['=', '.', ' ']).next())
        .filter(|n| n.starts_with("assent") && *n != HACK)
        .map(String::from)
        .collect()
}

/// The workspace-hack (cargo-hakari's): every crate depends on it, and it has no code, only the
/// third-party dependencies' unified features, so it is no layer.
const HACK: &str = "assent-workspace-hack";

#[test]
fn the_workspace_hack_names_no_crate_of_assent() {
    // Were it to, every crate would lean on that crate through it, whatever the rule below says.
    let path = format!("{}/../../crates/workspace-hack/Cargo.toml", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    let named: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("name ="))
        .filter_map(|l| l.split(['=', ' ']).next())
        .filter(|n| n.starts_with("assent"))
        .collect();
    assert!(named.is_empty(), "{named:?}");
}

#[test]
fn the_desktop_app_does_not_depend_on_the_command_line() {
    let desktop = deps("src-tauri/Cargo.toml");
    assert!(desktop.contains(&"assent-host".to_string()), "{desktop:?}");
    for other_host in ["assent-cli", "assent-mcp"] {
        assert!(!desktop.contains(&other_host.to_string()), "src-tauri depends on {other_host}");
    }
}

#[test]
fn the_core_depends_on_no_other_crate_of_assent() {
    assert_eq!(deps("crates/core/Cargo.toml"), vec!["assent-commands".to_string()]);
    assert_eq!(deps("crates/commands/Cargo.toml"), Vec::<String>::new(), "a leaf leans on nothing of Assent");
    for host_only in ["assent-cli", "assent-host"] {
        for lib in ["crates/store", "crates/api", "crates/apply", "crates/secrets", "crates/notify", "crates/mcp"] {
            assert!(
                !deps(&format!("{lib}/Cargo.toml")).contains(&host_only.to_string()),
                "{lib} depends on {host_only}"
            );
        }
    }
}

#[test]
fn every_client_of_the_api_goes_through_the_client_crate() {
    // The client crate knows the core's types and nothing of the engine's parts.
    assert_eq!(deps("crates/client/Cargo.toml"), vec!["assent-core".to_string()]);
    for client in ["crates/cli/Cargo.toml", "crates/mcp/Cargo.toml"] {
        assert!(deps(client).contains(&"assent-client".to_string()), "{client} does not use assent-client");
    }
    // The MCP server talks to Assent only over the API, like any other agent.
    let mcp = deps("crates/mcp/Cargo.toml");
    for engine_part in ["assent-store", "assent-api", "assent-apply", "assent-host"] {
        assert!(!mcp.contains(&engine_part.to_string()), "assent-mcp depends on {engine_part}");
    }
}

/// ARCHITECTURE.md is the map: every crate has its section (`### crates/NAME`), and each
/// section names every crate of Assent that crate's manifest depends on (or says it depends on
/// none), so the map cannot go stale while the manifests change.
#[test]
fn the_map_names_every_crate_and_what_it_depends_on() {
    let root = format!("{}/../..", env!("CARGO_MANIFEST_DIR"));
    let map = std::fs::read_to_string(format!("{root}/ARCHITECTURE.md")).unwrap();
    let section = |heading: &str| -> Option<String> {
        let start = map.find(&format!("\n### {heading}\n"))?;
        let rest = &map[start + 1..];
        let end = rest[4..].find("\n#").map_or(rest.len(), |e| e + 4);
        Some(rest[..end].to_string())
    };
    let mut crates: Vec<String> = std::fs::read_dir(format!("{root}/crates"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().join("Cargo.toml").is_file())
        .map(|e| format!("crates/{}", e.file_name().to_string_lossy()))
        .collect();
    crates.sort();
    crates.push("src-tauri".into());
    for dir in crates {
        let heading = if dir == "src-tauri" { "src-tauri/".to_string() } else { dir.clone() };
        let text = section(&heading).unwrap_or_else(|| panic!("ARCHITECTURE.md has no `### {heading}`"));
        let named = deps(&format!("{dir}/Cargo.toml"));
        for dep in &named {
            assert!(
                text.contains(&format!("`{dep}`")),
                "ARCHITECTURE.md, {heading}: does not name its dependency {dep}"
            );
        }
        if named.is_empty() {
            assert!(
                text.contains("no other crate of Assent") || text.contains("no crate of Assent"),
                "{heading}: {text}"
            );
        }
    }
}
