//! The [`Store`] contract, once for both databases: [`SqlStore`] over a [`Backend`], which
//! says only how a statement reaches its database (SQLite's writer thread and read
//! connections, or PostgreSQL's pool and ingest task).

use crate::batch::{Job, Work, work};
use crate::conn::{Arg, Args, Conn, Read, Text};
use crate::{ops, rows, sql};
use assent_core::credentials::CredentialMeta;
use assent_core::error::{CoreError, StoreError};
use assent_core::light::Listed;
use assent_core::proposal::{AgentInfo, AuditEntry, Channel, Proposal};
use assent_core::remote::{Device, LogEntry};
use assent_core::rules::{Facts, Rule, RuleLogEntry};
use assent_core::status::Status;
use assent_core::store::{
    Filing, Inserted, ListQuery, NewRecord, ReceiptKey, Records, RemoteChange, Transition, Transitioned,
};
use assent_core::time::Timestamp;
use async_trait::async_trait;
use serde_json::Value;
use std::future::Future;
use std::sync::Arc;
use tokio::sync::mpsc;

/// How a store reaches its database.
pub(crate) trait Backend: Send + Sync + 'static {
    /// The connection writes run on.
    type Conn: Conn + 'static;

    /// The team store's node ('' for a store of one's own).
    fn node(&self) -> &str;

    /// Where new proposals (and, on SQLite, every write) are batched.
    fn jobs(&self) -> &mpsc::Sender<Job<Self::Conn>>;

    /// Every row of a query, on a read connection.
    fn all<T: Send + 'static>(
        &self,
        sql: Text,
        args: Args,
        read: Read<T>,
    ) -> impl Future<Output = Result<Vec<T>, CoreError>> + Send;

    /// A write other than a new proposal: through the batch, unless the database takes
    /// concurrent writers itself.
    fn write<T: Send + 'static>(&self, w: Work<Self::Conn, T>) -> impl Future<Output = Result<T, CoreError>> + Send {
        async move {
            let (job, answer) = crate::batch::task(w);
            self.jobs().send(job).await.map_err(|_| StoreError::Closed)?;
            answer.await.map_err(|_| StoreError::Closed)?
        }
    }

    /// The first row of a query.
    fn one<T: Send + 'static>(
        &self,
        sql: &'static str,
        args: Args,
        read: Read<T>,
    ) -> impl Future<Output = Result<Option<T>, CoreError>> + Send {
        let rows = self.all(sql.into(), args, read);
        async move { Ok(rows.await?.into_iter().next()) }
    }

    /// Whether it is PostgreSQL (a `Twin` statement picks by this).
    fn pg(&self) -> bool {
        <Self::Conn as Conn>::PG
    }

    /// One proposal by its id.
    fn get(&self, id: &str) -> impl Future<Output = Result<Option<Proposal>, CoreError>> + Send {
        self.one(sql::PROPOSAL, vec![Arg::from(id.to_string())], rows::proposal)
    }

    /// What other nodes change, once.
    fn take_changes(&self) -> Option<mpsc::Receiver<RemoteChange>> {
        None
    }
}

/// A store on one database. Cheap to clone.
pub struct SqlStore<B>(pub(crate) Arc<B>);

impl<B> Clone for SqlStore<B> {
    fn clone(&self) -> Self {
        Self(self.0.clone())
    }
}

/// Owned arguments for a read.
macro_rules! owned {
    ($($a:expr),* $(,)?) => { vec![$($crate::conn::Arg::from($a).owned()),*] };
}

/// A write of `ops`, run on the backend's connection with its node.
macro_rules! write_op {
    ($self:ident, |$c:ident, $node:ident| $body:expr) => {
        $self.0.write(work(move |$c, $node| Box::pin(async move { $body.await }))).await
    };
}

#[async_trait]
impl<B: Backend> Filing for SqlStore<B> {
    async fn insert(&self, rec: NewRecord) -> Result<Inserted, CoreError> {
        let (reply, answer) = tokio::sync::oneshot::channel();
        self.0.jobs().send(Job::Insert(Box::new(rec), reply)).await.map_err(|_| StoreError::Closed)?;
        answer.await.map_err(|_| StoreError::Closed)?
    }

