//! The store of one's own, on SQLite through rusqlite: migrations, the writer, the reads.
//!
//! - The database runs in WAL mode with `synchronous=FULL`, foreign keys on and a busy timeout.
//! - Every write goes to one writer over a channel: a thread of its own with its own connection,
//!   committing what queued up in one `BEGIN IMMEDIATE` transaction ([`crate::batch`]).
//! - Reads run on a few read-only connections: a proposal by id where it is asked for (a few
//!   microseconds of SQLite's time; a hand-off to another thread and back cost more than the
//!   read), anything else on tokio's blocking threads.

use crate::batch::{Batcher, Job, MAX_BATCH};
use crate::conn::{Arg, Args, Conn, Read, Text, now};
use crate::errors::lite_err;
use crate::store::{Backend, SqlStore};
use crate::{rows, sql};
use assent_core::error::{CoreError, StoreError};
use assent_core::proposal::Proposal;
use rusqlite::{Connection, OpenFlags};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// The SQLite store. Cheap to clone.
pub type SqliteStore = SqlStore<Lite>;

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../../migrations");

/// The writer's settings. A batch insert inside the write transaction keeps a statement journal
/// so that it can be undone alone: in memory (`temp_store`), not a temp file per batch. A large
/// proposal passes through the write-ahead log; once checkpointed, the log is cut back to
/// `journal_size_limit` instead of keeping a second copy of it on disk.
const SETTINGS: [(&str, &str); 5] = [
    ("journal_mode", "wal"),
    ("synchronous", "full"),
    ("foreign_keys", "on"),
    ("temp_store", "memory"),
    ("journal_size_limit", "8388608"),
];

/// How long a connection waits for a lock another holds.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// Idle read connections kept; more are opened while more readers run at once, then closed.
const KEEP: usize = 4;

/// Most reads on blocking threads at once (others wait their turn, as on a pool of this size),
/// so that a burst of requests opens neither hundreds of threads nor of connections.
const READS: usize = 4;

/// How the SQLite store reaches its file.
pub struct Lite {
    jobs: mpsc::Sender<Job<Connection>>,
    readers: Arc<Readers>,
    turns: tokio::sync::Semaphore,
}

struct Readers {
    path: PathBuf,
    idle: Mutex<Vec<Connection>>,
}

impl Readers {
    fn open(&self) -> Result<Connection, StoreError> {
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(&self.path, flags).map_err(lite_err)?;
        // Reads touch a few pages each; the writer keeps the larger cache.
        conn.pragma_update(None, "cache_size", -512).map_err(lite_err)?;
        Ok(conn)
    }

    /// Runs `read` on an idle connection (or a new one), waiting up to `busy` for a lock.
    fn with<T>(
        &self,
        busy: Duration,
        read: impl FnOnce(&mut Connection) -> Result<T, CoreError>,
    ) -> Result<T, CoreError> {
        let idle = self.idle.lock().map(|mut v| v.pop()).unwrap_or_default();
        let mut conn = match idle {
            Some(c) => c,
            None => self.open()?,
        };
        conn.busy_timeout(busy).map_err(lite_err)?;
        let out = read(&mut conn);
        if let Ok(mut v) = self.idle.lock()
            && v.len() < KEEP
        {
            v.push(conn);
        }
        out
    }
}

impl Backend for Lite {
    type Conn = Connection;

    fn node(&self) -> &str {
        ""
    }

    fn jobs(&self) -> &mpsc::Sender<Job<Connection>> {
        &self.jobs
    }

    async fn all<T: Send + 'static>(&self, sql: Text, args: Args, read: Read<T>) -> Result<Vec<T>, CoreError> {
        let _turn = self.turns.acquire().await.map_err(|_| StoreError::Closed)?;
        let readers = self.readers.clone();
        let run = move || readers.with(BUSY_TIMEOUT, |c| now(c.all(&sql, &args, read)));
        tokio::task::spawn_blocking(run).await.map_err(|e| StoreError::Database(format!("a read failed: {e}")))?
    }

    async fn get(&self, id: &str) -> Result<Option<Proposal>, CoreError> {
        // A reader of a database in WAL mode waits for no writer; should SQLite still say busy
        // (a log being recovered), or a connection not open, the read that may wait is the way.
        let here = self.readers.with(Duration::ZERO, |c| now(c.one(sql::PROPOSAL, &[Arg::from(id)], rows::proposal)));
        match here {
            Ok(p) => Ok(p),
            Err(e) => {
                tracing::debug!(error = %e, "a point read goes through a blocking thread");
                self.one(sql::PROPOSAL, vec![Arg::from(id.to_string())], rows::proposal).await
            }
        }
    }
}

/// The writer's connection, with the [`SETTINGS`], creating the database if need be.
fn writer_connection(path: &Path) -> Result<Connection, StoreError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags).map_err(lite_err)?;
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
    // A multi-row insert for each batch size and every other statement stay prepared.
    conn.set_prepared_statement_cache_capacity(128);
    Ok(conn)
}

