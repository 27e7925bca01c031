//! Previews as they are stored: content kept once.
//!
//! A file preview repeats the proposed content line by line (every added and unchanged line of
//! the diff), and the payload already holds that content: storing both would double what a
//! large proposal costs on disk. So a stored preview's lines that show the proposed content
//! keep their line number (`new`) and drop their text, and reading fills the text in again from
//! the stored payload, rendered exactly as the diff renders it ([`display_line`]). Lines of the
//! current file (removed lines) are not in the payload and stay whole. A line is only ever
//! stripped when filling it in gives back the same text, so what is read is what was computed.

use crate::payloads::Payload;
use crate::preview::{FilePreview, Hunk, Line, Preview};
use serde::{Deserialize, Serialize};
use serde_json::Value;

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

/// A line of a stored hunk: whole, or its numbers alone where the payload's content holds its
/// text (a run of consecutive such lines, one entry).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
enum StoredLine {
    /// A line the payload does not hold (a removed one, one shown otherwise than the content
    /// says): as the preview has it.
    Whole(Line),
    /// Lines `new`, `new + 1`, ... of the content, `run` of them, shown as the diff shows them.
    Bare(Bare),
}

/// Lines of the payload's content, by their numbers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Bare {
    tag: String,
    old: Option<u64>,
    new: u64,
    #[serde(default = "one", skip_serializing_if = "is_one")]
    run: u64,
    #[serde(default, skip_serializing_if = "is_false")]
    clipped: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    flagged: bool,
}

fn one() -> u64 {
    1
}

fn is_one(n: &u64) -> bool {
    *n == 1
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// A hunk as it is stored: its numbers, and its lines each whole or bare.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct StoredHunk {
    old_start: u64,
    old_lines: u64,
    new_start: u64,
    new_lines: u64,
    lines: Vec<StoredLine>,
}

/// A file preview as it is stored: the preview without its hunks, and its stored hunks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct StoredFile {
    #[serde(flatten)]
    preview: FilePreview,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    hunks: Option<Vec<StoredHunk>>,
}

/// The stored previews whose form differs from the preview's: a written file's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
enum StoredPreview {
    #[serde(rename = "file.write")]
    FileWrite(StoredFile),
}

impl Bare {
    /// Whether `next` is the line after this run, so that it joins it.
    fn continued_by(&self, next: &Bare) -> bool {
        let plain = |b: &Bare| !b.clipped && !b.flagged;
        plain(self)
            && plain(next)
            && next.run == 1
            && next.tag == self.tag
            && next.new == self.new + self.run
            && next.old == self.old.map(|o| o + self.run)
    }

    /// The lines it stands for, their text filled in from `content`.
    fn lines(self, content: &[&str]) -> impl Iterator<Item = Line> {
        let Bare { tag, old, new, run, clipped, flagged } = self;
        (0..run).map(move |i| {
            let n = new + i;
            let raw = (n as usize).checked_sub(1).and_then(|i| content.get(i));
            Line {
                tag: tag.clone(),
                old: old.map(|o| o + i),
                new: Some(n),
                text: raw.map(|r| display_line(r).0).unwrap_or_default(),
                clipped,
                flagged,
            }
        })
    }
}

impl StoredHunk {
    /// `h` as stored: a line whose text is what the content's line `new` shows loses its text,
    /// and consecutive such lines become one run.
    fn of(h: Hunk, content: &[&str]) -> Self {
        let mut lines: Vec<StoredLine> = Vec::with_capacity(h.lines.len());
        for line in h.lines {
            let shown = line.new.and_then(|n| (n as usize).checked_sub(1)).and_then(|i| content.get(i));
            let bare = match (line.new, shown) {
                (Some(new), Some(raw)) if display_line(raw).0 == line.text => {
                    Bare { tag: line.tag, old: line.old, new, run: 1, clipped: line.clipped, flagged: line.flagged }
                }
                _ => {
                    lines.push(StoredLine::Whole(line));
                    continue;
                }
            };
            match lines.last_mut() {
                Some(StoredLine::Bare(run)) if run.continued_by(&bare) => run.run += 1,
                _ => lines.push(StoredLine::Bare(bare)),
            }
        }
        StoredHunk {
            old_start: h.old_start,
            old_lines: h.old_lines,
            new_start: h.new_start,
            new_lines: h.new_lines,
            lines,
        }
    }

    /// The hunk again, every line whole.
    fn expand(self, content: &[&str]) -> Hunk {
        let lines = self
            .lines
            .into_iter()
            .flat_map(|l| -> Box<dyn Iterator<Item = Line> + '_> {
                match l {
                    StoredLine::Whole(line) => Box::new(std::iter::once(line)),
                    StoredLine::Bare(b) => Box::new(b.lines(content)),
                }
            })
            .collect();
        Hunk {
            old_start: self.old_start,
            old_lines: self.old_lines,
            new_start: self.new_start,
            new_lines: self.new_lines,
            lines,
        }
    }
}

/// The preview as it is stored: the lines of a written file's diff that show `payload`'s content
/// keep their numbers and lose their text.
pub fn compact(payload: &Payload, preview: &Preview) -> Value {
    let (Payload::FileWrite(w), Preview::FileWrite(f)) = (payload, preview) else { return preview.to_value() };
    if f.diff.hunks.as_ref().is_none_or(Vec::is_empty) {
        return preview.to_value();
    }
    let content = lines(&w.content);
    // One copy of the preview, its hunks taken out of it to be stored their own way.
    let mut rest = f.clone();
    let hunks = rest.diff.hunks.take().unwrap_or_default();
    let stored =
        StoredFile { preview: rest, hunks: Some(hunks.into_iter().map(|h| StoredHunk::of(h, &content)).collect()) };
    serde_json::to_value(StoredPreview::FileWrite(stored)).unwrap_or_else(|_| preview.to_value())
}

