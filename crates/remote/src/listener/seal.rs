//! A login ceremony kept by the phone, not the listener: its state sealed (ChaCha20-Poly1305,
//! `ring`, with a key the listener draws when it starts) into the ceremony id the page sends
//! back. Nothing is held for a login that was only begun, so no flood of `login/options` can
//! fill a slot the owner's phone needs; a ceremony is good for [`NONCE_MS`], and once it logged
//! a device in it is remembered (until it would have expired) so that it logs in nobody again.

use crate::access::NONCE_MS;
use assent_core::time::Timestamp;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::aead::{Aad, CHACHA20_POLY1305, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use webauthn_rs::prelude::DiscoverableAuthentication;

/// Most ceremonies remembered as used at once (each one a login by a paired device).
const MOST_USED: usize = 256;

/// Seals and opens login ceremonies.
pub(super) struct Sealer {
    key: LessSafeKey,
    used: std::sync::Mutex<HashMap<[u8; 32], Timestamp>>,
}

#[derive(Serialize, Deserialize)]
struct Sealed {
    at: i64,
    state: DiscoverableAuthentication,
}

impl Sealer {
    /// A sealer with a fresh key.
    pub(super) fn new() -> Option<Sealer> {
        let key = UnboundKey::new(&CHACHA20_POLY1305, &assent_core::secret::random_bytes::<32>()).ok()?;
        Some(Sealer { key: LessSafeKey::new(key), used: Default::default() })
    }

    /// The ceremony id that carries `state`, begun `now`.
    pub(super) fn seal(&self, state: DiscoverableAuthentication, now: Timestamp) -> Option<String> {
        let mut data = serde_json::to_vec(&Sealed { at: now.0, state }).ok()?;
        let nonce = assent_core::secret::random_bytes::<NONCE_LEN>();
        self.key.seal_in_place_append_tag(Nonce::assume_unique_for_key(nonce), Aad::empty(), &mut data).ok()?;
        let mut out = nonce.to_vec();
        out.extend(data);
        Some(URL_SAFE_NO_PAD.encode(out))
    }

    /// The state `id` carries, if this listener sealed it within [`NONCE_MS`] and it logged
    /// nobody in yet; and the key to [`Sealer::spend`] it with.
    pub(super) fn open(&self, id: &str, now: Timestamp) -> Option<(DiscoverableAuthentication, [u8; 32])> {
        let raw = URL_SAFE_NO_PAD.decode(id).ok().filter(|r| r.len() > NONCE_LEN)?;
        let spent: [u8; 32] = Sha256::digest(&raw).into();
        if self.used().contains_key(&spent) {
            return None;
        }
        let (nonce, sealed) = raw.split_at(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(nonce).ok()?;
        let mut data = sealed.to_vec();
        let plain = self.key.open_in_place(nonce, Aad::empty(), &mut data).ok()?;
        let s: Sealed = serde_json::from_slice(plain).ok()?;
        (now.0 - s.at < NONCE_MS && s.at <= now.0).then_some((s.state, spent))
    }

    /// Marks a ceremony as having logged a device in; false if it already had (a race).
    pub(super) fn spend(&self, spent: [u8; 32], now: Timestamp) -> bool {
        let mut used = self.used();
        used.retain(|_, at| now.0 - at.0 < NONCE_MS);
        if used.len() >= MOST_USED {
            return false;
        }
        used.insert(spent, now).is_none()
    }

    fn used(&self) -> std::sync::MutexGuard<'_, HashMap<[u8; 32], Timestamp>> {
        self.used.lock().unwrap_or_else(|e| e.into_inner())
    }
}
