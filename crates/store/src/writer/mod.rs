//! The single writer with group commit, on a thread of its own with its own SQLite connection:
//! each statement runs where the batch is assembled, with no hand-off to another thread (a
//! write through sqlx's connection cost two thread switches per statement). See the crate docs
//! for why one writer.

mod admin;
mod plain;
mod prune;

use crate::lite_err;
use crate::pending::PendingBound;
use assent_core::credentials::CredentialMeta;
use assent_core::error::{CoreError, StoreError};
use assent_core::proposal::{Channel, Proposal};
use assent_core::rules::Rule;
use assent_core::store::{Inserted, NewRecord, Transition, Transitioned};
use assent_core::time::Timestamp;
use rusqlite::{Connection, OptionalExtension, Params, params};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

type Reply<T> = oneshot::Sender<Result<T, CoreError>>;

/// A write for the writer.
pub(crate) enum Op {
    Insert(Box<NewRecord>, Reply<Inserted>),
    Transition(Vec<Transition>, bool, Reply<Vec<Transitioned>>),
    AddAgent { name: String, token_hash: [u8; 32], at: Timestamp, reuse: bool, reply: Reply<()> },
    SetAgentToken { name: String, token_hash: [u8; 32], at: Timestamp, reply: Reply<bool> },
    RevokeAgent { name: String, at: Timestamp, reply: Reply<bool> },
    AddCredential { meta: CredentialMeta, reply: Reply<()> },
    RemoveCredential { name: String, reply: Reply<bool> },
    Prune { before: Timestamp, now: Timestamp, limit: u32, reply: Reply<u64> },
    AddRule { rule: Box<Rule>, reply: Reply<i64> },
    RemoveRule { id: String, actor: String, channel: Channel, at: Timestamp, reply: Reply<Option<(Rule, i64)>> },
}

impl Op {
    /// Whether the op leaves nothing half-written when it fails, without a savepoint around it:
    /// a plain insert is one statement (its audit row comes from a trigger).
    fn self_contained(&self) -> bool {
        match self {
            Op::Insert(rec, _) => rec.proposal.supersedes.is_none() && rec.decided.is_none() && rec.rule.is_none(),
            _ => false,
        }
    }
}

/// A reply held until the batch's commit is known.
enum Done {
    Insert(Reply<Inserted>, Result<Inserted, CoreError>),
    Transition(Reply<Vec<Transitioned>>, Result<Vec<Transitioned>, CoreError>),
    Unit(Reply<()>, Result<(), CoreError>),
    Bool(Reply<bool>, Result<bool, CoreError>),
    Count(Reply<u64>, Result<u64, CoreError>),
    Rule(Reply<Option<(Rule, i64)>>, Result<Option<(Rule, i64)>, CoreError>),
    Seq(Reply<i64>, Result<i64, CoreError>),
}

impl Done {
    fn is_ok(&self) -> bool {
        match self {
            Done::Insert(_, r) => r.is_ok(),
            Done::Transition(_, r) => r.is_ok(),
            Done::Unit(_, r) => r.is_ok(),
            Done::Bool(_, r) => r.is_ok(),
            Done::Count(_, r) => r.is_ok(),
            Done::Rule(_, r) => r.is_ok(),
            Done::Seq(_, r) => r.is_ok(),
        }
    }

    fn send(self, commit: &Result<(), StoreError>) {
        // A caller that went away (client disconnected) does not undo a committed write.
        let fail = |e: &StoreError| CoreError::Store(e.again("commit failed: "));
        match self {
            Done::Insert(tx, r) => drop(tx.send(commit.as_ref().map_err(fail).and(r))),
            Done::Transition(tx, r) => drop(tx.send(commit.as_ref().map_err(fail).and(r))),
            Done::Unit(tx, r) => drop(tx.send(commit.as_ref().map_err(fail).and(r))),
            Done::Bool(tx, r) => drop(tx.send(commit.as_ref().map_err(fail).and(r))),
            Done::Count(tx, r) => drop(tx.send(commit.as_ref().map_err(fail).and(r))),
            Done::Rule(tx, r) => drop(tx.send(commit.as_ref().map_err(fail).and(r))),
            Done::Seq(tx, r) => drop(tx.send(commit.as_ref().map_err(fail).and(r))),
        }
    }
}

