//! The team store on a real PostgreSQL (Debian's server, started by `scripts/postgres.sh` in a
//! temp directory, `synchronous_commit = on`), next to SQLite in the same run.

use crate::load::{blast, client, propose, rate};
use crate::server;
use crate::{ms, pct, spread, spread_max, verdict};
use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use std::process::Command;
use std::time::{Duration, Instant};

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/postgres.sh");
const AGENTS: usize = 64;
const INGEST: usize = 12_000;
const WARMUP: usize = 1_000;
const ROUNDS: usize = 300;
const MILLION: u64 = 1_000_000;

struct Pg {
    dir: tempfile::TempDir,
    url: String,
}

impl Drop for Pg {
    fn drop(&mut self) {
        let _ = Command::new(SCRIPT).args(["stop", self.dir.path().join("pg").to_str().unwrap_or_default()]).output();
    }
}

impl Pg {
    fn start() -> Result<Pg> {
        let dir = tempfile::Builder::new().prefix("assent-bench-pg").tempdir()?;
        let out = Command::new(SCRIPT)
            .args([
                "start",
                dir.path().join("pg").to_str().context("path")?,
                "--until-pid",
                &std::process::id().to_string(),
            ])
            .output()?;
        if !out.status.success() {
            bail!("PostgreSQL did not start: {}", String::from_utf8_lossy(&out.stderr));
        }
        let admin = String::from_utf8_lossy(&out.stdout).trim().to_string();
        let pg = Pg { url: admin.replace("/postgres", "/team"), dir };
        pg.psql(&admin, "CREATE DATABASE team")?;
        Ok(pg)
    }

    fn pgpass(&self) -> String {
        self.dir.path().join("pg/pgpass").to_string_lossy().to_string()
    }

