//! New proposals on the team store, written by one task per node in batches: one transaction
//! per batch; the plain inserts (no idempotency key, no `supersedes`, no rule's decision, their
//! agent known to be under its pending limit) written together as multi-row statements and
//! answered from the batch; every other insert in a savepoint of its own, so its failure leaves
//! the rest.
//!
//! Why a task, when PostgreSQL takes concurrent writers itself: a commit that carries NOTIFY (the
//! audit trigger's) holds a database-wide lock until it is durable, so a transaction per proposal
//! commits one at a time and never shares a flush to disk; a batch is one commit. And only this
//! node files its agents' proposals (the node lock sees to that), so each agent's pending count
//! can be bounded here, as on SQLite, instead of a lock and a COUNT for every insert.

use super::write::{fetch, transition_in};
use super::{core, db_err};
use crate::multi::MultiInsert;
use crate::pending::PendingBound;
use assent_core::error::{CoreError, StoreError};
use assent_core::proposal::Proposal;
use assent_core::store::{Inserted, NewRecord, Transition, Transitioned};
use serde_json::Value;
use sqlx::postgres::{PgArguments, PgConnection, PgPool};
use sqlx::{AssertSqlSafe, Postgres};
use tokio::sync::{mpsc, oneshot};

type Reply = oneshot::Sender<Result<Inserted, CoreError>>;

/// A new proposal for the task, and where its answer goes.
pub(super) type Job = (Box<NewRecord>, Reply);

/// Most inserts one transaction takes: bounds the wait of the first in the batch.
const MAX_BATCH: usize = 512;
/// Most rows one statement carries (23 parameters each; PostgreSQL allows 65,535).
const ROWS_PER_STATEMENT: usize = 64;

/// The insert of the columns [`bind`] binds, in its order.
const INSERT: &str = "INSERT INTO proposals (id, node, kind, class, agent, title, summary, payload, preview, base, session_id, group_id, \
                       status, created_at, updated_at, expires_at, facts, supersedes, idempotency_key, \
                       request_sha256, created_by, created_channel, lease_secs)";
const COLUMN_COUNT: usize = 23;

type Query<'q> = sqlx::query::Query<'q, Postgres, PgArguments>;

/// Starts the task; it stops when the last sender is dropped.
pub(super) fn start(pool: PgPool, node: String) -> mpsc::Sender<Job> {
    let (tx, rx) = mpsc::channel(MAX_BATCH * 4);
    let task = Ingest {
        pool,
        node,
        pending_bound: PendingBound::default(),
        sql: MultiInsert::new(INSERT, COLUMN_COUNT, true),
    };
    tokio::spawn(task.run(rx));
    tx
}

struct Ingest {
    pool: PgPool,
    node: String,
    /// Each agent's pending proposals on this node, bounded (only this task files them).
    pending_bound: PendingBound,
    /// The insert statements, by row count.
    sql: MultiInsert,
}

/// One insert's answer, known once its batch commits.
struct Answer {
    reply: Reply,
    result: Option<Result<Inserted, CoreError>>,
}

impl Ingest {
    async fn run(mut self, mut rx: mpsc::Receiver<Job>) {
        let mut batch = Vec::with_capacity(MAX_BATCH);
        while rx.recv_many(&mut batch, MAX_BATCH).await > 0 {
            if batch.len() <= ROWS_PER_STATEMENT && self.all_plain(&batch) {
                self.insert_alone(batch.drain(..)).await;
            } else {
                self.commit_batch(batch.drain(..)).await;
            }
        }
        tracing::debug!("team store ingest stopped");
    }

    async fn commit_batch(&mut self, jobs: impl Iterator<Item = Job>) {
        let mut tx = match self.pool.begin().await {
            Ok(tx) => tx,
            Err(e) => {
                let e = db_err(e);
                for (_, reply) in jobs {
                    let _ = reply.send(Err(CoreError::Store(e.again(""))));
                }
                return;
            }
        };
        let mut answers: Vec<Answer> = Vec::new();
        let mut plain: Vec<(usize, Box<NewRecord>)> = Vec::new();
        for (rec, reply) in jobs {
            if self.is_plain(&rec) {
                self.pending_bound.raise(&rec.proposal.agent);
                plain.push((answers.len(), rec));
                answers.push(Answer { reply, result: None });
                continue;
            }
            // What it reads sees the plain rows before it as written.
            self.flush(&mut tx, &mut answers, &mut plain).await;
            let result = self.in_savepoint(&mut tx, *rec).await;
            answers.push(Answer { reply, result: Some(result) });
        }
        self.flush(&mut tx, &mut answers, &mut plain).await;
        let commit = tx.commit().await.map_err(db_err);
        if let Err(e) = &commit {
            tracing::error!(error = %e, "a batch of new proposals did not commit; none of them is stored");
            self.pending_bound.clear();
        }
        for a in answers {
            let result = a.result.unwrap_or_else(|| Err(StoreError::Corrupt("an insert got no answer".into()).into()));
            // A caller that went away (client disconnected) does not undo a committed write.
            let _ = a.reply.send(match &commit {
                Ok(()) => result,
                Err(e) => Err(CoreError::Store(e.again("commit failed: "))),
            });
        }
    }

