//! A proposal as a row of the phone's list: every string of it cut to [`TEXT`] characters
//! (said so where it is cut), every list to [`ITEMS`] items, nothing deeper than [`DEPTH`], so
//! that the list stays small on a phone whatever was proposed (nine proposals of 3.8 MB made a
//! 55 MB list). The row keeps the size of the payload and the hash of the whole of it, which a
//! decision names; the proposal opened loads whole.

use serde_json::{Map, Value, json};

/// Characters of a string kept (a row shows the first 120 of a command's first line).
pub(super) const TEXT: usize = 120;

/// What a row keeps of the preview: its shape and Assent's notes; its copy of the input, its
/// text and its diff are the payload again.
const PREVIEW_KEPT: [&str; 9] =
    ["type", "tool", "notes", "invisible_characters", "cwd", "client", "path", "method", "url"];
/// Items of a list kept.
pub(super) const ITEMS: usize = 3;
/// Entries of an object kept.
pub(super) const ENTRIES: usize = 24;
/// Levels of nesting kept.
pub(super) const DEPTH: usize = 5;

/// `v` cut down (see the module's documentation).
fn cut(v: &Value, depth: usize) -> Value {
    match v {
        Value::String(s) if s.chars().count() > TEXT => {
            let kept: String = s.chars().take(TEXT).collect();
            Value::String(format!("{kept}… [{} more bytes]", s.len() - kept.len()))
        }
        // Below the depth: the same kind of thing, empty.
        Value::Array(_) if depth >= DEPTH => Value::Array(Vec::new()),
        Value::Object(_) if depth >= DEPTH => Value::Object(Map::new()),
        Value::Array(a) => Value::Array(a.iter().take(ITEMS).map(|x| cut(x, depth + 1)).collect()),
        Value::Object(o) => {
            Value::Object(o.iter().take(ENTRIES).map(|(k, x)| (k.clone(), cut(x, depth + 1))).collect())
        }
        other => other.clone(),
    }
}

/// How long `v` is as JSON, in bytes: counted as it is written, with no copy of it kept (a
/// payload may be megabytes, and a row is made for each proposal of the list).
pub(super) fn json_len(v: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut n = Count(0);
    serde_json::to_writer(&mut n, v).map_or(0, |()| n.0)
}

/// The row of `shown` (a proposal as the listener shows it, JSON), whose payload was
/// `payload_bytes` long.
pub(super) fn row(mut shown: Value, payload_bytes: usize) -> Value {
    if let Some(p) = shown.get_mut("preview").and_then(Value::as_object_mut) {
        p.retain(|k, _| PREVIEW_KEPT.contains(&k.as_str()));
    }
    let mut row = cut(&shown, 0);
    if let Some(o) = row.as_object_mut() {
        // Whole, whatever their length: what a decision names and what the row is.
        for k in ["id", "payload_sha256", "kind", "status", "agent"] {
            if let Some(v) = shown.get(k) {
                o.insert(k.into(), v.clone());
            }
        }
        o.insert("light".into(), json!(true));
        o.insert("payload_bytes".into(), json!(payload_bytes));
    }
    row
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_payload_is_counted_as_its_json() {
        let v = json!({"tool": "Bash", "input": {"command": "é".repeat(1000)}});
        assert_eq!(json_len(&v), serde_json::to_vec(&v).unwrap().len());
    }

    #[test]
    fn a_row_is_small_whatever_was_proposed() {
        let huge = "x".repeat(4 << 20);
        let shown = json!({
            "id": "p_1", "kind": "tool.call", "payload_sha256": "ab".repeat(32),
            "payload": {"tool": "Bash", "input": {"command": format!("rm -rf build\n{huge}"), "list": vec![huge.clone(); 1000],
                "deep": {"a": {"b": {"c": {"d": 1}}}}}},
            "preview": {"type": "tool.call", "input_text": huge},
        });
        let r = row(shown, 12_345_678);
        let text = r.to_string();
        assert!(text.len() < 900, "{} bytes", text.len());
        assert!(r["preview"].get("input_text").is_none() && r["preview"]["type"] == "tool.call");
        assert_eq!(r["payload_bytes"], 12_345_678);
        assert_eq!((r["light"].as_bool(), r["id"].as_str()), (Some(true), Some("p_1")));
        assert_eq!(r["payload_sha256"].as_str().unwrap().len(), 64, "kept whole");
        let cmd = r["payload"]["input"]["command"].as_str().unwrap();
        assert!(cmd.starts_with("rm -rf build\n") && cmd.ends_with("more bytes]"), "{cmd}");
        assert_eq!(r["payload"]["input"]["list"].as_array().unwrap().len(), ITEMS);
        assert!(r["payload"]["input"]["deep"]["a"]["b"].as_object().unwrap().is_empty(), "cut below the depth");
        // What is short stays as it is.
        let small = json!({"id": "p_2", "payload": {"tool": "Bash", "input": {"command": "ls"}}});
        assert_eq!(row(small.clone(), 2)["payload"], small["payload"]);
    }
}