    async fn transition(&self, ts: Vec<Transition>, atomic: bool) -> Result<Vec<Transitioned>, CoreError> {
        write_op!(self, |c, node| ops::transitions(c, node, &ts, atomic))
    }
}

#[async_trait]
impl<B: Backend> Records for SqlStore<B> {
    async fn get(&self, id: &str) -> Result<Option<Proposal>, CoreError> {
        self.0.get(id).await
    }

    async fn list(&self, q: &ListQuery) -> Result<Vec<(i64, Proposal)>, CoreError> {
        let (sql, args) = listing(sql::LIST, q, self.0.pg());
        self.0.all(sql.into(), args, rows::listed).await
    }

    async fn list_rows(&self, q: &ListQuery) -> Result<Vec<(i64, Listed)>, CoreError> {
        let (sql, args) = listing(sql::LIST_ROWS, q, self.0.pg());
        self.0.all(sql.into(), args, rows::listed_row).await
    }

    async fn get_row(&self, id: &str) -> Result<Option<Listed>, CoreError> {
        Ok(self.0.one(sql::ROW, owned![id], rows::listed_row).await?.map(|(_, l)| l))
    }

    async fn count_pending(&self) -> Result<u64, CoreError> {
        Ok(self.0.one(sql::COUNT_PENDING, vec![], |r| r.int("n")).await?.unwrap_or(0).max(0) as u64)
    }

    async fn group(&self, agent: Option<&str>, group_id: &str) -> Result<Vec<Proposal>, CoreError> {
        self.0.all(sql::GROUP.into(), owned![group_id, agent], rows::proposal).await
    }

    async fn due_for_expiry(&self, now: Timestamp, limit: u32) -> Result<Vec<(String, Status)>, CoreError> {
        self.0.all(sql::DUE.into(), owned![now.0, i64::from(limit)], |r| Ok((r.text("id")?, Status::Pending))).await
    }

    async fn next_expiry(&self) -> Result<Option<Timestamp>, CoreError> {
        Ok(self.0.one(sql::NEXT_EXPIRY, vec![], |r| r.int_opt("at")).await?.flatten().map(Timestamp))
    }

    async fn audit_for(&self, id: &str) -> Result<Vec<AuditEntry>, CoreError> {
        self.0.all(sql::AUDIT_FOR.into(), owned![id], rows::audit).await
    }

    async fn audit_after(&self, after_seq: i64, limit: u32) -> Result<Vec<AuditEntry>, CoreError> {
        self.0.all(sql::AUDIT_AFTER.into(), owned![after_seq, i64::from(limit)], rows::audit).await
    }

    async fn agents(&self) -> Result<Vec<AgentInfo>, CoreError> {
        self.0.all(sql::AGENTS.into(), owned![self.0.node()], rows::agent).await
    }

    async fn agent_tokens(&self) -> Result<Vec<(String, [u8; 32])>, CoreError> {
        self.0.all(sql::AGENT_TOKENS.into(), owned![self.0.node()], rows::token).await
    }

    async fn add_agent(&self, name: &str, token_hash: [u8; 32], at: Timestamp, reuse: bool) -> Result<(), CoreError> {
        let name = name.to_string();
        write_op!(self, |c, node| ops::add_agent(c, node, &name, &token_hash, at, reuse))
    }

    async fn set_agent_token(&self, name: &str, token_hash: [u8; 32], at: Timestamp) -> Result<bool, CoreError> {
        let name = name.to_string();
        write_op!(self, |c, node| ops::set_agent_token(c, node, &name, &token_hash, at))
    }

    async fn revoke_agent(&self, name: &str, at: Timestamp) -> Result<bool, CoreError> {
        let name = name.to_string();
        write_op!(self, |c, node| ops::revoke_agent(c, node, &name, at))
    }

    async fn unsettled_applies(&self) -> Result<Vec<Proposal>, CoreError> {
        // This node's only: another node's writes are its own to carry out and settle.
        self.0.all(sql::UNSETTLED.into(), owned![self.0.node()], rows::proposal).await
    }

