//! The Python SDK's own tests (`sdk/python/tests`, pytest) against the real `assent` binary, in
//! a virtual environment with the versions `sdk/python/requirements-dev.txt` pins and the SDK
//! installed from the repository; they include the check that the generated models match
//! `docs/openapi.json`. And the SDK installed as a new user does, from a fresh copy of its
//! folder into a virtual environment outside the repository (`tests/fresh_install.sh`).

use crate::harness::BIN;
use std::path::{Path, PathBuf};
use std::process::Command;

fn venv() -> PathBuf {
    let sdk = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("sdk/python");
    let reqs = sdk.join("requirements-dev.txt");
    // Ready when every pinned version is installed and the SDK imports from this repository.
    let ready = |bin: &Path| {
        let check = format!(
            "import importlib.metadata as m, assent, pathlib, sys\n\
             pins = [l.split('==') for l in open({reqs:?}).read().splitlines() if '==' in l and not l.startswith('#')]\n\
             sys.exit(0 if all(m.version(n) == v for n, v in pins) and pathlib.Path(assent.__file__).is_relative_to({src:?}) else 1)",
            reqs = reqs.display().to_string(),
            src = sdk.join("src").display().to_string(),
        );
        Command::new(bin.join("python")).args(["-c", &check]).output().is_ok_and(|o| o.status.success())
    };
    let reqs = reqs.display().to_string();
    let sdk = sdk.display().to_string();
    crate::harness::python_venv("venv-sdk", &["-r", &reqs, "-e", &sdk], ready)
}

#[test]
fn the_python_sdk_passes_its_tests_against_the_real_server() {
    let bin = venv();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let out = Command::new(bin.join("pytest"))
        .args(["-q", "-p", "no:cacheprovider", "tests"])
        .current_dir(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("sdk/python"))
        .env("ASSENT_BIN", BIN)
        .env("PATH", path)
        .env_remove("ASSENT_HOME")
        .output()
        .unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "pytest failed:\n{text}");
    assert!(text.contains(" passed"), "{text}");
}

#[test]
fn the_python_sdk_installs_from_a_fresh_clone_into_another_venv() {
    crate::harness::fresh_install("sdk/python", "tests/fresh_install.sh");
}
