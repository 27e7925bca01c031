//! The team store on PostgreSQL: several Assent servers ("nodes") share one database.
//!
//! - Every proposal records the node that received it; only that node applies it, and only it
//!   reconciles its `approved` and `applying` rows. A status change is a compare-and-set
//!   (`UPDATE ... WHERE status = from`), so no two nodes ever both move a proposal on.
//! - Agents, their tokens and pending limits, and credentials' metadata are per node; rules are
//!   the team's. The audit, agent and rule logs are append-only (triggers, and no UPDATE,
//!   DELETE or TRUNCATE for `PUBLIC`).
//! - Every audit row is announced with `NOTIFY` when it commits ([`follow`]), so a decision made
//!   on one node wakes the waiting agent on another; after a lost connection the node reads
//!   again what its waiters wait on.
//! - A node holds a session advisory lock on its name while it runs: a second server with the
//!   same name refuses to start. So only one task files a node's proposals ([`ingest`]), in
//!   batches, one commit each, keeping each agent's pending count itself.
//! - A database out of reach answers `store_unavailable` (never an acknowledgement for
//!   something not stored), and the pool reconnects on its own.

mod copy;
mod follow;

pub use copy::{CopyReport, copy_from_sqlite};

use crate::batch::{Batcher, Job, MAX_BATCH, Work};
use crate::conn::{Args, Conn, Read, Text};
use crate::store::{Backend, SqlStore};
use assent_core::error::{CoreError, StoreError};
use assent_core::store::RemoteChange;
use sqlx::ConnectOptions;
use sqlx::postgres::{PgConnectOptions, PgConnection, PgPool, PgPoolOptions};
use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../../migrations/postgres");

pub(crate) use crate::errors::{pg_core as core, pg_err as db_err};

/// Where the team database is, and who this server is in the team.
#[derive(Debug, Clone)]
pub struct TeamOptions {
    /// `postgres://USER@HOST:PORT/DB[?sslmode=verify-full&sslrootcert=...]`, without a password.
    pub url: String,
    /// This server's name in the team.
    pub node: String,
    /// Who decides on this node.
    pub person: String,
    /// The password, from the system keychain (otherwise `.pgpass`, or none).
    pub password: Option<String>,
}

/// The URL as it may be shown: never with a password.
pub fn display_url(url: &str) -> String {
    match PgConnectOptions::from_str(url) {
        Ok(o) => {
            let user = o.get_username();
            let db = o.get_database().unwrap_or_default();
            format!("postgres://{user}@{}:{}/{db}", o.get_host(), o.get_port())
        }
        Err(_) => "(an unreadable PostgreSQL URL)".into(),
    }
}

/// Reads and checks a team store URL: PostgreSQL, and no password in it (the password comes
/// from the keychain or `.pgpass`, never from a flag or a file Assent reads).
pub fn parse_url(url: &str) -> Result<PgConnectOptions, String> {
    if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
        return Err("a team store is a PostgreSQL URL: postgres://USER@HOST:PORT/DATABASE".into());
    }
    let after_scheme = url.split_once("://").map(|x| x.1).unwrap_or_default();
    let authority = after_scheme.split(['/', '?']).next().unwrap_or_default();
    if authority.rsplit_once('@').is_some_and(|(userinfo, _)| userinfo.contains(':')) {
        return Err(
            "the store URL holds a password: leave it out and put it in the keychain (`assent store password`) \
             or in ~/.pgpass"
                .into(),
        );
    }
    if url.contains("password=") {
        return Err(
            "the store URL holds a password parameter: use the keychain (`assent store password`) or ~/.pgpass".into(),
        );
    }
    PgConnectOptions::from_str(url).map_err(|e| format!("cannot read the store URL {}: {e}", display_url(url)))
}

fn connect_options(opts: &TeamOptions) -> Result<PgConnectOptions, StoreError> {
    let mut o = parse_url(&opts.url).map_err(StoreError::Database)?;
    if let Some(p) = &opts.password {
        o = o.password(p);
    }
    Ok(o.application_name(&format!("assent {}", opts.node)).disable_statement_logging())
}

