//! What a list shows of a proposal's payload and preview, its **gist**: every string cut to
//! [`TEXT`] characters (said so where it is cut), every list to [`ITEMS`] items, nothing deeper
//! than [`DEPTH`], with the payload's size and the hash a decision names. It is computed once,
//! when the proposal is filed, and stored beside it, so that a list is made without reading any
//! whole payload (eight pending 3.8 MB file writes took seconds to list when each row was cut
//! from the payload read whole).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Characters of a string kept (a row shows the first 120 of a command's first line).
pub const TEXT: usize = 120;
/// Items of a list kept.
pub const ITEMS: usize = 3;
/// Entries of an object kept.
pub const ENTRIES: usize = 24;
/// Levels of nesting kept (a proposal's own fields being the first).
pub const DEPTH: usize = 5;

/// What a gist keeps of the preview: its shape and Assent's notes; its copy of the input, its
/// text and its diff are the payload again.
pub const PREVIEW_KEPT: [&str; 9] =
    ["type", "tool", "notes", "invisible_characters", "cwd", "client", "path", "method", "url"];

/// Fields that hold a path or an address: cut in the middle, so that a file's name (the end)
/// stays in the row.
pub const PATH_KEYS: [&str; 7] = ["path", "file_path", "filePath", "notebook_path", "cwd", "url", "workdir"];

/// `s` cut in the middle when long: its first 40 characters and its last 80.
fn cut_path(s: &str) -> Value {
    let n = s.chars().count();
    if n <= TEXT {
        return Value::String(s.to_string());
    }
    let head: String = s.chars().take(40).collect();
    let tail: String = s.chars().skip(n - (TEXT - 40)).collect();
    Value::String(format!("{head}… [{} more bytes] …{tail}", s.len() - head.len() - tail.len()))
}

/// `v`, found at nesting level `depth`, cut down (see the module's documentation).
pub fn cut(v: &Value, depth: usize) -> Value {
    match v {
        Value::String(s) if s.chars().count() > TEXT => {
            let kept: String = s.chars().take(TEXT).collect();
            Value::String(format!("{kept}… [{} more bytes]", s.len() - kept.len()))
        }
        // Below the depth: the same kind of thing, empty.
        Value::Array(_) if depth >= DEPTH => Value::Array(Vec::new()),
        Value::Object(_) if depth >= DEPTH => Value::Object(Map::new()),
        Value::Array(a) => Value::Array(a.iter().take(ITEMS).map(|x| cut(x, depth + 1)).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .take(ENTRIES)
                .map(|(k, x)| {
                    let kept = match x.as_str() {
                        Some(s) if PATH_KEYS.contains(&k.as_str()) => cut_path(s),
                        _ => cut(x, depth + 1),
                    };
                    (k.clone(), kept)
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

/// How long `v` is as JSON, in bytes: counted as it is written, with no copy of it kept.
pub fn json_len(v: &Value) -> usize {
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

/// A proposal's payload and preview as a list shows them (see the module's documentation).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Gist {
    /// The payload, cut.
    pub payload: Value,
    /// The preview's kept fields, cut.
    pub preview: Value,
    /// The payload's length as JSON.
    pub payload_bytes: u64,
    /// The SHA-256 of the payload's canonical form (RFC 8785): what a decision names.
    pub payload_sha256: String,
}

impl Gist {
    /// The gist of `payload` and its (whole) `preview`.
    pub fn of(payload: &Value, preview: &Value) -> Gist {
        Gist::sized(payload, json_len(payload), preview)
    }

    /// [`Gist::of`] where the payload's length as JSON is known (it was just serialized to be
    /// stored): not counted again.
    pub fn sized(payload: &Value, payload_bytes: usize, preview: &Value) -> Gist {
        // Only the kept fields copied: a file's hunks are most of a preview.
        let kept = match preview {
            Value::Object(m) => Value::Object(
                m.iter()
                    .filter(|(k, _)| PREVIEW_KEPT.contains(&k.as_str()))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
            ),
            other => other.clone(),
        };
        Gist {
            payload: cut(payload, 1),
            preview: cut(&kept, 1),
            payload_bytes: payload_bytes as u64,
            payload_sha256: crate::canonical::canonical_sha256(payload),
        }
    }
}

/// A proposal as a list has it: its payload and preview not read (null and unreadable) where
/// its gist was stored, and nothing derived from them (no `approved_payload` but an edit the
/// decision holds); and the gist.
#[derive(Debug, Clone)]
pub struct Listed {
    /// The proposal, without its payload and preview (see above).
    pub proposal: crate::proposal::Proposal,
    /// What a list shows of its payload and preview.
    pub gist: Gist,
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_payload_is_counted_as_its_json() {
        let v = json!({"tool": "Bash", "input": {"command": "é".repeat(1000)}});
        assert_eq!(json_len(&v), serde_json::to_vec(&v).unwrap().len());
    }

    #[test]
    fn a_gist_is_small_whatever_was_proposed() {
        let huge = "x".repeat(4 << 20);
        let payload = json!({"tool": "Bash", "input": {"command": format!("rm -rf build\n{huge}"),
            "list": vec!["y".repeat(200); 1000], "deep": {"a": {"b": {"c": {"d": 1}}}}}});
        let g = Gist::of(&payload, &json!({"type": "tool.call", "input_text": huge, "notes": ["n"]}));
        assert!(serde_json::to_string(&g).unwrap().len() < 900);
        assert!(
            g.preview.get("input_text").is_none() && g.preview["type"] == "tool.call" && g.preview["notes"][0] == "n"
        );
        assert_eq!(g.payload_bytes as usize, payload.to_string().len());
        assert_eq!(g.payload_sha256, crate::canonical::canonical_sha256(&payload));
        let cmd = g.payload["input"]["command"].as_str().unwrap();
        assert!(cmd.starts_with("rm -rf build\n") && cmd.ends_with("more bytes]"), "{cmd}");
        assert_eq!(g.payload["input"]["list"].as_array().unwrap().len(), ITEMS);
        assert!(g.payload["input"]["deep"]["a"]["b"].as_object().unwrap().is_empty(), "cut below the depth");
        // A long path keeps its end: the file's name.
        let deep = format!("/home/me/{}notes.md", "sub/".repeat(100));
        let g = Gist::of(&json!({"path": deep, "content": "x"}), &json!({"path": deep}));
        let path = g.payload["path"].as_str().unwrap();
        assert!(
            path.starts_with("/home/me/sub/") && path.ends_with("sub/notes.md") && path.contains("more bytes]"),
            "{path}"
        );
        assert_eq!(g.preview["path"], g.payload["path"]);
        // What is short stays as it is.
        let small = json!({"tool": "Bash", "input": {"command": "ls"}});
        assert_eq!(Gist::of(&small, &Value::Null).payload, small);
    }
}
