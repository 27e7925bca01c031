//! Embeds the review page (`ui/dist-remote`, built by `npm run build` in `ui/`) so the one
//! binary serves it. Without it the build still succeeds, and the page answers
//! `page_not_built` (the API and the listener's routes work the same).

use std::path::{Path, PathBuf};

fn walk(dir: &Path, base: &Path, out: &mut Vec<(String, PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, base, out);
        } else if let Ok(rel) = p.strip_prefix(base) {
            let rel = rel.to_string_lossy().replace('\\', "/");
            out.push((rel, p.canonicalize().unwrap_or(p.clone())));
        }
    }
}

fn main() {
    println!("cargo:rerun-if-env-changed=ASSENT_REMOTE_PAGE_DIR");
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default());
    let dir = std::env::var_os("ASSENT_REMOTE_PAGE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest.join("../../ui/dist-remote"));
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files = Vec::new();
    walk(&dir, &dir, &mut files);
    if !files.iter().any(|(name, _)| name == "remote.html") {
        println!(
            "cargo:warning=the review page is not built ({} has no remote.html): run `npm run build` in ui/ first; until then the remote listener answers page_not_built",
            dir.display()
        );
        files.clear();
    }
    let mut code =
        String::from("/// The review page's files, by path.\npub(crate) static FILES: &[(&str, &[u8])] = &[\n");
    for (name, path) in &files {
        code.push_str(&format!("    ({name:?}, include_bytes!({:?})),\n", path.display().to_string()));
    }
    code.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap_or_default()).join("page.rs");
    std::fs::write(out, code).unwrap_or_else(|e| panic!("cannot write the page's index: {e}"));
}
