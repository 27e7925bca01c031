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

/// The largest integer an IEEE double holds exactly with its neighbours (2^53 - 1): I-JSON's
/// interoperable range (RFC 7493, 2.2).
pub const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// Where in `v` (a JSON pointer) the first number is that a double cannot hold exactly, if any:
/// an integer beyond 2^53 - 1 in magnitude, written as an integer or as a whole number with a
/// fraction or exponent. Canonical JSON writes every number as a double, so such a number and
/// its neighbours would share one hash, and a receipt bind either.
pub fn beyond_i_json(v: &Value) -> Option<String> {
    match v {
        Value::Number(n) => {
            let beyond = match (n.as_u64(), n.as_i64(), n.as_f64()) {
                (Some(u), _, _) => u > MAX_SAFE_INTEGER,
                (None, Some(i), _) => i.unsigned_abs() > MAX_SAFE_INTEGER,
                (None, None, Some(f)) => f.fract() == 0.0 && f.abs() > MAX_SAFE_INTEGER as f64,
                _ => false,
            };
            beyond.then(String::new)
        }
        Value::Array(items) => {
            items.iter().enumerate().find_map(|(i, x)| beyond_i_json(x).map(|rest| format!("/{i}{rest}")))
        }
        Value::Object(fields) => fields.iter().find_map(|(k, x)| {
            beyond_i_json(x).map(|rest| format!("/{}{rest}", k.replace('~', "~0").replace('/', "~1")))
        }),
        _ => None,
    }
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
    fn numbers_a_double_cannot_hold_are_found_by_where_they_are() {
        let max = MAX_SAFE_INTEGER;
        for ok in [
            json!(max),
            json!(-(max as i64)),
            json!(0.5),
            json!(1e-300),
            json!(1.25e15),
            json!({"a": [1, 2.5, "9007199254740993"]}),
        ] {
            assert_eq!(beyond_i_json(&ok), None, "{ok}");
        }
        let big: Value = serde_json::from_str(r#"{"post": {"ids": [1, 1152921504606846977]}}"#).unwrap_or_default();
        assert_eq!(beyond_i_json(&big).as_deref(), Some("/post/ids/1"));
        assert_eq!(beyond_i_json(&json!({"a/b~": [max + 1]})).as_deref(), Some("/a~1b~0/0"));
        assert_eq!(beyond_i_json(&json!(-((max + 1) as i64))).as_deref(), Some(""));
        // A whole number is an integer however it is written (RFC 7493 counts its value).
        for raw in ["9007199254740993.0", "1e300", "100000000000000000001"] {
            let v: Value = serde_json::from_str(raw).unwrap_or_default();
            assert_eq!(beyond_i_json(&v).as_deref(), Some(""), "{raw}");
        }
        // Why: 2^60 + 1 and 2^60 are one number to canonical JSON.
        assert_eq!(canonical_sha256(&json!(1u64 << 60)), canonical_sha256(&json!((1u64 << 60) + 1)));
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