    fn psql(&self, url: &str, sql: &str) -> Result<String> {
        let out = Command::new("psql")
            .args([url, "-v", "ON_ERROR_STOP=1", "-At", "-c", sql])
            .env("PGPASSFILE", self.pgpass())
            .output()?;
        if !out.status.success() {
            bail!("psql: {}", String::from_utf8_lossy(&out.stderr));
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    }

    fn node(&self, name: &str) -> Result<(server::Proc, std::path::PathBuf)> {
        server::assent_with(&[
            ("ASSENT_STORE".into(), self.url.clone()),
            ("ASSENT_NODE".into(), name.into()),
            ("ASSENT_PERSON".into(), format!("{name}-person")),
            ("PGPASSFILE".into(), self.pgpass()),
        ])
    }
}

/// Ingest, cross-node wake and the first page at a million proposals.
pub async fn bench() -> Result<()> {
    println!("\n== team: the team store on PostgreSQL (synchronous_commit = on), next to SQLite");
    let pg = Pg::start()?;

    // Durable ingest, the same load on each store.
    let (sqlite, bin) = server::assent()?;
    let home = sqlite.home.as_ref().context("home")?.path().to_path_buf();
    let tokens = server::agents(&bin, &home, AGENTS)?;
    blast(&sqlite.base, &tokens, WARMUP, 0).await?;
    let (s_lat, s_wall) = blast(&sqlite.base, &tokens, INGEST, WARMUP).await?;
    drop(sqlite);
    let (a, bin) = pg.node("alpha")?;
    let a_home = a.home.as_ref().context("home")?.path().to_path_buf();
    let tokens = server::agents(&bin, &a_home, AGENTS)?;
    blast(&a.base, &tokens, WARMUP, 0).await?;
    let (p_lat, p_wall) = blast(&a.base, &tokens, INGEST, WARMUP).await?;
    let (s_rate, p_rate) = (rate(s_lat.len(), s_wall), rate(p_lat.len(), p_wall));
    println!("  ingest, SQLite:     {:>7.0} proposals/s   {}", s_rate, spread(&s_lat));
    println!("  ingest, PostgreSQL: {:>7.0} proposals/s   {}", p_rate, spread(&p_lat));
    let share = p_rate / s_rate * 100.0;
    println!("  => PostgreSQL at {share:.0}% of SQLite (target >= 50%): {}", verdict(share >= 50.0));

    // A decision made on B wakes the agent waiting on A.
    let (b, _) = pg.node("beta")?;
    let b_owner = server::owner(b.home.as_ref().context("home")?.path())?;
    let agent = tokens[0].clone();
    let (ca, cb) = (client()?, client()?);
    let mut wake = Vec::with_capacity(ROUNDS);
    for i in 0..ROUNDS + 20 {
        let id = propose(&ca, &a.base, &agent, i).await?;
        let (c, url, token) = (ca.clone(), format!("{}/proposals/{id}?wait=30", a.base), agent.clone());
        let waiter = tokio::spawn(async move {
            let v: Value = c.get(&url).bearer_auth(&token).send().await?.json().await?;
            anyhow::Ok((Instant::now(), v["status"].as_str().unwrap_or_default().to_string()))
        });
        tokio::time::sleep(Duration::from_millis(15)).await;
        let sent = Instant::now();
        let r = cb
            .post(format!("{}/proposals/{id}/decision", b.base))
            .bearer_auth(&b_owner)
            .json(&json!({"outcome": "reject", "reason": "benchmark"}))
            .send()
            .await?;
        if !r.status().is_success() {
            bail!("the decision on B answered {}", r.status());
        }
        let (answered, status) = waiter.await??;
        if status != "rejected" {
            bail!("the waiter on A saw {status}");
        }
        if i >= 20 {
            wake.push(answered.saturating_duration_since(sent));
        }
    }
    wake.sort();
    let p99 = pct(&wake, 0.99);
    println!("  decision on B -> waiter on A answered ({ROUNDS} rounds): {}", spread_max(&wake));
    println!("  => cross-node wake p99 {} (target < 50 ms): {}", ms(p99), verdict(p99 < Duration::from_millis(50)));

    // The first page of the inbox with a million team proposals (loaded in bulk, as node alpha's
    // history; what is timed is B's API answering the inbox's first page).
    let started = Instant::now();
    let have: u64 = pg.psql(&pg.url, "SELECT count(*) FROM proposals")?.parse()?;
    pg.psql(
        &pg.url,
        &format!(
            "BEGIN; SET LOCAL assent.copying = 'on'; \
             INSERT INTO proposals (id, node, kind, class, agent, title, payload, preview, status, created_at, updated_at, expires_at) \
             SELECT 'p_bulk' || g, 'alpha', 'tool.call', 'decision_only', 'bench-' || (g % {AGENTS}), 'Run the test suite (' || g || ')', \
             '{{\"tool\":\"Bash\",\"input\":{{\"command\":\"cargo test\"}}}}', '{{\"type\":\"tool_call\"}}', \
             CASE WHEN g % 100 = 0 THEN 'pending' ELSE 'rejected' END, 1700000000000 + g, 1700000000000 + g, 4000000000000 \
             FROM generate_series(1, {}) g; COMMIT; ANALYZE proposals;",
            MILLION.saturating_sub(have)
        ),
    )?;
    let total: u64 = pg.psql(&pg.url, "SELECT count(*) FROM proposals")?.parse()?;
    println!("  loaded to {total} team proposals in {:.0} s", started.elapsed().as_secs_f64());
    for (label, query) in [("first page", ""), ("first page, pending only", "&status=pending")] {
        let mut lat = Vec::new();
        for i in 0..60 {
            let t = Instant::now();
            let r = cb.get(format!("{}/proposals?limit=50{query}", b.base)).bearer_auth(&b_owner).send().await?;
            let v: Value = r.json().await?;
            if i >= 10 {
                lat.push(t.elapsed());
            }
            if v["items"].as_array().map_or(0, Vec::len) != 50 {
                bail!("the {label} had {} items", v["items"].as_array().map_or(0, Vec::len));
            }
        }
        lat.sort();
        println!(
            "  {label} of {total} (50 items, through B's API): {}  => target < 50 ms: {}",
            spread(&lat),
            verdict(pct(&lat, 0.99) < Duration::from_millis(50))
        );
    }
    drop((a, b));
    Ok(())
}
