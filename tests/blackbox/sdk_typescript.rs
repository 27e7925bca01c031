//! The TypeScript SDK's own tests (`sdk/typescript/test`, node:test) against the real `assent`
//! binary, after `npm ci` of its pinned dependencies and `npm run build` (git keeps neither
//! `dist/` nor the schema `src/schema.ts`, which the build generates from `docs/openapi.json`);
//! they include the check that the generated schema is not older than that document. And
//! the SDK installed as a new user does, from a fresh copy of its folder into projects outside
//! the repository (`test/fresh-install.sh`).

use crate::harness::BIN;
use std::path::PathBuf;
use std::process::Command;

#[test]
fn the_typescript_sdk_passes_its_tests_against_the_real_server() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("sdk/typescript");
    // npm keeps a copy of the lock it installed from: install again only when it differs.
    let installed = std::fs::read_to_string(dir.join("node_modules/.package-lock.json")).unwrap_or_default();
    let lock = std::fs::read_to_string(dir.join("package-lock.json")).unwrap();
    let versions = |s: &str| -> std::collections::BTreeMap<String, String> {
        let v: serde_json::Value = serde_json::from_str(s).unwrap_or_default();
        let pkgs = v["packages"].as_object().cloned().unwrap_or_default();
        pkgs.into_iter()
            .filter(|(k, _)| !k.is_empty())
            .map(|(k, p)| (k, p["version"].as_str().unwrap_or_default().to_string()))
            .collect()
    };
    let same = |a: &str, b: &str| !versions(a).is_empty() && versions(a) == versions(b);
    if !same(&installed, &lock) {
        let out = Command::new("npm").args(["ci", "--no-audit", "--no-fund"]).current_dir(&dir).output().unwrap();
        assert!(out.status.success(), "npm ci: {}", String::from_utf8_lossy(&out.stderr));
    }
    // npm ci builds dist/ too (the prepare script), but it is skipped above when nothing changed.
    let out = Command::new("npm").args(["run", "build"]).current_dir(&dir).output().unwrap();
    assert!(
        out.status.success(),
        "npm run build:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let out = Command::new("node")
        .args(["--test", "test/"])
        .current_dir(&dir)
        .env("ASSENT_BIN", BIN)
        .env_remove("ASSENT_HOME")
        .env_remove("ASSENT_URL")
        .env_remove("ASSENT_TOKEN")
        .output()
        .unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "the TypeScript SDK's tests failed:\n{text}");
    assert!(text.contains("# fail 0") && !text.contains("# pass 0"), "{text}");
}

#[test]
fn the_typescript_sdk_installs_from_a_fresh_clone_into_another_project() {
    crate::harness::fresh_install("sdk/typescript", "test/fresh-install.sh");
}
