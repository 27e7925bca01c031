//! The review page in a real browser: Debian's Chromium, headless at phone size, with a
//! WebAuthn virtual authenticator as the phone's passkey, reaching the real server's remote
//! listener at an HTTPS origin through a TLS proxy (`ui/scripts/remote-e2e.mjs`). This side
//! starts Assent, turns the listener on and makes the pairing link with the real CLI, and
//! checks afterwards what the store says.

use crate::harness::{Server, stdout};
use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

#[tokio::test]
async fn pair_log_in_and_decide_in_a_real_browser_and_every_attack_is_refused() {
    let ui = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("ui");
    assert!(ui.join("node_modules/playwright-core").is_dir(), "run `npm ci` in ui/ first (scripts/test.sh does)");
    let s = Server::start().await;
    let (listener, proxy) = (free_port(), free_port());
    let origin = format!("https://phone.assent.test:{proxy}");
    let o = s.cli(&["remote", "enable", "--origin", &origin, "--port", &listener.to_string()]);
    assert!(o.status.success(), "{}", crate::harness::stderr(&o));
    let o = s.cli(&["remote", "pair", "--name", "pixel", "--json"]);
    let link: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let work = tempfile::tempdir().unwrap();
    let shots = std::env::var("ASSENT_SHOTS").ok();
    let out = Command::new("node")
        .arg(ui.join("scripts/remote-e2e.mjs"))
        .current_dir(&ui)
        .env("ASSENT_URL", &s.url)
        .env("ASSENT_AGENT_TOKEN", &s.agent)
        .env("ASSENT_OWNER_TOKEN", &s.owner)
        .env("REMOTE_PORT", listener.to_string())
        .env("PROXY_PORT", proxy.to_string())
        .env("PAIR_LINK", link["link"].as_str().unwrap())
        .env("WORK_DIR", work.path())
        .envs(shots.iter().map(|d| ("SHOTS", d.as_str())))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    println!("{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success() && text.contains("all passed"), "the browser run failed:\n{text}\n{}", s.stderr());

    // What the store kept: each remote decision credited to the device, and every refusal.
    let (_, audit) = s.req(reqwest::Method::GET, "/audit", Some(&s.owner.clone()), None).await;
    let remote: Vec<&Value> = audit["items"].as_array().unwrap().iter().filter(|e| e["channel"] == "remote").collect();
    assert!(remote.len() >= 4, "approve, reject, edit, refine: {remote:?}");
    assert!(remote.iter().all(|e| e["detail"]["device"] == "pixel"));
    let log = stdout(&s.cli(&["remote", "log", "--json"]));
    for needle in ["\"paired\"", "\"revoked\"", "assertion_mismatch", "authenticator_cloned", "pairing_code_invalid"] {
        assert!(log.contains(needle), "{needle} in the remote log:\n{log}");
    }
}
