//! The file preview: a line diff of current vs proposed, computed by Assent, bounded in time
//! and size, with line numbers for a side-by-side or unified view.

use assent_core::invisible;
use serde_json::{Value, json};
use similar::{Algorithm, ChangeTag, DiffOp, TextDiff};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Longest a diff may search before settling for a coarser (still correct) answer.
pub const DIFF_DEADLINE: Duration = Duration::from_millis(300);
/// Lines shown in a preview at most; the rest is summarized.
pub const MAX_PREVIEW_LINES: usize = 20_000;
/// Characters of one line shown at most.
pub const MAX_LINE_CHARS: usize = 4_000;
/// Inputs larger than this together are not diffed at all.
pub const MAX_DIFF_BYTES: usize = 48 * 1024 * 1024;

/// Whether bytes look binary (NUL, or not UTF-8).
pub fn is_binary(b: &[u8]) -> bool {
    b.contains(&0) || std::str::from_utf8(b).is_err()
}

fn shown(line: &str) -> (String, bool) {
    let trimmed = line.strip_suffix('\n').unwrap_or(line);
    let trimmed = trimmed.strip_suffix('\r').unwrap_or(trimmed);
    let clipped = trimmed.chars().count() > MAX_LINE_CHARS;
    let text: String = if clipped { trimmed.chars().take(MAX_LINE_CHARS).collect() } else { trimmed.to_string() };
    (invisible::make_visible(&text), clipped)
}

/// The diff part of a preview: `stats`, `hunks` (each with `old_start`, `old_lines`,
/// `new_start`, `new_lines` and `lines` of `{tag, old, new, text}`), `truncated`, or
/// `too_large` with no hunks.
pub fn diff(old: &str, new: &str) -> Value {
    if old.len() + new.len() > MAX_DIFF_BYTES {
        return json!({ "too_large": true, "hunks": [], "stats": null, "truncated": false });
    }
    let diff =
        TextDiff::configure().algorithm(Algorithm::Myers).deadline(Instant::now() + DIFF_DEADLINE).diff_lines(old, new);
    let (mut added, mut removed) = (0usize, 0usize);
    for op in diff.ops() {
        match *op {
            DiffOp::Insert { new_len, .. } => added += new_len,
            DiffOp::Delete { old_len, .. } => removed += old_len,
            DiffOp::Replace { old_len, new_len, .. } => {
                added += new_len;
                removed += old_len;
            }
            DiffOp::Equal { .. } => {}
        }
    }
    let mut budget = MAX_PREVIEW_LINES;
    let mut truncated = false;
    let mut hunks = Vec::new();
    'groups: for group in diff.grouped_ops(3) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else { continue };
        let (old_start, new_start) = (first.old_range().start, first.new_range().start);
        let (old_end, new_end) = (last.old_range().end, last.new_range().end);
        let mut lines = Vec::new();
        for op in &group {
            for change in diff.iter_changes(op) {
                if budget == 0 {
                    truncated = true;
                    if !lines.is_empty() {
                        hunks.push(json!({"old_start": old_start + 1, "old_lines": old_end - old_start, "new_start": new_start + 1, "new_lines": new_end - new_start, "lines": lines}));
                    }
                    break 'groups;
                }
                budget -= 1;
                let tag = match change.tag() {
                    ChangeTag::Delete => "-",
                    ChangeTag::Insert => "+",
                    ChangeTag::Equal => " ",
                };
                let raw = change.value();
                let (text, clipped) = shown(raw);
                let mut line = json!({
                    "tag": tag,
                    "old": change.old_index().map(|i| i + 1),
                    "new": change.new_index().map(|i| i + 1),
                    "text": text,
                });
                if clipped {
                    line["clipped"] = json!(true);
                }
                if raw.chars().any(invisible::is_flagged) {
                    line["flagged"] = json!(true);
                }
                lines.push(line);
            }
        }
        hunks.push(json!({
            "old_start": old_start + 1, "old_lines": old_end - old_start,
            "new_start": new_start + 1, "new_lines": new_end - new_start,
            "lines": lines,
        }));
    }
    json!({ "too_large": false, "hunks": hunks, "stats": {"added": added, "removed": removed}, "truncated": truncated })
}

/// Invisible characters in the proposed text.
pub fn flags(text: &str) -> Value {
    let mut found = BTreeMap::new();
    invisible::scan_str(text, &mut found);
    json!(invisible::report(&found))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hunks_have_line_numbers() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let new = "a\nb\nc\nD\ne\nf\ng\nh\ni\n";
        let d = diff(old, new);
        assert_eq!(d["stats"], json!({"added": 2, "removed": 1}));
        let h = &d["hunks"][0];
        assert_eq!(h["old_start"], 1);
        let lines = h["lines"].as_array().cloned().unwrap_or_default();
        let minus = lines.iter().find(|l| l["tag"] == "-").cloned().unwrap_or_default();
        assert_eq!((minus["old"].as_u64(), minus["text"].as_str()), (Some(4), Some("d")));
        let plus = lines.iter().find(|l| l["tag"] == "+").cloned().unwrap_or_default();
        assert_eq!((plus["new"].as_u64(), plus["text"].as_str()), (Some(4), Some("D")));
    }

    #[test]
    fn invisible_characters_are_made_visible_and_flagged() {
        let d = diff("x\n", "x\u{202E}y\n");
        let lines = d["hunks"][0]["lines"].as_array().cloned().unwrap_or_default();
        let plus = lines.iter().find(|l| l["tag"] == "+").cloned().unwrap_or_default();
        assert_eq!(plus["flagged"], true);
        assert!(plus["text"].as_str().unwrap_or("").contains("U+202E"));
        assert_eq!(flags("a\u{200B}")[0]["codepoint"], "U+200B");
    }

    #[test]
    fn pathological_inputs_stay_bounded() {
        let a: String = (0..20_000).map(|i| format!("{}\n", i % 3)).collect();
        let b: String = (0..20_000).map(|i| format!("{}\n", (i / 2) % 3)).collect();
        let t = Instant::now();
        let d = diff(&a, &b);
        assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
        assert!(d["hunks"].as_array().is_some_and(|h| !h.is_empty()));
        let one_line_a = "x".repeat(1 << 20);
        let one_line_b = "y".repeat(1 << 20);
        let d = diff(&one_line_a, &one_line_b);
        assert_eq!(d["hunks"][0]["lines"][0]["clipped"], true);
    }
}
