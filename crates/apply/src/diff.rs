//! The file preview: a line diff of current vs proposed, computed by Assent, bounded in time
//! and size, with line numbers for a side-by-side or unified view.

use assent_core::invisible::{self, Found};
use assent_core::preview::{Diff, Hunk, Line, Stats};
use similar::{Algorithm, DiffOp};
use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

/// Longest a diff may search before settling for a coarser (still correct) answer.
pub const DIFF_DEADLINE: Duration = Duration::from_millis(300);
/// Lines shown in a preview at most; the rest is summarized.
pub const MAX_PREVIEW_LINES: usize = 20_000;
/// Of those, the last lines of the diff, shown after a gap when there are more.
pub const TAIL_LINES: usize = 2_000;
/// Characters of one line shown at most.
pub const MAX_LINE_CHARS: usize = assent_core::stored::MAX_LINE_CHARS;
/// Texts at least this large have their work shared with a second thread.
pub(crate) const PARALLEL_BYTES: usize = 256 * 1024;
/// Inputs larger than this together are not diffed at all.
pub const MAX_DIFF_BYTES: usize = 48 * 1024 * 1024;

/// Whether bytes look binary (NUL, or not UTF-8).
pub fn is_binary(b: &[u8]) -> bool {
    b.contains(&0) || std::str::from_utf8(b).is_err()
}

/// How one line is shown (one definition for the diff and for the store, which leaves out the
/// lines the payload already holds and fills them in again the same way).
fn shown(line: &str) -> (String, bool) {
    assent_core::stored::display_line(line)
}

/// The lines of `text`, each with its newline, as `similar` and `git` split them.
fn lines(text: &str) -> Vec<&str> {
    assent_core::stored::lines(text)
}

/// Both sides' lines as small integers, equal where the lines are equal: the diff then compares
/// integers instead of strings (about three times faster on large files). The hasher is seeded
/// per process, so no crafted content can make the table degenerate. Also the number of ids.
fn intern<'a>(old: &[&'a str], new: &[&'a str]) -> (Vec<u32>, Vec<u32>, usize) {
    let mut ids: HashMap<&'a str, u32, foldhash::fast::RandomState> =
        HashMap::with_capacity_and_hasher(old.len() + new.len(), Default::default());
    let mut side = |lines: &[&'a str]| -> Vec<u32> {
        lines
            .iter()
            .map(|l| {
                let next = ids.len() as u32;
                *ids.entry(*l).or_insert(next)
            })
            .collect()
    };
    let o = side(old);
    let n = side(new);
    (o, n, ids.len())
}

/// Marks an id seen on no line of a side, or on more than one.
const NONE: u32 = u32::MAX;
const MANY: u32 = u32::MAX - 1;

/// The edit script of two interned line lists. Lines that occur once on each side and match
/// in the same order (the longest chain of them) are anchors, and Myers runs only in the gaps
/// between them: scattered edits in a large file become many small problems, instead of one
/// whose cost grows with the square of the edit count (a 10 MB file with 1% of its lines
/// changed: several times faster). Where no line is unique on both sides this is Myers on the
/// whole. The deadline bounds all the gaps together.
fn edit_script(oi: &[u32], ni: &[u32], ids: usize, deadline: Instant) -> Vec<DiffOp> {
    let single = |side: &[u32]| {
        let mut at = vec![NONE; ids];
        for (i, &id) in side.iter().enumerate() {
            let slot = &mut at[id as usize];
            *slot = if *slot == NONE { i as u32 } else { MANY };
        }
        at
    };
    let (in_old, in_new) = (single(oi), single(ni));
    // The pairs, in the new side's order; the longest run increasing on the old side too.
    let pairs: Vec<(u32, u32)> = ni
        .iter()
        .enumerate()
        .filter_map(|(j, &id)| {
            let (o, n) = (in_old[id as usize], in_new[id as usize]);
            (o < MANY && n < MANY).then_some((o, j as u32))
        })
        .collect();
    let mut ops: Vec<DiffOp> = Vec::new();
    let (mut o0, mut n0) = (0usize, 0usize);
    let ends = std::iter::once((oi.len() as u32, ni.len() as u32));
    for (ao, an) in longest_chain(&pairs).into_iter().chain(ends) {
        let (ao, an) = (ao as usize, an as usize);
        if o0 < ao || n0 < an {
            let gap = similar::capture_diff_deadline(Algorithm::Myers, oi, o0..ao, ni, n0..an, Some(deadline));
            gap.into_iter().for_each(|op| push_op(&mut ops, op));
        }
        if ao < oi.len() {
            push_op(&mut ops, DiffOp::Equal { old_index: ao, new_index: an, len: 1 });
        }
        (o0, n0) = (ao + 1, an + 1);
    }
    ops
}

