//! Each agent's pending proposals, bounded in memory by the one task that files them (the
//! SQLite writer, or a team node's ingest task), so the pending limit holds without a COUNT on
//! every insert.

use assent_core::error::CoreError;
use std::collections::HashMap;

/// An upper bound of each agent's pending proposals. Inserts raise it; decisions (this
/// process's or another node's) only ever lower the true count, so the bound stays an upper
/// bound; it is counted exactly, inside the write transaction, only when it reaches the limit.
#[derive(Default)]
pub(crate) struct PendingBound(HashMap<String, i64>);

impl PendingBound {
    /// Whether `agent` is known to be under `max` (an insert may go without counting).
    pub(crate) fn under(&self, agent: &str, max: u32) -> bool {
        self.0.get(agent).is_some_and(|n| *n < i64::from(max))
    }

    /// One more pending proposal for `agent` (filed, or about to be).
    pub(crate) fn raise(&mut self, agent: &str) {
        match self.0.get_mut(agent) {
            Some(n) => *n += 1,
            None => {
                self.0.insert(agent.to_string(), 1);
            }
        }
    }

    /// One fewer (an insert raised it and then failed).
    pub(crate) fn lower(&mut self, agent: &str) {
        if let Some(n) = self.0.get_mut(agent) {
            *n -= 1;
        }
    }

    /// Forgets every bound (a batch did not commit: count again).
    pub(crate) fn clear(&mut self) {
        self.0.clear();
    }

    /// Records an exact count of `agent`'s pending proposals; at `max` or above, the
    /// `too_many_pending` refusal.
    pub(crate) fn counted(&mut self, agent: &str, n: i64, max: u32) -> Result<(), CoreError> {
        self.0.insert(agent.to_string(), n);
        if n >= i64::from(max) {
            return Err(CoreError::TooMany {
                code: "too_many_pending",
                message: format!(
                    "agent `{agent}` already has {n} pending proposals (the limit); wait for decisions first"
                ),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::PendingBound;

    #[test]
    fn the_bound_is_counted_only_at_the_limit() {
        let mut b = PendingBound::default();
        assert!(!b.under("a", 2), "unknown: count first");
        assert!(b.counted("a", 1, 2).is_ok());
        assert!(b.under("a", 2));
        b.raise("a");
        assert!(!b.under("a", 2), "at the limit: count again");
        b.lower("a");
        assert!(b.under("a", 2));
        let refused = b.counted("a", 2, 2).err().map(|e| e.code());
        assert_eq!(refused, Some("too_many_pending"));
        b.clear();
        assert!(!b.under("a", 2));
    }
}
