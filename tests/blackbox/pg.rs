//! A real PostgreSQL server for the team tests, from Debian's packages, started by
//! `scripts/postgres.sh` in a temp directory: one shared by the whole run (a database per
//! test), and dedicated ones for the tests that stop or restart theirs.

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/postgres.sh");

/// A running server.
pub struct Postgres {
    pub dir: PathBuf,
    /// `postgres://assent@127.0.0.1:PORT/postgres` (the password is in `pgpass`).
    pub admin_url: String,
    pub pgpass: PathBuf,
    dedicated: bool,
}

fn start(dir: PathBuf, dedicated: bool) -> Postgres {
    let pid = std::process::id().to_string();
    let out = Command::new(SCRIPT)
        .args(["start", dir.to_str().unwrap(), "--until-pid", &pid])
        .output()
        .expect("scripts/postgres.sh");
    assert!(out.status.success(), "PostgreSQL did not start: {}", String::from_utf8_lossy(&out.stderr));
    let admin_url = String::from_utf8_lossy(&out.stdout).trim().to_string();
    Postgres { pgpass: dir.join("pgpass"), dir, admin_url, dedicated }
}

fn fresh_dir() -> PathBuf {
    let d = tempfile::Builder::new().prefix("assent-pg-").tempdir().unwrap();
    let path = d.path().to_path_buf();
    // The script owns it from here (and removes it once this process is gone).
    let _ = d.keep();
    std::fs::remove_dir(&path).unwrap();
    path
}

/// The run's shared server.
pub fn shared() -> &'static Postgres {
    static PG: OnceLock<Postgres> = OnceLock::new();
    PG.get_or_init(|| start(fresh_dir(), false))
}

impl Postgres {
    /// A server of the test's own, stopped when dropped.
    pub fn dedicated() -> Postgres {
        start(fresh_dir(), true)
    }

    /// A fresh, empty database; its URL.
    pub fn new_db(&self) -> String {
        let name = format!("t_{}", rand_suffix());
        self.psql(&self.admin_url, &format!("CREATE DATABASE {name}"));
        self.admin_url.replace("/postgres", &format!("/{name}"))
    }

    /// Runs SQL as the server's superuser; the output (unaligned, tuples only).
    pub fn psql(&self, url: &str, sql: &str) -> String {
        psql(url, &self.pgpass, sql).unwrap_or_else(|e| panic!("psql {sql}: {e}"))
    }

    /// The environment a server or the CLI needs to use `url` as node `node`, decided on by `person`.
    pub fn env(&self, url: &str, node: &str, person: &str) -> Vec<(String, String)> {
        vec![
            ("ASSENT_STORE".into(), url.into()),
            ("ASSENT_NODE".into(), node.into()),
            ("ASSENT_PERSON".into(), person.into()),
            ("PGPASSFILE".into(), self.pgpass.to_string_lossy().into()),
        ]
    }

    pub fn stop(&self) {
        self.ctl("stop");
    }

    pub fn restart(&self) {
        self.ctl("restart");
    }

    fn ctl(&self, what: &str) {
        let out = Command::new(SCRIPT).args([what, self.dir.to_str().unwrap()]).output().unwrap();
        assert!(out.status.success(), "postgres {what}: {}", String::from_utf8_lossy(&out.stderr));
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        if self.dedicated {
            let _ = Command::new(SCRIPT).args(["stop", self.dir.to_str().unwrap()]).output();
        }
    }
}

/// Runs SQL on `url` with the password from `pgpass`: rows as lines, columns joined by `|`; or
/// what PostgreSQL said when it refused.
pub fn psql(url: &str, pgpass: impl AsRef<std::ffi::OsStr>, sql: &str) -> Result<String, String> {
    let out = Command::new("psql")
        .args([url, "-v", "ON_ERROR_STOP=1", "-At", "-c", sql])
        .env("PGPASSFILE", pgpass)
        .output()
        .unwrap();
    answer(&out)
}

/// A database tool's answer: its rows (trimmed) when it succeeded, what it said when it refused.
pub fn answer(out: &std::process::Output) -> Result<String, String> {
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).to_string())
    }
}

fn rand_suffix() -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos();
    format!("{}_{}_{nanos}", std::process::id(), N.fetch_add(1, Ordering::Relaxed))
}

/// Whether this run's servers use a team store (`ASSENT_TEST_STORE=postgres`): the shared
/// black-box suite then runs against PostgreSQL, a database per server.
pub fn suite_on_postgres() -> bool {
    std::env::var("ASSENT_TEST_STORE").is_ok_and(|v| v == "postgres")
}
