//! # assent-receipt
//!
//! A receipt says what was decided about one proposal, by whom and through which channel, and
//! binds the exact payload that was approved by its SHA-256. Assent signs it with its own
//! Ed25519 key as a compact JWS (`alg: EdDSA`, `typ: assent-receipt+jwt`, `kid` naming the key);
//! anyone holding Assent's public keys (`GET /v1/keys`, a JWK Set) checks it offline with
//! [`verify`]. Nothing in a receipt is secret, and it carries no content: hashes, names, times.
//!
//! The claims are serialized canonically (RFC 8785, JCS), and `payload_sha256` is the SHA-256 of
//! the JCS form of the payload ([`payload_sha256`]), so a verifier in any language with a JCS
//! library computes the same hash from the arguments it is about to act on.
//!
//! JOSE is jsonwebtoken's (its RustCrypto backend), Ed25519 is ed25519-dalek's, JCS is
//! serde_json_canonicalizer's: no cryptography here is written by hand. What is Assent's is which
//! claims are checked and how each failure is named ([`Refusal`]).
//!
//! This crate depends on no other Assent crate, so a tool server written in Rust can use it
//! alone.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ed25519_dalek::{Signer as _, SigningKey};
use jsonwebtoken::{Algorithm, DecodingKey, Header, Validation};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::HashMap;

/// The JWS `typ` of a receipt.
pub const TYP: &str = "assent-receipt+jwt";

/// Seconds of clock difference tolerated on `iat` and `exp`.
pub const SKEW: i64 = 60;

/// What a receipt says. Times are Unix seconds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Claims {
    /// The Assent that decided (this install, or the node in a team).
    pub iss: String,
    /// The agent that proposed.
    pub sub: String,
    /// The proposal's id.
    pub jti: String,
    /// When it was decided.
    pub iat: i64,
    /// Until when the receipt may be relied on.
    pub exp: i64,
    /// Who it is for, when the proposal named an audience (a tool server's name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aud: Option<String>,
    /// `approve`, `reject` or `refine`.
    pub outcome: String,
    /// The proposal's kind (`tool.call`, `file.write`, ...).
    pub kind: String,
    /// The tool, for a `tool.call`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// SHA-256 (hex) of the JCS form of the tool's input that was approved, edits applied, for
    /// a `tool.call`: what a tool server checks against the arguments it was called with (the
    /// payload around it also holds what only Assent sees, such as the session's folder).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_sha256: Option<String>,
    /// SHA-256 (hex) of the JCS form of the payload that was approved, edits applied.
    pub payload_sha256: String,
    /// SHA-256 (hex) of the JCS form of the payload as proposed.
    pub proposed_sha256: String,
    /// Who decided: a person, a rule's id, or a paired device.
    pub decided_by: String,
    /// Through which channel (`app`, `cli`, `notification`, `remote`, `rule`, ...).
    pub channel: String,
    /// The confinement an approved command runs under (`read`), when a rule allowed it only
    /// confined: `assent run` runs it so, and refuses a receipt that does not say it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confine: Option<String>,
    /// The hosts that box reaches (none: no network): `assent run` gives it these alone, and
    /// refuses a receipt that names others than its decision.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<String>,
}

/// SHA-256 (hex) of the JCS (RFC 8785) form of `payload`: what `payload_sha256` names.
pub fn payload_sha256(payload: &Value) -> String {
    let jcs = serde_json_canonicalizer::to_vec(payload).unwrap_or_default();
    hex(&Sha256::digest(&jcs))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Why a receipt could not be made.
#[derive(Debug, thiserror::Error)]
pub enum SignError {
    /// The key or the claims could not be encoded.
    #[error("cannot sign a receipt: {0}")]
    Encode(String),
}

/// A signing key of one Assent: Ed25519, from a 32-byte seed kept in the keychain.
pub struct Key {
    signing: SigningKey,
    public: PublicKey,
}

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Key").field("kid", &self.public.kid).finish_non_exhaustive()
    }
}

