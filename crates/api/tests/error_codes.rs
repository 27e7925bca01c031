//! The README's list of error codes is generated from the code, so it cannot drift: this test
//! collects every code the engine, the kinds, the store, the keychain and the API can answer
//! (from where they are raised), renders the list, and compares it with the README's block.
//! `ASSENT_UPDATE_README=1 cargo test -p assent-api --test error_codes` rewrites the block.

#![allow(missing_docs, clippy::unwrap_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const START: &str = "<!-- error-codes: generated from the code by the error_codes test; do not edit -->";
const END: &str = "<!-- /error-codes -->";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn sources(dir: &Path, out: &mut Vec<(PathBuf, String)>) {
    for e in std::fs::read_dir(dir).unwrap().filter_map(Result::ok) {
        let p = e.path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            let text = std::fs::read_to_string(&p).unwrap();
            // Unit tests name codes in assertions; only the code above them raises any.
            let text = text.split("#[cfg(test)]").next().unwrap_or("").to_string();
            out.push((p, text));
        }
    }
}

/// The code of the crates that raise errors (their unit tests left out).
fn all_sources() -> Vec<(PathBuf, String)> {
    let mut files = Vec::new();
    for c in ["crates/core/src", "crates/api/src", "crates/apply/src", "crates/store/src", "crates/secrets/src"] {
        sources(&root().join(c), &mut files);
    }
    files
}

fn status_number(name: &str) -> u16 {
    match name {
        "BAD_REQUEST" => 400,
        "UNAUTHORIZED" => 401,
        "FORBIDDEN" => 403,
        "NOT_FOUND" => 404,
        "METHOD_NOT_ALLOWED" => 405,
        "CONFLICT" => 409,
        "PAYLOAD_TOO_LARGE" => 413,
        "UNSUPPORTED_MEDIA_TYPE" => 415,
        "UNPROCESSABLE_ENTITY" => 422,
        "TOO_MANY_REQUESTS" => 429,
        "INTERNAL_SERVER_ERROR" => 500,
        "SERVICE_UNAVAILABLE" => 503,
        "INSUFFICIENT_STORAGE" => 507,
        other => panic!("add {other} to the error_codes test"),
    }
}

