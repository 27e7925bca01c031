//! Retention: a settled proposal's bulky content is replaced by its figures once it is old
//! enough. The database allows this one change to a payload (see migration 0004).

use super::Writer;
use crate::db_err;
use assent_core::error::CoreError;
use assent_core::stored::{prune, pruned_preview};
use assent_core::time::Timestamp;
use serde_json::Value;
use sqlx::Row;

fn parse(s: Option<String>) -> Option<Value> {
    s.and_then(|s| serde_json::from_str(&s).ok())
}

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
        for row in rows {
            let id: String = row.try_get("id").map_err(db_err)?;
            let payload = parse(row.try_get("payload").map_err(db_err)?).unwrap_or(Value::Null);
            let preview = parse(row.try_get("preview").map_err(db_err)?).unwrap_or(Value::Null);
            let result = parse(row.try_get("result").map_err(db_err)?);
            let decision = parse(row.try_get("decision").map_err(db_err)?);
            let decision = decision.map(|mut d| {
                if let Some(e) = d.get_mut("edited_payload") {
                    *e = prune(e);
                }
                d
            });
            sqlx::query(
                "UPDATE proposals SET pruned_at = ?, payload = ?, preview = ?, result = ?, decision = ?, facts = NULL \
                 WHERE id = ? AND pruned_at IS NULL",
            )
            .bind(now.0)
            .bind(prune(&payload).to_string())
            .bind(pruned_preview(&preview).to_string())
            .bind(result.as_ref().map(|r| prune(r).to_string()))
            .bind(decision.as_ref().map(Value::to_string))
            .bind(&id)
            .execute(&mut self.conn)
            .await
            .map_err(db_err)?;
            n += 1;
        }
        Ok(n)
    }
}