/// Appends `op`, joining it to an equal run it continues (hunks are cut at long equal runs).
fn push_op(ops: &mut Vec<DiffOp>, op: DiffOp) {
    if let (Some(DiffOp::Equal { old_index, new_index, len }), DiffOp::Equal { old_index: o, new_index: n, len: l }) =
        (ops.last_mut(), &op)
        && *old_index + *len == *o
        && *new_index + *len == *n
    {
        *len += l;
        return;
    }
    ops.push(op);
}

/// The longest subsequence of `pairs` (sorted by their second member) whose first members
/// increase too, by patience sorting: O(n log n).
fn longest_chain(pairs: &[(u32, u32)]) -> Vec<(u32, u32)> {
    // tails[k]: the index in `pairs` of the smallest end of a chain of length k + 1.
    let mut tails: Vec<usize> = Vec::new();
    let mut before: Vec<usize> = vec![usize::MAX; pairs.len()];
    for (i, &(o, _)) in pairs.iter().enumerate() {
        let k = tails.partition_point(|&t| pairs[t].0 < o);
        if k > 0 {
            before[i] = tails[k - 1];
        }
        if k == tails.len() {
            tails.push(i);
        } else {
            tails[k] = i;
        }
    }
    let mut chain = Vec::with_capacity(tails.len());
    let mut at = tails.last().copied();
    while let Some(i) = at {
        chain.push(pairs[i]);
        at = (before[i] != usize::MAX).then_some(before[i]);
    }
    chain.reverse();
    chain
}

fn line(tag: &str, old: Option<usize>, new: Option<usize>, raw: &str) -> Line {
    let (text, clipped) = shown(raw);
    Line {
        tag: tag.to_string(),
        old: old.map(|i| i as u64 + 1),
        new: new.map(|i| i as u64 + 1),
        text,
        clipped,
        flagged: invisible::has_flagged(raw),
    }
}

