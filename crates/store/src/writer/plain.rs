//! Plain inserts: new proposals with no idempotency key and no `supersedes`, the bulk of the
//! writer's work. They are answered from the batch and written together, up to
//! [`ROWS_PER_STATEMENT`] rows per statement.

use super::{Done, Op, Writer};
use crate::rows;
use assent_core::proposal::Proposal;
use assent_core::store::{Inserted, NewRecord};
use assent_core::stored::StoredJson;
use rusqlite::Statement;
use serde_json::Value;

/// The columns [`bind_row`] binds, in its order.
macro_rules! ROW_COLUMNS {
    () => {
        "id, kind, class, agent, title, summary, payload, preview, base, session_id, group_id, status, \
         created_at, updated_at, expires_at, facts, lease_secs"
    };
}
pub(super) use ROW_COLUMNS;

/// How many columns [`bind_row`] binds, and most rows one insert statement carries (SQLite
/// allows 32,766 parameters; one statement per row count stays in the prepared-statement cache).
pub(super) const ROW_COLUMN_COUNT: usize = 17;
const ROWS_PER_STATEMENT: usize = 64;

/// Binds a new proposal's [`ROW_COLUMNS`], its payload and preview as the engine serialized them,
/// to the parameters after the first `at`.
pub(super) fn bind_row(st: &mut Statement<'_>, at: usize, p: &Proposal, stored: &StoredJson) -> rusqlite::Result<()> {
    let base = p.base.as_ref().map(Value::to_string);
    st.raw_bind_parameter(at + 1, &p.id)?;
    st.raw_bind_parameter(at + 2, &p.kind)?;
    st.raw_bind_parameter(at + 3, rows::class_str(p.class))?;
    st.raw_bind_parameter(at + 4, &p.agent)?;
    st.raw_bind_parameter(at + 5, &p.title)?;
    st.raw_bind_parameter(at + 6, &p.summary)?;
    st.raw_bind_parameter(at + 7, stored.payload.as_str())?;
    st.raw_bind_parameter(at + 8, stored.preview.as_str())?;
    st.raw_bind_parameter(at + 9, base)?;
    st.raw_bind_parameter(at + 10, &p.session_id)?;
    st.raw_bind_parameter(at + 11, &p.group_id)?;
    st.raw_bind_parameter(at + 12, p.status.as_str())?;
    st.raw_bind_parameter(at + 13, p.created_at.0)?;
    st.raw_bind_parameter(at + 14, p.updated_at.0)?;
    st.raw_bind_parameter(at + 15, p.expires_at.0)?;
    st.raw_bind_parameter(at + 16, stored.facts.as_deref())?;
    st.raw_bind_parameter(at + 17, p.lease_secs)
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
        let plain = matches!(&op, Op::Insert(rec, _) if rec.is_plain()
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
    pub(super) fn flush(&mut self, done: &mut [Done], deferred: &mut Vec<(usize, StoredJson)>) {
        for chunk in deferred.chunks(ROWS_PER_STATEMENT) {
            let sql = self.multi_sql.rows(chunk.len());
            let written = self.conn.prepare_cached(&sql).and_then(|mut st| {
                for (row, (i, stored)) in chunk.iter().enumerate() {
                    if let Some(Done::Insert(_, Ok(Inserted::Created { proposal, .. }))) = done.get(*i) {
                        bind_row(&mut st, row * ROW_COLUMN_COUNT, proposal, stored)?;
                    }
                }
                st.raw_execute()
            });
            if written.is_ok() {
                continue;
            }
            for (i, stored) in chunk {
                let Some(Done::Insert(_, res)) = done.get_mut(*i) else { continue };
                let Ok(Inserted::Created { proposal, .. }) = &*res else { continue };
                let p = proposal.clone();
                if let Err(e) = self.insert_row(&p, None, None, None, stored) {
                    self.pending_bound.lower(&p.agent);
                    *res = Err(e);
                }
            }
        }
        deferred.clear();
    }
}
