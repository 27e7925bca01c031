//! The dependency rule between the crates, checked on their manifests: a host never leans on
//! another host, and the core leans on no other crate of Assent.

#![allow(missing_docs, clippy::unwrap_used)]

fn deps(manifest: &str) -> Vec<String> {
    let path = format!("{}/../../{manifest}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    let deps = text.split("[dependencies]").nth(1).unwrap_or("").split("\n[").next().unwrap_or("").to_string();
    deps.lines()
        .filter_map(|l| l.split(['=', '.', ' ']).next())
        .filter(|n| n.starts_with("assent"))
        .map(String::from)
        .collect()
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
    assert_eq!(deps("crates/core/Cargo.toml"), Vec::<String>::new());
    for host_only in ["assent-cli", "assent-host"] {
        for lib in ["crates/store", "crates/api", "crates/apply", "crates/secrets", "crates/notify", "crates/mcp"] {
            assert!(
                !deps(&format!("{lib}/Cargo.toml")).contains(&host_only.to_string()),
                "{lib} depends on {host_only}"
            );
        }
    }
}
