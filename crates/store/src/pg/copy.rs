//! `assent store copy`: a single user's SQLite history moved into a team database once, as
//! one node's, in one transaction, verified by counts and hashes before it commits.
//!
//! Copied: agents and their log, credentials' metadata (the secrets stay in this machine's
//! keychain, under the same names), proposals with their whole audit trail, and the rule log.
//! The rules in force are not: a team's rules apply to every node's agents, so the team adds
//! the ones it wants; the report names how many were left out.

use super::{TeamOptions, core, migrate};
use crate::conn::{Arg, Cols, Conn, args, now};
use assent_core::error::{CoreError, StoreError};
use sha2::Digest;
use sqlx::Connection;
use std::path::Path;

/// How a column is carried over.
#[derive(Clone, Copy)]
enum Ty {
    Text,
    Int,
    Bytes,
}

/// A table copied: its columns (the node is added to each row), and the order rows keep.
struct Table {
    name: &'static str,
    cols: &'static [(&'static str, Ty)],
    order: &'static str,
}

const TABLES: &[Table] = &[
    Table {
        name: "agents",
        cols: &[("name", Ty::Text), ("token_hash", Ty::Bytes), ("created_at", Ty::Int), ("revoked_at", Ty::Int)],
        order: "name",
    },
    Table { name: "agent_log", cols: &[("name", Ty::Text), ("event", Ty::Text), ("at", Ty::Int)], order: "seq" },
    Table {
        name: "credentials",
        cols: &[("name", Ty::Text), ("scheme", Ty::Text), ("origins", Ty::Text), ("created_at", Ty::Int)],
        order: "name",
    },
    Table {
        name: "proposals",
        cols: &[
            ("id", Ty::Text),
            ("kind", Ty::Text),
            ("class", Ty::Text),
            ("agent", Ty::Text),
            ("title", Ty::Text),
            ("summary", Ty::Text),
            ("payload", Ty::Text),
            ("preview", Ty::Text),
            ("base", Ty::Text),
            ("session_id", Ty::Text),
            ("group_id", Ty::Text),
            ("supersedes", Ty::Text),
            ("status", Ty::Text),
            ("created_at", Ty::Int),
            ("updated_at", Ty::Int),
            ("expires_at", Ty::Int),
            ("decision", Ty::Text),
            ("result", Ty::Text),
            ("error", Ty::Text),
            ("idempotency_key", Ty::Text),
            ("request_sha256", Ty::Text),
            ("pruned_at", Ty::Int),
            ("created_by", Ty::Text),
            ("created_channel", Ty::Text),
            ("facts", Ty::Text),
            ("lease_secs", Ty::Int),
        ],
        order: "seq",
    },
    Table {
        name: "audit",
        cols: &[
            ("proposal_id", Ty::Text),
            ("actor", Ty::Text),
            ("channel", Ty::Text),
            ("from_status", Ty::Text),
            ("to_status", Ty::Text),
            ("at", Ty::Int),
            ("detail", Ty::Text),
        ],
        order: "seq",
    },
    Table {
        name: "rule_log",
        cols: &[
            ("rule_id", Ty::Text),
            ("event", Ty::Text),
            ("actor", Ty::Text),
            ("channel", Ty::Text),
            ("at", Ty::Int),
            ("rule", Ty::Text),
        ],
        order: "seq",
    },
];

/// One value, as read from either side.
#[derive(Debug, Clone, PartialEq)]
enum Val {
    Text(Option<String>),
    Int(Option<i64>),
    Bytes(Option<Vec<u8>>),
}

impl Val {
    fn feed(&self, h: &mut sha2::Sha256) {
        let bytes: Vec<u8> = match self {
            Val::Text(v) => v.as_ref().map(|s| s.as_bytes().to_vec()).unwrap_or_default(),
            Val::Int(v) => v.map(|n| n.to_string().into_bytes()).unwrap_or_default(),
            Val::Bytes(v) => v.clone().unwrap_or_default(),
        };
        let null = matches!(self, Val::Text(None) | Val::Int(None) | Val::Bytes(None));
        h.update([u8::from(null)]);
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(&bytes);
    }
}

impl Val {
    fn arg(&self) -> Arg<'_> {
        match self {
            Val::Text(s) => Arg::from(s),
            Val::Int(n) => Arg::Int(*n),
            Val::Bytes(b) => b.as_deref().map_or(Arg::Text(None), Arg::from),
        }
    }
}

