//! The owner credential in a real Secret Service: a private D-Bus session with an unlocked
//! gnome-keyring, started by the test.

use crate::harness::{Server, stderr};
use crate::harness::{lookup, private_bus_with_keyring};
use serde_json::json;

#[tokio::test]
async fn the_owner_credential_lives_in_the_keychain_and_the_cli_decides_with_it() {
    let bus = private_bus_with_keyring();
    let mut s =
        Server::start_with("", &[("ASSENT_OWNER_CREDENTIAL", "auto"), ("DBUS_SESSION_BUS_ADDRESS", &bus.address)])
            .await;
    assert!(!s.home().join("owner.token").exists(), "no file when a keychain is reachable: {}", s.stderr());
    assert!(s.stderr().contains("system keychain"), "{}", s.stderr());
    let user = assent_secrets_user(s.home());
    let stored = lookup(&bus, &user);
    assert!(stored.starts_with("asnt_owner_"), "the keychain holds the owner token: {stored:?}");

    let id = s.propose_tool("ls").await;
    let out = s.cli(&["approve", &id]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(s.get(&id, &s.agent).await.1["status"], "approved");

    // The same credential after a restart; the agent token cannot decide.
    s.stop();
    s.spawn();
    assert_eq!(lookup(&bus, &user), stored);
    let id = s.propose_tool("ls").await;
    let (st, _) = s
        .req(
            reqwest::Method::POST,
            &format!("/proposals/{id}/decision"),
            Some(&s.agent.clone()),
            Some(json!({"outcome": "approve"})),
        )
        .await;
    assert_eq!(st, 403);
    s.owner = stored;
    let (st, _) = s.decide(&id, json!({"outcome": "approve"})).await;
    assert_eq!(st, 200);
}

#[tokio::test]
async fn with_no_keychain_it_falls_back_to_a_private_file_and_says_so() {
    let s = Server::start_with(
        "",
        &[("ASSENT_OWNER_CREDENTIAL", "auto"), ("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/bus")],
    )
    .await;
    assert!(s.home().join("owner.token").exists());
    assert!(s.stderr().contains("owner.token"), "the fallback is logged: {}", s.stderr());
    let id = s.propose_tool("ls").await;
    let out = s.cli(&["approve", &id]);
    assert!(out.status.success(), "{}", stderr(&out));
}

#[tokio::test]
async fn keychain_mode_refuses_to_start_without_one() {
    let home = tempfile::tempdir().unwrap();
    let env = vec![
        ("ASSENT_OWNER_CREDENTIAL".to_string(), "keychain".to_string()),
        ("DBUS_SESSION_BUS_ADDRESS".to_string(), "unix:path=/nonexistent/bus".to_string()),
    ];
    let out = crate::harness::cli(home.path(), &env, &["serve", "--port", "0"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("keychain"), "{}", stderr(&out));
    assert!(!home.path().join("owner.token").exists());
}

/// The keychain user name of a home's owner entry, computed as Assent does.
fn assent_secrets_user(home: &std::path::Path) -> String {
    use sha2::{Digest, Sha256};
    let canon = std::fs::canonicalize(home).unwrap();
    let h = Sha256::digest(canon.to_string_lossy().as_bytes());
    format!("owner:{}", &hex::encode(h)[..16])
}
