//! Previews as they are stored: content kept once.
//!
//! A file preview repeats the proposed content line by line (every added and unchanged line of
//! the diff), and the payload already holds that content: storing both would double what a
//! large proposal costs on disk. So a stored preview's lines that show the proposed content
//! keep their line number (`new`) and drop their text, and reading fills the text in again from
//! the stored payload, rendered exactly as the diff renders it ([`display_line`]). Lines of the
//! current file (removed lines) are not in the payload and stay whole. A line is only ever
//! stripped when filling it in gives back the same text, so what is read is what was computed.

use crate::preview::Preview;
use serde_json::Value;
use std::borrow::Cow;

/// Characters of one line a preview shows at most.
pub const MAX_LINE_CHARS: usize = 4_000;

/// How a diff shows one line of text: without its line ending, clipped to
/// [`MAX_LINE_CHARS`] characters, invisible characters made visible. The second value says
/// whether it was clipped.
pub fn display_line(raw: &str) -> (String, bool) {
    let trimmed = raw.strip_suffix('\n').unwrap_or(raw);
    let trimmed = trimmed.strip_suffix('\r').unwrap_or(trimmed);
    let clipped = trimmed.chars().count() > MAX_LINE_CHARS;
    let text: String = if clipped { trimmed.chars().take(MAX_LINE_CHARS).collect() } else { trimmed.to_string() };
    (crate::invisible::make_visible(&text), clipped)
}

/// The lines of a text as diffs split them (each with its line ending).
pub fn lines(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

fn content_lines(payload: &Value) -> Option<Vec<&str>> {
    payload.get("content").and_then(Value::as_str).map(lines)
}

fn has_hunks(preview: &Value) -> bool {
    preview.get("hunks").and_then(Value::as_array).is_some_and(|h| !h.is_empty())
}

/// The preview as it is stored: lines that show the payload's content lose their text.
pub fn compact<'a>(payload: &Value, preview: &'a Value) -> Cow<'a, Value> {
    if !has_hunks(preview) || content_lines(payload).is_none() {
        return Cow::Borrowed(preview);
    }
    Cow::Owned(compact_owned(payload, preview.clone()))
}

/// [`compact`], for a preview the caller no longer needs (nothing is copied).
pub fn compact_owned(payload: &Value, mut preview: Value) -> Value {
    if !has_hunks(&preview) {
        return preview;
    }
    let Some(content) = content_lines(payload) else { return preview };
    for hunk in preview.get_mut("hunks").and_then(Value::as_array_mut).into_iter().flatten() {
        for line in hunk.get_mut("lines").and_then(Value::as_array_mut).into_iter().flatten() {
            let Some(n) = line.get("new").and_then(Value::as_u64).map(|n| n as usize) else { continue };
            let same = match (n.checked_sub(1).and_then(|i| content.get(i)), line.get("text").and_then(Value::as_str)) {
                (Some(raw), Some(text)) => display_line(raw).0 == text,
                _ => false,
            };
            if same && let Value::Object(m) = line {
                m.remove("text");
            }
        }
        if let Some(lines) = hunk.get_mut("lines").and_then(Value::as_array_mut) {
            *lines = runs(std::mem::take(lines));
        }
    }
    preview
}

/// A stripped line that is only its tag and numbers, as (tag, old, new).
fn bare(line: &Value) -> Option<(&str, Option<u64>, u64)> {
    let m = line.as_object()?;
    if m.contains_key("text") || m.keys().any(|k| !matches!(k.as_str(), "tag" | "old" | "new")) {
        return None;
    }
    Some((m.get("tag")?.as_str()?, m.get("old").and_then(Value::as_u64), m.get("new")?.as_u64()?))
}

/// Consecutive stripped lines of one tag with consecutive numbers become one
/// `{"tag", "old", "new", "run": N}`: a block of new content is stored as one entry.
fn runs(lines: Vec<Value>) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::with_capacity(lines.len());
    let mut run: Option<(String, Option<u64>, u64, u64)> = None;
    let flush = |out: &mut Vec<Value>, run: &mut Option<(String, Option<u64>, u64, u64)>| {
        if let Some((tag, old, new, n)) = run.take() {
            let mut v = serde_json::json!({"tag": tag, "old": old, "new": new});
            if n > 1 {
                v["run"] = Value::from(n);
            }
            out.push(v);
        }
    };
    for line in lines {
        match (bare(&line), &mut run) {
            (Some((tag, old, new)), Some((rt, ro, rn, n)))
                if tag == rt && new == *rn + *n && old == ro.map(|o| o + *n) =>
            {
                *n += 1;
            }
            (Some((tag, old, new)), _) => {
                flush(&mut out, &mut run);
                run = Some((tag.to_string(), old, new, 1));
            }
            (None, _) => {
                flush(&mut out, &mut run);
                out.push(line);
            }
        }
    }
    flush(&mut out, &mut run);
    out
}

