//! What the store's tests share: this run's PostgreSQL server (Debian's, started by
//! `scripts/postgres.sh`, stopped when the test process ends), a fresh database on it, and
//! the proposals they store.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use assent_core::preview::Preview;
use assent_core::proposal::Proposal;
use assent_core::status::{KindClass, Status};
use assent_core::store::NewRecord;
use assent_core::time::Timestamp;
use serde_json::json;
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

/// The password `scripts/postgres.sh` gives its user.
pub const PASSWORD: &str = "assent-test";

/// This run's PostgreSQL server: its admin URL (the password is the script's, `assent-test`).
pub fn postgres() -> &'static str {
    static URL: OnceLock<String> = OnceLock::new();
    URL.get_or_init(|| {
        let dir = tempfile::Builder::new().prefix("assent-store-pg-").tempdir().unwrap().keep();
        std::fs::remove_dir(&dir).unwrap();
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/postgres.sh");
        let out = Command::new(script)
            .arg("start")
            .arg(&dir)
            .args(["--until-pid", &std::process::id().to_string()])
            .output()
            .expect("scripts/postgres.sh");
        assert!(out.status.success(), "PostgreSQL did not start: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    })
}

/// A fresh database on this run's server; its URL.
pub async fn pg_database() -> String {
    use sqlx::Connection;
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let admin = postgres();
    let name = format!("c_{}_{}", std::process::id(), NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
    let opts = admin.parse::<sqlx::postgres::PgConnectOptions>().unwrap().password(PASSWORD);
    let mut conn = sqlx::PgConnection::connect_with(&opts).await.unwrap();
    sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}"))).execute(&mut conn).await.unwrap();
    admin.replace("/postgres", &format!("/{name}"))
}

/// A pending `tool.call` of agent `a`, number `n` (made at 1,000 + n ms, expiring at
/// 1,000,000 + n).
pub fn proposal(id: &str, n: i64) -> Proposal {
    let mut p = Proposal::applying(
        id,
        assent_core::payloads::KindName::ToolCall,
        "a",
        json!({"tool": "t", "input": {"n": n}}),
        None,
    );
    p.status = Status::Pending;
    p.class = KindClass::DecisionOnly;
    p.preview = Preview::read(json!({"type": "tool.call", "tool": "t", "input": {"n": n}, "input_text": "{}"}));
    p.created_at = Timestamp(1_000 + n);
    p.updated_at = p.created_at;
    p.expires_at = Timestamp(1_000_000 + n);
    p.refresh_derived();
    p
}

/// A plain new record of `p`.
pub fn record(p: Proposal) -> NewRecord {
    let stored = assent_core::stored::StoredJson::of(
        &p,
        &p.typed_payload().expect("a payload of its kind"),
        &Default::default(),
    );
    NewRecord {
        proposal: p,
        idempotency: None,
        max_pending: 1000,
        origin: None,
        stored,
        decided: None,
        rule: None,
        rules_seq: None,
    }
}
