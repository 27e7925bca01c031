//! A proposal as a row of the phone's list: its own fields cut as its payload's gist is
//! ([`assent_core::light`]: strings to 120 characters, said so where cut; lists to three items;
//! nothing deeper than five levels), its payload and preview the stored gist, so that the list
//! stays small on a phone whatever was proposed (nine proposals of 3.8 MB made a 55 MB list)
//! and is made without reading any whole payload. The row keeps the size of the payload and
//! the hash of the whole of it, which a decision names; the proposal opened loads whole.

use assent_core::light::{Gist, cut};
use serde_json::{Value, json};

/// The row of `shown` (a proposal as the listener shows it, JSON, its payload and preview left
/// out or ignored) with `gist`.
pub(super) fn row(mut shown: Value, gist: Gist) -> Value {
    // An approval without edits approved the payload itself: its gist (a list reads no more, and
    // the store derives nothing from a payload it did not read).
    let approved_as_proposed =
        shown["decision"]["outcome"] == "approve" && shown["decision"]["edited_payload"].is_null();
    if let Some(o) = shown.as_object_mut() {
        o.remove("payload");
        o.remove("preview");
        if approved_as_proposed {
            o.remove("approved_payload");
        }
    }
    let mut row = cut(&shown, 0);
    if let Some(o) = row.as_object_mut() {
        // Whole, whatever their length: what a decision names and what the row is.
        for k in ["id", "kind", "status", "agent"] {
            if let Some(v) = shown.get(k) {
                o.insert(k.into(), v.clone());
            }
        }
        if approved_as_proposed {
            o.insert("approved_payload".into(), gist.payload.clone());
        }
        o.insert("payload".into(), gist.payload);
        o.insert("preview".into(), gist.preview);
        o.insert("payload_sha256".into(), json!(gist.payload_sha256));
        o.insert("light".into(), json!(true));
        o.insert("payload_bytes".into(), json!(gist.payload_bytes));
    }
    row
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_row_is_small_whatever_was_proposed() {
        let huge = "x".repeat(4 << 20);
        let payload = json!({"tool": "Bash", "input": {"command": format!("rm -rf build\n{huge}")}});
        let gist = Gist::of(&payload, &json!({"type": "tool.call", "input_text": huge}));
        let shown = json!({"id": "p_1", "kind": "tool.call", "title": huge, "payload": null,
            "decision": {"reason": huge, "deep": {"a": {"b": {"c": {"d": {"e": 1}}}}}}});
        let r = row(shown, gist.clone());
        let text = r.to_string();
        assert!(text.len() < 900, "{} bytes", text.len());
        assert!(r["preview"].get("input_text").is_none() && r["preview"]["type"] == "tool.call");
        assert_eq!(r["payload_bytes"], gist.payload_bytes);
        assert_eq!((r["light"].as_bool(), r["id"].as_str()), (Some(true), Some("p_1")));
        assert_eq!(r["payload_sha256"].as_str().unwrap(), gist.payload_sha256, "kept whole");
        assert_eq!(r["payload"], gist.payload, "the gist as it was cut, not cut again");
        assert!(r["title"].as_str().unwrap().ends_with("more bytes]"));
        assert!(r["decision"]["deep"]["a"]["b"]["c"].as_object().unwrap().is_empty(), "cut below the depth");
        assert!(r.get("approved_payload").is_none_or(Value::is_null));
        // Approved as proposed (the list did not read the payload): the gist; edited: the edit, cut.
        let approved =
            json!({"id": "p_2", "payload": null, "approved_payload": null, "decision": {"outcome": "approve"}});
        assert_eq!(row(approved.clone(), gist.clone())["approved_payload"], gist.payload);
        let mut whole = approved.clone();
        whole["approved_payload"] = payload.clone();
        assert_eq!(row(whole, gist.clone())["approved_payload"], gist.payload, "the same from a proposal read whole");
        let mut edited = approved.clone();
        edited["approved_payload"] = json!({"tool": "Bash", "input": {"command": huge}});
        edited["decision"]["edited_payload"] = edited["approved_payload"].clone();
        let cut_edit = row(edited, gist.clone())["approved_payload"]["input"]["command"].as_str().unwrap().to_string();
        assert!(cut_edit.starts_with("xxx") && cut_edit.ends_with("more bytes]"), "{cut_edit}");
    }
}
