//! The two schemas define the same tables and columns. SQLite's migrations (`migrations/`) and
//! PostgreSQL's (`migrations/postgres/`) are written apart, one per dialect; this test migrates a
//! fresh database of each, reads back every table's columns (their type and whether they may be
//! null), and holds them to one another. What differs on purpose is listed here, each with its
//! reason: anything else is a column one store forgot.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use assent_store::SqliteStore;
use assent_store::pg::{PgStore, TeamOptions};
use std::collections::BTreeSet;

mod common;

/// A column as both dialects can say it: table, name, type (`int`, `text`, `bytes`), nullable.
type Column = (String, String, String, bool);

/// Only on SQLite, and why.
const SQLITE_ONLY: &[(&str, &str)] = &[
    // Kept by the single writer of a store of one's own; a team store sums its rows instead.
    ("usage_minutes", "*"),
    // Each agent's pending count, kept by triggers for the writer's pending limit.
    ("pending_counts", "*"),
];

/// Only on PostgreSQL, and why.
const POSTGRES_ONLY: &[(&str, &str)] = &[
    // The servers of a team.
    ("nodes", "*"),
    // (Every other table's `node` is on both: a store of one's own keeps '' there, so that both
    // answer the same statements.)
];

/// Yes-or-no columns: SQLite has no boolean type and keeps them as 0 or 1.
const FLAGS: &[(&str, &str)] = &[("rules", "everything")];

/// `c` with a flag's type said the same way on both.
fn flag(mut c: Column) -> Column {
    if FLAGS.iter().any(|(t, col)| *t == c.0 && *col == c.1) && (c.2 == "int" || c.2 == "postgres:boolean") {
        c.2 = "flag".into();
    }
    c
}

fn excepted(list: &[(&str, &str)], c: &Column) -> bool {
    list.iter().any(|(t, col)| *t == c.0 && (*col == "*" || *col == c.1))
}

fn sqlite_type(t: &str) -> String {
    match t.to_ascii_uppercase().as_str() {
        "INTEGER" | "INT" => "int",
        "TEXT" => "text",
        "BLOB" => "bytes",
        other => return format!("sqlite:{other}"),
    }
    .into()
}

fn postgres_type(t: &str) -> String {
    match t {
        "bigint" | "integer" | "smallint" => "int",
        "text" | "character varying" => "text",
        "bytea" => "bytes",
        other => return format!("postgres:{other}"),
    }
    .into()
}

async fn sqlite_columns() -> BTreeSet<Column> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("assent.db");
    drop(SqliteStore::open(&path).await.unwrap());
    let conn = rusqlite::Connection::open(&path).unwrap();
    let mut tables = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_sqlx%'")
        .unwrap();
    let names: Vec<String> = tables.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect();
    let mut out = BTreeSet::new();
    for t in names {
        let mut info = conn.prepare(&format!("PRAGMA table_info({t})")).unwrap();
        let cols = info
            .query_map([], |r| {
                let (name, ty, notnull, pk): (String, String, bool, i64) = (r.get(1)?, r.get(2)?, r.get(3)?, r.get(5)?);
                Ok((t.clone(), name, sqlite_type(&ty), !notnull && pk == 0))
            })
            .unwrap();
        out.extend(cols.map(Result::unwrap));
    }
    out
}

async fn postgres_columns() -> BTreeSet<Column> {
    use sqlx::Row;
    let url = common::pg_database().await;
    let opts = TeamOptions {
        url: url.clone(),
        node: "n1".into(),
        person: "owner".into(),
        password: Some(common::PASSWORD.into()),
    };
    drop(PgStore::open(&opts).await.unwrap_or_else(|e| panic!("{e}")));
    let pool =
        sqlx::PgPool::connect_with(url.parse::<sqlx::postgres::PgConnectOptions>().unwrap().password(common::PASSWORD))
            .await
            .unwrap();
    let rows = sqlx::query(
        "SELECT table_name::text AS t, column_name::text AS c, data_type::text AS ty, is_nullable::text AS n \
         FROM information_schema.columns WHERE table_schema = 'public' AND table_name NOT LIKE '\\_sqlx%'",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    rows.iter()
        .map(|r| {
            let (t, c, ty, n): (String, String, String, String) = (r.get("t"), r.get("c"), r.get("ty"), r.get("n"));
            (t, c, postgres_type(&ty), n == "YES")
        })
        .collect()
}

#[tokio::test]
async fn both_databases_have_the_same_tables_and_columns() {
    let lite: BTreeSet<Column> = sqlite_columns().await.into_iter().map(flag).collect();
    let pg: BTreeSet<Column> = postgres_columns().await.into_iter().map(flag).collect();
    assert!(lite.iter().any(|c| c.0 == "proposals" && c.1 == "lease_secs"), "the tables were read: {lite:?}");
    // SQLite's `seq` is its rowid alias; PostgreSQL's an identity column: both whole numbers,
    // never null.
    let only_lite: Vec<&Column> = lite.difference(&pg).filter(|c| !excepted(SQLITE_ONLY, c)).collect();
    let only_pg: Vec<&Column> = pg.difference(&lite).filter(|c| !excepted(POSTGRES_ONLY, c)).collect();
    assert!(
        only_lite.is_empty() && only_pg.is_empty(),
        "the schemas differ where nothing says why:\n  only on SQLite (or differently): {only_lite:#?}\n  only on PostgreSQL (or differently): {only_pg:#?}"
    );
    // And every exception still names something that exists.
    for (list, cols) in [(SQLITE_ONLY, &lite), (POSTGRES_ONLY, &pg)] {
        for (t, c) in list {
            assert!(cols.iter().any(|x| x.0 == *t && (*c == "*" || x.1 == *c)), "{t}.{c} is no longer there");
        }
    }
}
