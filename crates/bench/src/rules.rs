//! Rules: durable ingest with 1,000 rules next to ingest with none (fresh servers, alternated,
//! the median of three runs each), how fast `POST /v1/rules/test` answers with those rules, and what
//! a rule-heavy agent input costs: 32 commands of nearly 4 MiB at once, next to 32 inputs of the
//! same size that are not commands (what the body alone costs the server).

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
        0 => json!({"effect": "allow", "match": {"tool": "Bash", "input": format!("cargo build -p crate{i}")}}),
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

/// What a burst of large inputs costs a server: its peak resident memory over its idle, the
/// slowest answer of the burst, and the p50 of ordinary `rules/test` calls made meanwhile.
struct Burst {
    peak_mib: f64,
    slowest: Duration,
    ordinary_p50: Duration,
}

const BURST: usize = 32;

/// A tool call of nearly 4 MiB: a command (`git;` a million times, opaque: every deny with a
/// command matches it) or the same text as another tool's input, which a deny of that tool
/// refuses, so both are decided by a rule and answered alike.
fn large(command: bool) -> Value {
    let text = "git;".repeat(1_000_000);
    match command {
        true => json!({"kind": "tool.call", "payload": {"tool": "Bash", "input": {"command": text}}}),
        false => json!({"kind": "tool.call", "payload": {"tool": "BigText", "input": {"text": text}}}),
    }
}

