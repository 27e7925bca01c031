//! Receipts: the key that signs what was decided, kept in the keychain (the 0600 file where
//! there is none), and the claims each decision's receipt carries (`crates/receipt`).

use assent_core::decided::Decided;
use assent_receipt::{Claims, Key};
use std::sync::{Arc, RwLock};

/// How long a receipt may be relied on, in seconds, unless set.
pub const DEFAULT_TTL: i64 = 600;

/// Keeps a new key's seed (hex) where the key is kept, before it signs anything.
pub type Keep = Box<dyn Fn(&str) -> Result<(), String> + Send + Sync>;

/// Signs each decision's receipt with this Assent's key.
pub struct Issuer {
    key: RwLock<Arc<Key>>,
    keep: Keep,
    /// This Assent (`assent`, or the node's name in a team).
    iss: String,
    ttl: i64,
}

fn key_of(seed_hex: &str) -> Result<Key, String> {
    let bytes = hex::decode(seed_hex.trim()).map_err(|_| "the receipt key is not hex".to_string())?;
    let seed: [u8; 32] = bytes.try_into().map_err(|_| "the receipt key is not 32 bytes".to_string())?;
    Key::from_seed(&seed).map_err(|e| e.to_string())
}

impl Issuer {
    /// An issuer named `iss`, with the key whose seed is `seed_hex`; `keep` keeps the seed of
    /// the key that replaces it.
    pub fn new(seed_hex: &str, iss: String, ttl: i64, keep: Keep) -> Result<Self, String> {
        Ok(Issuer { key: RwLock::new(Arc::new(key_of(seed_hex)?)), keep, iss, ttl })
    }

    /// A new key's seed, hex (to keep).
    pub fn generate() -> String {
        hex::encode(assent_core::secret::random_bytes::<32>())
    }

    fn key(&self) -> Arc<Key> {
        self.key.read().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    /// The claims of what was decided: the domain's, with who signs and until when.
    pub fn claims(&self, d: &Decided) -> Claims {
        let iat = d.at.0.div_euclid(1000);
        let outcome =
            serde_json::to_value(d.outcome).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
        Claims {
            iss: self.iss.clone(),
            sub: d.agent.clone(),
            jti: d.proposal.clone(),
            iat,
            exp: iat + self.ttl,
            aud: d.audience.clone(),
            outcome,
            kind: d.kind.to_string(),
            tool: d.tool.clone(),
            input_sha256: d.input_sha256.clone(),
            payload_sha256: d.approved_sha256.clone(),
            proposed_sha256: d.proposed_sha256.clone(),
            decided_by: d.decided_by.clone(),
            channel: d.channel.as_str().to_string(),
            confine: d.confine.map(|c| c.as_str().to_string()),
            hosts: d.hosts.clone(),
        }
    }
}

impl assent_core::engine::Receipts for Issuer {
    fn issue(&self, d: &Decided) -> Option<String> {
        match self.key().sign(&self.claims(d)) {
            Ok(t) => Some(t),
            Err(e) => {
                tracing::error!(error = %e, proposal = %d.proposal, "could not sign a receipt; the decision stands without one");
                None
            }
        }
    }

    fn current(&self) -> (String, String) {
        let k = self.key();
        (k.public().kid.clone(), k.public().x_base64())
    }

    fn rotate(&self) -> Result<(String, String), String> {
        let seed = Self::generate();
        let next = key_of(&seed)?;
        // Kept before it signs: a key that signed and was then lost would leave receipts no
        // published key verifies.
        (self.keep)(&seed)?;
        *self.key.write().unwrap_or_else(std::sync::PoisonError::into_inner) = Arc::new(next);
        Ok(self.current())
    }

    fn ttl_secs(&self) -> i64 {
        self.ttl
    }
}