impl Key {
    /// The key whose 32-byte seed is `seed` (keep the seed secret; draw it from the OS).
    pub fn from_seed(seed: &[u8; 32]) -> Result<Self, SignError> {
        let signing = SigningKey::from_bytes(seed);
        let public = PublicKey::from_bytes(signing.verifying_key().to_bytes());
        Ok(Key { signing, public })
    }

    /// The seed, to keep.
    pub fn seed(&self) -> [u8; 32] {
        self.signing.to_bytes()
    }

    /// The public half, as verifiers get it.
    pub fn public(&self) -> &PublicKey {
        &self.public
    }

    /// The receipt for `claims`: a compact JWS over their JCS form. The JWS is put together as
    /// RFC 7515 says (base64url of the header and of the claims' canonical bytes, joined by a
    /// dot), and signed by ed25519-dalek with the key already expanded: RFC 8032 signatures are
    /// deterministic, so it is byte for byte the one jsonwebtoken makes (a test holds it so),
    /// without jsonwebtoken's reading the key from PKCS#8 again on every receipt.
    pub fn sign(&self, claims: &Claims) -> Result<String, SignError> {
        let mut header = Header::new(Algorithm::EdDSA);
        header.typ = Some(TYP.into());
        header.kid = Some(self.public.kid.clone());
        let header = serde_json::to_vec(&header).map_err(|e| SignError::Encode(e.to_string()))?;
        let jcs = serde_json_canonicalizer::to_vec(claims).map_err(|e| SignError::Encode(e.to_string()))?;
        let message = format!("{}.{}", URL_SAFE_NO_PAD.encode(header), URL_SAFE_NO_PAD.encode(jcs));
        let signature = URL_SAFE_NO_PAD.encode(self.signing.sign(message.as_bytes()).to_bytes());
        Ok(format!("{message}.{signature}"))
    }
}

/// A public key: its id (the RFC 7638 thumbprint of its JWK) and its 32 bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicKey {
    /// The key id.
    pub kid: String,
    /// The Ed25519 public key.
    pub x: [u8; 32],
}

