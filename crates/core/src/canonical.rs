//! Canonical JSON: RFC 8785 (JCS). Object keys sorted at every depth, numbers as ECMAScript
//! writes them, no insignificant white space. The hash of an approved payload is taken over
//! this form, so it depends neither on how a client ordered its keys nor on how it wrote a
//! number (`1.0` and `1` are one value), and it is the hash a receipt carries
//! (`assent_receipt::payload_sha256`), which a verifier in any language recomputes with its own
//! JCS library. serde_json_canonicalizer writes it.

use serde_json::Value;

/// Writes `v` in canonical form.
pub fn to_canonical_string(v: &Value) -> String {
    // A serde_json Value always serializes (its numbers are finite).
    serde_json_canonicalizer::to_string(v).unwrap_or_default()
}

/// Hex SHA-256 of the canonical form.
pub fn canonical_sha256(v: &Value) -> String {
    crate::secret::sha256_hex(to_canonical_string(v).as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn key_order_does_not_matter() {
        let a: Value = serde_json::from_str(r#"{"b":1,"a":{"y":[1,{"d":2,"c":3}],"x":null}}"#).unwrap_or_default();
        let b: Value = serde_json::from_str(r#"{"a":{"x":null,"y":[1,{"c":3,"d":2}]},"b":1}"#).unwrap_or_default();
        assert_eq!(to_canonical_string(&a), r#"{"a":{"x":null,"y":[1,{"c":3,"d":2}]},"b":1}"#);
        assert_eq!(canonical_sha256(&a), canonical_sha256(&b));
        assert_ne!(canonical_sha256(&a), canonical_sha256(&json!({"b": 2})));
    }

    #[test]
    fn numbers_strings_and_key_order_are_rfc_8785s() {
        let v: Value =
            serde_json::from_str(r#"{"n":[1.0,1e2,0.5,1e21],"s":"é\n\u001f","Ａ":1,"😀":2}"#).unwrap_or_default();
        // Keys sort by UTF-16 code units: U+1F600 (0xD83D 0xDE00) before U+FF21, which its UTF-8
        // bytes would put after.
        assert_eq!(to_canonical_string(&v), r#"{"n":[1,100,0.5,1e+21],"s":"é\n\u001f","😀":2,"Ａ":1}"#);
        assert_eq!(
            canonical_sha256(&v),
            canonical_sha256(&json!({"n": [1, 100, 0.5, 1e21], "s": "é\n\u{1f}", "😀": 2, "Ａ": 1}))
        );
    }
}
