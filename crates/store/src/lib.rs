//! # assent-store
//!
//! Assent's storage: SQLite for one person (the default), and PostgreSQL for a team ([`pg`]).
//! This crate is the only place with SQL.
//!
//! - [`SqliteStore::open`] opens (or creates) the database in WAL mode with
//!   `synchronous=FULL`, foreign keys on and a busy timeout, and applies `migrations/` (sqlx).
//! - Every write goes to one writer ([`writer`]) over a channel: a thread of its own with its
//!   own connection (rusqlite, on the same bundled SQLite), so that a statement runs without a
//!   hand-off to another thread. The writer takes all the writes that queued up while it was
//!   busy and commits them in one `BEGIN IMMEDIATE` transaction (group commit): one fsync for
//!   many proposals, no `SQLITE_BUSY` on upgrade, and each write isolated in a savepoint so one
//!   failure does not undo its neighbours. A caller is answered only after the commit, so an
//!   acknowledged proposal is durable.
//! - Reads use a small sqlx pool of separate connections ([`rows`] decodes them); a proposal by id
//!   is read on the calling thread instead ([`direct`]), without the pool's thread switches.
//!
//! ## Where each statement lives, and what proves it
//!
//! | what | SQLite | PostgreSQL |
//! |---|---|---|
//! | the schema | `migrations/*.sql` | `migrations/postgres/*.sql` |
//! | reads | this file (the sqlx pool), `direct.rs` (a proposal by id) | `pg/reads.rs` |
//! | inserts | `writer/mod.rs`, `writer/plain.rs` (many rows, one statement) | `pg/ingest.rs` (one task per node) |
//! | status changes, agents, credentials, rules | `writer/mod.rs`, `writer/admin.rs` | `pg/write.rs` |
//! | pruning | `writer/prune.rs` | `pg/write.rs` |
//! | copying a home into a team database | | `pg/copy.rs` |
//! | what other nodes changed | | `pg/follow.rs` |
//! | row decoding | `rows.rs`, for both drivers (through `Cols`) | |
//! | driver errors | `errors.rs`, for both drivers | |
//!
//! Most statements are still written once per dialect; they are to be written once where the
//! dialects agree. The domain's rules are not here but in `assent-core`: what counts as a plain
//! insert (`NewRecord::is_plain`), the withdrawal a revision makes (`Transition::superseded`,
//! through the status machine), and how an all-or-nothing refusal is worded
//! (`store::conflict_error`).
//!
//! Proven in-process on both databases: `tests/contract.rs` (every method of the contract, the
//! same assertions on a SQLite file and a real PostgreSQL) and `tests/schema.rs` (the two
//! migration sets define the same tables and columns, but for the differences listed there);
//! `tests/queries.rs` for SQLite's own concerns (paging, append-only audit, half-done writes).
//! Through the binary, `tests/blackbox/upgrade.rs` opens a home and a team database made by the
//! last release and holds them to what that release answered.

mod direct;
mod errors;
mod multi;
mod pending;
pub mod pg;
mod rows;
mod writer;

use assent_core::credentials::CredentialMeta;
use assent_core::error::{CoreError, StoreError};
use assent_core::proposal::{AgentInfo, AuditEntry, Channel, Proposal};
use assent_core::status::Status;
use assent_core::store::{Inserted, ListQuery, NewRecord, Store, Transition, Transitioned};
use assent_core::time::Timestamp;
use async_trait::async_trait;
use sqlx::sqlite::{SqliteConnectOptions, SqlitePool, SqlitePoolOptions};
use sqlx::{ConnectOptions, Row};
use std::path::Path;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use writer::Op;

pub(crate) use errors::{db_err, lite_err};

/// What adding an agent does, given the state of its name (`None`: unknown; `Some(None)`:
/// active; `Some(Some(at))`: revoked at `at`): the same rule on either store.
pub(crate) enum AgentAdd {
    /// A new row.
    Insert,
    /// The revoked name gets the new token (the agent log says `reused`).
    Reuse,
}

