//! Rules: durable ingest with 1,000 rules next to ingest with none (fresh servers, alternated,
//! the best of two runs each), and how fast `POST /v1/rules/test` answers with those rules.

use crate::load::blast;
use crate::server;
use crate::{ms, pct, verdict};
use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

const AGENTS: usize = 64;
const INGEST: usize = 16_000;
const WARMUP: usize = 2_000;
const RULES: usize = 1_000;
const TESTS: usize = 3_000;

/// A thousand rules of every shape, none of which matches the benchmark's proposals (`cargo test
/// --workspace --locked` by Bash), though many are looked at for them: command prefixes that
/// start with `cargo`, rules on the tool `Bash`, agent rules.
fn rule(i: usize) -> Value {
    match i % 8 {
        0 => json!({"effect": "allow", "match": {"tool": "Bash", "input": format!("cargo build-{i}")}}),
        1 => json!({"effect": "deny", "match": {"tool": "Bash", "input": format!("tool{i} --force")}}),
        2 => json!({"effect": "allow", "match": {"tool": format!("mcp__server{i}__*")}}),
        3 => {
            json!({"effect": "allow", "match": {"kind": "file.write", "path": format!("/home/me/project-{i}/src/**")}})
        }
        4 => {
            json!({"effect": "ask", "match": {"kind": "http.request", "method": "DELETE", "host": format!("api{i}.example.com")}})
        }
        5 => json!({"effect": "allow", "match": {"agent": format!("helper-{i}"), "tool": "Bash"}}),
        6 => json!({"effect": "deny", "match": {"tool": "Bash", "path": format!("/etc/conf-{i}/**")}}),
        _ => {
            json!({"effect": "allow", "match": {"tool": format!("Tool{i}"), "input": format!("run{i}")}, "expires_in": 86_400})
        }
    }
}

async fn add_rules(base: &str, owner: &str) -> Result<Duration> {
    let c = reqwest::Client::builder().no_proxy().build()?;
    let start = Instant::now();
    for i in 0..RULES {
        let r = c.post(format!("{base}/rules")).bearer_auth(owner).json(&rule(i)).send().await?;
        if r.status().as_u16() != 201 {
            bail!("adding rule {i} answered {}: {}", r.status(), r.text().await.unwrap_or_default());
        }
    }
    Ok(start.elapsed())
}

/// One ingest run on a fresh server with `rules` rules; proposals/s and p99.
async fn run(rules: bool) -> Result<(f64, Duration, Option<Duration>, Option<Vec<Duration>>)> {
    let (srv, bin) = server::assent()?;
    let home = srv.home.as_ref().context("home")?.path().to_path_buf();
    let owner = server::owner(&home)?;
    let tokens = server::agents(&bin, &home, AGENTS)?;
    let added = if rules { Some(add_rules(&srv.base, &owner).await?) } else { None };
    blast(&srv.base, &tokens, WARMUP, 0).await?;
    let (lat, wall) = blast(&srv.base, &tokens, INGEST, WARMUP).await?;
    let tests = if rules { Some(test_latencies(&srv.base, &owner).await?) } else { None };
    Ok((lat.len() as f64 / wall.as_secs_f64(), pct(&lat, 0.99), added, tests))
}

async fn test_latencies(base: &str, owner: &str) -> Result<Vec<Duration>> {
    let c = reqwest::Client::builder().no_proxy().build()?;
    let body =
        json!({"kind": "tool.call", "payload": {"tool": "Bash", "input": {"command": "cargo build-8 --release"}}});
    let url = format!("{base}/rules/test");
    let mut lat = Vec::with_capacity(TESTS);
    for i in 0..TESTS + 200 {
        let t = Instant::now();
        let r = c.post(&url).bearer_auth(owner).json(&body).send().await?;
        let v: Value = r.json().await?;
        if v["effect"] != "allow" {
            bail!("rules/test said {v}");
        }
        if i >= 200 {
            lat.push(t.elapsed());
        }
    }
    lat.sort();
    Ok(lat)
}

/// The benchmark.
pub async fn bench() -> Result<()> {
    println!(
        "\n== rules: ingest with {RULES} rules next to none ({AGENTS} agents, {INGEST} proposals, fresh servers, best of 2 each)"
    );
    let (mut none, mut with) = (Vec::new(), Vec::new());
    let (mut added, mut tests) = (None, None);
    for _ in 0..2 {
        let (r, p99, _, _) = run(false).await?;
        none.push((r, p99));
        let (r, p99, a, t) = run(true).await?;
        with.push((r, p99));
        added = a.or(added);
        tests = t.or(tests);
    }
    let best =
        |v: &[(f64, Duration)]| v.iter().copied().fold((0.0, Duration::ZERO), |b, x| if x.0 > b.0 { x } else { b });
    let ((n_rate, n_p99), (w_rate, w_p99)) = (best(&none), best(&with));
    let runs = |v: &[(f64, Duration)]| v.iter().map(|(r, _)| format!("{r:.0}")).collect::<Vec<_>>().join(", ");
    println!("  no rules:      {n_rate:>8.0} proposals/s  p99 {}   (runs: {})", ms(n_p99), runs(&none));
    println!("  {RULES} rules:   {w_rate:>8.0} proposals/s  p99 {}   (runs: {})", ms(w_p99), runs(&with));
    let kept = w_rate / n_rate * 100.0;
    println!("  => {kept:.0}% of the ingest without rules (target >= 90%): {}", verdict(kept >= 90.0));
    if let Some(a) = added {
        println!("  adding the {RULES} rules one by one over the API took {:.1} s", a.as_secs_f64());
    }
    if let Some(t) = tests {
        let p99 = pct(&t, 0.99);
        println!(
            "  POST /v1/rules/test with {RULES} rules, {TESTS} calls over loopback: p50 {}  p99 {} (target < 1 ms): {}",
            ms(pct(&t, 0.5)),
            ms(p99),
            verdict(p99 < Duration::from_millis(1))
        );
    }
    Ok(())
}