/// Most writes one transaction takes: bounds the latency of the first in the batch.
const MAX_BATCH: usize = 512;

struct Writer {
    conn: Connection,
    /// Each agent's pending proposals, bounded (only this writer files them).
    pending_bound: PendingBound,
    /// The multi-row insert statements, by row count.
    multi_sql: crate::multi::MultiInsert,
}

/// Runs the writer until every sender is gone: each turn takes the writes that queued up
/// meanwhile (up to [`MAX_BATCH`]) and commits them together.
pub(crate) fn run(conn: Connection, mut rx: mpsc::Receiver<Op>) {
    let mut w = Writer {
        conn,
        pending_bound: PendingBound::default(),
        multi_sql: crate::multi::MultiInsert::new(
            concat!("INSERT INTO proposals (", plain::ROW_COLUMNS!(), ")"),
            plain::ROW_COLUMN_COUNT,
            false,
        ),
    };
    let mut batch = Vec::with_capacity(MAX_BATCH);
    while rx.blocking_recv_many(&mut batch, MAX_BATCH) > 0 {
        w.commit_batch(batch.drain(..));
    }
    tracing::debug!("store writer stopped");
}

impl Writer {
    /// Runs one statement, prepared once and then taken from the connection's cache; the rows
    /// it changed.
    fn exec(&self, sql: &str, params: impl Params) -> Result<usize, StoreError> {
        self.conn.prepare_cached(sql).and_then(|mut st| st.execute(params)).map_err(lite_err)
    }

    /// A statement that controls the transaction (begin, commit, savepoints).
    fn control(&self, sql: &'static str) -> Result<(), StoreError> {
        self.exec(sql, []).map(drop)
    }