async fn burst(base: &str, owner: &str, pid: u32, command: bool) -> Result<Burst> {
    let c = reqwest::Client::builder().no_proxy().build()?;
    let url = format!("{base}/rules/test");
    let idle = crate::server::memory_mib(pid).0;
    let body = std::sync::Arc::new(serde_json::to_vec(&large(command))?);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let sampler = {
        let stop = stop.clone();
        tokio::spawn(async move {
            let mut peak = 0.0f64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                peak = peak.max(crate::server::memory_mib(pid).0);
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
            peak
        })
    };
    let ordinary = {
        let (c, url, owner, stop) = (c.clone(), url.clone(), owner.to_string(), stop.clone());
        tokio::spawn(async move {
            let small = json!({"kind": "tool.call", "payload": {"tool": "Bash", "input": {"command": "git status"}}});
            let (mut lat, mut refused) = (Vec::new(), 0usize);
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let t = Instant::now();
                match c.post(&url).bearer_auth(&owner).json(&small).send().await {
                    Ok(r) if r.status().as_u16() == 200 => {
                        let _ = r.bytes().await;
                        lat.push(t.elapsed());
                    }
                    _ => refused += 1,
                }
            }
            lat.sort();
            (lat, refused)
        })
    };
    let mut slowest = Duration::ZERO;
    for _ in 0..3 {
        let started = Instant::now();
        let calls: Vec<_> = (0..BURST)
            .map(|_| {
                let (c, url, owner, body) = (c.clone(), url.clone(), owner.to_string(), body.clone());
                tokio::spawn(async move {
                    let r = c
                        .post(&url)
                        .bearer_auth(&owner)
                        .header("content-type", "application/json")
                        .body(body.as_ref().clone())
                        .send()
                        .await?;
                    let status = r.status().as_u16();
                    let v: Value = r.json().await?;
                    anyhow::ensure!(status == 200 && v["effect"] == "deny", "a large input answered {status}: {v}");
                    anyhow::Ok(started.elapsed())
                })
            })
            .collect();
        for call in calls {
            slowest = slowest.max(call.await??);
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let peak = sampler.await?;
    let (lat, refused) = ordinary.await?;
    anyhow::ensure!(
        refused == 0 && !lat.is_empty(),
        "{refused} ordinary calls failed during a burst, {} answered",
        lat.len()
    );
    Ok(Burst { peak_mib: (peak - idle).max(0.0), slowest, ordinary_p50: pct(&lat, 0.5) })
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
    let body = json!({"kind": "tool.call", "payload": {"tool": "Bash", "input": {"command": "cargo build -p crate8 --release"}}});
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

const MANY: usize = 6_000;
const LISTED: usize = 10_000;

/// Thousands of rules: what adding one costs as their count grows (glob rules, the kind whose
/// compiled sets used to be rebuilt whole), and what a page of the rule list costs with the
/// latest 10,000 proposals to count against.
async fn many() -> Result<()> {
    println!("\n== rules: {MANY} rules added one by one, then the rule list with {LISTED} recent proposals");
    let (srv, bin) = server::assent()?;
    let home = srv.home.as_ref().context("home")?.path().to_path_buf();
    let owner = server::owner(&home)?;
    let c = reqwest::Client::builder().no_proxy().build()?;
    let mut took = Vec::with_capacity(MANY);
    for i in 0..MANY {
        let body = match i % 2 {
            0 => json!({"effect": "allow", "match": {"kind": "file.write", "path": format!("/home/me/p{i}/src/**")}}),
            _ => json!({"effect": "allow", "match": {"tool": format!("mcp__s{i}__*")}}),
        };
        let t = Instant::now();
        let r = c.post(format!("{}/rules", srv.base)).bearer_auth(&owner).json(&body).send().await?;
        if r.status().as_u16() != 201 {
            bail!("adding rule {i} answered {}", r.status());
        }
        took.push(t.elapsed());
    }
    let window = |from: usize| {
        let mut v = took[from..from + 500].to_vec();
        v.sort();
        pct(&v, 0.5)
    };
    let (first, last) = (window(0), window(MANY - 500));
    println!("  adding a rule: p50 {} for the first 500, p50 {} for the last 500", ms(first), ms(last));
    let ok = last <= first.mul_f64(1.5) + Duration::from_millis(1);
    println!(
        "  => the last cost {:.2}x the first (ceiling: 1.5x + 1 ms): {}",
        last.as_secs_f64() / first.as_secs_f64(),
        verdict(ok)
    );
    let tokens = server::agents(&bin, &home, 16)?;
    blast(&srv.base, &tokens, LISTED, 0).await?;
    let mut pages = Vec::new();
    for _ in 0..7 {
        let t = Instant::now();
        let r = c.get(format!("{}/rules", srv.base)).bearer_auth(&owner).send().await?;
        let v: Value = r.json().await?;
        anyhow::ensure!(v["items"].as_array().map_or(0, Vec::len) == 200, "a page of the rule list: {v}");
        pages.push(t.elapsed());
    }
    pages.sort();
    let t = Instant::now();
    let (mut after, mut listed) = (None::<i64>, 0usize);
    loop {
        let url = match after {
            Some(a) => format!("{}/rules?limit=1000&after={a}", srv.base),
            None => format!("{}/rules?limit=1000", srv.base),
        };
        let v: Value = c.get(url).bearer_auth(&owner).send().await?.json().await?;
        listed += v["items"].as_array().map_or(0, Vec::len);
        match v["next_after"].as_i64() {
            Some(a) => after = Some(a),
            None => break,
        }
    }
    let whole = t.elapsed();
    anyhow::ensure!(listed == MANY + 1, "the pages listed {listed} rules");
    println!(
        "  GET /v1/rules (a page of 200, counted against {LISTED} proposals): p50 {} of 7 (target < 500 ms): {}",
        ms(pages[3]),
        verdict(pages[3] < Duration::from_millis(500))
    );
    println!("  every rule, {} pages of 1,000: {:.2} s", MANY.div_ceil(1000), whole.as_secs_f64());
    Ok(())
}

/// The benchmark.
pub async fn bench() -> Result<()> {
    many().await?;
    println!(
        "\n== rules: ingest with {RULES} rules next to none ({AGENTS} agents, {INGEST} proposals, fresh servers, 3 runs each alternated, medians)"
    );
    let (mut none, mut with) = (Vec::new(), Vec::new());
    let (mut added, mut tests) = (None, None);
    for _ in 0..3 {
        let (r, p99, _, _) = run(false).await?;
        none.push((r, p99));
        let (r, p99, a, t) = run(true).await?;
        with.push((r, p99));
        added = a.or(added);
        tests = t.or(tests);
    }
    let median = |v: &[(f64, Duration)]| {
        let mut v = v.to_vec();
        v.sort_by(|a, b| a.0.total_cmp(&b.0));
        v[v.len() / 2]
    };
    let ((n_rate, n_p99), (w_rate, w_p99)) = (median(&none), median(&with));
    let runs = |v: &[(f64, Duration)]| v.iter().map(|(r, _)| format!("{r:.0}")).collect::<Vec<_>>().join(", ");
    println!("  no rules:      {n_rate:>8.0} proposals/s  p99 {}   (runs: {})", ms(n_p99), runs(&none));
    println!("  {RULES} rules:   {w_rate:>8.0} proposals/s  p99 {}   (runs: {})", ms(w_p99), runs(&with));
    let kept = w_rate / n_rate * 100.0;
    println!("  => {kept:.0}% of the ingest without rules (target >= 90%): {}", verdict(kept >= 90.0));
    if let Some(a) = added {
        println!("  adding the {RULES} rules one by one over the API took {:.1} s", a.as_secs_f64());
    }
    // A rule-heavy agent input, on a fresh server with the rules: each kind of burst five times,
    // alternated, the median of each figure printed.
    let (srv, _bin) = server::assent()?;
    let home = srv.home.as_ref().context("home")?.path().to_path_buf();
    let owner = server::owner(&home)?;
    add_rules(&srv.base, &owner).await?;
    let c = reqwest::Client::builder().no_proxy().build()?;
    let deny_big = json!({"effect": "deny", "match": {"tool": "BigText"}});
    let r = c.post(format!("{}/rules", srv.base)).bearer_auth(&owner).json(&deny_big).send().await?;
    anyhow::ensure!(r.status().as_u16() == 201, "adding the BigText rule answered {}", r.status());
    let (mut cmd, mut other) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        cmd.push(burst(&srv.base, &owner, srv.pid(), true).await?);
        other.push(burst(&srv.base, &owner, srv.pid(), false).await?);
    }
    let mid = |v: &[Burst], f: fn(&Burst) -> f64| {
        let mut xs: Vec<f64> = v.iter().map(f).collect();
        xs.sort_by(f64::total_cmp);
        xs[xs.len() / 2]
    };
    let (cm, om) = (mid(&cmd, |b| b.peak_mib), mid(&other, |b| b.peak_mib));
    let (cs, os) = (mid(&cmd, |b| b.slowest.as_secs_f64()), mid(&other, |b| b.slowest.as_secs_f64()));
    let (cp, op) = (mid(&cmd, |b| b.ordinary_p50.as_secs_f64()), mid(&other, |b| b.ordinary_p50.as_secs_f64()));
    println!(
        "  {BURST} inputs of 4 MiB at once, 3 bursts a run, 5 runs each alternated, medians, against {RULES} rules (rules/test):"
    );
    println!(
        "    as commands (`git;` x 1e6): peak +{cm:.0} MiB, slowest answer {:.0} ms, ordinary calls meanwhile p50 {:.2} ms",
        cs * 1e3,
        cp * 1e3
    );
    println!(
        "    the same size, not a command: peak +{om:.0} MiB, slowest answer {:.0} ms, ordinary calls meanwhile p50 {:.2} ms",
        os * 1e3,
        op * 1e3
    );
    let ok = cm <= om * 1.25 + 16.0 && cp <= op * 1.5 + 0.0005;
    println!(
        "  => reading the commands adds {:.0} MiB and {:.2} ms to ordinary calls (ceiling: 25% + 16 MiB of the body's own cost, and 50% + 0.5 ms): {}",
        cm - om,
        (cp - op) * 1e3,
        verdict(ok)
    );
    drop(srv);
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