/// The diff part of a preview: `stats`, `hunks` (each with `old_start`, `old_lines`,
/// `new_start`, `new_lines` and `lines` of `{tag, old, new, text}`), `truncated`, or
/// `too_large` with no hunks.
pub fn diff(old: &str, new: &str) -> Diff {
    if old.len() + new.len() > MAX_DIFF_BYTES {
        return Diff::too_large();
    }
    // Large sides are split into lines in parallel.
    let (old_lines, new_lines) = if old.len().min(new.len()) >= PARALLEL_BYTES {
        std::thread::scope(|s| {
            let n = s.spawn(|| lines(new));
            let o = lines(old);
            (o, n.join().unwrap_or_else(|_| lines(new)))
        })
    } else {
        (lines(old), lines(new))
    };
    let (oi, ni, ids) = intern(&old_lines, &new_lines);
    let ops = edit_script(&oi, &ni, ids, Instant::now() + DIFF_DEADLINE);
    let (mut added, mut removed) = (0usize, 0usize);
    for op in &ops {
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
    // Every line of the diff (context included) up to MAX_PREVIEW_LINES; past it, the first
    // lines and the last TAIL_LINES, so that the end of a long file is in the preview too.
    let groups = similar::group_diff_ops(ops, 3);
    let span = |op: &DiffOp| match op {
        DiffOp::Equal { .. } => op.old_range().len(),
        _ => op.old_range().len() + op.new_range().len(),
    };
    let total: usize = groups.iter().flatten().map(span).sum();
    let truncated = total > MAX_PREVIEW_LINES;
    let (head_end, tail_start) =
        if truncated { (MAX_PREVIEW_LINES - TAIL_LINES, total - TAIL_LINES) } else { (total, total) };
    let mut k = 0usize;
    let mut hunks = Vec::new();
    for group in &groups {
        let mut part = Part::default();
        for op in group {
            let (o, n) = (op.old_range(), op.new_range());
            if k >= head_end && k + span(op) <= tail_start {
                // Wholly in the part left out.
                k += span(op);
                part.close(&mut hunks);
                continue;
            }
            // In the order a unified diff shows them: context, then removals, then additions;
            // each with where it stands in both files.
            let mut changes: Vec<Change<'_>> = Vec::new();
            match op {
                DiffOp::Equal { .. } => {
                    changes.extend(o.clone().zip(n.clone()).map(|(i, j)| (" ", Some(i), Some(j), old_lines[i], (i, j))))
                }
                DiffOp::Delete { .. } | DiffOp::Insert { .. } | DiffOp::Replace { .. } => {
                    changes.extend(o.clone().map(|i| ("-", Some(i), None, old_lines[i], (i, n.start))));
                    changes.extend(n.clone().map(|j| ("+", None, Some(j), new_lines[j], (o.end, j))));
                }
            }
            for (tag, oi, nj, raw, at) in changes {
                let kept = k < head_end || k >= tail_start;
                k += 1;
                if kept {
                    part.push(line(tag, oi, nj, raw), at);
                } else {
                    part.close(&mut hunks);
                }
            }
        }
        part.close(&mut hunks);
    }
    Diff {
        too_large: false,
        hunks: Some(hunks),
        stats: Some(Stats { added: added as u64, removed: removed as u64 }),
        truncated,
        summary: None,
    }
}

/// A line as a unified diff shows it: its tag, its numbers in the current file and the new
/// content, its text, and where it stands in both (0-based).
type Change<'a> = (&'a str, Option<usize>, Option<usize>, &'a str, (usize, usize));

/// The lines of a hunk as they are gathered, its header taken from where its first line stands.
#[derive(Default)]
struct Part {
    lines: Vec<Line>,
    /// Where the first line stands in the current file and in the new content (0-based).
    at: (usize, usize),
}

impl Part {
    fn push(&mut self, line: Line, at: (usize, usize)) {
        if self.lines.is_empty() {
            self.at = at;
        }
        self.lines.push(line);
    }

    /// The hunk of the lines gathered so far, if any.
    fn close(&mut self, hunks: &mut Vec<Hunk>) {
        if self.lines.is_empty() {
            return;
        }
        let lines = std::mem::take(&mut self.lines);
        let old_lines = lines.iter().filter(|l| l.tag != "+").count() as u64;
        let new_lines = lines.iter().filter(|l| l.tag != "-").count() as u64;
        hunks.push(Hunk {
            old_start: self.at.0 as u64 + 1,
            old_lines,
            new_start: self.at.1 as u64 + 1,
            new_lines,
            lines,
        });
    }
}

/// Invisible characters in the proposed texts (a path and its new content).
pub fn flags(texts: &[&str]) -> Vec<Found> {
    let mut found = BTreeMap::new();
    for text in texts {
        invisible::scan_str(text, &mut found);
    }
    invisible::report(&found)
}

#[cfg(test)]
mod tests {
    use super::{Duration, Instant, flags};
    use serde_json::{Value, json};

    /// The diff as the wire carries it.
    fn diff(old: &str, new: &str) -> Value {
        serde_json::to_value(super::diff(old, new)).unwrap_or_default()
    }

    /// A diff longer than a preview holds keeps its start and its end, with headers that say
    /// where each part stands.
    #[test]
    fn a_long_diff_keeps_its_start_and_its_end() {
        let new: String = (1..=30_000).map(|i| format!("line {i}\n")).collect();
        let d = super::diff("", &new);
        assert!(d.truncated);
        let hunks = d.hunks.unwrap_or_default();
        let heads: Vec<(u64, u64, u64, u64)> =
            hunks.iter().map(|h| (h.old_start, h.old_lines, h.new_start, h.new_lines)).collect();
        let head = (super::MAX_PREVIEW_LINES - super::TAIL_LINES) as u64;
        assert_eq!(heads, [(1, 0, 1, head), (1, 0, 30_001 - super::TAIL_LINES as u64, super::TAIL_LINES as u64)]);
        let last = hunks[1].lines.last().map(|l| (l.new, l.text.clone()));
        assert_eq!(last, Some((Some(30_000), "line 30000".to_string())), "the file's last line is shown");
        assert_eq!(hunks.iter().map(|h| h.lines.len()).sum::<usize>(), super::MAX_PREVIEW_LINES);
        // Every line changed: the removals' start, the additions' end.
        let old: String = (1..=30_000).map(|i| format!("old {i}\n")).collect();
        let d = super::diff(&old, &new);
        let hunks = d.hunks.unwrap_or_default();
        assert!(d.truncated && hunks.len() == 2);
        assert_eq!((hunks[0].old_start, hunks[0].lines[0].text.as_str()), (1, "old 1"));
        assert_eq!((hunks[1].new_start, hunks[1].new_lines, hunks[1].old_lines), (28_001, 2_000, 0));
        assert_eq!(hunks[1].lines.last().map(|l| l.text.as_str()), Some("line 30000"));
        // Under the bound: one hunk, whole.
        let d = super::diff("", "a\nb\n");
        assert!(!d.truncated && d.hunks.unwrap_or_default().len() == 1);
    }

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
        assert_eq!(flags(&["a\u{200B}"])[0].codepoint, "U+200B");
    }

    /// Applying the hunks to the old text gives the new one (for texts without invisible or
    /// clipped lines, whose shown text is the line itself).
    fn rebuild(old: &str, d: &Value) -> String {
        let old_lines: Vec<&str> = old.lines().collect();
        let mut out = Vec::new();
        let mut next_old = 0usize;
        for h in d["hunks"].as_array().cloned().unwrap_or_default() {
            let start = h["old_start"].as_u64().unwrap_or(1) as usize - 1;
            out.extend(old_lines[next_old..start].iter().map(|l| l.to_string()));
            next_old = start;
            for l in h["lines"].as_array().cloned().unwrap_or_default() {
                match l["tag"].as_str() {
                    Some(" ") => {
                        out.push(l["text"].as_str().unwrap_or("").to_string());
                        next_old += 1;
                    }
                    Some("-") => next_old += 1,
                    _ => out.push(l["text"].as_str().unwrap_or("").to_string()),
                }
            }
        }
        out.extend(old_lines[next_old..].iter().map(|l| l.to_string()));
        out.iter().map(|l| format!("{l}\n")).collect()
    }

    /// Numbers below `n` from a fixed seed (xorshift), so a failure repeats.
    fn numbers(mut seed: u64) -> impl FnMut(u64) -> u64 {
        move |n| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        }
    }

    #[test]
    fn hunks_rebuild_the_new_text() {
        let mut rnd = numbers(0x2545_f491_4f6c_dd1d);
        for _ in 0..300 {
            let old: String = (0..rnd(40)).map(|_| format!("{}\n", rnd(6))).collect();
            let new: String = (0..rnd(40)).map(|_| format!("{}\n", rnd(6))).collect();
            let d = diff(&old, &new);
            assert_eq!(rebuild(&old, &d), new, "old {old:?} new {new:?}");
            let plus = d["hunks"]
                .as_array()
                .into_iter()
                .flatten()
                .flat_map(|h| h["lines"].as_array().cloned().unwrap_or_default());
            let added = plus.filter(|l| l["tag"] == "+").count();
            assert_eq!(d["stats"]["added"].as_u64(), Some(added as u64));
        }
    }

    #[test]
    fn anchors_are_the_longest_chain_of_unique_lines_in_order() {
        // Old positions in the new side's order: 0 2 1 3 5 4 -> a longest increasing run.
        let pairs = [(0, 0), (2, 1), (1, 2), (3, 3), (5, 4), (4, 5)];
        let chain = super::longest_chain(&pairs);
        assert_eq!(chain.len(), 4, "{chain:?}");
        assert!(chain.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 < w[1].1), "{chain:?}");
        assert!(super::longest_chain(&[]).is_empty());
    }

    #[test]
    fn unique_lines_moved_and_changed_still_rebuild() {
        let mut rnd = numbers(0x9e37_79b9_7f4a_7c15);
        for _ in 0..200 {
            // Mostly unique lines, some repeated, some changed, some moved elsewhere.
            let old: Vec<String> =
                (0..rnd(300)).map(|i| if rnd(5) == 0 { "dup\n".into() } else { format!("{i}\n") }).collect();
            let mut new = old.clone();
            for _ in 0..rnd(12) {
                if new.is_empty() {
                    break;
                }
                let i = rnd(new.len() as u64) as usize;
                match rnd(3) {
                    0 => new[i] = format!("changed {}\n", rnd(1000)),
                    1 => {
                        let l = new.remove(i);
                        let j = rnd(new.len() as u64 + 1) as usize;
                        new.insert(j, l);
                    }
                    _ => new.insert(i, "new\n".into()),
                }
            }
            let (old, new) = (old.concat(), new.concat());
            let d = diff(&old, &new);
            assert_eq!(rebuild(&old, &d), new, "old {old:?} new {new:?}");
        }
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