impl PublicKey {
    /// The key with these bytes, its id computed.
    pub fn from_bytes(x: [u8; 32]) -> Self {
        let x64 = URL_SAFE_NO_PAD.encode(x);
        // RFC 7638: the required members, in lexicographic order, no white space.
        let thumb = Sha256::digest(format!(r#"{{"crv":"Ed25519","kty":"OKP","x":"{x64}"}}"#).as_bytes());
        PublicKey { kid: URL_SAFE_NO_PAD.encode(thumb), x }
    }

    /// The key whose 32 bytes are `x`, base64url (a JWK's `x`).
    pub fn from_base64(x: &str) -> Result<Self, String> {
        let bytes = URL_SAFE_NO_PAD.decode(x).map_err(|_| "`x` is not base64url")?;
        let x: [u8; 32] = bytes.try_into().map_err(|_| "`x` is not 32 bytes")?;
        Ok(Self::from_bytes(x))
    }

    /// The 32 bytes, base64url (a JWK's `x`).
    pub fn x_base64(&self) -> String {
        URL_SAFE_NO_PAD.encode(self.x)
    }

    /// As a JWK (`kty: OKP`, `crv: Ed25519`, `alg: EdDSA`, `use: sig`, `kid`).
    pub fn jwk(&self) -> Value {
        serde_json::json!({
            "kty": "OKP", "crv": "Ed25519", "x": self.x_base64(),
            "kid": self.kid, "alg": "EdDSA", "use": "sig",
        })
    }
}

/// The keys a verifier trusts: a JWK Set as `GET /v1/keys` serves it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeySet(pub Vec<PublicKey>);

impl KeySet {
    /// As a JWK Set, `{"keys": [...]}`.
    pub fn to_json(&self) -> Value {
        serde_json::json!({ "keys": self.0.iter().map(PublicKey::jwk).collect::<Vec<_>>() })
    }

    /// Reads a JWK Set: the Ed25519 keys in it (keys of other types are left out). A key whose
    /// `kid` is not its thumbprint is refused, so a set cannot put one key under another's name.
    pub fn from_json(v: &Value) -> Result<KeySet, String> {
        let keys = v.get("keys").and_then(Value::as_array).ok_or("a JWK Set is {\"keys\": [...]}")?;
        let mut out = Vec::new();
        for k in keys {
            if k.get("kty").and_then(Value::as_str) != Some("OKP")
                || k.get("crv").and_then(Value::as_str) != Some("Ed25519")
            {
                continue;
            }
            let x = k.get("x").and_then(Value::as_str).ok_or("an OKP key without `x`")?;
            let key = PublicKey::from_base64(x)?;
            if let Some(kid) = k.get("kid").and_then(Value::as_str)
                && kid != key.kid
            {
                return Err(format!("key `{kid}` is not named by its thumbprint"));
            }
            out.push(key);
        }
        Ok(KeySet(out))
    }
}

/// Why a receipt is refused. Each has a stable [`Refusal::code`] (and `assent receipt verify`
/// an exit code of its own).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// Not a compact JWS with a receipt's header and claims.
    #[error("not a receipt: {0}")]
    Malformed(String),
    /// Signed with another algorithm than EdDSA (`none`, an HMAC, ...), or not typed as a receipt.
    #[error("a receipt is signed EdDSA and typed {TYP}; this one says {0}")]
    Algorithm(String),
    /// No trusted key has this id.
    #[error("no trusted key `{0}`")]
    UnknownKey(String),
    /// The signature does not verify: some byte was changed, or another key signed.
    #[error("the signature does not verify")]
    Signature,
    /// Past `exp`.
    #[error("expired at {0}")]
    Expired(i64),
    /// `iat` is in the future.
    #[error("issued in the future ({0})")]
    NotYetValid(i64),
    /// Made for another audience, or for none when one is required.
    #[error("made for audience {0:?}")]
    Audience(Option<String>),
    /// The payload at hand is not the one approved.
    #[error("the payload's hash is not the approved one")]
    Payload,
    /// Made for another tool, or for something other than a tool call.
    #[error("made for tool {0:?}")]
    Tool(Option<String>),
    /// Its `jti` was seen before.
    #[error("proposal `{0}`'s receipt was used before")]
    Replayed(String),
    /// Not an approval.
    #[error("the decision was `{0}`, not an approval")]
    NotApproved(String),
}

impl Refusal {
    /// The stable code.
    pub fn code(&self) -> &'static str {
        match self {
            Refusal::Malformed(_) => "malformed",
            Refusal::Algorithm(_) => "algorithm",
            Refusal::UnknownKey(_) => "unknown_key",
            Refusal::Signature => "bad_signature",
            Refusal::Expired(_) => "expired",
            Refusal::NotYetValid(_) => "not_yet_valid",
            Refusal::Audience(_) => "wrong_audience",
            Refusal::Payload => "payload_mismatch",
            Refusal::Tool(_) => "wrong_tool",
            Refusal::Replayed(_) => "replayed",
            Refusal::NotApproved(_) => "not_approved",
        }
    }
}

/// What a verifier expects of a receipt besides a good signature and time.
#[derive(Debug, Clone, Default)]
pub struct Expect<'a> {
    /// The payload it is about to act on (its hash must be `payload_sha256`).
    pub payload: Option<&'a Value>,
    /// Its own name: the receipt must be for it.
    pub audience: Option<&'a str>,
    /// The tool call about to run: its name and arguments (the hash of the arguments must be
    /// `input_sha256`).
    pub tool_call: Option<ToolCall<'a>>,
    /// Only an approval will do.
    pub approved: bool,
}

/// A tool call a tool server is about to run, as it checks a receipt.
#[derive(Debug, Clone, Copy)]
pub struct ToolCall<'a> {
    /// The tool's own name. The receipt's `tool` must be this, or this as an MCP client names
    /// it (`mcp__SERVER__NAME`): which server it is for is the audience's to say.
    pub name: &'a str,
    /// The arguments it was called with, the receipt's own argument left out.
    pub input: &'a Value,
}

