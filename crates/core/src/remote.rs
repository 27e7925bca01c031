//! What a decision made away from this desktop is bound to. A phone decides by signing a
//! WebAuthn challenge with its passkey; the challenge is not random but derived from exactly
//! what the phone showed and what it asks for, so that an assertion made for one decision can
//! never be spent on another: the server derives it again from the stored proposals when the
//! assertion comes back, and only an identical derivation verifies.
//!
//! The derivation, version 1 (every length a 4-byte big-endian count of bytes):
//!
//! ```text
//! SHA-256(
//!   "assent-remote-decision-v1" 0x00
//!   count of proposals
//!   for each proposal, in byte order of its id:
//!     length, id;  length, the hex SHA-256 of its canonical payload
//!   length, outcome ("approve", "reject", "refine")
//!   0x00, or 0x01 and the SHA-256 (32 bytes) of the canonical JSON of the edits or the reason
//!   the server's nonce (32 bytes, fresh, used once)
//! )
//! ```
//!
//! A batch decision is one derivation over every proposal in it.

use crate::canonical::to_canonical_string;
use crate::time::Timestamp;
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The label that starts every derivation (and names its version).
const LABEL: &[u8] = b"assent-remote-decision-v1\0";

/// One proposal as the phone showed it: its id and the hex SHA-256 of its canonical payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shown<'a> {
    /// The proposal's id.
    pub id: &'a str,
    /// The hex SHA-256 of its canonical payload.
    pub payload_sha256: &'a str,
}

/// A device paired to answer from: a phone's passkey, by the name the person gave it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Device {
    /// The name the person typed when pairing it.
    pub name: String,
    /// The passkey's credential id (base64url), by which an assertion names its device.
    pub credential_id: String,
    /// The WebAuthn library's record of the passkey (its public key and counter), as JSON.
    pub passkey: String,
    /// When it was paired.
    pub added_at: Timestamp,
    /// When it last logged in or decided.
    pub last_used_at: Option<Timestamp>,
    /// When it was revoked (it can no longer log in or decide).
    pub revoked_at: Option<Timestamp>,
    /// Its Web Push subscription (JSON: endpoint and keys), if it asked for pushes.
    pub push: Option<String>,
}

/// A paired device as the person sees it (never its passkey).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DeviceInfo {
    /// The name the person gave it.
    pub name: String,
    /// When it was paired.
    pub added_at: Timestamp,
    /// When it last logged in or decided.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub last_used_at: Option<Timestamp>,
    /// When it was revoked.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub revoked_at: Option<Timestamp>,
}

impl From<&Device> for DeviceInfo {
    fn from(d: &Device) -> Self {
        Self { name: d.name.clone(), added_at: d.added_at, last_used_at: d.last_used_at, revoked_at: d.revoked_at }
    }
}

/// One row of the remote listener's append-only log: a device paired or revoked, or an
/// attempt refused (with the refusal's code in `detail`).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct LogEntry {
    /// Position in the log.
    pub seq: i64,
    /// The device, when one is known.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub device: Option<String>,
    /// What happened: `enabled`, `disabled`, `paired`, `revoked`, `pairing_refused`,
    /// `login_refused`, `decision_refused`, `locked_out` (a door closed: its `door`),
    /// `front_refused` (refused before any route: its `code`), `push_on`, `push_off`.
    pub event: String,
    /// When.
    pub at: Timestamp,
    /// More about it (a refusal's `code`, a closed door's `door`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional, type = "unknown"))]
    pub detail: Option<Value>,
}

/// Why a set of proposals cannot be bound.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BindError {
    /// No proposal at all.
    Empty,
    /// The same proposal twice.
    Repeated(String),
}

impl std::fmt::Display for BindError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BindError::Empty => write!(f, "a decision names at least one proposal"),
            BindError::Repeated(id) => write!(f, "proposal `{id}` is named twice in one decision"),
        }
    }
}

fn put(h: &mut Sha256, bytes: &[u8]) {
    // A proposal id, hash or outcome is never near 4 GiB; a longer one could not be told apart.
    h.update(u32::try_from(bytes.len()).unwrap_or(u32::MAX).to_be_bytes());
    h.update(bytes);
}

