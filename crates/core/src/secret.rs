//! Tokens and hashes: 256-bit random tokens, stored only as SHA-256, compared in constant time.

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// Fills `n` bytes from the operating system's random source.
pub fn random_bytes<const N: usize>() -> [u8; N] {
    let mut b = [0u8; N];
    // The OS random source failing is not something Assent can work around safely.
    #[allow(clippy::expect_used)]
    getrandom::fill(&mut b).expect("the operating system's random source failed");
    b
}

const B32: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";

/// Lower-case RFC 4648 base32 without padding: safe in URLs, file names and shells.
pub fn base32(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 8 / 5 + 1);
    let (mut buf, mut bits) = (0u32, 0u32);
    for &b in bytes {
        buf = (buf << 8) | u32::from(b);
        bits += 8;
        while bits >= 5 {
            bits -= 5;
            out.push(B32[((buf >> bits) & 31) as usize] as char);
        }
    }
    if bits > 0 {
        out.push(B32[((buf << (5 - bits)) & 31) as usize] as char);
    }
    out
}

/// A fresh agent or owner token: a prefix saying what it is, then 256 random bits.
pub fn new_token(prefix: &str) -> String {
    format!("{prefix}_{}", base32(&random_bytes::<32>()))
}

/// The SHA-256 of a token: what is stored and compared.
pub fn token_hash(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

/// Constant-time equality of two hashes.
pub fn hashes_equal(a: &[u8; 32], b: &[u8; 32]) -> bool {
    a.ct_eq(b).into()
}

/// Hex SHA-256 of bytes.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// What a server of a home answers to a client's `challenge`: HMAC-SHA256 of the challenge
/// under the key the server wrote into the home's `server.json` (readable by the home's owner
/// only), in hex. A client checks it before it sends the owner credential, so a process that
/// took over the port of a server that died cannot collect the credential.
pub fn server_proof(key: &[u8], challenge: &str) -> String {
    let k = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, key);
    hex::encode(ring::hmac::sign(&k, format!("assent-server-proof\n{challenge}").as_bytes()).as_ref())
}

/// Whether `proof` is the [`server_proof`] of `challenge` under `key` (compared in constant time).
pub fn proof_matches(key: &[u8], challenge: &str, proof: &str) -> bool {
    let Ok(tag) = hex::decode(proof) else { return false };
    let k = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, key);
    ring::hmac::verify(&k, format!("assent-server-proof\n{challenge}").as_bytes(), &tag).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base32_matches_rfc4648() {
        assert_eq!(base32(b""), "");
        assert_eq!(base32(b"f"), "my");
        assert_eq!(base32(b"foobar"), "mzxw6ytboi");
    }

    #[test]
    fn tokens_are_long_and_distinct() {
        let a = new_token("asnt");
        let b = new_token("asnt");
        assert_ne!(a, b);
        assert!(a.starts_with("asnt_"));
        assert_eq!(a.len(), 5 + 52);
        assert!(hashes_equal(&token_hash(&a), &token_hash(&a)));
        assert!(!hashes_equal(&token_hash(&a), &token_hash(&b)));
    }
}
