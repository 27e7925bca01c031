//! Plain inserts: new proposals with no idempotency key and no `supersedes`, the bulk of the
//! writer's work. They are answered from the batch and written together, up to
//! [`ROWS_PER_STATEMENT`] rows per statement.

use super::{Done, Op, Writer};
use crate::rows;
use assent_core::proposal::Proposal;
use assent_core::store::{Inserted, NewRecord};
use assent_core::stored::StoredJson;
use serde_json::Value;
use sqlx::AssertSqlSafe;
use sqlx::sqlite::{Sqlite, SqliteArguments};

/// The columns [`bind_row`] binds, in its order.
macro_rules! ROW_COLUMNS {
    () => {
        "id, kind, class, agent, title, summary, payload, preview, base, session_id, group_id, status, \
         created_at, updated_at, expires_at, facts"
    };
}
pub(super) use ROW_COLUMNS;

/// How many columns [`bind_row`] binds, and most rows one insert statement carries (SQLite
/// allows 32,766 parameters; one statement per row count stays in the prepared-statement cache).
pub(super) const ROW_COLUMN_COUNT: usize = 16;
const ROWS_PER_STATEMENT: usize = 64;

type Query<'q> = sqlx::query::Query<'q, Sqlite, SqliteArguments>;

/// Binds a new proposal's [`ROW_COLUMNS`], its payload and preview as the engine serialized them.
pub(super) fn bind_row<'q>(q: Query<'q>, p: &Proposal, stored: &'q StoredJson) -> Query<'q> {
    q.bind(p.id.clone())
        .bind(p.kind.clone())
        .bind(rows::class_str(p.class))
        .bind(p.agent.clone())
        .bind(p.title.clone())
        .bind(p.summary.clone())
        .bind(stored.payload.as_str())
        .bind(stored.preview.as_str())
        .bind(p.base.as_ref().map(Value::to_string))
        .bind(p.session_id.clone())
        .bind(p.group_id.clone())
        .bind(p.status.as_str())
        .bind(p.created_at.0)
        .bind(p.updated_at.0)
        .bind(p.expires_at.0)
        .bind(stored.facts.as_deref())
}

impl Writer {
    /// Takes a plain insert (no idempotency key, no `supersedes`, under its agent's pending
    /// bound) out of the sequence: its reply is prepared now and its row written by the next
    /// [`Writer::flush`], together with the others, in one statement. Other ops are handed back.
    pub(super) fn defer(
        &mut self,
        op: Op,
        done: &mut Vec<Done>,
        deferred: &mut Vec<(usize, StoredJson)>,
    ) -> Option<Op> {
        let plain = matches!(&op, Op::Insert(rec, _) if rec.idempotency.is_none() && rec.proposal.supersedes.is_none() && rec.origin.is_none()
            && rec.decided.is_none() && rec.rule.is_none()
            && self.pending_bound.under(&rec.proposal.agent, rec.max_pending));
        if !plain {
            return Some(op);
        }
        let Op::Insert(rec, reply) = op else { return None };
        let NewRecord { proposal: p, stored, .. } = *rec;
        self.pending_bound.raise(&p.agent);
        deferred.push((done.len(), stored));
        done.push(Done::Insert(reply, Ok(Inserted::Created { proposal: p, superseded: None })));
        None
    }

    /// Writes the deferred rows, up to [`ROWS_PER_STATEMENT`] per statement (each row's audit
    /// entry comes from the insert trigger). Should a statement fail, each of its rows is tried
    /// alone, and only the rows that still fail answer with the error.
    pub(super) async fn flush(&mut self, done: &mut [Done], deferred: &mut Vec<(usize, StoredJson)>) {
        for chunk in deferred.chunks(ROWS_PER_STATEMENT) {
            let sql = self.multi_sql.rows(chunk.len());
            let mut q = sqlx::query(AssertSqlSafe(sql));
            for (i, stored) in chunk {
                if let Some(Done::Insert(_, Ok(Inserted::Created { proposal, .. }))) = done.get(*i) {
                    q = bind_row(q, proposal, stored);
                }
            }
            if q.execute(&mut self.conn).await.is_ok() {
                continue;
            }
            for (i, stored) in chunk {
                let Some(Done::Insert(_, res)) = done.get_mut(*i) else { continue };
                let Ok(Inserted::Created { proposal, .. }) = &*res else { continue };
                let p = proposal.clone();
                if let Err(e) = self.insert_row(&p, None, None, None, stored).await {
                    self.pending_bound.lower(&p.agent);
                    *res = Err(e);
                }
            }
        }
        deferred.clear();
    }
}