/// (status -> codes of request errors, codes of failed proposals)
fn collect() -> (BTreeMap<u16, BTreeSet<String>>, BTreeSet<String>) {
    let files = all_sources();
    let mut request: BTreeMap<u16, BTreeSet<String>> = BTreeMap::new();
    let mut failed = BTreeSet::new();
    let invalid = regex::Regex::new(r#"\b(?:CoreError::invalid|invalid|refuse|bad)\(\s*"([a-z][a-z_]+)""#).unwrap();
    let api =
        regex::Regex::new(r#"(?:ApiError|Self)::new\(\s*(?:axum::http::)?StatusCode::([A-Z_]+),\s*"([a-z][a-z_]+)""#)
            .unwrap();
    // A status arm that names its code: `StatusCode::X => ("code", ...)` or `=> (\n "code"`.
    let status_arm = regex::Regex::new(r#"StatusCode::([A-Z_]+)\s*=>\s*\{?\s*\(\s*"([a-z][a-z_]+)""#).unwrap();
    let limited = regex::Regex::new(r#"(TooMany|Unavailable)\s*\{\s*code:\s*"([a-z][a-z_]+)""#).unwrap();
    let failure =
        regex::Regex::new(r#"(?:ApplyOutcome::failed|\bfail)\(\s*"([a-z][a-z_]+)"|code:\s*"([a-z][a-z_]+)"\.into\(\)"#)
            .unwrap();
    let arm =
        regex::Regex::new(r#"CoreError::(\w+)(?:\((?:[^()]|\([^()]*\))*\)|\s*\{[^}]*\})?\s*=>\s*"([a-z][a-z_]+)""#)
            .unwrap();
    for (path, text) in &files {
        for c in invalid.captures_iter(text) {
            // A body naming something that does not exist is answered 404 (`NAMES_NOTHING`).
            let status = if assent_api::error::NAMES_NOTHING.contains(&&c[1]) {
                404
            } else if assent_api::error::NOT_SHOWN.contains(&&c[1]) {
                409
            } else {
                422
            };
            request.entry(status).or_default().insert(c[1].to_string());
        }
        for c in api.captures_iter(text) {
            request.entry(status_number(&c[1])).or_default().insert(c[2].to_string());
        }
        for c in status_arm.captures_iter(text) {
            request.entry(status_number(&c[1])).or_default().insert(c[2].to_string());
        }
        for c in limited.captures_iter(text) {
            let status = if &c[1] == "TooMany" { 429 } else { 503 };
            request.entry(status).or_default().insert(c[2].to_string());
        }
        for c in failure.captures_iter(text) {
            failed.insert(c.get(1).or(c.get(2)).unwrap().as_str().to_string());
        }
        if path.ends_with("core/src/error.rs") {
            // The fixed codes of `CoreError::code`, with the statuses the API gives them.
            for c in arm.captures_iter(text) {
                let status = match &c[1] {
                    "NotFound" => 404,
                    "InvalidState" | "IdempotencyConflict" | "Conflict" => 409,
                    "Forbidden" => 403,
                    "Store" if &c[2] == "storage_full" => 507,
                    "Store" if &c[2] == "store_unavailable" => 503,
                    "Store" => 500,
                    _ => continue,
                };
                request.entry(status).or_default().insert(c[2].to_string());
            }
        }
    }
    (request, failed)
}

fn render() -> String {
    let (request, failed) = collect();
    let mut out = String::from(START);
    out.push_str("\n\n| status | codes |\n|---|---|\n");
    for (status, codes) in &request {
        let list: Vec<String> = codes.iter().map(|c| format!("`{c}`")).collect();
        out.push_str(&format!("| {status} | {} |\n", list.join(", ")));
    }
    let list: Vec<String> = failed.iter().map(|c| format!("`{c}`")).collect();
    out.push_str(&format!("\nA failed proposal's `error.code` is one of {}.\n\n{END}", list.join(", ")));
    out
}

#[test]
fn the_openapi_document_lists_every_error_code_the_code_can_answer() {
    let (request, failed) = collect();
    let described: BTreeMap<u16, BTreeSet<String>> = assent_api::openapi::ERROR_CODES
        .iter()
        .map(|(status, codes)| (*status, codes.iter().map(|c| c.to_string()).collect()))
        .collect();
    assert_eq!(described, request, "update assent_api::openapi::ERROR_CODES to what the code answers");
    let described: BTreeSet<String> = assent_api::openapi::FAILURE_CODES.iter().map(|c| c.to_string()).collect();
    assert_eq!(described, failed, "update assent_api::openapi::FAILURE_CODES to what the code answers");
}

#[test]
fn the_readme_lists_every_error_code_the_code_can_answer() {
    let readme_path = root().join("README.md");
    let readme = std::fs::read_to_string(&readme_path).unwrap();
    let want = render();
    let (Some(a), Some(b)) = (readme.find(START), readme.find(END)) else {
        panic!("README.md has no error-codes block ({START} ... {END})");
    };
    let have = &readme[a..b + END.len()];
    if have == want {
        return;
    }
    if std::env::var_os("ASSENT_UPDATE_README").is_some() {
        std::fs::write(&readme_path, format!("{}{want}{}", &readme[..a], &readme[b + END.len()..])).unwrap();
        return;
    }
    panic!(
        "README.md's error codes drifted from the code. Run\n  ASSENT_UPDATE_README=1 cargo test -p assent-api --test error_codes\nand commit. Expected:\n{want}"
    );
}

#[test]
fn the_collection_finds_codes_of_every_kind() {
    let (request, failed) = collect();
    let all: BTreeSet<&String> = request.values().flatten().collect();
    for code in [
        "not_a_regular_file",
        "protected_path",
        "ambiguous_group",
        "storage_quota",
        "storage_full",
        "invalid_host",
        "unauthorized",
        "malformed_json",
        "too_many_connections",
    ] {
        assert!(all.iter().any(|c| c.as_str() == code), "{code} was not found: {all:?}");
    }
    for code in ["stale", "host_not_allowed", "credential_unavailable", "write_failed"] {
        assert!(failed.contains(code), "{code}: {failed:?}");
    }
}

/// A new way of raising a code would leave the scan above blind to it (and the document short of
/// it, which only a fuzzer would notice). So every call given a code-like string first must be
/// one the scan reads, or one known to take something else (a column, a field, a setting).
#[test]
fn every_call_given_a_code_is_one_the_scan_reads() {
    const RAISERS: &[&str] = &["invalid", "refuse", "bad", "fail", "failed"];
    const NOT_CODES: &[&str] = &[
        "Some",
        "applying",
        "bytes_opt",
        "get",
        "get_mut",
        "gi",
        "go",
        "insert",
        "int",
        "int_opt",
        "join",
        "pragma",
        "remove",
        "text",
        "text_opt",
        "try_get",
    ];
    let files = all_sources();
    let call = regex::Regex::new(r#"\b(\w+)\(\s*"([a-z]+(?:_[a-z]+)+)""#).unwrap();
    let mut unknown = BTreeSet::new();
    for (path, text) in &files {
        for c in call.captures_iter(text) {
            if !RAISERS.contains(&&c[1]) && !NOT_CODES.contains(&&c[1]) {
                unknown.insert(format!("{}: {}(\"{}\"", path.display(), &c[1], &c[2]));
            }
        }
    }
    assert!(
        unknown.is_empty(),
        "calls given a code-like string that the scan does not read: teach `collect` to read them, \
         or list them in NOT_CODES if they take no error code:\n{unknown:#?}"
    );
}
