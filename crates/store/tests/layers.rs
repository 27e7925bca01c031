//! The crate's modules depend downward only: each names only the modules listed before it, so
//! the row decoding and the error mapping never reach up into a store, and no two modules import
//! each other. The sources are read with a real parser (tests/support/modules.rs: `use` trees,
//! paths in code, names re-exported by the crate root; test code left out).

#![allow(missing_docs, clippy::unwrap_used)]

#[path = "../../../tests/support/modules.rs"]
mod modules;

/// Bottom first: what a module may name is what comes before it.
const LAYERS: &[&str] = &["errors", "sql", "pending", "conn", "rows", "ops", "batch", "store", "lite", "pg"];

#[test]
fn modules_depend_downward_only() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let top = |m: &str| m.split("::").next().unwrap_or_default().to_string();
    let mut seen = 0;
    for (m, uses) in modules::module_graph(&src) {
        let me = top(&m);
        if me.is_empty() {
            continue; // lib.rs
        }
        let at = LAYERS.iter().position(|l| *l == me).unwrap_or_else(|| panic!("module `{me}` is in no layer"));
        for u in uses.iter().map(|u| top(u)).filter(|u| !u.is_empty() && *u != me) {
            seen += 1;
            assert!(LAYERS[..at].contains(&u.as_str()), "`{m}` names `{u}`, which is not below `{me}` in {LAYERS:?}");
        }
    }
    assert!(seen > 10, "the modules were read ({seen} names)");
}
