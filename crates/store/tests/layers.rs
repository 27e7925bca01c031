//! The crate's modules depend downward only: each names only the modules listed before it, so
//! the row decoding and the error mapping never reach up into a store, and no two modules import
//! each other.

#![allow(missing_docs, clippy::unwrap_used)]

/// Bottom first: what a module may name is what comes before it.
const LAYERS: &[&str] = &["errors", "sql", "pending", "conn", "rows", "ops", "batch", "store", "lite", "pg"];

#[test]
fn modules_depend_downward_only() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let named = regex::Regex::new(r"crate::(\{[^}]*\}|[a-z_]+)").unwrap();
    let mut seen = 0;
    for (at, module) in LAYERS.iter().enumerate() {
        let file = if *module == "pg" { src.join("pg") } else { src.join(format!("{module}.rs")) };
        let files: Vec<std::path::PathBuf> = if file.is_dir() {
            std::fs::read_dir(&file).unwrap().map(|e| e.unwrap().path()).collect()
        } else {
            vec![file]
        };
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            // Code only: what a comment names is no dependency.
            let code: String =
                text.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n");
            for m in named.captures_iter(&code) {
                for name in
                    m[1].trim_matches(|c| c == '{' || c == '}').split(',').map(|n| n.trim().split("::").next().unwrap())
                {
                    seen += 1;
                    let below = LAYERS[..at].contains(&name) || name == *module;
                    assert!(below, "{} names crate::{name}, which is not below `{module}` in {LAYERS:?}", f.display());
                }
            }
        }
    }
    assert!(seen > 20, "the modules were read ({seen} names)");
}