/// The challenge a passkey signs to make this decision: `shown` (any order), the `outcome`,
/// the edits or the reason (`detail`, if any), and the server's `nonce`.
pub fn challenge(
    shown: &[Shown<'_>],
    outcome: &str,
    detail: Option<&Value>,
    nonce: &[u8; 32],
) -> Result<[u8; 32], BindError> {
    let mut items = shown.to_vec();
    items.sort_by(|a, b| a.id.as_bytes().cmp(b.id.as_bytes()));
    if items.is_empty() {
        return Err(BindError::Empty);
    }
    if let Some(w) = items.windows(2).find(|w| w[0].id == w[1].id) {
        return Err(BindError::Repeated(w[0].id.to_string()));
    }
    let mut h = Sha256::new();
    h.update(LABEL);
    h.update(u32::try_from(items.len()).unwrap_or(u32::MAX).to_be_bytes());
    for s in &items {
        put(&mut h, s.id.as_bytes());
        put(&mut h, s.payload_sha256.as_bytes());
    }
    put(&mut h, outcome.as_bytes());
    match detail {
        None => h.update([0]),
        Some(d) => {
            h.update([1]);
            h.update(Sha256::digest(to_canonical_string(d).as_bytes()));
        }
    }
    h.update(nonce);
    Ok(h.finalize().into())
}

#[cfg(test)]
mod tests {
    use super::{BindError, Shown, challenge};
    use serde_json::json;

    const A: Shown<'static> = Shown { id: "p_a", payload_sha256: "aa" };
    const B: Shown<'static> = Shown { id: "p_b", payload_sha256: "bb" };

    fn of(shown: &[Shown<'_>], outcome: &str, detail: Option<serde_json::Value>, nonce: u8) -> [u8; 32] {
        challenge(shown, outcome, detail.as_ref(), &[nonce; 32]).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn the_derivation_matches_the_documented_bytes() {
        // The same bytes, put together by hand from the module's documentation.
        let mut bytes = b"assent-remote-decision-v1\0".to_vec();
        bytes.extend(1u32.to_be_bytes());
        bytes.extend(3u32.to_be_bytes());
        bytes.extend(b"p_a");
        bytes.extend(2u32.to_be_bytes());
        bytes.extend(b"aa");
        bytes.extend(6u32.to_be_bytes());
        bytes.extend(b"reject");
        bytes.push(1);
        use sha2::Digest;
        bytes.extend(sha2::Sha256::digest(br#""too broad""#));
        bytes.extend([7u8; 32]);
        let want: [u8; 32] = sha2::Sha256::digest(&bytes).into();
        assert_eq!(of(&[A], "reject", Some(json!("too broad")), 7), want);
    }

    #[test]
    fn anything_else_derives_another_challenge() {
        let base = of(&[A], "approve", None, 1);
        assert_ne!(base, of(&[B], "approve", None, 1), "another proposal");
        assert_ne!(base, of(&[Shown { id: "p_a", payload_sha256: "ab" }], "approve", None, 1), "another payload");
        assert_ne!(base, of(&[A], "reject", None, 1), "another outcome");
        assert_ne!(base, of(&[A], "approve", Some(json!({"content": "x"})), 1), "edits");
        assert_ne!(base, of(&[A], "approve", None, 2), "another nonce");
        assert_ne!(base, of(&[A, B], "approve", None, 1), "one more proposal");
        let edited = of(&[A], "approve", Some(json!({"content": "x"})), 1);
        assert_ne!(edited, of(&[A], "approve", Some(json!({"content": "y"})), 1), "other edits");
        // Where one field ends and the next begins is part of what is signed.
        let split = |id, hash| of(&[Shown { id, payload_sha256: hash }], "approve", None, 1);
        assert_ne!(split("p_ab", "b"), split("p_a", "bb"));
    }

    #[test]
    fn a_batch_is_the_same_in_any_order_and_names_each_proposal_once() {
        assert_eq!(of(&[A, B], "approve", None, 3), of(&[B, A], "approve", None, 3));
        // The canonical form of the edits: key order does not matter, values do.
        let x = of(&[A], "approve", Some(json!({"a": 1, "b": 2})), 3);
        assert_eq!(x, of(&[A], "approve", Some(json!({"b": 2, "a": 1})), 3));
        assert_eq!(challenge(&[], "approve", None, &[0; 32]), Err(BindError::Empty));
        assert_eq!(challenge(&[A, A], "approve", None, &[0; 32]), Err(BindError::Repeated("p_a".into())));
    }
}