/// The migrations applied to a database: `(version, finished, checksum)`, from the table sqlx
/// kept before this store ran its own migrations (a home made by any release opens as it was).
fn applied(conn: &Connection) -> Result<Vec<(i64, bool, Vec<u8>)>, StoreError> {
    let mut st =
        conn.prepare("SELECT version, success, checksum FROM _sqlx_migrations ORDER BY version").map_err(lite_err)?;
    let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).map_err(lite_err)?;
    rows.collect::<Result<_, _>>().map_err(lite_err)
}

fn latest() -> i64 {
    MIGRATOR.iter().map(|m| m.version).max().unwrap_or(0)
}

/// Applies the migrations this database lacks, each in a transaction with its record.
fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS _sqlx_migrations (version BIGINT PRIMARY KEY, description TEXT NOT NULL, \
         installed_on TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, success BOOLEAN NOT NULL, \
         checksum BLOB NOT NULL, execution_time BIGINT NOT NULL)",
    )
    .map_err(lite_err)?;
    let done = applied(conn)?;
    let fail = |m: String| StoreError::Database(format!("migration failed: {m}"));
    if let Some((v, ..)) = done.iter().find(|(_, ok, _)| !ok) {
        return Err(fail(format!("migration {v} was started and did not finish; restore the database from a backup")));
    }
    if let Some((v, ..)) = done.iter().find(|(v, ..)| *v > latest()) {
        return Err(fail(format!(
            "the database has schema version {v}, newer than this Assent knows ({}): update Assent",
            latest()
        )));
    }
    for m in MIGRATOR.iter() {
        if let Some((_, _, sum)) = done.iter().find(|(v, ..)| *v == m.version) {
            if sum[..] != m.checksum[..] {
                return Err(fail(format!("migration {} was changed after it was applied", m.version)));
            }
            continue;
        }
        let started = Instant::now();
        let tx = conn.transaction().map_err(lite_err)?;
        tx.execute_batch(m.sql.as_str()).map_err(|e| fail(format!("{}: {e}", m.version)))?;
        tx.execute(
            "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) \
             VALUES (?1, ?2, TRUE, ?3, ?4)",
            rusqlite::params![m.version, &*m.description, &*m.checksum, started.elapsed().as_nanos() as i64],
        )
        .map_err(lite_err)?;
        tx.commit().map_err(lite_err)?;
    }
    Ok(())
}

impl SqlStore<Lite> {
    /// Opens the database at `path`, creating and migrating it as needed, and starts the
    /// writer on a thread of its own.
    pub async fn open(path: &Path) -> Result<Self, StoreError> {
        let mut conn = writer_connection(path)?;
        migrate(&mut conn)?;
        let readers = Readers { path: path.to_path_buf(), idle: Mutex::new(Vec::new()) };
        // One read connection is open and has read from the start (its schema and the log's
        // index loaded, so it stays readable should the file move).
        let first = readers.open()?;
        first.query_row("SELECT count(*) FROM sqlite_master", [], |_| Ok(())).map_err(lite_err)?;
        readers.idle.lock().map_err(|_| StoreError::Closed)?.push(first);
        let (jobs, mut rx) = mpsc::channel(8192);
        std::thread::Builder::new()
            .name("assent-writer".into())
            .spawn(move || {
                let mut batcher = Batcher::new(String::new());
                let mut batch = Vec::with_capacity(MAX_BATCH);
                while rx.blocking_recv_many(&mut batch, MAX_BATCH) > 0 {
                    now(batcher.commit(&mut conn, &mut batch));
                }
                tracing::debug!("store writer stopped");
            })
            .map_err(|e| StoreError::Database(format!("cannot start the writer: {e}")))?;
        Ok(SqlStore(Arc::new(Lite { jobs, readers: Arc::new(readers), turns: tokio::sync::Semaphore::new(READS) })))
    }

    /// Closes the idle read connections (a read after this opens one again); the writer stops
    /// when the last clone is dropped.
    pub async fn close(&self) {
        if let Ok(mut v) = self.0.readers.idle.lock() {
            v.clear();
        }
    }
}

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
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags).map_err(|e| e.to_string())?;
    conn.busy_timeout(Duration::from_secs(5)).map_err(|e| e.to_string())?;
    let mut st = conn.prepare("PRAGMA integrity_check(20)").map_err(|e| format!("SQLite cannot read it: {e}"))?;
    let lines = st.query_map([], |r| r.get::<_, String>(0)).and_then(Iterator::collect::<Result<Vec<_>, _>>);
    let integrity = lines.map_err(|e| format!("SQLite cannot read it: {e}"))?.join("; ");
    let done = applied(&conn).unwrap_or_default();
    let schema = done.iter().filter(|(_, ok, _)| *ok).map(|(v, ..)| *v).max().unwrap_or(0);
    let dirty = done.iter().any(|(_, ok, _)| !ok);
    let size = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    let bytes = size(path) + size(Path::new(&wal));
    Ok(Health { integrity, schema, latest: latest(), dirty, bytes })
}