/// Whether `claimed` (a receipt's `tool`) names the tool `name`: the same, or `mcp__S__name`.
pub fn names_tool(claimed: &str, name: &str) -> bool {
    claimed == name
        || claimed
            .strip_prefix("mcp__")
            .and_then(|rest| rest.strip_suffix(name))
            .and_then(|server| server.strip_suffix("__"))
            .is_some_and(|server| !server.is_empty() && !server.contains("__"))
}

/// Checks `token` against `keys` at Unix time `now`: the header (EdDSA, the receipt type, a
/// trusted `kid`), the signature, the times (with [`SKEW`]), then what `expect` asks. The
/// claims, or why not.
pub fn verify(token: &str, keys: &KeySet, expect: &Expect<'_>, now: i64) -> Result<Claims, Refusal> {
    let header = jsonwebtoken::decode_header(token).map_err(|e| Refusal::Malformed(e.to_string()))?;
    if header.alg != Algorithm::EdDSA || header.typ.as_deref() != Some(TYP) {
        return Err(Refusal::Algorithm(format!("alg {:?}, typ {:?}", header.alg, header.typ)));
    }
    let kid = header.kid.ok_or_else(|| Refusal::UnknownKey(String::new()))?;
    let key = keys.0.iter().find(|k| k.kid == kid).ok_or_else(|| Refusal::UnknownKey(kid.clone()))?;
    let decoding = DecodingKey::from_ed_components(&URL_SAFE_NO_PAD.encode(key.x)).map_err(|_| Refusal::Signature)?;
    let mut validation = Validation::new(Algorithm::EdDSA);
    // Times and audience are checked below, against `now`, each with a reason of its own.
    validation.validate_exp = false;
    validation.validate_aud = false;
    validation.required_spec_claims.clear();
    let data = jsonwebtoken::decode::<Value>(token, &decoding, &validation).map_err(|e| match e.kind() {
        jsonwebtoken::errors::ErrorKind::InvalidSignature => Refusal::Signature,
        _ => Refusal::Malformed(e.to_string()),
    })?;
    let claims: Claims = serde_json::from_value(data.claims).map_err(|e| Refusal::Malformed(e.to_string()))?;
    if now > claims.exp + SKEW {
        return Err(Refusal::Expired(claims.exp));
    }
    if claims.iat > now + SKEW {
        return Err(Refusal::NotYetValid(claims.iat));
    }
    if let Some(want) = expect.audience
        && claims.aud.as_deref() != Some(want)
    {
        return Err(Refusal::Audience(claims.aud.clone()));
    }
    if let Some(p) = expect.payload
        && payload_sha256(p) != claims.payload_sha256
    {
        return Err(Refusal::Payload);
    }
    if let Some(call) = &expect.tool_call {
        if claims.kind != "tool.call" || !claims.tool.as_deref().is_some_and(|t| names_tool(t, call.name)) {
            return Err(Refusal::Tool(claims.tool.clone()));
        }
        if claims.input_sha256.as_deref() != Some(payload_sha256(call.input).as_str()) {
            return Err(Refusal::Payload);
        }
    }
    if expect.approved && claims.outcome != "approve" {
        return Err(Refusal::NotApproved(claims.outcome.clone()));
    }
    Ok(claims)
}

/// The receipts a tool server has acted on, until they expire: a second use of one is refused.
/// A tool server needs one when acting twice would do harm (a payment, a deletion that a later
/// proposal might have restored); a receipt's `jti` is its proposal's id.
#[derive(Debug, Default)]
pub struct ReplayCache {
    seen: HashMap<String, i64>,
}

impl ReplayCache {
    /// Records `claims` as used at `now`; refused if its `jti` was used before. Expired entries
    /// are dropped as it goes.
    pub fn use_once(&mut self, claims: &Claims, now: i64) -> Result<(), Refusal> {
        self.seen.retain(|_, exp| *exp + SKEW >= now);
        if self.seen.contains_key(&claims.jti) {
            return Err(Refusal::Replayed(claims.jti.clone()));
        }
        self.seen.insert(claims.jti.clone(), claims.exp);
        Ok(())
    }
}