    async fn pending_leases(&self) -> Result<Vec<(String, u32)>, CoreError> {
        self.0.all(sql::PENDING_LEASES.into(), owned![self.0.node()], rows::lease).await
    }

    async fn stored_bytes_since(&self, since: Timestamp) -> Result<Vec<(String, Timestamp, u64)>, CoreError> {
        self.0.all(sql::STORED_BYTES.pick(self.0.pg()).into(), owned![since.0, self.0.node()], rows::stored).await
    }

    async fn prune(&self, before: Timestamp, now: Timestamp, limit: u32) -> Result<u64, CoreError> {
        write_op!(self, |c, _node| ops::prune(c, before, now, limit))
    }

    async fn credentials(&self) -> Result<Vec<CredentialMeta>, CoreError> {
        self.0.all(sql::CREDENTIALS.into(), owned![self.0.node()], rows::credential).await
    }

    async fn add_credential(&self, meta: CredentialMeta) -> Result<(), CoreError> {
        write_op!(self, |c, node| ops::add_credential(c, node, &meta))
    }

    async fn remove_credential(&self, name: &str) -> Result<bool, CoreError> {
        let name = name.to_string();
        write_op!(self, |c, node| ops::remove_credential(c, node, &name))
    }

    async fn rules(&self) -> Result<Vec<Rule>, CoreError> {
        self.0.all(sql::RULES.into(), vec![], rows::rule).await
    }

    async fn rule(&self, id: &str) -> Result<Option<Rule>, CoreError> {
        self.0.one(sql::RULE, owned![id], rows::rule).await
    }

    async fn add_rule(&self, rule: Rule) -> Result<i64, CoreError> {
        write_op!(self, |c, node| ops::add_rule(c, node, &rule))
    }

    async fn remove_rule(
        &self,
        id: &str,
        actor: &str,
        channel: Channel,
        at: Timestamp,
    ) -> Result<Option<(Rule, i64)>, CoreError> {
        let (id, actor) = (id.to_string(), actor.to_string());
        write_op!(self, |c, node| ops::remove_rule(c, node, &id, (&actor, channel, at)))
    }

    async fn rules_after(&self, after: i64, limit: u32) -> Result<Vec<(i64, Rule)>, CoreError> {
        self.0.all(sql::RULES_AFTER.into(), owned![after, i64::from(limit)], rows::numbered_rule).await
    }

    async fn rule_decisions_since(&self, since: Timestamp) -> Result<Vec<(String, u64)>, CoreError> {
        let floor = assent_core::engine::proposal_id_floor(since);
        let counts = self.0.all(sql::RULE_DECISIONS.pick(self.0.pg()).into(), owned![floor], rows::rule_count).await?;
        Ok(counts.into_iter().flatten().collect())
    }

    async fn rule_seq(&self) -> Result<i64, CoreError> {
        Ok(self.0.one(sql::RULE_SEQ, vec![], |r| r.int("seq")).await?.unwrap_or(0))
    }

    async fn rule_log_after(&self, after_seq: i64, limit: u32) -> Result<Vec<RuleLogEntry>, CoreError> {
        self.0.all(sql::RULE_LOG_AFTER.into(), owned![after_seq, i64::from(limit)], rows::rule_log).await
    }

    async fn recent_facts(
        &self,
        limit: u32,
    ) -> Result<Vec<(String, assent_core::payloads::KindName, Facts)>, CoreError> {
        Ok(self
            .0
            .all(sql::RECENT_FACTS.into(), owned![i64::from(limit)], rows::facts)
            .await?
            .into_iter()
            .flatten()
            .collect())
    }

    async fn devices(&self) -> Result<Vec<Device>, CoreError> {
        self.0.all(sql::DEVICES.into(), owned![self.0.node()], rows::device).await
    }

    async fn add_device(&self, device: Device) -> Result<(), CoreError> {
        write_op!(self, |c, node| ops::add_device(c, node, &device))
    }