    /// Whether every job is a plain insert, each agent's bound raised for them; if not, the
    /// bounds are as they were.
    fn all_plain(&mut self, jobs: &[Job]) -> bool {
        for (i, (rec, _)) in jobs.iter().enumerate() {
            if !self.is_plain(rec) {
                for (done, _) in &jobs[..i] {
                    self.pending_bound.lower(&done.proposal.agent);
                }
                return false;
            }
            self.pending_bound.raise(&rec.proposal.agent);
        }
        true
    }

    /// Plain inserts that fit in one statement (see [`Ingest::all_plain`]): the statement is
    /// its own transaction, one round trip to PostgreSQL instead of a begin, a savepoint and its
    /// release, and a commit around it. Should it fail, nothing of it was written, and each row
    /// is tried alone; only the rows that still fail answer with the error.
    async fn insert_alone(&mut self, jobs: impl ExactSizeIterator<Item = Job>) {
        let jobs: Vec<Job> = jobs.collect();
        let sql = self.sql.rows(jobs.len());
        let q = jobs.iter().fold(sqlx::query(AssertSqlSafe(sql)), |q, (rec, _)| bind(q, &self.node, rec));
        let together = q.execute(&self.pool).await.is_ok();
        for (rec, reply) in jobs {
            if !together {
                let one = bind(sqlx::query(AssertSqlSafe(self.sql.rows(1))), &self.node, &rec);
                if let Err(e) = one.execute(&self.pool).await {
                    self.pending_bound.lower(&rec.proposal.agent);
                    let _ = reply.send(Err(core(e)));
                    continue;
                }
            }
            let proposal = Proposal { node: Some(self.node.clone()), ..rec.proposal };
            // A caller that went away (client disconnected) does not undo a committed write.
            let _ = reply.send(Ok(Inserted::Created { proposal, superseded: None }));
        }
    }

    fn is_plain(&self, rec: &NewRecord) -> bool {
        rec.is_plain() && self.pending_bound.under(&rec.proposal.agent, rec.max_pending)
    }

    async fn savepoint(conn: &mut PgConnection, sql: &'static str) {
        if let Err(e) = sqlx::query(sql).execute(&mut *conn).await {
            // The transaction is lost with the connection; its commit reports it.
            tracing::warn!(error = %e, "{sql}");
        }
    }

    /// Writes the plain rows gathered so far, [`ROWS_PER_STATEMENT`] per statement. Should a
    /// statement fail (a row PostgreSQL cannot hold), each of its rows is tried alone, and only
    /// the rows that still fail answer with the error.
    async fn flush(
        &mut self,
        conn: &mut PgConnection,
        answers: &mut [Answer],
        plain: &mut Vec<(usize, Box<NewRecord>)>,
    ) {
        for chunk in plain.chunks(ROWS_PER_STATEMENT) {
            let sql = self.sql.rows(chunk.len());
            Self::savepoint(conn, "SAVEPOINT rows").await;
            let q = chunk.iter().fold(sqlx::query(AssertSqlSafe(sql)), |q, (_, rec)| bind(q, &self.node, rec));
            if q.execute(&mut *conn).await.is_ok() {
                Self::savepoint(conn, "RELEASE rows").await;
                continue;
            }
            Self::savepoint(conn, "ROLLBACK TO rows").await;
            for (i, rec) in chunk {
                let sql = self.sql.rows(1);
                Self::savepoint(conn, "SAVEPOINT row").await;
                match bind(sqlx::query(AssertSqlSafe(sql)), &self.node, rec).execute(&mut *conn).await {
                    Ok(_) => Self::savepoint(conn, "RELEASE row").await,
                    Err(e) => {
                        Self::savepoint(conn, "ROLLBACK TO row").await;
                        self.pending_bound.lower(&rec.proposal.agent);
                        answers[*i].result = Some(Err(core(e)));
                    }
                }
            }
        }
        for (i, rec) in plain.drain(..) {
            let a = &mut answers[i];
            if a.result.is_none() {
                let proposal = Proposal { node: Some(self.node.clone()), ..rec.proposal };
                a.result = Some(Ok(Inserted::Created { proposal, superseded: None }));
            }
        }
    }

    async fn in_savepoint(&mut self, conn: &mut PgConnection, rec: NewRecord) -> Result<Inserted, CoreError> {
        Self::savepoint(conn, "SAVEPOINT one").await;
        let res = self.insert_one(conn, rec).await;
        Self::savepoint(conn, if res.is_ok() { "RELEASE one" } else { "ROLLBACK TO one" }).await;
        res
    }