    /// The first row a query returns, if any, as `read` makes it.
    fn row<T>(
        &self,
        sql: &str,
        params: impl Params,
        read: impl FnOnce(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
    ) -> Result<Option<T>, StoreError> {
        self.conn.prepare_cached(sql).and_then(|mut st| st.query_row(params, read).optional()).map_err(lite_err)
    }

    /// Every row a query returns, as `read` makes each.
    fn all<T>(
        &self,
        sql: &str,
        params: impl Params,
        read: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
    ) -> Result<Vec<T>, StoreError> {
        let mut st = self.conn.prepare_cached(sql).map_err(lite_err)?;
        st.query_map(params, read).and_then(Iterator::collect).map_err(lite_err)
    }

    fn commit_batch(&mut self, ops: impl ExactSizeIterator<Item = Op>) {
        let (n, started) = (ops.len(), std::time::Instant::now());
        if let Err(e) = self.control("BEGIN IMMEDIATE") {
            tracing::error!(error = %e, "could not begin a write transaction");
            for op in ops {
                self.refuse(op, &e);
            }
            return;
        }
        let mut done = Vec::new();
        let mut deferred: Vec<(usize, assent_core::stored::StoredJson)> = Vec::new();
        // A lone op (what an idle writer sees, such as a person's decision) needs no savepoint:
        // should it fail, the whole transaction is rolled back instead of committed.
        let lone = n == 1;
        for op in ops {
            let op = match self.defer(op, &mut done, &mut deferred) {
                None => continue,
                Some(op) => op,
            };
            // Anything else sees the deferred rows as written.
            self.flush(&mut done, &mut deferred);
            if lone || op.self_contained() {
                // One statement, or alone in its transaction: nothing half-done can stay behind.
                done.push(self.one(op));
                continue;
            }
            let sp = self.control("SAVEPOINT op");
            let d = match sp {
                Ok(()) => self.one(op),
                Err(e) => {
                    self.refuse(op, &e);
                    continue;
                }
            };
            let end = if d.is_ok() {
                self.control("RELEASE op")
            } else {
                match self.control("ROLLBACK TO op") {
                    Ok(()) => self.control("RELEASE op"),
                    Err(e) => Err(e),
                }
            };
            if let Err(e) = end {
                tracing::error!(error = %e, "savepoint failed");
            }
            done.push(d);
        }
        self.flush(&mut done, &mut deferred);
        let before_commit = started.elapsed();
        if lone && !done.iter().all(Done::is_ok) {
            // The lone op failed: undo whatever of it was written; its reply carries its error.
            let undone = self.control("ROLLBACK");
            if let Err(e) = &undone {
                tracing::error!(error = %e, "rollback failed");
            }
            for d in done {
                d.send(&Ok(()));
            }
            return;
        }
        let commit = self.control("COMMIT");
        if let Err(e) = &commit {
            tracing::error!(error = %e, "commit failed; the batch is rolled back");
            let _ = self.control("ROLLBACK");
            self.pending_bound.clear();
        }
        tracing::trace!(
            ops = n,
            micros = started.elapsed().as_micros() as u64,
            commit_micros = (started.elapsed() - before_commit).as_micros() as u64,
            "committed a batch"
        );
        for d in done {
            d.send(&commit);
        }
    }

    fn refuse(&self, op: Op, e: &StoreError) {
        let err = || CoreError::Store(e.again(""));
        match op {
            Op::Insert(_, r) => drop(r.send(Err(err()))),
            Op::Transition(_, _, r) => drop(r.send(Err(err()))),
            Op::AddAgent { reply, .. } => drop(reply.send(Err(err()))),
            Op::SetAgentToken { reply, .. } => drop(reply.send(Err(err()))),
            Op::RevokeAgent { reply, .. } => drop(reply.send(Err(err()))),
            Op::AddCredential { reply, .. } => drop(reply.send(Err(err()))),
            Op::RemoveCredential { reply, .. } => drop(reply.send(Err(err()))),
            Op::Prune { reply, .. } => drop(reply.send(Err(err()))),
            Op::AddRule { reply, .. } => drop(reply.send(Err(err()))),
            Op::RemoveRule { reply, .. } => drop(reply.send(Err(err()))),
        }
    }

    fn one(&mut self, op: Op) -> Done {
        match op {
            Op::Insert(rec, r) => {
                let res = self.insert(*rec);
                Done::Insert(r, res)
            }
            Op::Transition(ts, atomic, r) => {
                let res = self.transitions(ts, atomic);
                Done::Transition(r, res)
            }
            Op::AddAgent { name, token_hash, at, reuse, reply } => {
                Done::Unit(reply, self.add_agent(&name, &token_hash, at, reuse))
            }
            Op::SetAgentToken { name, token_hash, at, reply } => {
                Done::Bool(reply, self.set_agent_token(&name, &token_hash, at))
            }
            Op::RevokeAgent { name, at, reply } => {
                let sql = "UPDATE agents SET revoked_at = ? WHERE name = ? AND revoked_at IS NULL";
                let revoked = match self.exec(sql, params![at.0, name]) {
                    Ok(1) => self.log_agent(&name, "revoked", at).map(|()| true),
                    other => other.map(|_| false).map_err(CoreError::Store),
                };
                Done::Bool(reply, revoked)
            }
            Op::AddCredential { meta, reply } => Done::Unit(reply, self.add_credential(&meta)),
            Op::Prune { before, now, limit, reply } => Done::Count(reply, self.prune(before, now, limit)),
            Op::AddRule { rule, reply } => Done::Seq(reply, self.add_rule(&rule)),
            Op::RemoveRule { id, actor, channel, at, reply } => {
                Done::Rule(reply, self.remove_rule(&id, &actor, channel, at))
            }
            Op::RemoveCredential { name, reply } => {
                let removed = self.exec("DELETE FROM credentials WHERE name = ?", [name]);
                Done::Bool(reply, removed.map(|n| n == 1).map_err(CoreError::Store))
            }
        }
    }

    fn fetch(&self, id: &str) -> Result<Option<Proposal>, CoreError> {
        Ok(crate::direct::proposal(&self.conn, id)?)
    }

    /// Inserts one proposal row (its first audit row comes from the insert trigger).
    fn insert_row(
        &self,
        p: &Proposal,
        key: Option<&str>,
        hash: Option<&str>,
        origin: Option<&(String, Channel)>,
        stored: &assent_core::stored::StoredJson,
    ) -> Result<(), CoreError> {
        let sql = concat!(
            "INSERT INTO proposals (",
            plain::ROW_COLUMNS!(),
            ", supersedes, idempotency_key, request_sha256, created_by, created_channel) ",
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        );
        let mut st = self.conn.prepare_cached(sql).map_err(lite_err)?;
        let n = plain::ROW_COLUMN_COUNT;
        let bound = plain::bind_row(&mut st, 0, p, stored)
            .and_then(|()| st.raw_bind_parameter(n + 1, p.supersedes.as_deref()))
            .and_then(|()| st.raw_bind_parameter(n + 2, key))
            .and_then(|()| st.raw_bind_parameter(n + 3, hash))
            .and_then(|()| st.raw_bind_parameter(n + 4, origin.map(|o| o.0.as_str())))
            .and_then(|()| st.raw_bind_parameter(n + 5, origin.map(|o| o.1.as_str())));
        bound.and_then(|()| st.raw_execute()).map_err(lite_err)?;
        Ok(())
    }

    fn insert(&mut self, rec: NewRecord) -> Result<Inserted, CoreError> {
        self.check_rules_seq(rec.rules_seq)?;
        let p = rec.proposal;
        if let Some(idem) = &rec.idempotency {
            let sql = "SELECT id, request_sha256 FROM proposals WHERE agent = ? AND idempotency_key = ?";
            let row =
                self.row(sql, [&p.agent, &idem.key], |r| Ok((r.get::<_, String>(0)?, r.get::<_, Option<String>>(1)?)))?;
            if let Some((id, hash)) = row {
                if hash.as_deref() != Some(idem.request_sha256.as_str()) {
                    return Err(CoreError::IdempotencyConflict);
                }
                let existing =
                    self.fetch(&id)?.ok_or_else(|| StoreError::Corrupt(format!("proposal {id} vanished")))?;
                return Ok(Inserted::Existing(existing));
            }
        }
        if rec.decided.is_none() {
            self.check_pending_limit(&p.agent, rec.max_pending)?;
        }

        let mut superseded = None;
        if let Some(prev) = &p.supersedes {
            let row = self.row("SELECT agent, status FROM proposals WHERE id = ?", [prev], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
            })?;
            let Some((_, st)) = row.filter(|(agent, _)| *agent == p.agent) else {
                return Err(CoreError::invalid("unknown_supersedes", "`supersedes` names no proposal of this agent"));
            };
            if st == "pending" {
                let t = Transition::superseded(prev, &p)?;
                if let Transitioned::Done(old) = self.transition(&t)? {
                    superseded = Some(old);
                }
            }
        }

        let (key, hash) = match &rec.idempotency {
            Some(i) => (Some(i.key.as_str()), Some(i.request_sha256.as_str())),
            None => (None, None),
        };
        self.insert_row(&p, key, hash, rec.origin.as_ref(), &rec.stored)?;
        // Its first audit row comes from a trigger of the same statement (0003_audit_on_insert).
        if let Some(rule) = &rec.rule {
            self.exec("UPDATE rules SET matched = matched + 1 WHERE id = ?", [rule])?;
        }
        let Some(t) = rec.decided else {
            self.pending_bound.raise(&p.agent);
            return Ok(Inserted::Created { proposal: p, superseded });
        };
        match self.transition(&t)? {
            Transitioned::Done(decided) => Ok(Inserted::Created { proposal: decided, superseded }),
            Transitioned::Conflict(_) => {
                Err(StoreError::Corrupt(format!("proposal {} changed as it was filed", p.id)).into())
            }
        }
    }

