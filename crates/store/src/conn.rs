//! One way to run a statement on either database: [`Conn`], over rusqlite's connection (SQLite)
//! and sqlx's (PostgreSQL), its arguments as [`Arg`]s, each row read through [`Cols`]. The
//! statements themselves are in [`crate::sql`], written once with `$n` placeholders: PostgreSQL
//! numbers its parameters so, and SQLite reads them as `?n`.

use crate::errors::{lite_err, pg_core, pg_err};
use assent_core::error::{CoreError, StoreError};
use sqlx::Row;
use std::borrow::Cow;
use std::future::Future;

/// A statement's argument, for either database.
#[derive(Debug, Clone)]
pub(crate) enum Arg<'a> {
    Text(Option<Cow<'a, str>>),
    Int(Option<i64>),
    Bytes(Cow<'a, [u8]>),
    /// A yes/no (a boolean on PostgreSQL, 0 or 1 on SQLite).
    Flag(bool),
}

impl Arg<'_> {
    /// The same argument, owning what it borrowed (for a read on another thread).
    pub(crate) fn owned(self) -> Arg<'static> {
        match self {
            Arg::Text(s) => Arg::Text(s.map(|s| Cow::Owned(s.into_owned()))),
            Arg::Int(n) => Arg::Int(n),
            Arg::Bytes(b) => Arg::Bytes(Cow::Owned(b.into_owned())),
            Arg::Flag(b) => Arg::Flag(b),
        }
    }
}

/// `From` each kind of value an argument is made of.
macro_rules! arg_from {
    ($($t:ty => |$v:ident| $e:expr;)*) => { $(impl<'a> From<$t> for Arg<'a> { fn from($v: $t) -> Self { $e } })* };
}
arg_from! {
    &'a str => |s| Arg::Text(Some(Cow::Borrowed(s)));
    &'a String => |s| Arg::from(s.as_str());
    Option<&'a str> => |s| Arg::Text(s.map(Cow::Borrowed));
    &'a Option<String> => |s| Arg::from(s.as_deref());
    Option<String> => |s| Arg::Text(s.map(Cow::Owned));
    String => |s| Arg::Text(Some(Cow::Owned(s)));
    i64 => |n| Arg::Int(Some(n));
    Option<i64> => |n| Arg::Int(n);
    bool => |b| Arg::Flag(b);
    &'a [u8] => |b| Arg::Bytes(Cow::Borrowed(b));
    Vec<u8> => |b| Arg::Bytes(Cow::Owned(b));
}

/// `[Arg, ...]` from values.
macro_rules! args {
    ($($a:expr),* $(,)?) => { [$($crate::conn::Arg::from($a)),*] };
}
pub(crate) use args;

/// What decoding reads of a row, on either database (see `rows`).
pub(crate) trait Cols {
    fn text_opt(&self, col: &str) -> Result<Option<String>, StoreError>;
    fn int_opt(&self, col: &str) -> Result<Option<i64>, StoreError>;
    fn bytes_opt(&self, col: &str) -> Result<Option<Vec<u8>>, StoreError>;
    /// A yes/no column (an integer 0/1 on SQLite, a boolean on PostgreSQL).
    fn flag(&self, col: &str) -> Result<bool, StoreError>;

    fn text(&self, col: &str) -> Result<String, StoreError> {
        self.text_opt(col)?.ok_or_else(|| StoreError::Corrupt(format!("{col} is null")))
    }
    fn int(&self, col: &str) -> Result<i64, StoreError> {
        self.int_opt(col)?.ok_or_else(|| StoreError::Corrupt(format!("{col} is null")))
    }
    /// The node a row belongs to: a team store's rows have one; a store of one's own keeps ''.
    fn node(&self) -> Result<Option<String>, StoreError> {
        Ok(self.text_opt("node")?.filter(|n| !n.is_empty()))
    }
}

/// A row read through rusqlite.
pub(crate) struct Lite<'a, 'b>(pub &'a rusqlite::Row<'b>);

impl Cols for Lite<'_, '_> {
    fn text_opt(&self, col: &str) -> Result<Option<String>, StoreError> {
        self.0.get(col).map_err(lite_err)
    }
    fn int_opt(&self, col: &str) -> Result<Option<i64>, StoreError> {
        self.0.get(col).map_err(lite_err)
    }
    fn bytes_opt(&self, col: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.0.get(col).map_err(lite_err)
    }
    fn flag(&self, col: &str) -> Result<bool, StoreError> {
        Ok(self.0.get::<_, i64>(col).map_err(lite_err)? != 0)
    }
}

