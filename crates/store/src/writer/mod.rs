//! The single writer with group commit. See the crate docs for why.

mod admin;
mod plain;
mod prune;

use crate::pending::PendingBound;
use crate::{db_err, rows};
use assent_core::credentials::CredentialMeta;
use assent_core::error::{CoreError, StoreError};
use assent_core::proposal::{Channel, Proposal};
use assent_core::rules::Rule;
use assent_core::status::Status;
use assent_core::store::{Inserted, NewRecord, Transition, Transitioned};
use assent_core::time::Timestamp;
use serde_json::Value;
use sqlx::{Row, SqliteConnection};
use tokio::sync::{mpsc, oneshot};

type Reply<T> = oneshot::Sender<Result<T, CoreError>>;

/// One transition's statements (see `Writer::transition`), between `$begin` and `$end`.
macro_rules! transition_sql {
    ($begin:literal, $end:literal) => {
        concat!(
            $begin,
            "UPDATE proposals SET status = ?, updated_at = ?, decision = COALESCE(?, decision), ",
            "result = COALESCE(?, result), error = COALESCE(?, error) WHERE id = ? AND status = ?; ",
            "INSERT INTO audit (proposal_id, actor, channel, from_status, to_status, at, detail) ",
            "SELECT ?, ?, ?, ?, ?, ?, ? WHERE changes() = 1; ",
            "SELECT ",
            rows::proposal_cols!(),
            " FROM proposals WHERE id = ? AND changes() = 1",
            $end
        )
    };
}

/// A write for the writer task.
pub(crate) enum Op {
    Insert(Box<NewRecord>, Reply<Inserted>),
    Transition(Vec<Transition>, bool, Reply<Vec<Transitioned>>),
    AddAgent { name: String, token_hash: [u8; 32], at: Timestamp, reuse: bool, reply: Reply<()> },
    SetAgentToken { name: String, token_hash: [u8; 32], at: Timestamp, reply: Reply<bool> },
    RevokeAgent { name: String, at: Timestamp, reply: Reply<bool> },
    AddCredential { meta: CredentialMeta, reply: Reply<()> },
    RemoveCredential { name: String, reply: Reply<bool> },
    Prune { before: Timestamp, now: Timestamp, limit: u32, reply: Reply<u64> },
    AddRule { rule: Box<Rule>, reply: Reply<()> },
    RemoveRule { id: String, actor: String, channel: Channel, at: Timestamp, reply: Reply<Option<Rule>> },
}

impl Op {
    /// Whether the op leaves nothing half-written when it fails, without a savepoint around it:
    /// a plain insert is one statement (its audit row comes from a trigger). Every statement
    /// round trip to SQLite costs two thread switches, so this is what makes group commit pay.
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
    Rule(Reply<Option<Rule>>, Result<Option<Rule>, CoreError>),
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
        }
    }
}

/// Most writes one transaction takes: bounds the latency of the first in the batch.
const MAX_BATCH: usize = 512;

struct Writer {
    conn: SqliteConnection,
    /// Each agent's pending proposals, bounded (only this task files them).
    pending_bound: PendingBound,
    /// The multi-row insert statements, by row count.
    multi_sql: crate::multi::MultiInsert,
}

pub(crate) async fn run(conn: SqliteConnection, mut rx: mpsc::Receiver<Op>) {
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
    while rx.recv_many(&mut batch, MAX_BATCH).await > 0 {
        // A lone single transition is what an idle writer sees when a person decides, and what
        // a waiting agent's answer waits for: it goes to SQLite in one round trip, its
        // transaction's begin and commit included (each round trip costs two thread switches).
        if let [Op::Transition(ts, _, _)] = batch.as_slice()
            && ts.len() == 1
            && let Some(Op::Transition(mut ts, atomic, reply)) = batch.pop()
            && let Some(t) = ts.pop()
        {
            w.lone_transition(t, atomic, reply).await;
            continue;
        }
        w.commit_batch(batch.drain(..)).await;
    }
    tracing::debug!("store writer stopped");
}

