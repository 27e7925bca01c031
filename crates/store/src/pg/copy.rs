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

/// The tables copied, in order: each one's columns (text unless `:int` or `:bytes`; the node is
/// added to each row), and the order its rows keep.
const TABLES: [(&str, &str, &str); 6] = [
    ("agents", "name token_hash:bytes created_at:int revoked_at:int", "name"),
    ("agent_log", "name event at:int", "seq"),
    ("credentials", "name scheme origins created_at:int", "name"),
    (
        "proposals",
        "id kind class agent title summary payload preview base session_id group_id supersedes status \
         created_at:int updated_at:int expires_at:int decision result error idempotency_key request_sha256 \
         pruned_at:int created_by created_channel facts lease_secs:int audience",
        "seq",
    ),
    ("audit", "proposal_id actor channel from_status to_status at:int detail", "seq"),
    ("rule_log", "rule_id event actor channel at:int rule", "seq"),
];

/// Feeds one value to a table's hash: whether it is null, its length, its bytes.
fn feed(h: &mut sha2::Sha256, v: &Arg<'_>) {
    let bytes: Vec<u8> = match v {
        Arg::Text(s) => s.as_deref().unwrap_or_default().as_bytes().to_vec(),
        Arg::Int(n) => n.map(|n| n.to_string().into_bytes()).unwrap_or_default(),
        Arg::Bytes(b) => b.to_vec(),
        Arg::Flag(b) => vec![u8::from(*b)],
    };
    h.update([u8::from(matches!(v, Arg::Text(None) | Arg::Int(None)))]);
    h.update((bytes.len() as u64).to_le_bytes());
    h.update(&bytes);
}

/// A row's values, from either side.
fn read(row: &dyn Cols, cols: &str) -> Result<Vec<Arg<'static>>, StoreError> {
    let value = |col: &str| -> Result<Arg<'static>, StoreError> {
        match col.split_once(':') {
            Some((c, "int")) => Ok(Arg::Int(row.int_opt(c)?)),
            Some((c, _)) => Ok(Arg::from(row.bytes_opt(c)?.unwrap_or_default()).owned()),
            None => Ok(Arg::from(row.text_opt(col)?)),
        }
    };
    cols.split_whitespace().map(value).collect()
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
    for (table, cols, order) in TABLES {
        let names: Vec<&str> = cols.split_whitespace().map(|c| c.split(':').next().unwrap_or(c)).collect();
        let select = format!("SELECT {} FROM {} ORDER BY {}", names.join(", "), table, order);
        let rows = now(src.all(&select, &[], |r| read(r, cols)))?;
        let placeholders: Vec<String> = (2..=names.len() + 1).map(|i| format!("${i}")).collect();
        let insert =
            format!("INSERT INTO {} (node, {}) VALUES ($1, {})", table, names.join(", "), placeholders.join(", "));
        let mut want = sha2::Sha256::new();
        for vals in &rows {
            vals.iter().for_each(|v| feed(&mut want, v));
            let row: Vec<Arg<'_>> = std::iter::once(Arg::from(&opts.node)).chain(vals.iter().cloned()).collect();
            tx.exec(&insert, &row).await?;
        }
        // Read back what this node now has, in the same order, and compare.
        let back = format!("SELECT {} FROM {} WHERE node = $1 ORDER BY {}", names.join(", "), table, order);
        let copied = tx.all(&back, &args![&opts.node], |r| read(r, cols)).await?;
        let mut got = sha2::Sha256::new();
        for row in &copied {
            row.iter().for_each(|v| feed(&mut got, v));
        }
        let (want, got) = (hex::encode(want.finalize()), hex::encode(got.finalize()));
        if copied.len() != rows.len() || want != got {
            return Err(StoreError::Database(format!(
                "the copy of {} does not match ({} rows read, {} written; sha256 {want} vs {got}); nothing was committed",
                table,
                rows.len(),
                copied.len()
            ))
            .into());
        }
        report.tables.push((table.to_string(), rows.len() as u64, want));
    }
    let rules = now(src.one("SELECT count(*) AS n FROM rules", &[], |r| r.int("n")))?.unwrap_or(0);
    report.rules_left_out = rules.max(0) as u64;
    tx.commit().await.map_err(core)?;
    Ok(report)
}