impl Cols for sqlx::postgres::PgRow {
    fn text_opt(&self, col: &str) -> Result<Option<String>, StoreError> {
        self.try_get(col).map_err(pg_err)
    }
    fn int_opt(&self, col: &str) -> Result<Option<i64>, StoreError> {
        self.try_get(col).map_err(pg_err)
    }
    fn bytes_opt(&self, col: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.try_get(col).map_err(pg_err)
    }
    fn flag(&self, col: &str) -> Result<bool, StoreError> {
        self.try_get(col).map_err(pg_err)
    }
}

/// What reads each row of a query.
pub(crate) trait Reader<T>: FnMut(&dyn Cols) -> Result<T, StoreError> + Send {}
impl<T, F: FnMut(&dyn Cols) -> Result<T, StoreError> + Send> Reader<T> for F {}

/// A statement's text that may be built at run time (the inbox's filters).
pub(crate) type Text = Cow<'static, str>;

/// A read's arguments, owned (it may run on another thread).
pub(crate) type Args = Vec<Arg<'static>>;

/// Makes a `T` of a row.
pub(crate) type Read<T> = fn(&dyn Cols) -> Result<T, StoreError>;

/// A connection either store runs the statements of [`crate::sql`] on (inside whatever
/// transaction its caller began).
pub(crate) trait Conn: Send {
    /// PostgreSQL (where the dialects differ, [`crate::sql::Twin`] picks by this).
    const PG: bool;

    /// Runs a statement; the rows it changed.
    fn exec(&mut self, sql: &str, args: &[Arg<'_>]) -> impl Future<Output = Result<u64, CoreError>> + Send;

    /// Every row a query returns, as `read` makes each.
    fn all<T: Send>(
        &mut self,
        sql: &str,
        args: &[Arg<'_>],
        read: impl Reader<T>,
    ) -> impl Future<Output = Result<Vec<T>, CoreError>> + Send;

    /// The first row a query returns, if any.
    fn one<T: Send>(
        &mut self,
        sql: &str,
        args: &[Arg<'_>],
        read: impl Reader<T>,
    ) -> impl Future<Output = Result<Option<T>, CoreError>> + Send {
        async move { Ok(self.all(sql, args, read).await?.into_iter().next()) }
    }
}

impl rusqlite::ToSql for Arg<'_> {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::ValueRef;
        Ok(rusqlite::types::ToSqlOutput::Borrowed(match self {
            Arg::Text(Some(s)) => ValueRef::Text(s.as_bytes()),
            Arg::Int(Some(n)) => ValueRef::Integer(*n),
            Arg::Flag(b) => ValueRef::Integer(i64::from(*b)),
            Arg::Bytes(b) => ValueRef::Blob(b),
            Arg::Text(None) | Arg::Int(None) => ValueRef::Null,
        }))
    }
}

/// `$n` as SQLite's `?n`: the same numbered parameter, bound by its position (SQLite takes
/// `$n` too, but as a name, and finding a parameter by name walks all of them: a 64-row insert
/// spent more time there than in the insert). No statement has a `$` and a digit in a literal.
fn lite_sql(sql: &str) -> Cow<'_, str> {
    if !sql.contains('$') {
        return Cow::Borrowed(sql);
    }
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(if c == '$' && chars.peek().is_some_and(char::is_ascii_digit) { '?' } else { c });
    }
    Cow::Owned(out)
}

/// Prepares `sql` and binds `?n` to the nth argument. Arguments a statement does not name are
/// left out: the team store's node, which some SQLite statements need not name.
fn prepare<'c>(
    conn: &'c rusqlite::Connection,
    sql: &str,
    args: &[Arg<'_>],
) -> Result<rusqlite::CachedStatement<'c>, StoreError> {
    let mut st = conn.prepare_cached(&lite_sql(sql)).map_err(lite_err)?;
    for i in 1..=st.parameter_count() {
        let arg =
            args.get(i - 1).ok_or_else(|| StoreError::Database(format!("no argument ${i} ({} given)", args.len())))?;
        st.raw_bind_parameter(i, arg).map_err(lite_err)?;
    }
    Ok(st)
}