/// The team store. Cheap to clone.
pub type PgStore = SqlStore<Pg>;

/// How the team store reaches its database.
pub struct Pg {
    pool: PgPool,
    node: String,
    ingest: mpsc::Sender<Job<PgConnection>>,
    changes: Mutex<Option<mpsc::Receiver<RemoteChange>>>,
    _node_lock: follow::NodeLock,
}

impl Backend for Pg {
    type Conn = PgConnection;

    fn node(&self) -> &str {
        &self.node
    }

    fn jobs(&self) -> &mpsc::Sender<Job<PgConnection>> {
        &self.ingest
    }

    async fn all<T: Send + 'static>(&self, sql: Text, args: Args, read: Read<T>) -> Result<Vec<T>, CoreError> {
        let mut conn = self.pool.acquire().await.map_err(core)?;
        conn.all(&sql, &args, read).await
    }

    /// A transaction of its own: PostgreSQL takes concurrent writers itself, and a status change
    /// is a compare-and-set, so any node may decide while another applies.
    async fn write<T: Send + 'static>(&self, w: Work<PgConnection, T>) -> Result<T, CoreError> {
        let mut tx = self.pool.begin().await.map_err(core)?;
        let out = w(&mut tx, &self.node).await?;
        tx.commit().await.map_err(core)?;
        Ok(out)
    }

    fn take_changes(&self) -> Option<mpsc::Receiver<RemoteChange>> {
        self.changes.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}

/// New proposals, written by one task per node in batches ([`crate::batch`]). Why a task, when
/// PostgreSQL takes concurrent writers itself: a commit that carries NOTIFY (the audit
/// trigger's) holds a database-wide lock until it is durable, so a transaction per proposal
/// commits one at a time and never shares a flush to disk; a batch is one commit. And only this
/// node files its agents' proposals (the node lock sees to that), so each agent's pending count
/// is bounded here, as on SQLite, instead of a lock and a COUNT for every insert.
fn ingest(pool: PgPool, node: String) -> mpsc::Sender<Job<PgConnection>> {
    let (tx, mut rx) = mpsc::channel(MAX_BATCH * 4);
    tokio::spawn(async move {
        let mut batcher = Batcher::new(node);
        let mut batch = Vec::with_capacity(MAX_BATCH);
        while rx.recv_many(&mut batch, MAX_BATCH).await > 0 {
            match pool.acquire().await {
                Ok(mut conn) => {
                    if !batcher.commit(&mut *conn, &mut batch).await {
                        // Possibly inside a transaction still: not for another caller.
                        conn.close_on_drop();
                    }
                }
                Err(e) => batcher.refuse(&mut batch, &db_err(e)),
            }
        }
        tracing::debug!("team store ingest stopped");
    });
    tx
}

/// What `assent store migrate` did.
#[derive(Debug, Clone)]
pub struct Migrated {
    /// The schema version before.
    pub from: i64,
    /// The schema version now.
    pub to: i64,
}

/// The newest schema version this build knows.
pub fn latest_schema() -> i64 {
    MIGRATOR.iter().map(|m| m.version).max().unwrap_or(0)
}

async fn pool(opts: &TeamOptions, size: u32) -> Result<PgPool, StoreError> {
    PgPoolOptions::new()
        .max_connections(size)
        .min_connections(1)
        // A request waits this long for a connection before it is told the store is out of reach.
        .acquire_timeout(Duration::from_secs(5))
        .test_before_acquire(true)
        .connect_with(connect_options(opts)?)
        .await
        .map_err(|e| StoreError::Unavailable(format!("cannot connect to {}: {e}", display_url(&opts.url))))
}