    fn check_pending_limit(&mut self, agent: &str, max: u32) -> Result<(), CoreError> {
        if self.pending_bound.under(agent, max) {
            return Ok(());
        }
        // Kept by triggers as proposals come and leave `pending` (migration 0009).
        let sql = "SELECT n FROM pending_counts WHERE agent = ?";
        let n: i64 = self.row(sql, [agent], |r| r.get(0))?.unwrap_or(0);
        self.pending_bound.counted(agent, n, max)
    }

    /// One transition: the update, and only when it changed the row, its audit row and the row
    /// as it now is; an unchanged row means the proposal was no longer in the state the
    /// transition starts from. The caller undoes a half-done one.
    fn transition(&self, t: &Transition) -> Result<Transitioned, CoreError> {
        let changed = self.exec(
            "UPDATE proposals SET status = ?, updated_at = ?, decision = COALESCE(?, decision), \
             result = COALESCE(?, result), error = COALESCE(?, error) WHERE id = ? AND status = ?",
            params![
                t.to.as_str(),
                t.at.0,
                t.decision.as_ref().and_then(|d| serde_json::to_string(d).ok()),
                t.result.as_ref().map(Value::to_string),
                t.error.as_ref().and_then(|e| serde_json::to_string(e).ok()),
                t.id,
                t.from.as_str(),
            ],
        )?;
        if changed == 0 {
            let now = self.row("SELECT status FROM proposals WHERE id = ?", [&t.id], |r| r.get::<_, String>(0))?;
            return Ok(Transitioned::Conflict(now.and_then(|s| s.parse().ok())));
        }
        self.exec(
            "INSERT INTO audit (proposal_id, actor, channel, from_status, to_status, at, detail) \
             VALUES (?, ?, ?, ?, ?, ?, ?)",
            params![
                t.id,
                t.actor,
                t.channel.as_str(),
                t.from.as_str(),
                t.to.as_str(),
                t.at.0,
                t.detail.as_ref().map(Value::to_string),
            ],
        )?;
        let now = self.fetch(&t.id)?;
        Ok(Transitioned::Done(now.ok_or_else(|| StoreError::Corrupt(format!("proposal {} vanished", t.id)))?))
    }

