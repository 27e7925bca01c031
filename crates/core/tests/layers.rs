//! The layers inside the core, checked on its sources: values (time, ids, canonical JSON,
//! hidden characters, a list's gist, names, status, proposals, payloads and how a record holds
//! them, previews, credentials and origin rules) import nothing above them; contracts (the store trait, kinds, events) import only
//! values; the engine sits on top. And no two modules import each other, directly or around a
//! circle. The sources are read with a real parser (tests/support/modules.rs, shared with the
//! host's layering test, which plants the forms a text scan missed and checks each is found).

#![allow(missing_docs, clippy::unwrap_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

const VALUES: [&str; 21] = [
    "canonical",
    "confine",
    "crash",
    "decided",
    "credentials",
    "error",
    "held",
    "invisible",
    "light",
    "names",
    "payloads",
    "preview",
    "proposal",
    "remote",
    "rules",
    "secret",
    "status",
    "stored",
    "strict",
    "time",
    "verdict",
];
const CONTRACTS: [&str; 3] = ["events", "kinds", "store"];
const ENGINE: [&str; 1] = ["engine"];

fn layer(module: &str) -> Option<usize> {
    [&VALUES[..], &CONTRACTS[..], &ENGINE[..]].iter().position(|l| l.contains(&module))
}

#[path = "../../../tests/support/modules.rs"]
mod modules;

/// Which top-level module of the core each top-level module's code names (read with a parser:
/// `use` trees, paths in code, re-exports through the crate root; test code left out).
fn imports() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let top = |m: &str| m.split("::").next().unwrap_or_default().to_string();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (m, uses) in modules::module_graph(&src) {
        let me = top(&m);
        if me.is_empty() {
            continue; // lib.rs
        }
        let entry = graph.entry(me.clone()).or_default();
        entry.extend(uses.iter().map(|u| top(u)).filter(|u| !u.is_empty() && *u != me));
    }
    graph
}

#[test]
fn every_module_has_a_layer() {
    for m in imports().keys() {
        assert!(layer(m).is_some(), "module `{m}` of the core is in no layer: add it to tests/layers.rs");
    }
}

#[test]
fn no_layer_imports_a_layer_above_it() {
    for (m, uses) in imports() {
        let own = layer(&m).unwrap_or(usize::MAX);
        for u in uses {
            let theirs = layer(&u).unwrap_or(0);
            assert!(theirs <= own, "`{m}` (layer {own}) imports `{u}` (layer {theirs}), which is above it");
        }
    }
}

#[test]
fn no_circle_of_imports() {
    let graph = imports();
    // Depth-first search for a back edge, reporting the circle it closes.
    fn visit(m: &str, graph: &BTreeMap<String, BTreeSet<String>>, path: &mut Vec<String>, done: &mut BTreeSet<String>) {
        if let Some(i) = path.iter().position(|p| p == m) {
            panic!("a circle of imports in the core: {} -> {m}", path[i..].join(" -> "));
        }
        if done.contains(m) {
            return;
        }
        path.push(m.to_string());
        for next in graph.get(m).into_iter().flatten() {
            visit(next, graph, path, done);
        }
        path.pop();
        done.insert(m.to_string());
    }
    let mut done = BTreeSet::new();
    for m in graph.keys() {
        visit(m, &graph, &mut Vec::new(), &mut done);
    }
}