async fn schema_version(pool: &PgPool) -> Result<(i64, bool), StoreError> {
    let exists: bool = sqlx::query_scalar("SELECT to_regclass('_sqlx_migrations') IS NOT NULL")
        .fetch_one(pool)
        .await
        .map_err(db_err)?;
    if !exists {
        return Ok((0, false));
    }
    let rows: Vec<(i64, bool)> =
        sqlx::query_as("SELECT version, success FROM _sqlx_migrations").fetch_all(pool).await.map_err(db_err)?;
    let v = rows.iter().filter(|(_, ok)| *ok).map(|(v, _)| *v).max().unwrap_or(0);
    Ok((v, rows.iter().any(|(_, ok)| !ok)))
}

/// What `assent doctor` reports of a team store.
#[derive(Debug, Clone)]
pub struct TeamHealth {
    /// The newest schema version applied (0: none).
    pub schema: i64,
    /// The newest this build knows.
    pub latest: i64,
    /// Whether a migration started and did not finish.
    pub dirty: bool,
    /// The nodes that have used it.
    pub nodes: Vec<String>,
}

/// Reads a team store's health without changing it.
pub async fn inspect(opts: &TeamOptions) -> Result<TeamHealth, StoreError> {
    let pool = pool(opts, 1).await?;
    let (schema, dirty) = schema_version(&pool).await?;
    let nodes: Vec<String> = if schema > 0 {
        sqlx::query_scalar("SELECT name FROM nodes ORDER BY name").fetch_all(&pool).await.map_err(db_err)?
    } else {
        Vec::new()
    };
    pool.close().await;
    Ok(TeamHealth { schema, latest: latest_schema(), dirty, nodes })
}

/// Brings the schema up to date (`assent store migrate`).
pub async fn migrate(opts: &TeamOptions) -> Result<Migrated, StoreError> {
    let pool = pool(opts, 1).await?;
    let migrated = upgrade(&pool).await;
    pool.close().await;
    migrated
}

/// Applies the migrations the database lacks, refusing one newer than this build.
async fn upgrade(pool: &PgPool) -> Result<Migrated, StoreError> {
    let (from, _) = schema_version(pool).await?;
    if from > latest_schema() {
        return Err(StoreError::Database(format!(
            "the team database has schema version {from}, newer than this Assent knows ({}): update Assent on \
             this machine",
            latest_schema()
        )));
    }
    MIGRATOR.run(pool).await.map_err(|e| StoreError::Database(format!("migration failed: {e}")))?;
    Ok(Migrated { from, to: schema_version(pool).await?.0 })
}

impl SqlStore<Pg> {
    /// Connects, brings the schema up to date, takes this node's name (refusing if another
    /// running server has it) and starts following the other nodes' changes.
    pub async fn open(opts: &TeamOptions) -> Result<Self, StoreError> {
        assent_core::names::validate_agent_name(&opts.node).map_err(|_| {
            StoreError::Database(format!("`{}` is not a usable node name (letters, digits, . _ -)", opts.node))
        })?;
        let pool = pool(opts, 16).await?;
        upgrade(&pool).await?;
        let lock = follow::NodeLock::take(connect_options(opts)?, &opts.node).await?;
        let now = assent_core::time::Timestamp::now().0;
        sqlx::query(
            "INSERT INTO nodes (name, first_seen, last_start, person) VALUES ($1, $2, $2, $3) \
             ON CONFLICT (name) DO UPDATE SET last_start = $2, person = $3",
        )
        .bind(&opts.node)
        .bind(now)
        .bind(&opts.person)
        .execute(&pool)
        .await
        .map_err(db_err)?;
        let rx = follow::start(pool.clone(), opts.node.clone()).await?;
        Ok(SqlStore(Arc::new(Pg {
            ingest: ingest(pool.clone(), opts.node.clone()),
            pool,
            node: opts.node.clone(),
            changes: Mutex::new(Some(rx)),
            _node_lock: lock,
        })))
    }

    /// This server's node name.
    pub fn node(&self) -> &str {
        &self.0.node
    }

    /// The connection pool (for `assent store copy` and the benchmarks).
    pub fn pool(&self) -> &PgPool {
        &self.0.pool
    }

    /// Closes the pool.
    pub async fn close(&self) {
        self.0.pool.close().await;
    }
}