/// A row's values, from either side.
fn read(row: &dyn Cols, cols: &[(&str, Ty)]) -> Result<Vec<Val>, StoreError> {
    cols.iter()
        .map(|(c, t)| {
            Ok(match t {
                Ty::Text => Val::Text(row.text_opt(c)?),
                Ty::Int => Val::Int(row.int_opt(c)?),
                Ty::Bytes => Val::Bytes(row.bytes_opt(c)?),
            })
        })
        .collect()
}

/// What was copied: per table, rows and the SHA-256 of their content in order (the same on
/// both sides, or nothing was committed).
#[derive(Debug, Clone)]
pub struct CopyReport {
    /// The node the history now belongs to.
    pub node: String,
    /// `(table, rows, sha256)`.
    pub tables: Vec<(String, u64, String)>,
    /// Rules in force that were left out (the team adds the ones it wants).
    pub rules_left_out: u64,
}

/// Copies the SQLite database at `sqlite` into the team store as node `opts.node`.
pub async fn copy_from_sqlite(sqlite: &Path, opts: &TeamOptions) -> Result<CopyReport, CoreError> {
    let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let mut src = rusqlite::Connection::open_with_flags(sqlite, flags)
        .map_err(|e| StoreError::Database(format!("cannot open {}: {e}", sqlite.display())))?;
    migrate(opts).await?;
    let mut dst = sqlx::PgConnection::connect_with(&super::connect_options(opts)?).await.map_err(core)?;
    let mut tx = dst.begin().await.map_err(core)?;
    for t in ["proposals", "agents", "agent_log"] {
        let sql = format!("SELECT count(*) AS n FROM {t} WHERE node = $1");
        let n = tx.one(&sql, &args![&opts.node], |r| r.int("n")).await?.unwrap_or(0);
        if n > 0 {
            return Err(CoreError::Conflict(format!(
                "node `{}` already has {t} in the team store: copy into a node name not used yet, before that \
                 node's first start (node = \"...\" in config.toml)",
                opts.node
            )));
        }
    }
    tx.exec("SET LOCAL assent.copying = 'on'", &[]).await?;
    let mut report = CopyReport { node: opts.node.clone(), tables: Vec::new(), rules_left_out: 0 };
    for t in TABLES {
        let names: Vec<&str> = t.cols.iter().map(|(c, _)| *c).collect();
        let select = format!("SELECT {} FROM {} ORDER BY {}", names.join(", "), t.name, t.order);
        let rows = now(src.all(&select, &[], |r| read(r, t.cols)))?;
        let placeholders: Vec<String> = (2..=names.len() + 1).map(|i| format!("${i}")).collect();
        let insert =
            format!("INSERT INTO {} (node, {}) VALUES ($1, {})", t.name, names.join(", "), placeholders.join(", "));
        let mut want = sha2::Sha256::new();
        for vals in &rows {
            let mut row = vec![Arg::from(&opts.node)];
            for v in vals {
                v.feed(&mut want);
                row.push(v.arg());
            }
            tx.exec(&insert, &row).await?;
        }
        // Read back what this node now has, in the same order, and compare.
        let back = format!("SELECT {} FROM {} WHERE node = $1 ORDER BY {}", names.join(", "), t.name, t.order);
        let copied = tx.all(&back, &args![&opts.node], |r| read(r, t.cols)).await?;
        let mut got = sha2::Sha256::new();
        for row in &copied {
            for v in row {
                v.feed(&mut got);
            }
        }
        let (want, got) = (hex::encode(want.finalize()), hex::encode(got.finalize()));
        if copied.len() != rows.len() || want != got {
            return Err(StoreError::Database(format!(
                "the copy of {} does not match ({} rows read, {} written; sha256 {want} vs {got}); nothing was committed",
                t.name,
                rows.len(),
                copied.len()
            ))
            .into());
        }
        report.tables.push((t.name.to_string(), rows.len() as u64, want));
    }
    let rules = now(src.one("SELECT count(*) AS n FROM rules", &[], |r| r.int("n")))?.unwrap_or(0);
    report.rules_left_out = rules.max(0) as u64;
    tx.commit().await.map_err(core)?;
    Ok(report)
}