    /// An insert that reads first: its idempotency key, its agent's pending count, the
    /// proposal it supersedes, the rule that decided it.
    async fn insert_one(&mut self, conn: &mut PgConnection, rec: NewRecord) -> Result<Inserted, CoreError> {
        super::write::check_rules_seq(conn, rec.rules_seq).await?;
        let p = &rec.proposal;
        if let Some(idem) = &rec.idempotency {
            let row: Option<(String, Option<String>)> = sqlx::query_as(
                "SELECT id, request_sha256 FROM proposals WHERE node = $1 AND agent = $2 AND idempotency_key = $3",
            )
            .bind(&self.node)
            .bind(&p.agent)
            .bind(&idem.key)
            .fetch_optional(&mut *conn)
            .await
            .map_err(core)?;
            if let Some((id, hash)) = row {
                if hash.as_deref() != Some(idem.request_sha256.as_str()) {
                    return Err(CoreError::IdempotencyConflict);
                }
                let existing =
                    fetch(conn, &id).await?.ok_or_else(|| StoreError::Corrupt(format!("proposal {id} vanished")))?;
                return Ok(Inserted::Existing(existing));
            }
        }
        if rec.decided.is_none() {
            self.check_pending_limit(conn, &p.agent, rec.max_pending).await?;
        }
        let mut superseded = None;
        if let Some(prev) = &p.supersedes {
            let row: Option<(String, String, String)> =
                sqlx::query_as("SELECT agent, node, status FROM proposals WHERE id = $1")
                    .bind(prev)
                    .fetch_optional(&mut *conn)
                    .await
                    .map_err(core)?;
            let Some((_, _, st)) = row.filter(|(a, n, _)| *a == p.agent && *n == self.node) else {
                return Err(CoreError::invalid("unknown_supersedes", "`supersedes` names no proposal of this agent"));
            };
            if st == "pending" {
                let t = Transition::superseded(prev, p)?;
                if let Transitioned::Done(old) = transition_in(conn, &self.node, &t).await? {
                    superseded = Some(old);
                }
            }
        }
        let sql = self.sql.rows(1);
        bind(sqlx::query(AssertSqlSafe(sql)), &self.node, &rec).execute(&mut *conn).await.map_err(core)?;
        if let Some(rule) = &rec.rule {
            sqlx::query("UPDATE rules SET matched = matched + 1 WHERE id = $1")
                .bind(rule)
                .execute(&mut *conn)
                .await
                .map_err(core)?;
        }
        let proposal = match &rec.decided {
            None => {
                self.pending_bound.raise(&p.agent);
                Proposal { node: Some(self.node.clone()), ..rec.proposal }
            }
            Some(t) => match transition_in(conn, &self.node, t).await? {
                Transitioned::Done(decided) => decided,
                Transitioned::Conflict(_) => {
                    return Err(StoreError::Corrupt(format!("proposal {} changed as it was filed", p.id)).into());
                }
            },
        };
        Ok(Inserted::Created { proposal, superseded })
    }

    async fn check_pending_limit(&mut self, conn: &mut PgConnection, agent: &str, max: u32) -> Result<(), CoreError> {
        if self.pending_bound.under(agent, max) {
            return Ok(());
        }
        let n: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM proposals WHERE node = $1 AND agent = $2 AND status = 'pending'")
                .bind(&self.node)
                .bind(agent)
                .fetch_one(&mut *conn)
                .await
                .map_err(core)?;
        self.pending_bound.counted(agent, n, max)
    }
}

/// Binds one new proposal's columns, in the order of [`INSERT`].
fn bind<'q>(q: Query<'q>, node: &'q str, rec: &'q NewRecord) -> Query<'q> {
    let p = &rec.proposal;
    let (key, hash) = match &rec.idempotency {
        Some(i) => (Some(i.key.as_str()), Some(i.request_sha256.as_str())),
        None => (None, None),
    };
    q.bind(p.id.as_str())
        .bind(node)
        .bind(p.kind.as_str())
        .bind(crate::rows::class_str(p.class))
        .bind(p.agent.as_str())
        .bind(p.title.as_deref())
        .bind(p.summary.as_deref())
        .bind(rec.stored.payload.as_str())
        .bind(rec.stored.preview.as_str())
        .bind(p.base.as_ref().map(Value::to_string))
        .bind(p.session_id.as_deref())
        .bind(p.group_id.as_deref())
        .bind(p.status.as_str())
        .bind(p.created_at.0)
        .bind(p.updated_at.0)
        .bind(p.expires_at.0)
        .bind(rec.stored.facts.as_deref())
        .bind(p.supersedes.as_deref())
        .bind(key)
        .bind(hash)
        .bind(rec.origin.as_ref().map(|o| o.0.as_str()))
        .bind(rec.origin.as_ref().map(|o| o.1.as_str()))
        .bind(p.lease_secs.map(i64::from))
}
