//! Group commit, for both stores: one task takes the writes that queued up while it was busy
//! and commits them in one transaction: SQLite's writer (every write, on a thread of its own
//! with its own connection, so that a statement runs without a hand-off to another thread) and
//! each team node's ingest (its new proposals). One fsync for many proposals, and each write
//! isolated so that one failure does not undo its neighbours. A caller is answered only after
//! the commit, so an acknowledged write is durable.
//!
//! Plain inserts (no idempotency key, no `supersedes`, no rule's decision, their agent known to
//! be under its pending limit) are answered from the batch and written together, up to
//! [`ROWS`] rows per statement.

use crate::conn::{Arg, BoxFuture, Conn};
use crate::pending::PendingBound;
use crate::{ops, sql};
use assent_core::error::{CoreError, StoreError};
use assent_core::proposal::Proposal;
use assent_core::store::{Inserted, NewRecord};
use std::sync::Arc;
use tokio::sync::oneshot;

pub(crate) type Reply<T> = oneshot::Sender<Result<T, CoreError>>;

/// Most writes one transaction takes: bounds the latency of the first in the batch.
pub(crate) const MAX_BATCH: usize = 512;
/// Most rows one insert statement carries (25 parameters each; SQLite allows 32,766,
/// PostgreSQL 65,535), each row count's text kept prepared.
const ROWS: usize = 64;

/// Any write other than a new proposal, and its reply.
pub(crate) trait Task<C>: Send {
    fn run<'a>(self: Box<Self>, c: &'a mut C, node: &'a str) -> BoxFuture<'a, Answer>;
    fn refuse(self: Box<Self>, e: &StoreError);
}

/// A write for the batch.
pub(crate) enum Job<C> {
    Insert(Box<NewRecord>, Reply<Inserted>),
    Task(Box<dyn Task<C>>),
}

/// Work on a connection and a node, yielding `T`.
pub(crate) type Work<C, T> = Box<dyn for<'a> FnOnce(&'a mut C, &'a str) -> BoxFuture<'a, Result<T, CoreError>> + Send>;

/// `f` as [`Work`] (naming the closure's signature once).
pub(crate) fn work<C, T, F>(f: F) -> Work<C, T>
where
    F: for<'a> FnOnce(&'a mut C, &'a str) -> BoxFuture<'a, Result<T, CoreError>> + Send + 'static,
{
    Box::new(f)
}

struct Typed<C, T>(Work<C, T>, Reply<T>);

impl<C: Send + 'static, T: Send + 'static> Task<C> for Typed<C, T> {
    fn run<'a>(self: Box<Self>, c: &'a mut C, node: &'a str) -> BoxFuture<'a, Answer> {
        let Typed(work, reply) = *self;
        Box::pin(async move { Answer::new(reply, work(c, node).await) })
    }
    fn refuse(self: Box<Self>, e: &StoreError) {
        drop(self.1.send(Err(CoreError::Store(e.again("")))));
    }
}

/// `work` as a job, and where its answer comes.
pub(crate) fn task<C: Send + 'static, T: Send + 'static>(
    work: Work<C, T>,
) -> (Job<C>, oneshot::Receiver<Result<T, CoreError>>) {
    let (reply, rx) = oneshot::channel();
    (Job::Task(Box::new(Typed(work, reply))), rx)
}

/// Sends a write's result, given the commit's error if it failed.
type Deliver = Box<dyn FnOnce(Option<&StoreError>) + Send>;

/// A write's result, sent once the batch's commit is known.
pub(crate) struct Answer {
    ok: bool,
    send: Deliver,
}

impl Answer {
    pub(crate) fn new<T: Send + 'static>(reply: Reply<T>, r: Result<T, CoreError>) -> Self {
        let ok = r.is_ok();
        let send = move |commit: Option<&StoreError>| {
            // A caller that went away (client disconnected) does not undo a committed write.
            drop(reply.send(match commit {
                Some(e) => Err(CoreError::Store(e.again("commit failed: "))),
                None => r,
            }));
        };
        Self { ok, send: Box::new(send) }
    }
}

