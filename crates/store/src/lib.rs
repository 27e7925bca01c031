//! # assent-store
//!
//! Assent's storage: SQLite for one person (the default, [`SqliteStore`]), and PostgreSQL for a
//! team ([`pg::PgStore`]). This crate is the only place with SQL.
//!
//! One library per database: rusqlite for SQLite (migrations included) and sqlx for
//! PostgreSQL. SQLite is a file this process reads and writes itself, and rusqlite runs each
//! statement on the calling thread: a write through sqlx's SQLite connection cost two thread
//! switches per statement (its worker thread and back), most of what a point read took, which
//! is why the writer and the point reads had moved to rusqlite already; the migrations (a
//! runner in `lite.rs` that keeps sqlx's `_sqlx_migrations` table as it was) and the other
//! reads followed, so one driver opens the file. Measured against the build with both drivers
//! (`./scripts/bench.sh ingest wake waits team`, alternated, three rounds each): ingest, wake
//! and the team figures within noise. PostgreSQL is a server reached over the network, where
//! sqlx's async pool is what the team store needs.
//!
//! ## Where each statement lives, and what proves it
//!
//! | what | where |
//! |---|---|
//! | every statement, once; a `Twin` where the dialects differ, with its reason | `sql.rs` |
//! | running a statement on either database, row decoding | `conn.rs` (`Conn`, `Cols`), `rows.rs` |
//! | the [`Store`](assent_core::store::Store) contract, once: reads, and which write runs where | `store.rs` |
//! | the writes (inserts, status changes, agents, credentials, rules, pruning) | `ops.rs` |
//! | group commit: SQLite's writer and a team node's ingest | `batch.rs`, with `pending.rs` |
//! | SQLite: opening, migrating, the writer thread, the read connections, `doctor` | `lite.rs` |
//! | PostgreSQL: connecting, migrating, the ingest task, `doctor` | `pg/mod.rs` |
//! | what other nodes changed; a node's name as its own | `pg/follow.rs` |
//! | copying a home into a team database | `pg/copy.rs` |
//! | driver errors | `errors.rs` |
//! | the schema | `migrations/*.sql` and `migrations/postgres/*.sql` |
//!
//! The domain's rules are not here but in `assent-core`: what counts as a plain insert
//! (`NewRecord::is_plain`), what adding an agent does given its name's state (`store::agent_add`), the withdrawal a revision makes (`Transition::superseded`,
//! through the status machine), and how an all-or-nothing refusal is worded
//! (`store::conflict_error`).
//!
//! Proven in-process on both databases: `tests/contract.rs` (every method of the contract, the
//! same assertions on a SQLite file and a real PostgreSQL) and `tests/schema.rs` (the two
//! migration sets define the same tables and columns, but for the differences listed there);
//! `tests/queries.rs` for SQLite's own concerns (paging, append-only audit, half-done writes);
//! `tests/layers.rs` that the modules, in the order of the table above read bottom-up
//! (errors, sql, pending, conn, rows, ops, batch, store, lite, pg), depend downward only.
//! Through the binary, `tests/blackbox/upgrade.rs` opens a home and a team database made by the
//! last release and holds them to what that release answered.

mod batch;
mod conn;
mod errors;
mod lite;
mod ops;
mod pending;
pub mod pg;
mod rows;
mod sql;
mod store;

pub use lite::{Health, Lite, SqliteStore, inspect};
pub use store::SqlStore;