/// Fills in what [`compact`] left out, from the stored payload.
pub fn expand(payload: &Value, preview: &mut Value) {
    if !has_hunks(preview) {
        return;
    }
    let Some(content) = content_lines(payload) else { return };
    for hunk in preview.get_mut("hunks").and_then(Value::as_array_mut).into_iter().flatten() {
        if let Some(lines) = hunk.get_mut("lines").and_then(Value::as_array_mut)
            && lines.iter().any(|l| l.get("run").is_some())
        {
            *lines = std::mem::take(lines)
                .into_iter()
                .flat_map(|l| {
                    let n = l.get("run").and_then(Value::as_u64).unwrap_or(1);
                    let (old, new) = (l.get("old").and_then(Value::as_u64), l.get("new").and_then(Value::as_u64));
                    (0..n).map(move |i| {
                        let mut one = l.clone();
                        if let Value::Object(m) = &mut one {
                            m.remove("run");
                            m.insert("old".into(), old.map(|o| Value::from(o + i)).unwrap_or(Value::Null));
                            m.insert("new".into(), new.map(|x| Value::from(x + i)).unwrap_or(Value::Null));
                        }
                        one
                    })
                })
                .collect();
        }
        for line in hunk.get_mut("lines").and_then(Value::as_array_mut).into_iter().flatten() {
            let Value::Object(m) = line else { continue };
            if m.contains_key("text") {
                continue;
            }
            let raw = m
                .get("new")
                .and_then(Value::as_u64)
                .and_then(|n| (n as usize).checked_sub(1))
                .and_then(|i| content.get(i));
            m.insert("text".into(), Value::String(raw.map(|r| display_line(r).0).unwrap_or_default()));
        }
    }
}

/// A new proposal's payload and preview as they go into the database, serialized once: the
/// engine counts their bytes against the agent's quota, the store writes them as they are.
#[derive(Debug, Clone)]
pub struct StoredJson {
    /// The payload's JSON.
    pub payload: String,
    /// The [`compact`] preview's JSON.
    pub preview: String,
    /// What rules see of it ([`crate::rules::Facts`]), as JSON.
    pub facts: Option<String>,
    /// What a list shows of them ([`crate::light::Gist`]), as JSON.
    pub gist: String,
}

impl StoredJson {
    /// Serializes `p`'s payload and compact preview, and what rules see of it.
    pub fn of(p: &crate::proposal::Proposal, facts: &crate::rules::Facts) -> Self {
        let (payload, preview) = (p.payload.to_string(), p.preview.to_value());
        let gist = crate::light::Gist::sized(&p.payload, payload.len(), &preview);
        let gist = serde_json::to_string(&gist).unwrap_or_default();
        StoredJson {
            payload,
            preview: compact_owned(&p.payload, preview).to_string(),
            facts: serde_json::to_string(facts).ok(),
            gist,
        }
    }

    /// What they cost on disk.
    pub fn bytes(&self) -> u64 {
        (self.payload.len() + self.preview.len()) as u64
    }
}

/// Strings longer than this are replaced when a proposal's content is pruned.
pub const PRUNE_ABOVE: usize = 512;

/// `v` with every string longer than [`PRUNE_ABOVE`] bytes replaced by a note of its size and
/// SHA-256: what a settled proposal keeps after the retention.
pub fn prune(v: &Value) -> Value {
    match v {
        Value::String(s) if s.len() > PRUNE_ABOVE => Value::String(format!(
            "\u{27E6}pruned after the retention: {} bytes, sha256 {}\u{27E7}",
            s.len(),
            hex::encode(<sha2::Sha256 as sha2::Digest>::digest(s.as_bytes()))
        )),
        Value::Array(a) => Value::Array(a.iter().map(prune).collect()),
        Value::Object(m) => Value::Object(m.iter().map(|(k, x)| (k.clone(), prune(x))).collect()),
        other => other.clone(),
    }
}

