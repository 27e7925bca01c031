//! Point reads on the calling thread. A read through sqlx's pool hands the statement to the
//! connection's own thread and waits for the rows to come back: two thread switches, most of
//! the ~130 µs such a read took, on the path of every decision and every wait. Reading one row
//! by its unique key takes a few microseconds of SQLite's time, so these run where they are
//! asked for, on a few read-only connections of their own.
//!
//! Only an optimization: any error (the database busy, a connection that cannot open) makes the
//! caller read through the pool as before.

use crate::lite_err as err;
use crate::rows;
use assent_core::error::StoreError;
use assent_core::proposal::Proposal;
use rusqlite::{Connection, OpenFlags, OptionalExtension};
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

/// Idle connections kept; more are opened while more readers run at once, then closed.
const KEEP: usize = 2;

pub(crate) struct Direct {
    path: PathBuf,
    idle: Mutex<Vec<Connection>>,
}

impl Direct {
    pub(crate) fn new(path: PathBuf) -> Self {
        Self { path, idle: Mutex::new(Vec::new()) }
    }

    fn open(&self) -> Result<Connection, StoreError> {
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(&self.path, flags).map_err(err)?;
        // A reader of a database in WAL mode waits for no writer; should SQLite still say busy
        // (a log being recovered), the pool's read, which may wait, is the way.
        conn.busy_timeout(Duration::ZERO).map_err(err)?;
        // A point read touches a few pages; the writer and the pool keep the larger caches.
        conn.pragma_update(None, "cache_size", -512).map_err(err)?;
        Ok(conn)
    }

    fn with<T>(&self, read: impl FnOnce(&Connection) -> Result<T, StoreError>) -> Result<T, StoreError> {
        let idle = self.idle.lock().map(|mut v| v.pop()).unwrap_or_default();
        let conn = match idle {
            Some(c) => c,
            None => self.open()?,
        };
        let out = read(&conn);
        if let Ok(mut v) = self.idle.lock()
            && v.len() < KEEP
        {
            v.push(conn);
        }
        out
    }

    /// Closes the idle connections.
    pub(crate) fn close(&self) {
        if let Ok(mut v) = self.idle.lock() {
            v.clear();
        }
    }

    /// The proposal `id`, as committed.
    pub(crate) fn proposal(&self, id: &str) -> Result<Option<Proposal>, StoreError> {
        self.with(|conn| proposal(conn, id))
    }
}

/// The proposal `id` as `conn` sees it (a point read's connection, or the writer's inside its
/// transaction).
pub(crate) fn proposal(conn: &Connection, id: &str) -> Result<Option<Proposal>, StoreError> {
    let mut st = conn.prepare_cached(rows::PROPOSAL_BY_ID).map_err(err)?;
    st.query_row([id], |row| Ok(rows::proposal(&rows::Lite(row)))).optional().map_err(err)?.transpose()
}