/// One store's batches: its node, each agent's pending bound (only this task files them), the
/// insert statements by row count.
pub(crate) struct Batcher {
    node: String,
    bound: PendingBound,
    inserts: Vec<Option<Arc<str>>>,
}

type Plain = (Box<NewRecord>, Reply<Inserted>);

impl Batcher {
    pub(crate) fn new(node: String) -> Self {
        Self { node, bound: PendingBound::default(), inserts: Vec::new() }
    }

    fn insert_sql(&mut self, n: usize, pg: bool) -> Arc<str> {
        if self.inserts.len() < n {
            self.inserts.resize(n, None);
        }
        self.inserts[n - 1].get_or_insert_with(|| sql::insert(n, pg).into()).clone()
    }

    fn plain(&self, rec: &NewRecord) -> bool {
        rec.is_plain() && self.bound.under(&rec.proposal.agent, rec.max_pending)
    }

    /// Answers every job with `e`, writing none.
    pub(crate) fn refuse<C>(&mut self, jobs: &mut Vec<Job<C>>, e: &StoreError) {
        for job in jobs.drain(..) {
            match job {
                Job::Insert(_, reply) => drop(reply.send(Err(CoreError::Store(e.again(""))))),
                Job::Task(t) => t.refuse(e),
            }
        }
    }

    /// Commits `jobs` (drained) on `c` and answers them; false when the connection may be left
    /// inside a transaction (a commit or rollback failed).
    pub(crate) async fn commit<C: Conn>(&mut self, c: &mut C, jobs: &mut Vec<Job<C>>) -> bool {
        // Plain inserts that fit one statement are that statement, without a transaction around it.
        let in_tx = !(jobs.len() <= ROWS && self.all_plain(jobs));
        if in_tx && let Err(e) = c.exec(sql::BEGIN.pick(C::PG), &[]).await {
            tracing::error!(error = %e, "could not begin a write transaction");
            self.refuse(jobs, &store_error(e));
            return true;
        }
        let lone = jobs.len() == 1;
        let (mut answers, mut plain) = (Vec::with_capacity(jobs.len()), Vec::new());
        for job in jobs.drain(..) {
            let job = match job {
                Job::Insert(rec, reply) if !in_tx || self.plain(&rec) => {
                    if in_tx {
                        self.bound.raise(&rec.proposal.agent);
                    }
                    plain.push((rec, reply));
                    continue;
                }
                other => other,
            };
            // What it reads sees the plain rows before it as written.
            self.flush(c, &mut plain, &mut answers, true).await;
            // A lone write needs no savepoint: should it fail, the transaction is rolled back.
            // On SQLite neither does one statement, which undoes itself when it fails;
            // PostgreSQL would abort the whole transaction.
            let one_statement = matches!(&job, Job::Insert(rec, _) if rec.proposal.supersedes.is_none()
                && rec.decided.is_none() && rec.rule.is_none());
            if lone || (one_statement && !C::PG) {
                answers.push(self.run(c, job).await);
                continue;
            }
            if let Err(e) = c.exec("SAVEPOINT op", &[]).await {
                self.refuse(&mut vec![job], &store_error(e));
                continue;
            }
            let answer = self.run(c, job).await;
            end_savepoint(c, "op", answer.ok).await;
            answers.push(answer);
        }
        self.flush(c, &mut plain, &mut answers, in_tx).await;
        if !in_tx || (lone && !answers.iter().all(|a| a.ok)) {
            // Nothing to commit, or the lone write failed: undo whatever of it was written; its
            // reply carries its error.
            let undone = if in_tx { c.exec("ROLLBACK", &[]).await } else { Ok(0) };
            if let Err(e) = &undone {
                tracing::error!(error = %e, "rollback failed");
            }
            answers.into_iter().for_each(|a| (a.send)(None));
            return undone.is_ok();
        }
        let commit = c.exec("COMMIT", &[]).await.map_err(store_error);
        let mut clean = true;
        if let Err(e) = &commit {
            tracing::error!(error = %e, "a batch did not commit; none of it is stored");
            clean = c.exec("ROLLBACK", &[]).await.is_ok();
            self.bound.clear();
        }
        answers.into_iter().for_each(|a| (a.send)(commit.as_ref().err()));
        clean
    }

