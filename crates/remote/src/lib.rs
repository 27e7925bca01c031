//! # assent-remote
//!
//! Answering from a phone: the passkeys that pair a phone and sign each of its decisions.
//! WebAuthn itself is webauthn-rs's (every check of an assertion is the library's: its type,
//! origin, relying party, user presence and verification, signature, and counter); what is
//! Assent's is the challenge. A decision's challenge is not random but derived from what it
//! decides ([`assent_core::remote::challenge`]), put into the library's request and into its
//! saved state, and derived again from the stored proposals when the assertion comes back: an
//! assertion made for anything else fails the library's own comparison.
//!
//! webauthn-rs does not take a caller's challenge through its API (its maintainers declined to
//! add it), so [`Passkeys::decision`] and [`Passkeys::verify`] write it into the state the
//! library serializes with its `danger-allow-state-serialisation` feature, a state made at the
//! moment of verifying from the passkeys as stored then. The version is
//! pinned and `tests/passkeys.rs` holds that layout to account. See `docs/design/remote.md`.

pub mod access;
pub mod front;
pub mod listener;
pub mod page;
pub mod push;
pub mod serve;
pub mod service;

pub use service::{Change, ControlError, Options, Pairing, Qr, Remote, Settings, Status};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::Value;
use webauthn_rs::prelude::{
    AuthenticationResult, CreationChallengeResponse, DiscoverableAuthentication, Passkey, PasskeyAuthentication,
    PasskeyRegistration, PublicKeyCredential, RegisterPublicKeyCredential, RequestChallengeResponse, Url, Uuid,
    WebauthnError,
};
use webauthn_rs::{Webauthn, WebauthnBuilder};

/// Why a passkey ceremony failed.
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    /// The origin is not `https://HOST[:PORT]` (or `http://localhost` for tests).
    #[error("the remote origin must be https://HOST[:PORT] with no path: {0}")]
    Origin(String),
    /// What webauthn-rs refused, in its words.
    #[error("passkey: {0}")]
    Passkey(#[from] WebauthnError),
    /// The library's saved state no longer has the shape this build writes the challenge into.
    #[error("the passkey library's saved state changed shape: {0}")]
    State(String),
}

/// The relying party for one remote origin (its host is the passkeys' RP id).
pub struct Passkeys {
    rp: Webauthn,
}

impl Passkeys {
    /// The relying party of `origin`, `https://HOST[:PORT]`.
    pub fn new(origin: &str) -> Result<Self, RemoteError> {
        let url = checked_origin(origin)?;
        let host = url.host_str().ok_or_else(|| RemoteError::Origin(origin.to_string()))?.to_string();
        let rp = WebauthnBuilder::new(&host, &url)?.rp_name("Assent").build()?;
        Ok(Self { rp })
    }

    /// Pairing a device: the options for the phone to create a passkey for `device`, asking
    /// for a discoverable one (so it can log in without a name), and the state to finish with.
    pub fn pairing(&self, device: &str) -> Result<(CreationChallengeResponse, PasskeyRegistration), RemoteError> {
        let (options, state) = self.rp.start_passkey_registration(Uuid::new_v4(), device, device, None)?;
        let layout = |e: String| RemoteError::State(e);
        let mut v = serde_json::to_value(&options).map_err(|e| layout(e.to_string()))?;
        let sel = v.pointer_mut("/publicKey/authenticatorSelection").and_then(Value::as_object_mut);
        let sel = sel.ok_or_else(|| layout("no publicKey.authenticatorSelection".into()))?;
        sel.insert("residentKey".into(), "required".into());
        sel.insert("requireResidentKey".into(), true.into());
        Ok((serde_json::from_value(v).map_err(|e| layout(e.to_string()))?, state))
    }

    /// The passkey the phone created, verified.
    pub fn paired(
        &self,
        created: &RegisterPublicKeyCredential,
        state: &PasskeyRegistration,
    ) -> Result<Passkey, RemoteError> {
        Ok(self.rp.finish_passkey_registration(created, state)?)
    }

    /// Logging in: options for any passkey of this origin the phone holds (discoverable, user
    /// verification required), and the state to finish with.
    pub fn login(&self) -> Result<(RequestChallengeResponse, DiscoverableAuthentication), RemoteError> {
        Ok(self.rp.start_discoverable_authentication()?)
    }

    /// Verifies a login: the passkey that signed is found by its credential id (`paired` gives
    /// the device's, if one is paired and not revoked), and the library checks the assertion
    /// against it. The device's passkey as updated by this use (its counter), or why not.
    pub fn logged_in(
        &self,
        signed: &PublicKeyCredential,
        state: DiscoverableAuthentication,
        paired: impl FnOnce(&[u8]) -> Option<Passkey>,
    ) -> Result<Passkey, RemoteError> {
        let (_, id) = self.rp.identify_discoverable_authentication(signed)?;
        let mut key = paired(id).ok_or(RemoteError::Passkey(WebauthnError::CredentialNotFound))?;
        let result = self.rp.finish_discoverable_authentication_v2(signed, state, &key)?;
        key.update_credential(&result);
        Ok(key)
    }

    /// A decision to sign: the options for the phone, whose challenge is `challenge`. No state
    /// is kept: [`Passkeys::verify`] builds its own from what is stored when the answer comes.
    pub fn decision(&self, keys: &[Passkey], challenge: &[u8; 32]) -> Result<RequestChallengeResponse, RemoteError> {
        let (mut options, _) = self.rp.start_passkey_authentication(keys)?;
        options.public_key.challenge = challenge.to_vec();
        Ok(options)
    }

    /// Verifies a decision's assertion against `challenge`, derived again from what is stored,
    /// and against the device's passkeys as they are stored now (so a signature counter that
    /// did not go up since their last use is refused): anything else is refused by the
    /// library, `MismatchedChallenge` for another challenge.
    pub fn verify(
        &self,
        signed: &PublicKeyCredential,
        keys: &[Passkey],
        challenge: &[u8; 32],
    ) -> Result<AuthenticationResult, RemoteError> {
        let (_, state) = self.rp.start_passkey_authentication(keys)?;
        Ok(self.rp.finish_passkey_authentication(signed, &with_challenge(&state, challenge)?)?)
    }
}

/// `origin` read as a relying party's: `https://HOST[:PORT]` (or `http://localhost[:PORT]` for
/// the tests), no path, query or user.
pub(crate) fn checked_origin(origin: &str) -> Result<Url, RemoteError> {
    let bad = || RemoteError::Origin(origin.to_string());
    let url = Url::parse(origin).map_err(|_| bad())?;
    let local = url.scheme() == "http" && url.host_str() == Some("localhost");
    let https = url.scheme() == "https" && url.host_str().is_some();
    if !(https || local) || url.path() != "/" || url.query().is_some() || !url.username().is_empty() {
        return Err(bad());
    }
    Ok(url)
}

/// `state` with `challenge` in place of the one the library drew.
fn with_challenge(state: &PasskeyAuthentication, challenge: &[u8; 32]) -> Result<PasskeyAuthentication, RemoteError> {
    let layout = |e: String| RemoteError::State(e);
    let mut v = serde_json::to_value(state).map_err(|e| layout(e.to_string()))?;
    let slot = v.pointer_mut("/ast/challenge").ok_or_else(|| layout("no ast.challenge".into()))?;
    if !slot.is_string() {
        return Err(layout(format!("ast.challenge is {slot}")));
    }
    *slot = Value::String(URL_SAFE_NO_PAD.encode(challenge));
    serde_json::from_value(v).map_err(|e| layout(e.to_string()))
}
