//! Driver errors as the store reports them, for both databases: the bottom of the crate,
//! depending on nothing in it.

use assent_core::StoreError;
use assent_core::error::CoreError;

/// A rusqlite error as the store reports it: a full disk (its code said so, or its message) as
/// [`StoreError::Full`], anything else as what it said.
pub(crate) fn lite_err(e: rusqlite::Error) -> StoreError {
    let full = matches!(&e, rusqlite::Error::SqliteFailure(f, _) if f.extended_code & 0xff == 13);
    let message = e.to_string();
    if full || message.contains("database or disk is full") { StoreError::Full } else { StoreError::Database(message) }
}

/// A driver error, as the engine sees it: out of reach (`store_unavailable`) or not.
pub(crate) fn pg_err(e: sqlx::Error) -> StoreError {
    let unreachable = matches!(
        e,
        sqlx::Error::Io(_)
            | sqlx::Error::Tls(_)
            | sqlx::Error::PoolTimedOut
            | sqlx::Error::PoolClosed
            | sqlx::Error::WorkerCrashed
            | sqlx::Error::Protocol(_)
    ) || matches!(&e, sqlx::Error::Database(d) if d.code().is_some_and(|c| {
        // Connection exceptions, the server shutting down, too many connections.
        c.starts_with("08") || c == "57P01" || c == "57P02" || c == "57P03" || c == "53300"
    }));
    if unreachable { StoreError::Unavailable(e.to_string()) } else { StoreError::Database(e.to_string()) }
}

/// An error for the engine. Text PostgreSQL cannot hold (a NUL character) is the caller's
/// mistake, not the store's.
pub(crate) fn pg_core(e: sqlx::Error) -> CoreError {
    if let sqlx::Error::Database(d) = &e
        && d.code().is_some_and(|c| c == "22021" || c == "22P05")
    {
        return CoreError::invalid("invalid_field", "text with a NUL character cannot be stored");
    }
    CoreError::Store(pg_err(e))
}
