//! The API description checked by tools nobody here wrote: `openapi-spec-validator` on the
//! document the real server serves, and `schemathesis` (property-based API testing, from PyPI)
//! against the real server, once with an agent token and once with the owner credential, each
//! on a fresh home with a real Secret Service. Zero server errors, zero responses that break
//! the document, zero schema-violating requests accepted, and the server still up afterwards.
//!
//! Each token gets every phase on a fixed seed, then the coverage phase (the document's edges)
//! on two seeds more. Each run is bounded in time: `ASSENT_SCHEMATHESIS_SECS` (60 by default).

use crate::harness::{Server, private_bus_with_keyring, scratch_file};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The versions the tests pin.
const PACKAGES: &[&str] = &["schemathesis==4.32.5", "openapi-spec-validator==0.9.0"];

/// What schemathesis checks is in `tests/fixtures/schemathesis/schemathesis.toml`: everything
/// about conformance and robustness, and that a request the document allows is accepted
/// (`positive_data_acceptance`; the formats the document names are drawn by `assent_formats.py`
/// there), except what that file turns off, each with its reason.
/// The folder of the schemathesis fixtures (hooks and configuration).
fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/schemathesis")
}

/// A venv with the tools, made on first use (`.ci/venv-api`): its `bin` folder.
fn tools() -> PathBuf {
    let ready = |bin: &Path| {
        Command::new(bin.join("schemathesis"))
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
            && bin.join("openapi-spec-validator").exists()
    };
    crate::harness::python_venv("venv-api", PACKAGES, ready)
}

fn committed() -> String {
    std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/openapi.json")).unwrap()
}

#[tokio::test]
async fn the_served_document_is_the_committed_one_and_a_validator_accepts_it() {
    let bin = tools();
    let s = Server::start().await;
    let res = s.http.get(format!("{}/v1/openapi.json", s.url)).send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["content-type"], "application/json");
    let served = res.text().await.unwrap();
    assert_eq!(served, committed(), "the server serves docs/openapi.json");
    let (_dir, file) = scratch_file("openapi.json", &served);
    let out = Command::new(bin.join("openapi-spec-validator")).arg(&file).output().unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success() && text.contains("OK"), "openapi-spec-validator: {text}");

    // And it catches a broken one (the check can fail).
    let mut broken: serde_json::Value = serde_json::from_str(&served).unwrap();
    broken["paths"]["/v1/health"]["get"]["responses"] = serde_json::json!({"200": {"content": 5}});
    std::fs::write(&file, broken.to_string()).unwrap();
    let out = Command::new(bin.join("openapi-spec-validator")).arg(&file).output().unwrap();
    assert!(!out.status.success(), "a broken document is refused");
}

/// Runs schemathesis against a fresh server with the token `who` names.
async fn schemathesis(who: &str) {
    let bin = tools();
    let bus = private_bus_with_keyring();
    let mut s = Server::start_with("", &[("DBUS_SESSION_BUS_ADDRESS", &bus.address)]).await;
    let token = if who == "owner" { s.owner.clone() } else { s.agent.clone() };
    assert!(!token.is_empty());
    let secs = std::env::var("ASSENT_SCHEMATHESIS_SECS").unwrap_or_else(|_| "60".into());
    // A fixed seed by default, so that a run the test command makes is one anyone can repeat;
    // `ASSENT_SCHEMATHESIS_SEED=random` explores new cases (and prints the seed it drew).
    let seed = std::env::var("ASSENT_SCHEMATHESIS_SEED").unwrap_or_else(|_| "20261123".into());
    let seed: Vec<String> = if seed == "random" { vec![] } else { vec!["--seed".into(), seed] };
    let url = s.url.clone();
    // Every phase on the fixed seed, then the coverage phase (the document's edges: a string one
    // under its minLength, a value of another type, a property it does not name) on two seeds
    // more: seeds the first never drew found what the server refused and the document allowed.
    let runs = [
        (seed, "examples,coverage,fuzzing,stateful"),
        (vec!["--seed".into(), "1".into()], "coverage"),
        (vec!["--seed".into(), "2".into()], "coverage"),
    ];
    for (seed, phases) in runs {
        let (url, token, secs, bin) = (url.clone(), token.clone(), secs.clone(), bin.clone());
        let out = tokio::task::spawn_blocking(move || {
            let work = tempfile::tempdir().unwrap();
            let files = work.path().join("files");
            std::fs::create_dir_all(&files).unwrap();
            Command::new(bin.join("schemathesis"))
                .current_dir(work.path())
                .env("NO_COLOR", "1")
                .env("PYTHONPATH", fixtures())
                .env("SCHEMATHESIS_HOOKS", "assent_formats")
                .env("ASSENT_SCHEMATHESIS_DIR", &files)
                .arg("--config-file")
                .arg(fixtures().join("schemathesis.toml"))
                .args(["run", &format!("{url}/v1/openapi.json")])
                .args(["--header", &format!("Authorization: Bearer {token}")])
                .args(["--max-time", &secs])
                .args(["--phases", phases])
                .args(&seed)
                // A long-poll may rightly take the server's longest wait (120 s).
                .args(["--request-timeout", "130"])
                // An endless event stream has no end to check; tests/blackbox/events.rs covers it.
                .args(["--exclude-path", "/v1/events"])
                .output()
                .unwrap()
        })
        .await
        .unwrap();
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        let tail: String =
            text.lines().rev().take(120).collect::<Vec<_>>().into_iter().rev().collect::<Vec<_>>().join("\n");
        assert!(out.status.success(), "schemathesis ({phases}) with the {who} token found problems:\n{tail}");
        assert!(text.contains("generated") && text.contains("passed"), "schemathesis ran no test cases:\n{tail}");
    }
    // No crash: the server is still up and answering, and logged no panic.
    assert!(s.child.as_mut().unwrap().try_wait().unwrap().is_none(), "the server exited: {}", s.stderr());
    let health = s.http.get(format!("{}/v1/health", s.url)).send().await.unwrap();
    assert_eq!(health.status(), 200);
    assert!(!s.stderr().contains("panicked"), "{}", s.stderr());
    drop(bus);
}

#[tokio::test]
async fn schemathesis_finds_nothing_with_an_agent_token() {
    schemathesis("agent").await;
}

#[tokio::test]
async fn schemathesis_finds_nothing_with_the_owner_credential() {
    schemathesis("owner").await;
}