pub(crate) fn agent_add(name: &str, state: Option<Option<i64>>, reuse: bool) -> Result<AgentAdd, CoreError> {
    match state {
        None => Ok(AgentAdd::Insert),
        Some(None) => Err(CoreError::Conflict(format!("an agent named `{name}` already exists; revoke it first"))),
        Some(Some(_)) if !reuse => Err(CoreError::Conflict(format!(
            "agent `{name}` was revoked, and its proposals stay under that name: pick another name, or reuse it \
             (`assent agent add {name} --reuse`, or \"reuse\": true) to give it a new token"
        ))),
        Some(Some(_)) => Ok(AgentAdd::Reuse),
    }
}

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../../migrations");

/// What `assent doctor` reports of a database.
#[derive(Debug, Clone)]
pub struct Health {
    /// `ok`, or what SQLite's integrity check found (its first lines).
    pub integrity: String,
    /// The newest schema version applied to it (0: none).
    pub schema: i64,
    /// The newest schema version this build knows.
    pub latest: i64,
    /// Whether a migration was started and did not finish.
    pub dirty: bool,
    /// Bytes on disk: the database and its write-ahead log.
    pub bytes: u64,
}

/// Reads a database's health without changing it (read-only; safe while a server runs on it).
pub async fn inspect(path: &Path) -> Result<Health, String> {
    let opts = SqliteConnectOptions::new()
        .filename(path)
        .read_only(true)
        .busy_timeout(Duration::from_secs(5))
        .disable_statement_logging();
    let mut conn = opts.connect().await.map_err(|e| e.to_string())?;
    let lines: Vec<String> = sqlx::query_scalar("PRAGMA integrity_check(20)")
        .fetch_all(&mut conn)
        .await
        .map_err(|e| format!("SQLite cannot read it: {e}"))?;
    let integrity = lines.join("; ");
    let applied: Vec<(i64, bool)> = sqlx::query_as("SELECT version, success FROM _sqlx_migrations ORDER BY version")
        .fetch_all(&mut conn)
        .await
        .unwrap_or_default();
    let schema = applied.iter().filter(|(_, ok)| *ok).map(|(v, _)| *v).max().unwrap_or(0);
    let dirty = applied.iter().any(|(_, ok)| !ok);
    let latest = MIGRATOR.iter().map(|m| m.version).max().unwrap_or(0);
    let size = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    let bytes = size(path) + size(Path::new(&wal));
    Ok(Health { integrity, schema, latest, dirty, bytes })
}

/// The SQLite store. Cheap to clone.
#[derive(Clone)]
pub struct SqliteStore {
    tx: mpsc::Sender<Op>,
    read: SqlitePool,
    direct: std::sync::Arc<direct::Direct>,
}

/// Every connection's settings, the writer's (rusqlite) and the migrations' and reads' (sqlx).
/// A batch insert inside the write transaction keeps a statement journal so that it can be
/// undone alone; in memory (`temp_store`), not a temp file created, written and unlinked per
/// batch. A large proposal passes through the write-ahead log; once checkpointed, the log is cut
/// back to `journal_size_limit` instead of keeping a second copy of it on disk.
const SETTINGS: [(&str, &str); 5] = [
    ("journal_mode", "wal"),
    ("synchronous", "full"),
    ("foreign_keys", "on"),
    ("temp_store", "memory"),
    ("journal_size_limit", "8388608"),
];

/// How long a connection waits for a lock another holds.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

fn options(path: &Path) -> SqliteConnectOptions {
    let opts = SqliteConnectOptions::new()
        .filename(path)
        .create_if_missing(true)
        .busy_timeout(BUSY_TIMEOUT)
        .disable_statement_logging();
    SETTINGS.iter().fold(opts, |o, (name, value)| o.pragma(*name, *value))
}