/// The preview read back from its stored form ([`compact`]), the left-out text filled in from
/// `content`, the stored payload's content when it has one.
pub fn expand(content: Option<&str>, stored: Value) -> Preview {
    let Some(content) = content else { return Preview::read(stored) };
    match StoredPreview::deserialize(&stored) {
        Ok(StoredPreview::FileWrite(StoredFile { mut preview, hunks: Some(hunks) })) => {
            let content = lines(content);
            preview.diff.hunks = Some(hunks.into_iter().map(|h| h.expand(&content)).collect());
            Preview::FileWrite(preview)
        }
        _ => Preview::read(stored),
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
    /// Serializes `p`'s payload (`typed`, as its kind read it) and compact preview, and what
    /// rules see of it.
    pub fn of(p: &crate::proposal::Proposal, typed: &Payload, facts: &crate::rules::Facts) -> Self {
        // The preview serialized once, compact: a gist keeps none of the hunks compaction changes.
        let value = p.payload.to_value();
        let (payload, preview) = (value.to_string(), compact(typed, &p.preview));
        let gist = crate::light::Gist::sized(&value, payload.len(), &preview);
        let gist = serde_json::to_string(&gist).unwrap_or_default();
        StoredJson { payload, preview: preview.to_string(), facts: serde_json::to_string(facts).ok(), gist }
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
    use crate::preview::{Diff, ToolPreview};
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

    fn line(tag: &str, old: Option<u64>, new: Option<u64>, text: &str) -> Line {
        Line { tag: tag.into(), old, new, text: text.into(), clipped: false, flagged: false }
    }

    fn written(lines: Vec<Line>) -> Preview {
        let hunk = Hunk { old_start: 1, old_lines: 3, new_start: 1, new_lines: 4, lines };
        Preview::FileWrite(FilePreview {
            path: "/x".into(),
            exists: true,
            diff: Diff { hunks: Some(vec![hunk]), ..Default::default() },
            ..Default::default()
        })
    }

    fn write(content: &str) -> Payload {
        Payload::FileWrite(crate::payloads::FileWrite { path: "/x".into(), content: content.into() })
    }

    #[test]
    fn what_is_stored_once_reads_back_the_same() {
        let content = "a\nB\u{202E}\nc\r\nnew\n";
        let mut flagged = line("+", None, Some(2), "B\u{27E6}U+202E\u{27E7}");
        flagged.flagged = true;
        let preview = written(vec![
            line(" ", Some(1), Some(1), "a"),
            line("-", Some(2), None, "b"),
            flagged,
            line(" ", Some(3), Some(3), "c"),
            line("+", None, Some(4), "not what line 4 says"),
        ]);
        let stored = compact(&write(content), &preview);
        let lines = stored["hunks"][0]["lines"].as_array().cloned().unwrap_or_default();
        let kept: Vec<bool> = lines.iter().map(|l| l.get("text").is_some()).collect();
        assert_eq!(kept, vec![false, true, false, false, true], "only what the payload says is left out");
        assert_eq!(lines[2], json!({"tag": "+", "old": null, "new": 2, "flagged": true}), "a flag stays, in no run");
        assert_eq!(stored["type"], "file.write");
        assert_eq!(expand(Some(content), stored), preview);
        // A block of new lines is one entry, as it always was stored.
        let block: String = (0..100).map(|i| format!("l{i}\n")).collect();
        let full = written((0..100).map(|i| line("+", None, Some(i + 1), &format!("l{i}"))).collect());
        let small = compact(&write(&block), &full);
        assert_eq!(small["hunks"][0]["lines"], json!([{"tag": "+", "old": null, "new": 1, "run": 100}]));
        assert_eq!(expand(Some(&block), small), full);
        // Context lines run with both numbers.
        let ctx = written((0..3).map(|i| line(" ", Some(i + 5), Some(i + 1), &format!("l{i}"))).collect());
        let c = compact(&write(&block), &ctx);
        assert_eq!(c["hunks"][0]["lines"], json!([{"tag": " ", "old": 5, "new": 1, "run": 3}]));
        assert_eq!(expand(Some(&block), c), ctx);
        // Nothing to do for previews of other kinds, or without the content.
        let tool = Preview::ToolCall(ToolPreview { tool: "Bash".into(), ..Default::default() });
        assert_eq!(compact(&write("x"), &tool), tool.to_value());
        assert_eq!(expand(None, preview.to_value()), preview);
    }

    #[test]
    fn a_stored_preview_of_an_earlier_version_reads_as_it_did() {
        // Written by the JSON form of this code (a flagged line bare, a run), read typed.
        let stored = json!({"type": "file.write", "path": "/x", "exists": true, "current_size": 0,
            "hunks": [{"old_start": 1, "old_lines": 0, "new_start": 1, "new_lines": 3, "lines": [
                {"tag": "+", "old": null, "new": 1, "run": 2},
                {"tag": "+", "old": null, "new": 3, "flagged": true}]}]});
        let Preview::FileWrite(f) = expand(Some("a\nb\nc\u{202E}\n"), stored) else { panic!("not a file preview") };
        let lines = f.diff.hunks.unwrap_or_default().remove(0).lines;
        let texts: Vec<&str> = lines.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(texts, ["a", "b", "c\u{27E6}U+202E\u{27E7}"]);
        assert!(lines[2].flagged && !lines[0].flagged);
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