/// The engine's parts keep their own state: each part's fields are private to its module (the
/// engine reaches them through the part's methods), and the engine's `Inner` holds parts, not
/// the loose state they own. Read with a parser, so a field made `pub(crate)` later fails here.
#[test]
fn the_engines_parts_keep_their_state() {
    let engine = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/engine");
    let parts = [
        ("rules.rs", "RuleBook"),
        ("expiry.rs", "Sweeper"),
        ("identity.rs", "Identities"),
        ("receipts.rs", "Signer"),
        ("credentials.rs", "Credentials"),
        ("ledger.rs", "Ledger"),
    ];
    let structs = |file: &str| -> Vec<syn::ItemStruct> {
        let text = std::fs::read_to_string(engine.join(file)).unwrap();
        syn::parse_file(&text)
            .unwrap()
            .items
            .into_iter()
            .filter_map(|i| if let syn::Item::Struct(s) = i { Some(s) } else { None })
            .collect()
    };
    for (file, name) in parts {
        let part = structs(file).into_iter().find(|s| s.ident == name).unwrap_or_else(|| panic!("no {name} in {file}"));
        for f in &part.fields {
            assert!(
                matches!(f.vis, syn::Visibility::Inherited),
                "{name}.{} is visible outside {file}: a part's state is its own",
                f.ident.as_ref().map(ToString::to_string).unwrap_or_default()
            );
        }
    }
    let inner = structs("mod.rs").into_iter().find(|s| s.ident == "Inner").unwrap();
    let names: Vec<String> = inner.fields.iter().filter_map(|f| f.ident.as_ref().map(ToString::to_string)).collect();
    for loose in [
        "rule_changes",
        "swept",
        "next_sweep",
        "sweep_now",
        "owner_hash",
        "agents",
        "secrets",
        "receipts",
        "keys_rotated",
        "store",
        "bus",
        "waiters",
    ] {
        assert!(!names.iter().any(|n| n == loose), "Inner holds `{loose}`, which a part owns");
    }
}

/// A proposal is filed and moved through the ledger alone (`engine/ledger.rs`), where "announce
/// after commit" is said once. The types hold it first: the ledger alone holds the store's
/// `Filing`, and hands the rest of the engine its `Records`, which cannot file or move a
/// proposal. This holds it on the sources too, should a `Store` reach the engine another way: in
/// the engine's other sources, every call with the shape of `transition` (two arguments) or
/// `insert` (one) is made on the ledger, however the store was reached (a variable of any name,
/// a method chain), and none names `Store::`/`Filing::insert` or `transition` as a path. Read
/// with a parser; tried with a store held in a variable `s` (`s.transition(ts, true)`), which
/// fails it.
#[test]
fn proposals_change_through_the_ledger_alone() {
    use syn::visit::Visit;
    /// Whether `e` is the engine's ledger (`….ledger`).
    fn is_ledger(e: &syn::Expr) -> bool {
        matches!(e, syn::Expr::Field(f) if matches!(&f.member, syn::Member::Named(n) if n == "ledger"))
    }
    struct Calls(Vec<String>);
    impl<'a> Visit<'a> for Calls {
        fn visit_expr_method_call(&mut self, m: &'a syn::ExprMethodCall) {
            let arity = match m.method.to_string().as_str() {
                "transition" => Some(2),
                "insert" => Some(1),
                _ => None,
            };
            if arity == Some(m.args.len()) && !is_ledger(&m.receiver) {
                self.0.push(format!("`.{}(..)` on something other than the ledger", m.method));
            }
            syn::visit::visit_expr_method_call(self, m);
        }
        fn visit_expr_call(&mut self, c: &'a syn::ExprCall) {
            if let syn::Expr::Path(p) = &*c.func {
                let names: Vec<String> = p.path.segments.iter().map(|s| s.ident.to_string()).collect();
                if names.len() >= 2
                    && names.iter().any(|n| n == "Store" || n == "Filing")
                    && names.last().is_some_and(|n| n == "transition" || n == "insert")
                {
                    self.0.push(format!("`{}(..)`", names.join("::")));
                }
            }
            syn::visit::visit_expr_call(self, c);
        }
    }
    let engine = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/engine");
    let mut found = Vec::new();
    let mut in_ledger = 0;
    for entry in std::fs::read_dir(&engine).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let file = syn::parse_file(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let mut calls = Calls(Vec::new());
        calls.visit_file(&file);
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if name == "ledger.rs" {
            in_ledger += calls.0.len();
        } else {
            found.extend(calls.0.into_iter().map(|c| format!("{name}: {c}")));
        }
    }
    assert_eq!(in_ledger, 2, "the ledger files and moves proposals (the store's insert and transition)");
    assert!(found.is_empty(), "proposals changed outside the ledger: {found:#?}");
}