/// The writer's connection, with the [`SETTINGS`] (the database exists and is migrated).
fn writer_connection(path: &Path) -> Result<rusqlite::Connection, StoreError> {
    use rusqlite::OpenFlags;
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = rusqlite::Connection::open_with_flags(path, flags).map_err(lite_err)?;
    conn.busy_timeout(BUSY_TIMEOUT).map_err(lite_err)?;
    for (name, value) in SETTINGS {
        conn.pragma_update(None, name, value).map_err(lite_err)?;
    }
    // Durable before acknowledged rests on these: read them back rather than trust the asking.
    let mode: String = conn.pragma_query_value(None, "journal_mode", |r| r.get(0)).map_err(lite_err)?;
    let sync: i64 = conn.pragma_query_value(None, "synchronous", |r| r.get(0)).map_err(lite_err)?;
    let keys: i64 = conn.pragma_query_value(None, "foreign_keys", |r| r.get(0)).map_err(lite_err)?;
    if (mode.as_str(), sync, keys) != ("wal", 2, 1) {
        return Err(StoreError::Database(format!(
            "the writer's connection runs journal_mode={mode}, synchronous={sync}, foreign_keys={keys} \
             instead of wal, 2 (full), 1"
        )));
    }
    // A multi-row insert for each batch size (see `multi`) and every other statement stay prepared.
    conn.set_prepared_statement_cache_capacity(128);
    Ok(conn)
}

impl SqliteStore {
    /// Opens the database at `path`, creating and migrating it as needed, and starts the
    /// writer on a thread of its own.
    pub async fn open(path: &Path) -> Result<Self, StoreError> {
        let opts = options(path);
        let mut conn = opts.connect().await.map_err(db_err)?;
        MIGRATOR.run(&mut conn).await.map_err(|e| StoreError::Database(format!("migration failed: {e}")))?;
        let read = SqlitePoolOptions::new()
            .max_connections(4)
            .min_connections(1)
            .connect_with(opts.clone().read_only(true))
            .await
            .map_err(db_err)?;
        drop(sqlx::Connection::close(conn).await);
        let conn = writer_connection(path)?;
        let (tx, rx) = mpsc::channel(8192);
        std::thread::Builder::new()
            .name("assent-writer".into())
            .spawn(move || writer::run(conn, rx))
            .map_err(|e| StoreError::Database(format!("cannot start the writer: {e}")))?;
        Ok(Self { tx, read, direct: std::sync::Arc::new(direct::Direct::new(path.to_path_buf())) })
    }

    async fn send<T>(&self, make: impl FnOnce(oneshot::Sender<Result<T, CoreError>>) -> Op) -> Result<T, CoreError> {
        let (reply, rx) = oneshot::channel();
        self.tx.send(make(reply)).await.map_err(|_| StoreError::Closed)?;
        rx.await.map_err(|_| StoreError::Closed)?
    }

    /// Closes the read pool and the point reads' idle connections (a read after this opens
    /// one again); the writer stops when the last clone is dropped.
    pub async fn close(&self) {
        self.read.close().await;
        self.direct.close();
    }
}

#[async_trait]
impl Store for SqliteStore {
    async fn insert(&self, rec: NewRecord) -> Result<Inserted, CoreError> {
        self.send(|reply| Op::Insert(Box::new(rec), reply)).await
    }

    async fn transition(&self, ts: Vec<Transition>, atomic: bool) -> Result<Vec<Transitioned>, CoreError> {
        self.send(|reply| Op::Transition(ts, atomic, reply)).await
    }

    async fn get(&self, id: &str) -> Result<Option<Proposal>, CoreError> {
        match self.direct.proposal(id) {
            Ok(p) => return Ok(p),
            Err(e) => tracing::debug!(error = %e, "a point read goes through the pool"),
        }
        let row = sqlx::query(rows::PROPOSAL_BY_ID).bind(id).fetch_optional(&self.read).await.map_err(db_err)?;
        Ok(row.map(|r| rows::proposal(&r)).transpose()?)
    }

    async fn count_pending(&self) -> Result<u64, CoreError> {
        // Counted on the (status, seq) index alone.
        let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM proposals WHERE status = 'pending'")
            .fetch_one(&self.read)
            .await
            .map_err(db_err)?;
        Ok(n.max(0) as u64)
    }

