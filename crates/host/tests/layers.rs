//! The dependency rule between the crates, checked on their manifests: a host never leans on
//! another host, the core leans on no other crate of Assent but the leaves below it (crates
//! that lean on no crate of Assent themselves: the command reader, the agent clients), and the
//! boundary (where an allow becomes a run) on neither host. And, across the workspace:
//! ARCHITECTURE.md names every crate and what it depends on, no manifest declares a dependency
//! its code does not use, and no crate's modules import each other in a circle.

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
fn the_core_leans_on_the_leaves_alone_and_the_boundary_on_no_host() {
    assert_eq!(deps("crates/core/Cargo.toml"), vec!["assent-agents".to_string(), "assent-commands".to_string()]);
    for leaf in ["crates/commands", "crates/agents"] {
        assert_eq!(
            deps(&format!("{leaf}/Cargo.toml")),
            Vec::<String>::new(),
            "{leaf}: a leaf leans on nothing of Assent"
        );
    }
    // The boundary (the hook's fast path, the ticket, the box, assent-run) leans on neither host.
    let boundary = deps("crates/boundary/Cargo.toml");
    for host in ["assent-cli", "assent-host", "assent-api", "assent-store", "assent-mcp"] {
        assert!(!boundary.contains(&host.to_string()), "assent-boundary depends on {host}");
    }
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

#[path = "../../../tests/support/modules.rs"]
mod modules;

/// A crate's modules and the modules each names (read with a parser; see tests/support/modules.rs).
fn module_graph(src: &std::path::Path) -> std::collections::BTreeMap<String, std::collections::BTreeSet<String>> {
    modules::module_graph(src)
}

/// The circles of `graph`: each as the modules on it, in order.
fn circles(graph: &std::collections::BTreeMap<String, std::collections::BTreeSet<String>>) -> Vec<Vec<String>> {
    // Depth-first, with the path kept: a module reached again while on the path closes a circle.
    fn visit(
        n: &str,
        graph: &std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut std::collections::BTreeSet<String>,
        out: &mut Vec<Vec<String>>,
    ) {
        if let Some(i) = path.iter().position(|p| p == n) {
            out.push(path[i..].to_vec());
            return;
        }
        if !done.insert(n.to_string()) {
            return;
        }
        path.push(n.to_string());
        for next in graph.get(n).into_iter().flatten() {
            visit(next, graph, path, done, out);
        }
        path.pop();
    }
    let mut out = Vec::new();
    let mut done = std::collections::BTreeSet::new();
    for n in graph.keys() {
        visit(n, graph, &mut Vec::new(), &mut done, &mut out);
    }
    out
}

/// No crate's modules import each other in a circle (the map of each crate reads one way).
#[test]
fn no_crate_has_an_import_circle() {
    let root = std::path::PathBuf::from(format!("{}/../..", env!("CARGO_MANIFEST_DIR")));
    let mut srcs: Vec<std::path::PathBuf> = std::fs::read_dir(root.join("crates"))
        .unwrap()
        .flatten()
        .map(|e| e.path().join("src"))
        .filter(|p| p.is_dir())
        .collect();
    srcs.extend([root.join("src"), root.join("src-tauri/src")]);
    srcs.sort();
    let mut found = Vec::new();
    for src in &srcs {
        for c in circles(&module_graph(src)) {
            found.push(format!("{}: {}", src.strip_prefix(&root).unwrap().display(), c.join(" -> ")));
        }
    }
    assert!(found.is_empty(), "import circles:\n{}", found.join("\n"));
}

/// Every dependency a manifest declares is used by its code (the crate's name, with `_` for
/// `-`, in its sources, build script, tests, benches or examples): a dependency nothing uses
/// only costs build time and hides the real layering. `workspace-hack` is named for its features.
#[test]
fn no_crate_declares_a_dependency_it_does_not_use() {
    let root = std::path::PathBuf::from(format!("{}/../..", env!("CARGO_MANIFEST_DIR")));
    let mut dirs: Vec<std::path::PathBuf> =
        std::fs::read_dir(root.join("crates")).unwrap().flatten().map(|e| e.path()).collect();
    dirs.extend([root.clone(), root.join("src-tauri")]);
    dirs.retain(|d| d.join("Cargo.toml").is_file() && !d.ends_with("workspace-hack"));
    dirs.sort();
    let mut unused = Vec::new();
    for dir in &dirs {
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        let mut text = String::new();
        let mut stack: Vec<std::path::PathBuf> =
            ["src", "tests", "benches", "examples", "build.rs"].iter().map(|p| dir.join(p)).collect();
        while let Some(p) = stack.pop() {
            if p.is_dir() && !(dir == &root && p.file_name().is_some_and(|n| n == "crates")) {
                stack.extend(std::fs::read_dir(&p).unwrap().flatten().map(|e| e.path()));
            } else if p.is_file() && p.extension().is_some_and(|x| x == "rs") {
                let t = std::fs::read_to_string(&p).unwrap();
                // A file a `#[path = "..."]` brings in is the crate's code too (tests/support).
                for (at, _) in t.match_indices("#[path = \"") {
                    let rest = &t[at + 10..];
                    if let Some(rel) = rest.split('"').next() {
                        stack.push(p.parent().unwrap().join(rel));
                    }
                }
                text.push_str(&t);
            }
        }
        for section in ["[dependencies]", "[dev-dependencies]", "[build-dependencies]"] {
            let Some(body) = manifest.split(section).nth(1) else { continue };
            let body = body.split("\n[").next().unwrap_or("");
            for line in body.lines().filter(|l| !l.trim_start().starts_with('#') && l.contains('=')) {
                let name = line.split(['=', '.', ' ']).next().unwrap_or("").trim();
                if name.is_empty() || name == "assent-workspace-hack" {
                    continue;
                }
                // `package = "..."` renames: the code uses the key.
                let used = name.replace('-', "_");
                if !text.contains(&format!("{used}::"))
                    && !text.contains(&format!("use {used}"))
                    && !text.contains(&format!("{used}!"))
                    && !text.contains(&format!("extern crate {used}"))
                {
                    unused.push(format!("{}: {section} {name}", dir.strip_prefix(&root).unwrap().display()));
                }
            }
        }
    }
    assert!(unused.is_empty(), "declared and unused:\n{}", unused.join("\n"));
}

/// The module graph is read with a parser, so the forms a text scan missed are seen: a name
/// imported through the crate root's re-export, the second item of a nested `use` group, code
/// after an early `#[cfg(test)]`, and a circle made through `crate::` paths in expressions; while
/// code under `#[cfg(test)]` is left out wherever it stands.
#[test]
fn planted_faults_are_each_found() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    let files = [
        ("lib.rs", "mod a;\nmod b;\nmod c;\nmod d;\npub mod proposal;\npub use proposal::Proposal;\n"),
        ("proposal.rs", "pub struct Proposal;\n"),
        (
            "a.rs",
            "use crate::Proposal;\nuse crate::{c::One, b::{Two, Three}};\n#[cfg(test)]\nfn helper() {}\npub fn after() -> u8 { crate::b::two() }\n#[cfg(test)]\nmod tests {\n    use crate::d::Only;\n}\n",
        ),
        ("b.rs", "pub struct Two;\npub struct Three;\npub fn two() -> u8 { crate::a::after(); 2 }\n"),
        ("c.rs", "pub struct One;\n"),
        ("d.rs", "pub struct Only;\n"),
    ];
    for (name, text) in files {
        std::fs::write(src.join(name), text).unwrap();
    }
    let graph = modules::module_graph(src);
    let a: Vec<&str> = graph["a"].iter().map(String::as_str).collect();
    assert_eq!(
        a,
        ["b", "c", "proposal"],
        "through the root, a nested group's second item, code after cfg(test); not the tests' `d`"
    );
    assert!(graph["b"].contains("a"), "{graph:?}");
    assert!(!circles(&graph).is_empty(), "the circle a -> b -> a through expressions is found");
}
