//! A crate's modules and the modules each one's code names, read with a real Rust parser
//! (`syn`): every path in its code and every `use` tree (groups within groups, renames, globs),
//! `crate::`, `self::` and `super::` resolved against the module the file is, and names the crate
//! root (or any module) re-exports followed to the module that defines them (`use
//! crate::Proposal` names `proposal`). Code under `#[cfg(test)]` (an item or a module) is left out,
//! wherever it stands in the file; what follows it still counts. Shared by the layering tests.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use syn::visit::Visit;

/// Module path (segments) of each `.rs` file under `src`.
fn module_of(src: &Path, f: &Path) -> Vec<String> {
    let rel = f.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel.iter().map(|c| c.to_string_lossy().into_owned()).collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib" | "main")) {
        parts.pop();
    }
    parts
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Whether `attrs` hold `#[cfg(test)]`.
fn for_tests(attrs: &[syn::Attribute]) -> bool {
    attrs
        .iter()
        .any(|a| a.path().is_ident("cfg") && a.parse_args::<syn::Meta>().is_ok_and(|m| m.path().is_ident("test")))
}

/// The paths a use tree names, each whole (`a::{b, c::d}` is `a::b` and `a::c::d`).
fn use_paths(tree: &syn::UseTree, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            use_paths(&p.tree, prefix, out);
            prefix.pop();
        }
        syn::UseTree::Name(n) => out.push([prefix.clone(), vec![n.ident.to_string()]].concat()),
        syn::UseTree::Rename(r) => out.push([prefix.clone(), vec![r.ident.to_string()]].concat()),
        syn::UseTree::Glob(_) => out.push(prefix.clone()),
        syn::UseTree::Group(g) => g.items.iter().for_each(|t| use_paths(t, prefix, out)),
    }
}

/// What a file names, and what it re-exports (`pub use`: the name it is known by here, and the
/// path it stands for).
#[derive(Default)]
struct Named {
    paths: Vec<Vec<String>>,
    reexports: Vec<(String, Vec<String>)>,
}

impl<'ast> Visit<'ast> for Named {
    fn visit_item(&mut self, i: &'ast syn::Item) {
        let attrs = match i {
            syn::Item::Fn(x) => &x.attrs,
            syn::Item::Mod(x) => &x.attrs,
            syn::Item::Impl(x) => &x.attrs,
            syn::Item::Use(x) => &x.attrs,
            syn::Item::Const(x) => &x.attrs,
            syn::Item::Static(x) => &x.attrs,
            syn::Item::Struct(x) => &x.attrs,
            syn::Item::Enum(x) => &x.attrs,
            syn::Item::Trait(x) => &x.attrs,
            syn::Item::Type(x) => &x.attrs,
            syn::Item::Macro(x) => &x.attrs,
            _ => return syn::visit::visit_item(self, i),
        };
        if !for_tests(attrs) {
            syn::visit::visit_item(self, i);
        }
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if !for_tests(&f.attrs) {
            syn::visit::visit_impl_item_fn(self, f);
        }
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        let mut paths = Vec::new();
        use_paths(&u.tree, &mut Vec::new(), &mut paths);
        if matches!(u.vis, syn::Visibility::Public(_) | syn::Visibility::Restricted(_)) {
            // Each name a `pub use` brings in, by the name it is known by (a rename's new name).
            fn names(tree: &syn::UseTree, prefix: &mut Vec<String>, out: &mut Vec<(String, Vec<String>)>) {
                match tree {
                    syn::UseTree::Path(p) => {
                        prefix.push(p.ident.to_string());
                        names(&p.tree, prefix, out);
                        prefix.pop();
                    }
                    syn::UseTree::Name(n) => {
                        out.push((n.ident.to_string(), [prefix.clone(), vec![n.ident.to_string()]].concat()))
                    }
                    syn::UseTree::Rename(r) => {
                        out.push((r.rename.to_string(), [prefix.clone(), vec![r.ident.to_string()]].concat()))
                    }
                    syn::UseTree::Glob(_) => {}
                    syn::UseTree::Group(g) => g.items.iter().for_each(|t| names(t, prefix, out)),
                }
            }
            names(&u.tree, &mut Vec::new(), &mut self.reexports);
        }
        self.paths.extend(paths);
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        self.paths.push(p.segments.iter().map(|s| s.ident.to_string()).collect());
        syn::visit::visit_path(self, p);
    }
}

/// A crate's modules (`a::b`), each with the modules its code names, but for its own ancestors
/// and descendants (a module uses its parent's items and declares its children: no circle).
pub fn module_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut read: BTreeMap<Vec<String>, Named> = BTreeMap::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let file = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let mut named = Named::default();
        named.visit_file(&file);
        read.insert(module_of(src, f), named);
    }
    let modules: BTreeSet<Vec<String>> = read.keys().cloned().collect();
    // A path from module `me`, absolute (crate-relative) when it starts at crate, self or super.
    let absolute = |me: &[String], p: &[String]| -> Option<Vec<String>> {
        let (mut base, mut rest) = match p.first().map(String::as_str) {
            Some("crate") => (Vec::new(), &p[1..]),
            Some("self") => (me.to_vec(), &p[1..]),
            Some("super") => (me.to_vec(), p),
            _ => return None,
        };
        while rest.first().map(String::as_str) == Some("super") {
            base.pop();
            rest = &rest[1..];
        }
        base.extend(rest.iter().cloned());
        Some(base)
    };
    // The module an absolute path lands in, a re-exported name followed to where it is defined.
    let resolve = |path: Vec<String>| -> Vec<String> {
        let mut path = path;
        for _ in 0..8 {
            let m: Vec<String> =
                (0..=path.len()).rev().map(|n| path[..n].to_vec()).find(|p| modules.contains(p)).unwrap_or_default();
            let Some(next) = path.get(m.len()) else { return m };
            let Some((_, target)) = read.get(&m).and_then(|n| n.reexports.iter().find(|(name, _)| name == next)) else {
                return m;
            };
            match absolute(&m, target).or_else(|| {
                // `pub use child::Name` in a module: a path relative to it (2018 paths).
                modules
                    .contains(&[m.clone(), vec![target[0].clone()]].concat())
                    .then(|| [m.clone(), target.clone()].concat())
            }) {
                Some(t) if t != path => path = t,
                _ => return m,
            }
        }
        path
    };
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (me, named) in &read {
        let edges = graph.entry(me.join("::")).or_default();
        for p in &named.paths {
            // A path relative to the file's module (`child::x` where `mod child`): as from here.
            let abs = absolute(me, p).or_else(|| {
                let local = [me.clone(), vec![p[0].clone()]].concat();
                (p.len() > 1 && modules.contains(&local)).then(|| [me.clone(), p.clone()].concat())
            });
            let Some(abs) = abs else { continue };
            let target = resolve(abs);
            if !(target.starts_with(me) || me.starts_with(&target)) {
                edges.insert(target.join("::"));
            }
        }
    }
    graph
}
