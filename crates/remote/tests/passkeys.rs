//! Pairing and deciding with a real passkey: a software authenticator (passkey-rs) stands in
//! for the phone, and webauthn-rs verifies what it signs. What is held to account: a decision's
//! assertion verifies only against the challenge derived from exactly that decision, and the
//! library's saved state still has the shape the challenge is written into.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use assent_core::remote::{Shown, challenge};
use assent_remote::{Passkeys, RemoteError};
use assent_softkey::SoftKey;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::json;
use webauthn_rs::prelude::{PublicKeyCredential, RegisterPublicKeyCredential, WebauthnError};

const ORIGIN: &str = "https://phone.example.com";

/// The server's JSON read back as the library's type.
fn json<A: Serialize, B: DeserializeOwned>(a: &A) -> B {
    serde_json::from_value(serde_json::to_value(a).unwrap()).unwrap()
}

fn decision(id: &str, outcome: &str, detail: Option<serde_json::Value>, nonce: u8) -> [u8; 32] {
    challenge(&[Shown { id, payload_sha256: "ab12" }], outcome, detail.as_ref(), &[nonce; 32]).unwrap()
}

#[tokio::test]
async fn a_decision_verifies_only_against_what_it_decided() {
    let rp = Passkeys::new(ORIGIN).unwrap();
    // One passkey, found with or without its id (as a phone finds a discoverable one).
    let mut phone = SoftKey::new(None);

    // Pairing: a discoverable passkey, user verification required.
    let (options, state) = rp.pairing("pixel").unwrap();
    let asked = serde_json::to_value(&options).unwrap();
    assert_eq!(asked["publicKey"]["authenticatorSelection"]["residentKey"], json!("required"));
    assert_eq!(asked["publicKey"]["authenticatorSelection"]["userVerification"], json!("required"));
    let created = phone.register(ORIGIN, &serde_json::to_value(&options).unwrap()).await.unwrap();
    let created: RegisterPublicKeyCredential = json(&created);
    let key = rp.paired(&created, &state).unwrap();

    // Logging in with the passkey the phone holds, named by nothing but itself.
    let (request, login) = rp.login().unwrap();
    assert!(
        serde_json::to_value(&request).unwrap()["publicKey"]["allowCredentials"].as_array().is_none_or(Vec::is_empty)
    );
    let signed = phone.sign(ORIGIN, &serde_json::to_value(&request).unwrap()).await.unwrap();
    let signed: PublicKeyCredential = json(&signed);
    let lookup = |id: &[u8]| (id == key.cred_id().as_slice()).then(|| key.clone());
    let (_, again) = rp.login().unwrap();
    let (_, other) = rp.login().unwrap();
    let used = rp.logged_in(&signed, login, lookup).unwrap();
    assert_eq!(used.cred_id(), key.cred_id());
    // A login's assertion opens no other login, and a passkey no one paired (or revoked) none.
    assert!(matches!(rp.logged_in(&signed, again, lookup), Err(RemoteError::Passkey(_))));
    assert!(matches!(
        rp.logged_in(&signed, other, |_| None),
        Err(RemoteError::Passkey(WebauthnError::CredentialNotFound))
    ));
    let key = used;

    // A decision: the challenge the phone signs is the derived one, not the library's.
    let approve = decision("p_1", "approve", None, 1);
    let request = rp.decision(std::slice::from_ref(&key), &approve).unwrap();
    assert_eq!(request.public_key.challenge, approve.to_vec());
    let signed = phone.sign(ORIGIN, &serde_json::to_value(&request).unwrap()).await.unwrap();
    let signed: PublicKeyCredential = json(&signed);
    let result = rp.verify(&signed, std::slice::from_ref(&key), &approve).unwrap();
    assert!(result.user_verified());

    // The same assertion spent on anything else fails the library's own comparison.
    let others = [
        decision("p_2", "approve", None, 1),
        decision("p_1", "reject", None, 1),
        decision("p_1", "approve", Some(json!({"content": "edited"})), 1),
        decision("p_1", "approve", None, 2),
    ];
    for other in others {
        let refused = rp.verify(&signed, std::slice::from_ref(&key), &other);
        assert!(matches!(refused, Err(RemoteError::Passkey(WebauthnError::MismatchedChallenge))), "{refused:?}");
    }

    // Checked against the passkey as stored after this use, the same assertion again is
    // refused: its counter did not go up (a copy of the passkey would sign like this).
    let mut after = key.clone();
    after.update_credential(&result);
    let again = rp.verify(&signed, std::slice::from_ref(&after), &approve);
    assert!(matches!(again, Err(RemoteError::Passkey(WebauthnError::CredentialPossibleCompromise))), "{again:?}");
}

#[test]
fn only_an_https_origin_without_a_path_is_a_relying_party() {
    for bad in ["http://phone.example.com", "https://phone.example.com/inbox", "https://u@phone.example.com", "phone"] {
        assert!(matches!(Passkeys::new(bad), Err(RemoteError::Origin(_))), "{bad}");
    }
    assert!(Passkeys::new("https://phone.example.com:8443").is_ok());
    assert!(Passkeys::new("http://localhost:8080").is_ok(), "loopback, for the tests");
}