    async fn device_used(&self, name: &str, passkey: &str, at: Timestamp) -> Result<bool, CoreError> {
        let (name, passkey) = (name.to_string(), passkey.to_string());
        write_op!(self, |c, node| ops::device_used(c, node, &name, &passkey, at))
    }

    async fn set_device_push(&self, name: &str, push: Option<&str>) -> Result<bool, CoreError> {
        let (name, push) = (name.to_string(), push.map(str::to_string));
        write_op!(self, |c, node| ops::device_push(c, node, &name, push.as_deref()))
    }

    async fn revoke_device(&self, name: &str, at: Timestamp) -> Result<bool, CoreError> {
        let name = name.to_string();
        write_op!(self, |c, node| ops::revoke_device(c, node, &name, at))
    }

    async fn remote_log(
        &self,
        device: &str,
        event: &str,
        at: Timestamp,
        detail: Option<Value>,
    ) -> Result<(), CoreError> {
        let (device, event, detail) = (device.to_string(), event.to_string(), detail.map(|d| d.to_string()));
        write_op!(self, |c, node| ops::remote_log(c, node, &device, &event, at, detail.as_deref()))
    }

    async fn session_counts(
        &self,
        session_id: &str,
        agent: Option<&str>,
        node: Option<&str>,
    ) -> Result<Vec<(Status, u64)>, CoreError> {
        let read = |r: &dyn crate::conn::Cols| Ok((rows::status(&r.text("status")?)?, r.int("n")?.max(0) as u64));
        let args = owned![session_id, agent.map(str::to_string), node.map(str::to_string)];
        self.0.all(sql::SESSION_COUNTS.into(), args, read).await
    }

    async fn receipt_keys(&self, now: Timestamp) -> Result<Vec<ReceiptKey>, CoreError> {
        self.0.all(sql::RECEIPT_KEYS.into(), owned![now.0], rows::receipt_key).await
    }

    async fn publish_receipt_key(&self, key: ReceiptKey, retired_until: Timestamp) -> Result<(), CoreError> {
        write_op!(self, |c, node| ops::publish_receipt_key(c, node, &key, retired_until))
    }

    async fn remote_log_after(&self, after_seq: i64, limit: u32) -> Result<Vec<LogEntry>, CoreError> {
        self.0
            .all(sql::REMOTE_LOG_AFTER.into(), owned![self.0.node(), after_seq, i64::from(limit)], rows::remote_log)
            .await
    }

    fn take_changes(&self) -> Option<mpsc::Receiver<RemoteChange>> {
        self.0.take_changes()
    }
}

/// `select` with `q`'s filters, order and limit, and their arguments. Only the filters given are
/// in the statement, so that the planner picks their index.
fn listing(select: &str, q: &ListQuery, pg: bool) -> (String, Vec<Arg<'static>>) {
    let (mut sql, mut args) = (String::from(select), Vec::new());
    let mut and = |cond: &str, arg: Arg<'static>| {
        args.push(arg);
        sql.push_str(&cond.replace('?', &format!("${}", args.len())));
    };
    let filters = [
        (" AND status = ?", q.status.map(|s| s.as_str().to_string())),
        (" AND group_id = ?", q.group_id.clone()),
        (" AND agent = ?", q.agent.clone()),
        (" AND kind = ?", q.kind.clone()),
        (" AND supersedes = ?", q.supersedes.clone()),
        (" AND session_id = ?", q.session_id.clone()),
        (" AND node = ?", q.node.clone()),
    ];
    for (cond, value) in filters {
        if let Some(v) = value {
            and(cond, Arg::from(v));
        }
    }
    if let Some(before) = q.before {
        and(" AND seq < ?", Arg::from(before));
    }
    if let Some(text) = &q.text {
        let find = sql::FIND.pick(pg);
        let hay = "lower(id || ' ' || coalesce(title, '') || ' ' || coalesce(summary, '') || ' ' || agent || ' ' \
                   || kind || ' ' || payload)";
        and(&format!(" AND {find}({hay}, lower(?)) > 0"), Arg::from(text.clone()));
    }
    and(" ORDER BY seq DESC LIMIT ?", Arg::from(i64::from(q.limit)));
    (sql, args)
}
