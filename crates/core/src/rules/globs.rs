//! Glob sets that grow one rule at a time: kept in chunks of a bounded size, so adding a rule
//! compiles only the last chunk again, never every glob of every rule (a set of thousands of
//! globs takes tens of milliseconds to compile, and grew with each rule added).

use globset::{Candidate, Glob, GlobSet, GlobSetBuilder};
use std::sync::Arc;

/// The most globs one chunk holds: a lookup runs one glob set per chunk.
const CHUNK: usize = 256;

/// Globs, each naming the position of the rule it belongs to.
#[derive(Debug, Clone, Default)]
pub(super) struct Globs {
    chunks: Vec<Arc<Chunk>>,
}

#[derive(Debug)]
struct Chunk {
    globs: Vec<Glob>,
    rules: Vec<usize>,
    set: GlobSet,
}

impl Chunk {
    fn new(items: Vec<(Glob, usize)>) -> Result<Chunk, globset::Error> {
        let mut b = GlobSetBuilder::new();
        for (g, _) in &items {
            b.add(g.clone());
        }
        let set = b.build()?;
        let (globs, rules) = items.into_iter().unzip();
        Ok(Chunk { globs, rules, set })
    }
}

impl Globs {
    /// Compiles `items` (a glob and its rule's position, positions ascending).
    pub(super) fn build(items: Vec<(Glob, usize)>) -> Result<Globs, globset::Error> {
        let mut chunks = Vec::with_capacity(items.len().div_ceil(CHUNK));
        let mut items = items.into_iter().peekable();
        while items.peek().is_some() {
            chunks.push(Arc::new(Chunk::new(items.by_ref().take(CHUNK).collect())?));
        }
        Ok(Globs { chunks })
    }

    /// Adds the glob of the rule at `rule`, compiling only the last chunk again.
    pub(super) fn push(&mut self, glob: Glob, rule: usize) -> Result<(), globset::Error> {
        let mut items = Vec::new();
        if let Some(last) = self.chunks.last().filter(|c| c.globs.len() < CHUNK) {
            items.extend(last.globs.iter().cloned().zip(last.rules.iter().copied()));
            self.chunks.pop();
        }
        items.push((glob, rule));
        self.chunks.push(Arc::new(Chunk::new(items)?));
        Ok(())
    }

    /// The positions of the rules whose glob matches `path`.
    pub(super) fn matches(&self, path: &str) -> Vec<usize> {
        let c = Candidate::new(path);
        let mut out = Vec::new();
        for chunk in &self.chunks {
            out.extend(chunk.set.matches_candidate(&c).into_iter().map(|i| chunk.rules[i]));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn glob(s: &str) -> Glob {
        Glob::new(s).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn globs_added_one_at_a_time_match_as_the_same_globs_built_at_once() {
        let n = CHUNK * 2 + 7;
        let items: Vec<(Glob, usize)> = (0..n).map(|i| (glob(&format!("/p{}/**", i % 50)), i * 2)).collect();
        let whole = Globs::build(items.clone()).unwrap_or_else(|e| panic!("{e}"));
        let mut grown = Globs::build(items[..10].to_vec()).unwrap_or_else(|e| panic!("{e}"));
        for (g, r) in items[10..].iter().cloned() {
            grown.push(g, r).unwrap_or_else(|e| panic!("{e}"));
        }
        assert_eq!(whole.chunks.len(), 3);
        assert_eq!(grown.chunks.len(), 3, "chunks are filled before a new one starts");
        for q in ["/p7/a", "/p49/x/y", "/p50/a", "/q/a"] {
            let (mut a, mut b) = (whole.matches(q), grown.matches(q));
            a.sort_unstable();
            b.sort_unstable();
            assert_eq!(a, b, "{q}");
            let expect: Vec<usize> =
                (0..n).filter(|i| q.starts_with(&format!("/p{}/", i % 50))).map(|i| i * 2).collect();
            assert_eq!(a, expect, "{q}");
        }
        assert!(Globs::default().matches("/a").is_empty());
    }
}