/// What a proposal's stored preview becomes after the retention: the agent's view of it (its
/// figures; see [`Preview::for_agent`]), every string longer than [`PRUNE_ABOVE`] bytes
/// replaced by its size and hash, marked `content_pruned`. The stored form's hunks (and a
/// file's summary) never survive pruning, so they are left out before reading: the compact
/// form's stripped lines are not lines a preview reads.
pub fn pruned_preview(preview: &Value) -> Value {
    let mut v = preview.clone();
    if let Value::Object(m) = &mut v
        && m.get("type")
            .and_then(Value::as_str)
            .and_then(crate::payloads::KindName::parse)
            .is_some_and(|k| matches!(k, crate::payloads::KindName::FileWrite | crate::payloads::KindName::FileDelete))
    {
        m.remove("hunks");
        m.remove("summary");
    }
    let mut out = prune(&Preview::read(v).for_agent().to_value());
    if let Value::Object(m) = &mut out {
        m.remove("content_withheld");
        if m.get("type").and_then(Value::as_str) != Some("unreadable") {
            m.insert("content_pruned".into(), Value::Bool(true));
        }
    }
    Preview::read(out).to_value()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::preview::{Diff, FilePreview, Hunk, Line, ToolPreview};
    use serde_json::json;

    fn file_preview() -> Preview {
        let line =
            Line { tag: "-".into(), old: Some(1), new: None, text: "secret".into(), clipped: false, flagged: false };
        let hunk = Hunk { old_start: 1, old_lines: 1, new_start: 1, new_lines: 0, lines: vec![line] };
        Preview::FileWrite(FilePreview {
            path: "/w/a.txt".into(),
            exists: true,
            current_size: 7,
            diff: Diff { hunks: Some(vec![hunk]), ..Default::default() },
            ..Default::default()
        })
    }

    #[test]
    fn what_is_stored_once_reads_back_the_same() {
        let payload = json!({"path": "/x", "content": "a\nB\u{202E}\nc\r\nnew\n"});
        let preview = json!({"hunks": [{"lines": [
            {"tag": " ", "old": 1, "new": 1, "text": "a"},
            {"tag": "-", "old": 2, "new": null, "text": "b"},
            {"tag": "+", "old": null, "new": 2, "text": "B\u{27E6}U+202E\u{27E7}", "flagged": true},
            {"tag": " ", "old": 3, "new": 3, "text": "c"},
            {"tag": "+", "old": null, "new": 4, "text": "not what line 4 says"},
        ]}]});
        let stored = compact(&payload, &preview).into_owned();
        let lines = stored["hunks"][0]["lines"].as_array().cloned().unwrap_or_default();
        let kept: Vec<bool> = lines.iter().map(|l| l.get("text").is_some()).collect();
        assert_eq!(kept, vec![false, true, false, false, true], "only what the payload says is left out");
        // A block of new lines is one entry.
        let block: String = (0..100).map(|i| format!("l{i}\n")).collect();
        let many = json!({"content": block});
        let full = json!({"hunks": [{"lines": (0..100).map(|i| json!({"tag": "+", "old": null, "new": i + 1, "text": format!("l{i}")})).collect::<Vec<_>>()}]});
        let small = compact(&many, &full).into_owned();
        assert_eq!(small["hunks"][0]["lines"], json!([{"tag": "+", "old": null, "new": 1, "run": 100}]));
        let mut again = small;
        expand(&many, &mut again);
        assert_eq!(again, full);
        let mut back = stored;
        expand(&payload, &mut back);
        assert_eq!(back, preview);
        // Nothing to do for previews without hunks or payloads without content.
        let tool = json!({"type": "tool.call", "input": {}});
        assert!(matches!(compact(&json!({}), &tool), Cow::Borrowed(_)));
    }

    #[test]
    fn a_pruned_preview_keeps_its_shape_and_says_so() {
        let long = "x".repeat(2_000);
        let tool = Preview::ToolCall(ToolPreview {
            tool: "Bash".into(),
            input: json!({"command": long}),
            input_text: long.clone(),
            ..Default::default()
        });
        let Preview::ToolCall(t) = Preview::read(pruned_preview(&tool.to_value())) else {
            panic!("not a tool preview")
        };
        assert!(t.content_pruned);
        assert!(t.input_text.contains("pruned after the retention: 2000 bytes"), "{}", t.input_text);
        let Preview::FileWrite(f) = Preview::read(pruned_preview(&file_preview().to_value())) else {
            panic!("not a file preview")
        };
        assert!(f.content_pruned && !f.content_withheld && f.diff.hunks.is_none());
    }
}
