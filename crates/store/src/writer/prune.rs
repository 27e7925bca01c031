//! Retention: a settled proposal's bulky content is replaced by its figures once it is old
//! enough. The database allows this one change to a payload (see migration 0004).

use super::Writer;
use crate::db_err;
use assent_core::error::CoreError;
use assent_core::time::Timestamp;

impl Writer {
    pub(super) async fn prune(&mut self, before: Timestamp, now: Timestamp, limit: u32) -> Result<u64, CoreError> {
        let rows = sqlx::query(
            "SELECT id, payload, preview, result, decision FROM proposals \
             WHERE pruned_at IS NULL AND updated_at < ? \
             AND (status IN ('applied', 'failed', 'rejected', 'refined', 'expired', 'withdrawn') \
                  OR (status = 'approved' AND class = 'decision_only')) \
             ORDER BY seq LIMIT ?",
        )
        .bind(before.0)
        .bind(i64::from(limit))
        .fetch_all(&mut self.conn)
        .await
        .map_err(db_err)?;
        let mut n = 0;
        for row in &rows {
            let p = crate::rows::pruned(row)?;
            sqlx::query(
                "UPDATE proposals SET pruned_at = ?, payload = ?, preview = ?, result = ?, decision = ?, facts = NULL \
                 WHERE id = ? AND pruned_at IS NULL",
            )
            .bind(now.0)
            .bind(p.payload)
            .bind(p.preview)
            .bind(p.result)
            .bind(p.decision)
            .bind(&p.id)
            .execute(&mut self.conn)
            .await
            .map_err(db_err)?;
            n += 1;
        }
        Ok(n)
    }
}