async fn exec(conn: &mut SqliteConnection, sql: &'static str) -> Result<(), StoreError> {
    sqlx::query(sql).execute(&mut *conn).await.map(|_| ()).map_err(db_err)
}

impl Writer {
    /// One transition in a transaction of its own, in one round trip: its reply is sent only
    /// once the commit is known (durable before acknowledged), as with a batch.
    async fn lone_transition(&mut self, t: Transition, atomic: bool, reply: Reply<Vec<Transitioned>>) {
        let res = match self.transition_in(&t, true).await {
            Ok(done) => refuse_conflict(std::slice::from_ref(&t), vec![done], atomic),
            Err(e) => {
                // Whatever of it ran is undone (there may be no transaction left to undo).
                if let Err(r) = exec(&mut self.conn, "ROLLBACK").await {
                    tracing::debug!(error = %r, "rollback after a failed transition");
                }
                self.pending_bound.clear();
                Err(e)
            }
        };
        drop(reply.send(res));
    }

    async fn commit_batch(&mut self, ops: impl ExactSizeIterator<Item = Op>) {
        let (n, started) = (ops.len(), std::time::Instant::now());
        if let Err(e) = exec(&mut self.conn, "BEGIN IMMEDIATE").await {
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
            self.flush(&mut done, &mut deferred).await;
            if lone || op.self_contained() {
                // One statement, or alone in its transaction: nothing half-done can stay behind.
                done.push(self.one(op).await);
                continue;
            }
            let sp = exec(&mut self.conn, "SAVEPOINT op").await;
            let d = match sp {
                Ok(()) => self.one(op).await,
                Err(e) => {
                    self.refuse(op, &e);
                    continue;
                }
            };
            let end = if d.is_ok() {
                exec(&mut self.conn, "RELEASE op").await
            } else {
                match exec(&mut self.conn, "ROLLBACK TO op").await {
                    Ok(()) => exec(&mut self.conn, "RELEASE op").await,
                    Err(e) => Err(e),
                }
            };
            if let Err(e) = end {
                tracing::error!(error = %e, "savepoint failed");
            }
            done.push(d);
        }
        self.flush(&mut done, &mut deferred).await;
        let before_commit = started.elapsed();
        if lone && !done.iter().all(Done::is_ok) {
            // The lone op failed: undo whatever of it was written; its reply carries its error.
            let undone = exec(&mut self.conn, "ROLLBACK").await;
            if let Err(e) = &undone {
                tracing::error!(error = %e, "rollback failed");
            }
            for d in done {
                d.send(&Ok(()));
            }
            return;
        }
        let commit = exec(&mut self.conn, "COMMIT").await;
        if let Err(e) = &commit {
            tracing::error!(error = %e, "commit failed; the batch is rolled back");
            let _ = exec(&mut self.conn, "ROLLBACK").await;
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

    async fn one(&mut self, op: Op) -> Done {
        match op {
            Op::Insert(rec, r) => {
                let res = self.insert(*rec).await;
                Done::Insert(r, res)
            }
            Op::Transition(ts, atomic, r) => {
                let res = self.transitions(ts, atomic).await;
                Done::Transition(r, res)
            }
            Op::AddAgent { name, token_hash, at, reuse, reply } => {
                Done::Unit(reply, self.add_agent(&name, &token_hash, at, reuse).await)
            }
            Op::SetAgentToken { name, token_hash, at, reply } => {
                Done::Bool(reply, self.set_agent_token(&name, &token_hash, at).await)
            }
            Op::RevokeAgent { name, at, reply } => {
                let q = sqlx::query("UPDATE agents SET revoked_at = ? WHERE name = ? AND revoked_at IS NULL")
                    .bind(at.0)
                    .bind(name.clone());
                let revoked = match self.changed_one(q).await {
                    Ok(true) => self.log_agent(&name, "revoked", at).await.map(|()| true),
                    other => other,
                };
                Done::Bool(reply, revoked)
            }
            Op::AddCredential { meta, reply } => Done::Unit(reply, self.add_credential(&meta).await),
            Op::Prune { before, now, limit, reply } => Done::Count(reply, self.prune(before, now, limit).await),
            Op::AddRule { rule, reply } => Done::Unit(reply, self.add_rule(&rule).await),
            Op::RemoveRule { id, actor, channel, at, reply } => {
                Done::Rule(reply, self.remove_rule(&id, &actor, channel, at).await)
            }
            Op::RemoveCredential { name, reply } => {
                let q = sqlx::query("DELETE FROM credentials WHERE name = ?").bind(name);
                Done::Bool(reply, self.changed_one(q).await)
            }
        }
    }

    async fn fetch(&mut self, id: &str) -> Result<Option<Proposal>, CoreError> {
        let row = sqlx::query(rows::PROPOSAL_BY_ID).bind(id).fetch_optional(&mut self.conn).await.map_err(db_err)?;
        Ok(row.map(|r| rows::proposal(&r)).transpose()?)
    }

    /// Inserts one proposal row (its first audit row comes from the insert trigger).
    async fn insert_row(
        &mut self,
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
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        );
        plain::bind_row(sqlx::query(sql), p, stored)
            .bind(p.supersedes.clone())
            .bind(key)
            .bind(hash)
            .bind(origin.map(|o| o.0.clone()))
            .bind(origin.map(|o| o.1.as_str()))
            .execute(&mut self.conn)
            .await
            .map_err(db_err)?;
        Ok(())
    }

    async fn insert(&mut self, rec: NewRecord) -> Result<Inserted, CoreError> {
        let p = rec.proposal;
        if let Some(idem) = &rec.idempotency {
            let row = sqlx::query("SELECT id, request_sha256 FROM proposals WHERE agent = ? AND idempotency_key = ?")
                .bind(&p.agent)
                .bind(&idem.key)
                .fetch_optional(&mut self.conn)
                .await
                .map_err(db_err)?;
            if let Some(row) = row {
                let id: String = row.try_get(0).map_err(db_err)?;
                let hash: Option<String> = row.try_get(1).map_err(db_err)?;
                if hash.as_deref() != Some(idem.request_sha256.as_str()) {
                    return Err(CoreError::IdempotencyConflict);
                }
                let existing =
                    self.fetch(&id).await?.ok_or_else(|| StoreError::Corrupt(format!("proposal {id} vanished")))?;
                return Ok(Inserted::Existing(existing));
            }
        }
        if rec.decided.is_none() {
            self.check_pending_limit(&p.agent, rec.max_pending).await?;
        }

        let mut superseded = None;
        if let Some(prev) = &p.supersedes {
            let row = sqlx::query("SELECT agent, status FROM proposals WHERE id = ?")
                .bind(prev)
                .fetch_optional(&mut self.conn)
                .await
                .map_err(db_err)?;
            let Some(row) = row.filter(|r| r.try_get::<String, _>(0).ok().as_deref() == Some(p.agent.as_str())) else {
                return Err(CoreError::invalid("unknown_supersedes", "`supersedes` names no proposal of this agent"));
            };
            let st: String = row.try_get(1).map_err(db_err)?;
            if st == "pending" {
                let t = Transition {
                    id: prev.clone(),
                    from: Status::Pending,
                    to: Status::Withdrawn,
                    decision: None,
                    result: None,
                    error: None,
                    at: p.created_at,
                    actor: p.agent.clone(),
                    channel: Channel::Agent,
                    detail: Some(serde_json::json!({ "superseded_by": p.id })),
                };
                if let Transitioned::Done(old) = self.transition(&t).await? {
                    superseded = Some(old);
                }
            }
        }

        let (key, hash) = match &rec.idempotency {
            Some(i) => (Some(i.key.as_str()), Some(i.request_sha256.as_str())),
            None => (None, None),
        };
        self.insert_row(&p, key, hash, rec.origin.as_ref(), &rec.stored).await?;
        // Its first audit row comes from a trigger of the same statement (0003_audit_on_insert).
        if let Some(rule) = &rec.rule {
            sqlx::query("UPDATE rules SET matched = matched + 1 WHERE id = ?")
                .bind(rule)
                .execute(&mut self.conn)
                .await
                .map_err(db_err)?;
        }
        let Some(t) = rec.decided else {
            self.pending_bound.raise(&p.agent);
            return Ok(Inserted::Created { proposal: p, superseded });
        };
        match self.transition(&t).await? {
            Transitioned::Done(decided) => Ok(Inserted::Created { proposal: decided, superseded }),
            Transitioned::Conflict(_) => {
                Err(StoreError::Corrupt(format!("proposal {} changed as it was filed", p.id)).into())
            }
        }
    }

    async fn check_pending_limit(&mut self, agent: &str, max: u32) -> Result<(), CoreError> {
        if self.pending_bound.under(agent, max) {
            return Ok(());
        }
        let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM proposals WHERE agent = ? AND status = 'pending'")
            .bind(agent)
            .fetch_one(&mut self.conn)
            .await
            .map_err(db_err)?;
        self.pending_bound.counted(agent, n, max)
    }

    /// One transition, in one round trip to SQLite: the update, its audit row only when the
    /// update changed the row (`changes()`), and the row as it now is, again only then; no row
    /// back means the proposal was no longer in the state the transition starts from. The
    /// caller undoes a half-done one.
    async fn transition(&mut self, t: &Transition) -> Result<Transitioned, CoreError> {
        self.transition_in(t, false).await
    }

    /// A transition; `alone`, in a transaction of its own begun and committed in the same
    /// round trip (the caller rolls back on an error).
    async fn transition_in(&mut self, t: &Transition, alone: bool) -> Result<Transitioned, CoreError> {
        let sql = if alone { transition_sql!("BEGIN IMMEDIATE; ", "; COMMIT") } else { transition_sql!("", "") };
        let update = sqlx::query(sql)
            .bind(t.to.as_str())
            .bind(t.at.0)
            .bind(t.decision.as_ref().and_then(|d| serde_json::to_string(d).ok()))
            .bind(t.result.as_ref().map(Value::to_string))
            .bind(t.error.as_ref().and_then(|e| serde_json::to_string(e).ok()))
            .bind(&t.id)
            .bind(t.from.as_str())
            .bind(&t.id);
        let row = rows::bind_audit(update, t).bind(&t.id).fetch_all(&mut self.conn).await.map_err(db_err)?;
        if let Some(row) = row.first() {
            return Ok(Transitioned::Done(rows::proposal(row)?));
        }
        let now: Option<String> = sqlx::query_scalar("SELECT status FROM proposals WHERE id = ?")
            .bind(&t.id)
            .fetch_optional(&mut self.conn)
            .await
            .map_err(db_err)?;
        Ok(Transitioned::Conflict(now.and_then(|s| s.parse().ok())))
    }

    async fn transitions(&mut self, ts: Vec<Transition>, atomic: bool) -> Result<Vec<Transitioned>, CoreError> {
        let mut out = Vec::with_capacity(ts.len());
        // A single transition needs no savepoint of its own: the op's (or the lone op's
        // transaction) undoes it.
        let each_alone = !atomic && ts.len() > 1;
        for t in &ts {
            if each_alone {
                // Each stands alone: its own savepoint, so a failure leaves the others.
                exec(&mut self.conn, "SAVEPOINT one").await?;
                let r = self.transition(t).await;
                match r {
                    Ok(x) => {
                        exec(&mut self.conn, "RELEASE one").await?;
                        out.push(x);
                    }
                    Err(e) => {
                        exec(&mut self.conn, "ROLLBACK TO one").await?;
                        exec(&mut self.conn, "RELEASE one").await?;
                        return Err(e);
                    }
                }
            } else {
                out.push(self.transition(t).await?);
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
        return Err(CoreError::InvalidState { message: conflict_message(ts, &out) });
    }
    Ok(out)
}

fn conflict_message(ts: &[Transition], out: &[Transitioned]) -> String {
    for (t, o) in ts.iter().zip(out) {
        if let Transitioned::Conflict(now) = o {
            let now = now.map(|s| s.to_string()).unwrap_or_else(|| "gone".into());
            return format!("proposal `{}` is {now}, no longer {}; nothing was changed", t.id, t.from);
        }
    }
    "a proposal changed meanwhile; nothing was changed".into()
}
