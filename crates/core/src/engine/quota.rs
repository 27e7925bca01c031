//! What each agent may store: at most `max_bytes_per_agent_per_day` of payloads and previews
//! over any 24 hours. A withdrawn or rejected proposal still counts (proposing and withdrawing
//! in a loop must not fill the disk); an idempotent retry that returns the first proposal does
//! not. The window is rebuilt from the database at start, so a restart forgives nothing.

use crate::error::CoreError;
use crate::time::Timestamp;
use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

const DAY_MS: i64 = 24 * 3600 * 1000;

/// One agent's proposals of the last 24 hours (when, bytes), oldest first, and their sum.
type Window = (VecDeque<(i64, u64)>, u64);

/// Bytes stored per agent over the last 24 hours.
#[derive(Default)]
pub(crate) struct Usage {
    per_agent: Mutex<HashMap<String, Window>>,
}

impl Usage {
    /// Starts from what the database holds.
    pub(crate) fn from_rows(rows: Vec<(String, Timestamp, u64)>) -> Self {
        let u = Usage::default();
        {
            let mut m = u.per_agent.lock().unwrap_or_else(|e| e.into_inner());
            for (agent, at, bytes) in rows {
                let (q, sum) = m.entry(agent).or_default();
                q.push_back((at.0, bytes));
                *sum += bytes;
            }
            for (q, _) in m.values_mut() {
                q.make_contiguous().sort_by_key(|(t, _)| *t);
            }
        }
        u
    }

    /// Counts `bytes` for `agent` now, unless that takes it over `limit` in the last 24 hours.
    pub(crate) fn reserve(&self, agent: &str, bytes: u64, limit: u64, now: Timestamp) -> Result<(), CoreError> {
        let mut m = self.per_agent.lock().unwrap_or_else(|e| e.into_inner());
        let (q, sum) = m.entry(agent.to_string()).or_default();
        while q.front().is_some_and(|(t, _)| *t <= now.0 - DAY_MS) {
            if let Some((_, b)) = q.pop_front() {
                *sum -= b;
            }
        }
        if *sum + bytes > limit {
            return Err(CoreError::TooMany {
                code: "storage_quota",
                message: format!(
                    "agent `{agent}` stored {} of its {} a day; this proposal needs {}. Propose less, or ask the person to raise max_bytes_per_agent_per_day",
                    human(*sum),
                    human(limit),
                    human(bytes)
                ),
            });
        }
        q.push_back((now.0, bytes));
        *sum += bytes;
        Ok(())
    }

    /// Gives back a reservation whose proposal was not stored.
    pub(crate) fn release(&self, agent: &str, bytes: u64, at: Timestamp) {
        let mut m = self.per_agent.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((q, sum)) = m.get_mut(agent)
            && let Some(pos) = q.iter().rposition(|e| *e == (at.0, bytes))
        {
            q.remove(pos);
            *sum -= bytes;
        }
    }
}

/// A size for people: `212 KiB`, `3.4 MiB`.
pub fn human(b: u64) -> String {
    if b >= 1 << 20 {
        format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64)
    } else {
        format!("{} KiB", b.div_ceil(1024))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rolling_day_per_agent() {
        let u = Usage::from_rows(vec![("a".into(), Timestamp(1_000), 600)]);
        assert!(u.reserve("a", 500, 1000, Timestamp(2_000)).is_err(), "600 + 500 > 1000");
        assert!(u.reserve("b", 500, 1000, Timestamp(2_000)).is_ok(), "another agent has its own");
        assert!(u.reserve("a", 400, 1000, Timestamp(2_000)).is_ok());
        let err = u.reserve("a", 1, 1000, Timestamp(3_000)).err().map(|e| e.code());
        assert_eq!(err, Some("storage_quota"));
        u.release("a", 400, Timestamp(2_000));
        assert!(u.reserve("a", 400, 1000, Timestamp(3_000)).is_ok(), "a release gives it back");
        // A day after the first 600, they no longer count.
        assert!(u.reserve("a", 500, 1000, Timestamp(1_000 + DAY_MS)).is_ok());
    }
}
