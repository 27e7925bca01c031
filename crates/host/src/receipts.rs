//! Receipts: the key that signs what was decided, kept in the keychain (the 0600 file where
//! there is none), and the claims each decision's receipt carries (`crates/receipt`).

use assent_core::Proposal;
use assent_core::proposal::Decision;
use assent_receipt::{Claims, Key, payload_sha256};

/// How long a receipt may be relied on, in seconds, unless set.
pub const DEFAULT_TTL: i64 = 600;

/// Signs each decision's receipt with this Assent's key.
pub struct Issuer {
    key: Key,
    /// This Assent (`assent`, or the node's name in a team).
    iss: String,
    ttl: i64,
}

impl Issuer {
    /// An issuer named `iss`, with the key whose seed is `seed_hex`.
    pub fn new(seed_hex: &str, iss: String, ttl: i64) -> Result<Self, String> {
        let bytes = hex::decode(seed_hex.trim()).map_err(|_| "the receipt key is not hex".to_string())?;
        let seed: [u8; 32] = bytes.try_into().map_err(|_| "the receipt key is not 32 bytes".to_string())?;
        Ok(Issuer { key: Key::from_seed(&seed).map_err(|e| e.to_string())?, iss, ttl })
    }

    /// A new key's seed, hex (to keep).
    pub fn generate() -> String {
        hex::encode(assent_core::secret::random_bytes::<32>())
    }

    /// The public keys, as `GET /v1/keys` serves them.
    pub fn key_set(&self) -> assent_receipt::KeySet {
        assent_receipt::KeySet(vec![self.key.public().clone()])
    }

    /// The claims of `d` on `p`.
    pub fn claims(&self, p: &Proposal, d: &Decision) -> Claims {
        let approved = d.edited_payload.as_ref().unwrap_or(&p.payload);
        let iat = d.at.0.div_euclid(1000);
        let outcome =
            serde_json::to_value(d.outcome).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
        Claims {
            iss: self.iss.clone(),
            sub: p.agent.clone(),
            jti: p.id.clone(),
            iat,
            exp: iat + self.ttl,
            aud: None,
            outcome,
            kind: p.kind.clone(),
            tool: (p.kind == "tool.call")
                .then(|| p.payload.get("tool").and_then(|t| t.as_str()).map(str::to_string))
                .flatten(),
            payload_sha256: payload_sha256(approved),
            proposed_sha256: payload_sha256(&p.payload),
            decided_by: match (&d.rule, &d.device) {
                (Some(r), _) => format!("rule:{}", r.id),
                (None, Some(dev)) => format!("{}:{dev}", d.by),
                (None, None) => d.by.clone(),
            },
            channel: d.channel.as_str().to_string(),
        }
    }
}

impl assent_core::engine::Receipts for Issuer {
    fn issue(&self, p: &Proposal, d: &Decision) -> Option<String> {
        match self.key.sign(&self.claims(p, d)) {
            Ok(t) => Some(t),
            Err(e) => {
                tracing::error!(error = %e, proposal = %p.id, "could not sign a receipt; the decision stands without one");
                None
            }
        }
    }
}
