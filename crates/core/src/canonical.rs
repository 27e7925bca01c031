//! Canonical JSON: object keys sorted at every depth, no insignificant white space. The hash of
//! an approved payload is taken over this form, so it does not depend on how a client ordered
//! its keys or on serde_json's map features.

use serde_json::Value;

/// Writes `v` in canonical form.
pub fn to_canonical_string(v: &Value) -> String {
    let mut out = String::new();
    write(v, &mut out);
    out
}

/// Hex SHA-256 of the canonical form.
pub fn canonical_sha256(v: &Value) -> String {
    crate::secret::sha256_hex(to_canonical_string(v).as_bytes())
}

fn write(v: &Value, out: &mut String) {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                write(&map[k], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
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
}
