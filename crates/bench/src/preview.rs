//! The file preview (what Assent computes when a `file.write` is proposed: read the target,
//! hash both sides, diff the lines) next to `git diff --no-index` on the same files.

use crate::{ms, verdict};
use anyhow::{Context, Result};
use assent_apply::files::FileWrite;
use assent_apply::paths::PathPolicy;
use assent_core::kinds::{Kind, PrepareCtx};
use serde_json::json;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

const RUNS: usize = 5;

/// A small deterministic generator (xorshift), so every run diffs the same files.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn word(&mut self) -> &'static str {
        const WORDS: [&str; 16] = [
            "approve", "proposal", "agent", "keychain", "preview", "diff", "reject", "payload", "status", "inbox",
            "person", "write", "token", "audit", "commit", "refine",
        ];
        WORDS[(self.next() % 16) as usize]
    }
    fn line(&mut self, n: usize) -> String {
        let words: Vec<&str> = (0..6 + self.next() % 6).map(|_| self.word()).collect();
        format!("{n:>7}: {} {:x}", words.join(" "), self.next() % 65_536)
    }
}

/// Text of about `bytes` bytes, in lines.
fn text(rng: &mut Rng, bytes: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut size = 0;
    while size < bytes {
        let l = rng.line(lines.len());
        size += l.len() + 1;
        lines.push(l);
    }
    lines
}

fn join(lines: &[String]) -> String {
    let mut s = lines.join("\n");
    s.push('\n');
    s
}

/// `lines` with `percent` of them (spread at random) rewritten.
fn change(rng: &mut Rng, lines: &[String], percent: f64) -> (Vec<String>, usize) {
    let mut out = lines.to_vec();
    let n = ((lines.len() as f64) * percent / 100.0).round() as usize;
    let mut changed = std::collections::BTreeSet::new();
    while changed.len() < n {
        changed.insert((rng.next() as usize) % lines.len());
    }
    for &i in &changed {
        out[i] = format!("{} (changed)", rng.line(i));
    }
    (out, changed.len())
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// The whole preview as a proposal computes it: the median of `RUNS`, and its stats.
fn assent_preview(target: &Path, new: &str) -> Result<(Duration, serde_json::Value)> {
    let kind = FileWrite { policy: Arc::new(PathPolicy::default()) };
    let ctx = PrepareCtx { agent: "bench".into(), credentials: Arc::new(Default::default()), can_box: Vec::new() };
    let mut times = Vec::with_capacity(RUNS);
    let mut preview = json!(null);
    for _ in 0..RUNS {
        let payload = json!({"path": target.display().to_string(), "content": new});
        let t = Instant::now();
        let p = kind.prepare(payload, &ctx).map_err(|e| anyhow::anyhow!("{e}"))?;
        times.push(t.elapsed());
        preview = p.preview.to_value();
    }
    let summary = json!({
        "stats": preview["stats"],
        "too_large": preview["too_large"],
        "truncated": preview["truncated"],
        "hunks": preview["hunks"].as_array().map(Vec::len),
    });
    Ok((median(times), summary))
}

/// `git diff --no-index` of the same two files, output read and discarded: the median of `RUNS`.
fn git_diff(a: &Path, b: &Path) -> Result<Duration> {
    let mut times = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let t = Instant::now();
        let o = Command::new("git")
            .args(["diff", "--no-index", "--no-color", "--no-ext-diff"])
            .arg(a)
            .arg(b)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .output()
            .context("cannot run git (install it to compare)")?;
        times.push(t.elapsed());
        if o.status.code() != Some(1) {
            anyhow::bail!("git diff failed: {}", String::from_utf8_lossy(&o.stderr));
        }
    }
    Ok(median(times))
}

/// Runs the preview benchmark.
pub fn run() -> Result<()> {
    println!(
        "\n== preview: file.write preview (read + hash + line diff), median of {RUNS}, next to git diff --no-index"
    );
    let dir = tempfile::tempdir()?;
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    for (label, size) in [("1 MB", 1_000_000usize), ("10 MB", 10_000_000)] {
        let old = text(&mut rng, size);
        let (new, changed) = change(&mut rng, &old, 1.0);
        let (a, b) = (dir.path().join(format!("old-{size}.txt")), dir.path().join(format!("new-{size}.txt")));
        let new_text = join(&new);
        std::fs::write(&a, join(&old))?;
        std::fs::write(&b, &new_text)?;
        let git = git_diff(&a, &b)?;
        let (ours, summary) = assent_preview(&a, &new_text)?;
        println!(
            "  {label:>5}, {} lines, {changed} changed: assent {}  git {}  => {:.2}x git's time (target <= 0.5x): {}   [{}]",
            old.len(),
            ms(ours),
            ms(git),
            ours.as_secs_f64() / git.as_secs_f64(),
            verdict(ours.as_secs_f64() <= git.as_secs_f64() * 0.5),
            summary
        );
    }

    println!("  bounded inputs (target < 1 s each):");
    let one_mb = 1_000_000;
    // Two files with nothing in common.
    let old = join(&text(&mut rng, one_mb));
    let mut other = Rng(0x0bad_cafe_0000_0042);
    let new: String = join(&text(&mut other, one_mb).iter().map(|l| format!("~{l}")).collect::<Vec<_>>());
    bounded(dir.path(), "1 MB vs 1 MB, nothing in common", &old, &new)?;
    // Few distinct lines, half of them changed: the worst case for a line diff.
    let lines: Vec<String> = (0..one_mb / 8).map(|i| ["a", "b", "c", "d"][i % 4].repeat(7)).collect();
    let changed: Vec<String> = lines
        .iter()
        .enumerate()
        .map(|(i, l)| if rng.next().is_multiple_of(2) { format!("{l}{}", i % 3) } else { l.clone() })
        .collect();
    bounded(dir.path(), "low entropy (4 distinct lines), half changed", &join(&lines), &join(&changed))?;
    // One line of 1 MB.
    let line: String = (0..one_mb).map(|i| (b'a' + (i % 26) as u8) as char).collect();
    let mut line2 = line.clone();
    line2.replace_range(500_000..500_010, "0123456789");
    bounded(dir.path(), "a single 1 MB line, 10 bytes changed", &line, &line2)?;
    Ok(())
}

fn bounded(dir: &Path, label: &str, old: &str, new: &str) -> Result<()> {
    let path = dir.join("bounded.txt");
    std::fs::write(&path, old)?;
    let (t, summary) = assent_preview(&path, new)?;
    println!("    {label:<48} {:>10}: {}   [{}]", ms(t), verdict(t < Duration::from_secs(1)), summary);
    Ok(())
}