    async fn list(&self, q: &ListQuery) -> Result<Vec<(i64, Proposal)>, CoreError> {
        if q.node.is_some() {
            // No proposal on a store of one's own came through a team node.
            return Ok(Vec::new());
        }
        let rows = sqlx::query(concat!(
            "SELECT ",
            rows::proposal_cols!(),
            " FROM proposals WHERE (?1 IS NULL OR status = ?1) AND (?2 IS NULL OR group_id = ?2)",
            " AND (?3 IS NULL OR agent = ?3) AND (?4 IS NULL OR kind = ?4) AND (?5 IS NULL OR seq < ?5)",
            " AND (?7 IS NULL OR instr(lower(id || ' ' || coalesce(title, '') || ' ' || coalesce(summary, '') || ' ' || agent",
            " || ' ' || kind || ' ' || payload), lower(?7)) > 0)",
            " AND (?8 IS NULL OR supersedes = ?8)",
            " ORDER BY seq DESC LIMIT ?6"
        ))
        .bind(q.status.map(Status::as_str))
        .bind(q.group_id.as_deref())
        .bind(q.agent.as_deref())
        .bind(q.kind.as_deref())
        .bind(q.before)
        .bind(i64::from(q.limit))
        .bind(q.text.as_deref())
        .bind(q.supersedes.as_deref())
        .fetch_all(&self.read)
        .await
        .map_err(db_err)?;
        rows.iter().map(|r| Ok((r.try_get::<i64, _>("seq").map_err(db_err)?, rows::proposal(r)?))).collect()
    }

