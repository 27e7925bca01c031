//! Retention: a settled proposal's bulky content is replaced by its figures once it is old
//! enough. The database allows this one change to a payload (see migration 0004).

use super::Writer;
use crate::rows::{self, Lite};
use assent_core::error::CoreError;
use assent_core::time::Timestamp;
use rusqlite::params;

impl Writer {
    pub(super) fn prune(&mut self, before: Timestamp, now: Timestamp, limit: u32) -> Result<u64, CoreError> {
        let sql = "SELECT id, payload, preview, result, decision FROM proposals \
                   WHERE pruned_at IS NULL AND updated_at < ? \
                   AND (status IN ('applied', 'failed', 'rejected', 'refined', 'expired', 'withdrawn') \
                        OR (status = 'approved' AND class = 'decision_only')) \
                   ORDER BY seq LIMIT ?";
        let due = self.all(sql, params![before.0, i64::from(limit)], |r| Ok(rows::pruned(&Lite(r))))?;
        let mut n = 0;
        for p in due {
            let p = p?;
            self.exec(
                "UPDATE proposals SET pruned_at = ?, payload = ?, preview = ?, result = ?, decision = ?, facts = NULL \
                 WHERE id = ? AND pruned_at IS NULL",
                params![now.0, p.payload, p.preview, p.result, p.decision, p.id],
            )?;
            n += 1;
        }
        Ok(n)
    }
}