    /// Whether every job is a plain insert, each agent's bound raised for them; if not, the
    /// bounds are as they were.
    fn all_plain<C>(&mut self, jobs: &[Job<C>]) -> bool {
        for (i, job) in jobs.iter().enumerate() {
            match job {
                Job::Insert(rec, _) if self.plain(rec) => self.bound.raise(&rec.proposal.agent),
                _ => {
                    for done in &jobs[..i] {
                        if let Job::Insert(rec, _) = done {
                            self.bound.lower(&rec.proposal.agent);
                        }
                    }
                    return false;
                }
            }
        }
        true
    }

    async fn run<C: Conn>(&mut self, c: &mut C, job: Job<C>) -> Answer {
        match job {
            Job::Insert(rec, reply) => Answer::new(reply, ops::insert(c, &self.node, *rec, &mut self.bound).await),
            Job::Task(task) => task.run(c, &self.node).await,
        }
    }

    /// Writes the plain rows gathered so far, [`ROWS`] per statement. Should a statement fail,
    /// each of its rows is tried alone, and only the rows that still fail answer with the error.
    /// Inside a transaction on PostgreSQL, each attempt is a savepoint (a failed statement would
    /// abort the transaction; SQLite undoes the statement alone).
    async fn flush<C: Conn>(&mut self, c: &mut C, plain: &mut Vec<Plain>, answers: &mut Vec<Answer>, in_tx: bool) {
        let guard = in_tx && C::PG;
        let mut failed: Vec<Option<CoreError>> = (0..plain.len()).map(|_| None).collect();
        for (n, chunk) in plain.chunks(ROWS).enumerate() {
            let sql = self.insert_sql(chunk.len(), C::PG);
            let args: Vec<Arg<'_>> = chunk.iter().flat_map(|(rec, _)| ops::row(rec, &self.node)).collect();
            if attempt(c, &sql, &args, guard.then_some("rows")).await.is_ok() {
                continue;
            }
            let one = self.insert_sql(1, C::PG);
            for (i, (rec, _)) in chunk.iter().enumerate() {
                if let Err(e) = attempt(c, &one, &ops::row(rec, &self.node), guard.then_some("row")).await {
                    failed[n * ROWS + i] = Some(e);
                }
            }
        }
        for ((rec, reply), failed) in plain.drain(..).zip(failed) {
            let result = match failed {
                Some(e) => {
                    self.bound.lower(&rec.proposal.agent);
                    Err(e)
                }
                None => {
                    let proposal = Proposal { node: ops::node_of(&self.node), ..rec.proposal };
                    Ok(Inserted::Created { proposal, superseded: None })
                }
            };
            answers.push(Answer::new(reply, result));
        }
    }
}

/// Runs one statement, inside the savepoint `guard` names if any.
async fn attempt<C: Conn>(c: &mut C, sql: &str, args: &[Arg<'_>], guard: Option<&str>) -> Result<u64, CoreError> {
    let Some(name) = guard else { return c.exec(sql, args).await };
    c.exec(&format!("SAVEPOINT {name}"), &[]).await?;
    let r = c.exec(sql, args).await;
    end_savepoint(c, name, r.is_ok()).await;
    r
}

/// Releases the savepoint `name`, first rolling back to it unless `keep`.
async fn end_savepoint<C: Conn>(c: &mut C, name: &str, keep: bool) {
    let undo = if keep { Ok(0) } else { c.exec(&format!("ROLLBACK TO {name}"), &[]).await };
    if let Err(e) = undo.and(c.exec(&format!("RELEASE {name}"), &[]).await) {
        // The transaction is lost with the connection; its commit reports it.
        tracing::warn!(error = %e, "savepoint {name}");
    }
}

fn store_error(e: CoreError) -> StoreError {
    match e {
        CoreError::Store(e) => e,
        other => StoreError::Database(other.to_string()),
    }
}
