//! # assent-softkey
//!
//! A phone's passkey, in software, for tests and benchmarks only: passkey-rs's authenticator
//! and client (pure Rust), with the person always present and verified (the phone's biometric
//! check passed), a signature counter that goes up at each use, and the server's WebAuthn JSON in
//! and out. Never a dependency of what ships.

use passkey_authenticator::{Authenticator, UiHint, UserCheck, UserValidationMethod};
use passkey_client::{Client, DefaultClientData};
use passkey_types::ctap2::{Aaguid, Ctap2Error};
use serde_json::Value;

pub use passkey_types::Passkey;

/// The person, present and verified.
pub struct Verified;

#[async_trait::async_trait]
impl UserValidationMethod for Verified {
    type PasskeyItem = Passkey;
    async fn check_user<'a>(
        &self,
        _: UiHint<'a, Self::PasskeyItem>,
        _: bool,
        _: bool,
    ) -> Result<UserCheck, Ctap2Error> {
        Ok(UserCheck { presence: true, verification: true })
    }
    fn is_presence_enabled(&self) -> bool {
        true
    }
    fn is_verification_enabled(&self) -> Option<bool> {
        Some(true)
    }
}

/// A software passkey: at most one credential, kept in memory.
pub struct SoftKey(
    Client<Option<Passkey>, Verified, passkey_crypto::AvailableBackend, public_suffix::PublicSuffixList, ()>,
);

impl SoftKey {
    /// A key holding `stored` (none: empty until it registers), counting its signatures.
    pub fn new(stored: Option<Passkey>) -> Self {
        let mut auth = Authenticator::new(Aaguid::new_empty(), stored, Verified, passkey_crypto::AvailableBackend);
        auth.set_make_credentials_with_signature_counter(true);
        SoftKey(Client::new(auth).allows_insecure_localhost(true))
    }

    /// The credential it holds, as it is now (to make a copy that signs with this counter).
    pub fn stored(&self) -> Option<Passkey> {
        self.0.authenticator().store().clone()
    }

    /// Creates a passkey for `origin` from the server's creation options (`{"publicKey": ...}`);
    /// the credential as the server takes it.
    pub async fn register(&mut self, origin: &str, options: &Value) -> Result<Value, String> {
        let origin = url::Url::parse(origin).map_err(|e| e.to_string())?;
        let options = serde_json::from_value(options.clone()).map_err(|e| format!("creation options: {e}"))?;
        let created = self.0.register(&origin, options, DefaultClientData).await.map_err(|e| format!("{e:?}"))?;
        serde_json::to_value(created).map_err(|e| e.to_string())
    }

    /// Signs the server's request options for `origin`; the assertion as the server takes it.
    pub async fn sign(&mut self, origin: &str, options: &Value) -> Result<Value, String> {
        let origin = url::Url::parse(origin).map_err(|e| e.to_string())?;
        let options = serde_json::from_value(options.clone()).map_err(|e| format!("request options: {e}"))?;
        let signed = self.0.authenticate(&origin, options, DefaultClientData).await.map_err(|e| format!("{e:?}"))?;
        serde_json::to_value(signed).map_err(|e| e.to_string())
    }
}
