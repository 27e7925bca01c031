//! The committed `docs/openapi.json` is the document the server serves: this test fails when
//! they differ. `ASSENT_UPDATE_OPENAPI=1 cargo test -p assent-api --test openapi` rewrites it.

#![allow(missing_docs, clippy::unwrap_used)]

use std::path::PathBuf;

#[test]
fn the_committed_openapi_document_is_the_served_one() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/openapi.json");
    let want = assent_api::openapi::document();
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    if have == want {
        return;
    }
    if std::env::var_os("ASSENT_UPDATE_OPENAPI").is_some() {
        std::fs::write(&path, want).unwrap();
        return;
    }
    panic!(
        "docs/openapi.json differs from the document the API serves: run \
         `ASSENT_UPDATE_OPENAPI=1 cargo test -p assent-api --test openapi` and commit the result"
    );
}

#[test]
fn the_document_is_openapi_3_1_with_every_route() {
    let doc: serde_json::Value = serde_json::from_str(assent_api::openapi::document()).unwrap();
    assert_eq!(doc["openapi"], "3.1.0");
    let paths = doc["paths"].as_object().unwrap();
    for p in [
        "/v1/health",
        "/v1/hello",
        "/v1/openapi.json",
        "/v1/proposals",
        "/v1/proposals/{id}",
        "/v1/proposals/{id}/decision",
        "/v1/proposals/{id}/audit",
        "/v1/proposals/{id}/retry",
        "/v1/proposals/{id}/similar",
        "/v1/decisions",
        "/v1/events",
        "/v1/agents",
        "/v1/agents/{name}",
        "/v1/audit",
        "/v1/credentials",
        "/v1/credentials/{name}",
        "/v1/rules",
        "/v1/rules/test",
        "/v1/rules/log",
        "/v1/rules/{id}",
        "/v1/remote",
        "/v1/remote/pairings",
        "/v1/remote/devices",
        "/v1/remote/devices/{name}",
        "/v1/remote/log",
    ] {
        assert!(paths.contains_key(p), "{p} is not described");
    }
    // Every operation that needs a token says which, and answers 401 without one.
    for (path, item) in paths {
        for (method, op) in item.as_object().unwrap() {
            let public = ["/v1/health", "/v1/hello", "/v1/openapi.json", "/v1/keys"].contains(&path.as_str());
            assert_eq!(op.get("security").is_none(), public, "{method} {path}");
            assert_eq!(op["responses"].get("401").is_some(), !public, "{method} {path}");
        }
    }
    let schemes = &doc["components"]["securitySchemes"];
    assert_eq!(schemes["agent"]["scheme"], "bearer");
    assert_eq!(schemes["owner"]["scheme"], "bearer");
}