    fn transitions(&mut self, ts: Vec<Transition>, atomic: bool) -> Result<Vec<Transitioned>, CoreError> {
        let mut out = Vec::with_capacity(ts.len());
        // A single transition needs no savepoint of its own: the op's (or the lone op's
        // transaction) undoes it.
        let each_alone = !atomic && ts.len() > 1;
        for t in &ts {
            if each_alone {
                // Each stands alone: its own savepoint, so a failure leaves the others.
                self.control("SAVEPOINT one")?;
                let r = self.transition(t);
                match r {
                    Ok(x) => {
                        self.control("RELEASE one")?;
                        out.push(x);
                    }
                    Err(e) => {
                        self.control("ROLLBACK TO one")?;
                        self.control("RELEASE one")?;
                        return Err(e);
                    }
                }
            } else {
                out.push(self.transition(t)?);
            }
        }
        refuse_conflict(&ts, out, atomic)
    }
}

/// All or nothing (`atomic`): one transition whose proposal was no longer in its starting
/// state refuses them all. The caller undoes what was written (a batch's savepoint; a lone
/// transition changed nothing).
fn refuse_conflict(ts: &[Transition], out: Vec<Transitioned>, atomic: bool) -> Result<Vec<Transitioned>, CoreError> {
    if atomic && out.iter().any(|t| matches!(t, Transitioned::Conflict(_))) {
        return Err(assent_core::store::conflict_error(ts, &out));
    }
    Ok(out)
}