    async fn group(&self, agent: Option<&str>, group_id: &str) -> Result<Vec<Proposal>, CoreError> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            rows::proposal_cols!(),
            " FROM proposals WHERE group_id = ?1 AND (?2 IS NULL OR agent = ?2) ORDER BY seq"
        ))
        .bind(group_id)
        .bind(agent)
        .fetch_all(&self.read)
        .await
        .map_err(db_err)?;
        Ok(rows.iter().map(rows::proposal).collect::<Result<_, _>>()?)
    }

    async fn due_for_expiry(&self, now: Timestamp, limit: u32) -> Result<Vec<(String, Status)>, CoreError> {
        let rows = sqlx::query(
            "SELECT id FROM proposals WHERE status = 'pending' AND expires_at <= ? ORDER BY expires_at LIMIT ?",
        )
        .bind(now.0)
        .bind(i64::from(limit))
        .fetch_all(&self.read)
        .await
        .map_err(db_err)?;
        rows.iter().map(|r| Ok((r.try_get::<String, _>(0).map_err(db_err)?, Status::Pending))).collect()
    }

    async fn next_expiry(&self) -> Result<Option<Timestamp>, CoreError> {
        let v: Option<i64> = sqlx::query_scalar("SELECT MIN(expires_at) FROM proposals WHERE status = 'pending'")
            .fetch_one(&self.read)
            .await
            .map_err(db_err)?;
        Ok(v.map(Timestamp))
    }

    async fn audit_for(&self, id: &str) -> Result<Vec<AuditEntry>, CoreError> {
        let rows =
            sqlx::query(concat!("SELECT ", rows::audit_cols!(), " FROM audit WHERE proposal_id = ? ORDER BY seq"))
                .bind(id)
                .fetch_all(&self.read)
                .await
                .map_err(db_err)?;
        Ok(rows.iter().map(rows::audit).collect::<Result<_, _>>()?)
    }

    async fn audit_after(&self, after_seq: i64, limit: u32) -> Result<Vec<AuditEntry>, CoreError> {
        let rows =
            sqlx::query(concat!("SELECT ", rows::audit_cols!(), " FROM audit WHERE seq > ? ORDER BY seq LIMIT ?"))
                .bind(after_seq)
                .bind(i64::from(limit))
                .fetch_all(&self.read)
                .await
                .map_err(db_err)?;
        Ok(rows.iter().map(rows::audit).collect::<Result<_, _>>()?)
    }

    async fn agents(&self) -> Result<Vec<AgentInfo>, CoreError> {
        let rows = sqlx::query("SELECT name, created_at, revoked_at FROM agents ORDER BY name")
            .fetch_all(&self.read)
            .await
            .map_err(db_err)?;
        rows.iter()
            .map(|r| {
                Ok(AgentInfo {
                    name: r.try_get("name").map_err(db_err)?,
                    created_at: Timestamp(r.try_get("created_at").map_err(db_err)?),
                    revoked_at: r.try_get::<Option<i64>, _>("revoked_at").map_err(db_err)?.map(Timestamp),
                })
            })
            .collect()
    }

    async fn agent_tokens(&self) -> Result<Vec<(String, [u8; 32])>, CoreError> {
        let rows = sqlx::query("SELECT name, token_hash FROM agents WHERE revoked_at IS NULL")
            .fetch_all(&self.read)
            .await
            .map_err(db_err)?;
        rows.iter()
            .map(|r| {
                let name: String = r.try_get(0).map_err(db_err)?;
                let h: Vec<u8> = r.try_get(1).map_err(db_err)?;
                let h: [u8; 32] =
                    h.try_into().map_err(|_| StoreError::Corrupt(format!("token hash of agent {name}")))?;
                Ok((name, h))
            })
            .collect()
    }

    async fn add_agent(&self, name: &str, token_hash: [u8; 32], at: Timestamp, reuse: bool) -> Result<(), CoreError> {
        let name = name.to_string();
        self.send(|reply| Op::AddAgent { name, token_hash, at, reuse, reply }).await
    }

    async fn set_agent_token(&self, name: &str, token_hash: [u8; 32], at: Timestamp) -> Result<bool, CoreError> {
        let name = name.to_string();
        self.send(|reply| Op::SetAgentToken { name, token_hash, at, reply }).await
    }

    async fn revoke_agent(&self, name: &str, at: Timestamp) -> Result<bool, CoreError> {
        let name = name.to_string();
        self.send(|reply| Op::RevokeAgent { name, at, reply }).await
    }

    async fn unsettled_applies(&self) -> Result<Vec<Proposal>, CoreError> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            rows::proposal_cols!(),
            " FROM proposals WHERE status IN ('approved', 'applying') AND class = 'applied' ORDER BY seq"
        ))
        .fetch_all(&self.read)
        .await
        .map_err(db_err)?;
        Ok(rows.iter().map(rows::proposal).collect::<Result<_, _>>()?)
    }

    async fn stored_bytes_since(&self, since: Timestamp) -> Result<Vec<(String, Timestamp, u64)>, CoreError> {
        // Summed per agent and minute by a trigger (migration 0008): a few rows per agent and
        // minute of the last day, however many proposals that day held.
        let rows = sqlx::query("SELECT agent, last_at, bytes FROM usage_minutes WHERE last_at >= ? ORDER BY last_at")
            .bind(since.0)
            .fetch_all(&self.read)
            .await
            .map_err(db_err)?;
        rows.iter()
            .map(|r| {
                let agent: String = r.try_get("agent").map_err(db_err)?;
                let at: i64 = r.try_get("last_at").map_err(db_err)?;
                let bytes: i64 = r.try_get("bytes").map_err(db_err)?;
                Ok((agent, Timestamp(at), bytes.max(0) as u64))
            })
            .collect::<Result<_, StoreError>>()
            .map_err(CoreError::from)
    }

    async fn prune(&self, before: Timestamp, now: Timestamp, limit: u32) -> Result<u64, CoreError> {
        self.send(|reply| Op::Prune { before, now, limit, reply }).await
    }

    async fn credentials(&self) -> Result<Vec<CredentialMeta>, CoreError> {
        let rows = sqlx::query("SELECT name, scheme, origins, created_at FROM credentials ORDER BY name")
            .fetch_all(&self.read)
            .await
            .map_err(db_err)?;
        Ok(rows.iter().map(rows::credential).collect::<Result<_, _>>()?)
    }

    async fn add_credential(&self, meta: CredentialMeta) -> Result<(), CoreError> {
        self.send(|reply| Op::AddCredential { meta, reply }).await
    }

    async fn remove_credential(&self, name: &str) -> Result<bool, CoreError> {
        let name = name.to_string();
        self.send(|reply| Op::RemoveCredential { name, reply }).await
    }

    async fn rules(&self) -> Result<Vec<assent_core::rules::Rule>, CoreError> {
        let rows = sqlx::query(concat!("SELECT ", rows::rule_cols!(), " FROM rules ORDER BY seq"))
            .fetch_all(&self.read)
            .await
            .map_err(db_err)?;
        Ok(rows.iter().map(rows::rule).collect::<Result<_, _>>()?)
    }

    async fn rule(&self, id: &str) -> Result<Option<assent_core::rules::Rule>, CoreError> {
        let row = sqlx::query(concat!("SELECT ", rows::rule_cols!(), " FROM rules WHERE id = ?"))
            .bind(id)
            .fetch_optional(&self.read)
            .await
            .map_err(db_err)?;
        Ok(row.map(|r| rows::rule(&r)).transpose()?)
    }

    async fn add_rule(&self, rule: assent_core::rules::Rule) -> Result<i64, CoreError> {
        self.send(|reply| Op::AddRule { rule: Box::new(rule), reply }).await
    }

    async fn remove_rule(
        &self,
        id: &str,
        actor: &str,
        channel: Channel,
        at: Timestamp,
    ) -> Result<Option<(assent_core::rules::Rule, i64)>, CoreError> {
        let (id, actor) = (id.to_string(), actor.to_string());
        self.send(|reply| Op::RemoveRule { id, actor, channel, at, reply }).await
    }

    async fn rules_after(&self, after: i64, limit: u32) -> Result<Vec<(i64, assent_core::rules::Rule)>, CoreError> {
        let sql = concat!("SELECT seq, ", rows::rule_cols!(), " FROM rules WHERE seq > ? ORDER BY seq LIMIT ?");
        let rows = sqlx::query(sql).bind(after).bind(i64::from(limit)).fetch_all(&self.read).await.map_err(db_err)?;
        Ok(rows.iter().map(|r| Ok((rows::Cols::int(r, "seq")?, rows::rule(r)?))).collect::<Result<_, StoreError>>()?)
    }

    async fn rule_decisions_since(&self, since: Timestamp) -> Result<Vec<(String, u64)>, CoreError> {
        let sql = "SELECT json_extract(decision, '$.rule.id') AS rule, COUNT(*) AS n FROM proposals \
                   WHERE id >= ? AND json_extract(decision, '$.by') = 'rule' GROUP BY rule";
        let rows: Vec<(Option<String>, i64)> = sqlx::query_as(sql)
            .bind(assent_core::engine::proposal_id_floor(since))
            .fetch_all(&self.read)
            .await
            .map_err(db_err)?;
        Ok(rows.into_iter().filter_map(|(r, n)| Some((r?, n.max(0) as u64))).collect())
    }

    async fn rule_seq(&self) -> Result<i64, CoreError> {
        let (seq,): (i64,) =
            sqlx::query_as("SELECT COALESCE(MAX(seq), 0) FROM rule_log").fetch_one(&self.read).await.map_err(db_err)?;
        Ok(seq)
    }

    async fn rule_log_after(
        &self,
        after_seq: i64,
        limit: u32,
    ) -> Result<Vec<assent_core::rules::RuleLogEntry>, CoreError> {
        let rows = sqlx::query(
            "SELECT seq, rule_id, event, actor, channel, at, rule FROM rule_log WHERE seq > ? ORDER BY seq LIMIT ?",
        )
        .bind(after_seq)
        .bind(i64::from(limit))
        .fetch_all(&self.read)
        .await
        .map_err(db_err)?;
        Ok(rows.iter().map(rows::rule_log).collect::<Result<_, _>>()?)
    }

    async fn recent_facts(&self, limit: u32) -> Result<Vec<(String, String, assent_core::rules::Facts)>, CoreError> {
        let rows =
            sqlx::query("SELECT agent, kind, facts FROM proposals WHERE facts IS NOT NULL ORDER BY seq DESC LIMIT ?")
                .bind(i64::from(limit))
                .fetch_all(&self.read)
                .await
                .map_err(db_err)?;
        let mut out = Vec::with_capacity(rows.len());
        for r in &rows {
            let facts: String = r.try_get(2).map_err(db_err)?;
            // A row this version cannot read is left out of a count, not an error.
            if let Ok(f) = serde_json::from_str(&facts) {
                out.push((r.try_get(0).map_err(db_err)?, r.try_get(1).map_err(db_err)?, f));
            }
        }
        Ok(out)
    }
}