/// SQLite: every statement runs to its end where it is called (the futures never wait).
impl Conn for rusqlite::Connection {
    const PG: bool = false;

    async fn exec(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<u64, CoreError> {
        Ok(prepare(self, sql, args)?.raw_execute().map_err(lite_err)? as u64)
    }

    async fn all<T: Send>(&mut self, sql: &str, args: &[Arg<'_>], mut f: impl Reader<T>) -> Result<Vec<T>, CoreError> {
        let mut st = prepare(self, sql, args)?;
        let mut rows = st.raw_query();
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(lite_err)? {
            out.push(f(&Lite(row))?);
        }
        Ok(out)
    }
}

fn pg_query<'q>(
    sql: &'q str,
    args: &'q [Arg<'_>],
) -> sqlx::query::Query<'q, sqlx::Postgres, sqlx::postgres::PgArguments> {
    args.iter().fold(sqlx::query(sqlx::AssertSqlSafe(sql)), |q, a| match a {
        Arg::Text(s) => q.bind(s.as_deref()),
        Arg::Int(n) => q.bind(*n),
        Arg::Bytes(b) => q.bind(&**b),
        Arg::Flag(b) => q.bind(*b),
    })
}

impl Conn for sqlx::PgConnection {
    const PG: bool = true;

    async fn exec(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<u64, CoreError> {
        Ok(pg_query(sql, args).execute(&mut *self).await.map_err(pg_core)?.rows_affected())
    }

    async fn all<T: Send>(&mut self, sql: &str, args: &[Arg<'_>], mut f: impl Reader<T>) -> Result<Vec<T>, CoreError> {
        let rows = pg_query(sql, args).fetch_all(&mut *self).await.map_err(pg_core)?;
        Ok(rows.iter().map(|r| f(r)).collect::<Result<_, _>>()?)
    }
}

/// Runs a SQLite statement's future to its end on this thread. Statements on SQLite never
/// wait (rusqlite is synchronous), so this returns at its first poll; were one ever to wait, the
/// thread would sleep until it is woken rather than spin.
pub(crate) fn now<F: Future>(f: F) -> F::Output {
    futures_executor::block_on(f)
}

/// A future on the heap, for work handed to another task or thread.
pub(crate) type BoxFuture<'a, T> = std::pin::Pin<Box<dyn Future<Output = T> + Send + 'a>>;

#[cfg(test)]
mod tests {
    /// A future that waits: it is polled when woken, not in a loop (the runner used to spin).
    #[test]
    fn a_statement_that_waited_would_sleep_not_spin() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        use std::sync::{Arc, Mutex};
        use std::task::{Poll, Waker};
        let polls = Arc::new(AtomicUsize::new(0));
        let waker: Arc<Mutex<Option<Waker>>> = Arc::default();
        let ready = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (p, w, r) = (polls.clone(), waker.clone(), ready.clone());
        let waits = std::future::poll_fn(move |cx| {
            p.fetch_add(1, Ordering::SeqCst);
            if r.load(Ordering::SeqCst) {
                return Poll::Ready(7);
            }
            *w.lock().unwrap_or_else(|e| e.into_inner()) = Some(cx.waker().clone());
            Poll::Pending
        });
        let runner = std::thread::spawn(move || super::now(waits));
        std::thread::sleep(std::time::Duration::from_millis(100));
        ready.store(true, Ordering::SeqCst);
        if let Some(w) = waker.lock().unwrap_or_else(|e| e.into_inner()).take() {
            w.wake();
        }
        assert_eq!(runner.join().ok(), Some(7));
        assert!(polls.load(Ordering::SeqCst) <= 3, "polled {} times in 100 ms", polls.load(Ordering::SeqCst));
    }

    #[test]
    fn numbered_parameters_are_positional_on_sqlite_and_literals_stay() {
        let sql = "SELECT json_extract(d, '$.rule.id') FROM t WHERE a = $1 AND b = $12 AND c = $1";
        let want = "SELECT json_extract(d, '$.rule.id') FROM t WHERE a = ?1 AND b = ?12 AND c = ?1";
        assert_eq!(super::lite_sql(sql), want);
        assert!(matches!(super::lite_sql("SELECT 1"), std::borrow::Cow::Borrowed(_)));
    }
}
