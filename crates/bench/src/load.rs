//! Load from a second process over loopback: ingest, wake latency and many open waits.

use crate::server;
use crate::{ms, pct, spread, spread_max, verdict};
use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

const AGENTS: usize = 64;
const INGEST: usize = 24_000;
const WARMUP: usize = 2_000;
const WAITS: usize = 10_000;

/// The number of waits (ASSENT_BENCH_WAITS; fewer to profile the server).
fn waits_wanted() -> usize {
    std::env::var("ASSENT_BENCH_WAITS").ok().and_then(|v| v.parse().ok()).unwrap_or(WAITS)
}

pub fn client() -> Result<reqwest::Client> {
    Ok(reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(120))
        .pool_max_idle_per_host(usize::MAX)
        .build()?)
}

fn body(i: usize) -> Value {
    json!({
        "kind": "tool.call",
        "title": format!("Run the test suite ({i})"),
        "summary": "Runs the workspace tests before the release is tagged.",
        "payload": {"tool": "Bash", "input": {"command": "cargo test --workspace --locked", "description": "Run every test"}}
    })
}

/// `n` proposals from `tokens.len()` concurrent agents (each its own connection); the
/// latencies, sorted, and the wall time.
pub async fn blast(base: &str, tokens: &[String], n: usize, offset: usize) -> Result<(Vec<Duration>, Duration)> {
    let per = n.div_ceil(tokens.len());
    let start = Instant::now();
    let mut tasks = Vec::new();
    for (a, token) in tokens.iter().enumerate() {
        let (c, url, token) = (client()?, format!("{base}/proposals"), token.clone());
        tasks.push(tokio::spawn(async move {
            let mut lat = Vec::with_capacity(per);
            for i in 0..per {
                let t = Instant::now();
                let r = c.post(&url).bearer_auth(&token).json(&body(offset + a * per + i)).send().await?;
                let status = r.status();
                let _ = r.bytes().await?;
                if status.as_u16() != 201 {
                    bail!("proposal answered {status}");
                }
                lat.push(t.elapsed());
            }
            Ok(lat)
        }));
    }
    let mut all = Vec::with_capacity(n);
    for t in tasks {
        all.extend(t.await??);
    }
    let wall = start.elapsed();
    all.sort();
    Ok((all, wall))
}

pub fn rate(n: usize, wall: Duration) -> f64 {
    n as f64 / wall.as_secs_f64()
}

/// Durable ingest next to the bare axum ceiling.
pub async fn ingest() -> Result<()> {
    println!("\n== ingest: {AGENTS} concurrent agents, {INGEST} proposals (tool.call), after {WARMUP} warm-up");
    let ceiling = server::ceiling()?;
    let fake: Vec<String> = (0..AGENTS).map(|i| format!("token-{i}")).collect();
    blast(&ceiling.base, &fake, WARMUP, 0).await?;
    let c_cpu = server::cpu_seconds(ceiling.pid());
    let (c_lat, c_wall) = blast(&ceiling.base, &fake, INGEST, WARMUP).await?;
    let c_cpu = server::cpu_seconds(ceiling.pid()) - c_cpu;
    drop(ceiling);

    let (srv, bin) = server::assent()?;
    let home = srv.home.as_ref().context("home")?.path().to_path_buf();
    let tokens = server::agents(&bin, &home, AGENTS)?;
    blast(&srv.base, &tokens, WARMUP, 0).await?;
    let (a_cpu, own_cpu) = (server::cpu_seconds(srv.pid()), server::cpu_seconds(std::process::id()));
    let (a_lat, a_wall) = blast(&srv.base, &tokens, INGEST, WARMUP).await?;
    let a_cpu = server::cpu_seconds(srv.pid()) - a_cpu;
    let own_cpu = server::cpu_seconds(std::process::id()) - own_cpu;
    let (c_rate, a_rate) = (rate(c_lat.len(), c_wall), rate(a_lat.len(), a_wall));
    let share = a_rate / c_rate * 100.0;
    let p99 = pct(&a_lat, 0.99);
    println!("  ceiling (bare axum, parses the same JSON, stores nothing): {:>8.0} req/s   {}", c_rate, spread(&c_lat));
    println!(
        "  assent  (validated, stored durably, acknowledged 201):    {:>8.0} proposals/s   {}",
        a_rate,
        spread(&a_lat)
    );
    println!(
        "  => {share:.0}% of the ceiling (target >= 40% in the median of five runs): {}; p99 {} (target < 25 ms): {}",
        verdict(share >= 40.0),
        ms(p99),
        verdict(p99 < Duration::from_millis(25))
    );
    let per = |cpu: f64, n: usize| cpu / n as f64 * 1e6;
    println!(
        "  CPU per request: bare axum {:.0} us, assent {:.0} us (this load generator {:.0} us), wall {:.0} us per request on 2 cores",
        per(c_cpu, c_lat.len()),
        per(a_cpu, a_lat.len()),
        per(own_cpu, a_lat.len()),
        a_wall.as_secs_f64() / a_lat.len() as f64 * 2e6
    );
    let (rss, pss) = server::memory_mib(srv.pid());
    println!("  server memory after {} stored proposals: RSS {rss:.0} MiB, PSS {pss:.0} MiB", INGEST + WARMUP);
    Ok(())
}

pub async fn propose(c: &reqwest::Client, base: &str, token: &str, i: usize) -> Result<String> {
    let r = c.post(format!("{base}/proposals")).bearer_auth(token).json(&body(i)).send().await?;
    let v: Value = r.json().await?;
    Ok(v["id"].as_str().context("no id")?.to_string())
}

/// The owner approves proposal `id` through the owner API (the desktop's own path).
pub async fn approve(c: &reqwest::Client, base: &str, owner: &str, id: &str) -> Result<()> {
    let r = c
        .post(format!("{base}/proposals/{id}/decision"))
        .bearer_auth(owner)
        .json(&json!({"outcome": "approve"}))
        .send()
        .await?;
    if !r.status().is_success() {
        bail!("decision answered {}", r.status());
    }
    Ok(())
}

/// An agent's long-poll on proposal `id` (30 s), on its own task: when it was answered, and
/// the status it heard.
pub fn waiter(
    c: &reqwest::Client,
    base: &str,
    token: &str,
    id: &str,
) -> tokio::task::JoinHandle<Result<(Instant, String)>> {
    let (c, url, token) = (c.clone(), format!("{base}/proposals/{id}?wait=30"), token.to_string());
    tokio::spawn(async move {
        let r = c.get(&url).bearer_auth(&token).send().await?;
        let v: Value = r.json().await?;
        anyhow::Ok((Instant::now(), v["status"].as_str().unwrap_or_default().to_string()))
    })
}

/// How soon a decision answers the agent's wait.
pub async fn wake() -> Result<()> {
    const ROUNDS: usize = 400;
    println!("\n== wake: an agent waits (GET ?wait=30), the owner decides; {ROUNDS} rounds");
    let server::Fresh { srv, home, mut agents, owner, .. } = server::fresh(1)?;
    let agent = agents.remove(0);
    let (ca, co) = (client()?, client()?);
    let mut wake = Vec::with_capacity(ROUNDS);
    let mut after_ack = Vec::with_capacity(ROUNDS);
    let mut decision = Vec::with_capacity(ROUNDS);
    for i in 0..ROUNDS + 20 {
        let id = propose(&ca, &srv.base, &agent, i).await?;
        let wait = waiter(&ca, &srv.base, &agent, &id);
        // Let the wait reach the server and subscribe; a lost wake would show as a 30 s outlier.
        tokio::time::sleep(Duration::from_millis(15)).await;
        let sent = Instant::now();
        approve(&co, &srv.base, &owner, &id).await?;
        let acked = Instant::now();
        let (answered, status) = wait.await??;
        if status != "approved" {
            bail!("the waiter saw {status}");
        }
        if i >= 20 {
            wake.push(answered.saturating_duration_since(sent));
            after_ack.push(answered.saturating_duration_since(acked));
            decision.push(acked - sent);
        }
    }
    for v in [&mut wake, &mut after_ack, &mut decision] {
        v.sort();
    }
    println!("  decision request (durable commit included): {}", spread(&decision));
    println!("  decision sent -> waiter answered:           {}", spread_max(&wake));
    let sync = fsync_times(&home, ROUNDS)?;
    println!("  the limit, one fsync of the database's disk:   {}", spread(&sync));
    let (p50, p99) = (pct(&wake, 0.5), pct(&wake, 0.99));
    println!(
        "  => wake p50 {} (target < 1 ms): {}; p99 {} (target < 2 ms): {}",
        ms(p50),
        verdict(p50 < Duration::from_millis(1)),
        ms(p99),
        verdict(p99 < Duration::from_millis(2))
    );
    Ok(())
}

/// How long `n` small appends, each made durable with fdatasync, take in `dir` (the server's
/// home, so the same disk): the floor under any durable decision. Sorted.
fn fsync_times(dir: &std::path::Path, n: usize) -> Result<Vec<Duration>> {
    use std::io::Write;
    let path = dir.join("fsync-probe");
    let mut f = std::fs::OpenOptions::new().create(true).append(true).open(&path)?;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        f.write_all(&[0u8; 512])?;
        f.sync_data()?;
        out.push(t.elapsed());
    }
    std::fs::remove_file(&path)?;
    out.sort();
    Ok(out)
}

/// 10,000 open waits: memory, and every one answered soon after its decision.
pub async fn waits() -> Result<()> {
    let waits = waits_wanted();
    println!("\n== waits: {waits} open long-poll waits from {AGENTS} agents, then every proposal decided");
    let server::Fresh { srv, agents: tokens, owner, .. } = server::fresh(AGENTS)?;
    let (rss0, pss0) = server::memory_mib(srv.pid());

    // The proposals.
    let per = waits / AGENTS + 1;
    let mut ids: Vec<(String, usize)> = Vec::with_capacity(waits);
    let mut make = Vec::new();
    for (a, token) in tokens.iter().enumerate() {
        let (c, base, token) = (client()?, srv.base.clone(), token.clone());
        make.push(tokio::spawn(async move {
            let mut mine = Vec::new();
            for i in 0..per {
                if a * per + i < waits {
                    mine.push((propose(&c, &base, &token, a * per + i).await?, a));
                }
            }
            anyhow::Ok(mine)
        }));
    }
    for m in make {
        ids.extend(m.await??);
    }
    let (rss1, pss1) = server::memory_mib(srv.pid());

    let kernel0 = kernel_socket_kib();
    // The waits: one connection each.
    let clients: Vec<reqwest::Client> = (0..AGENTS).map(|_| client()).collect::<Result<_>>()?;
    let mut waiting = Vec::with_capacity(waits);
    for (id, a) in &ids {
        let (c, url, token) = (clients[*a].clone(), format!("{}/proposals/{id}?wait=90", srv.base), tokens[*a].clone());
        waiting.push(tokio::spawn(async move {
            let r = c.get(&url).bearer_auth(&token).send().await?;
            let v: Value = r.json().await?;
            anyhow::Ok((Instant::now(), v["status"].as_str().unwrap_or_default().to_string()))
        }));
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    let before = server::sockets(srv.pid());
    while server::sockets(srv.pid()) < waits && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // A moment for the last requests to be read and subscribed.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let open = server::sockets(srv.pid());
    let (rss, pss) = server::memory_mib(srv.pid());
    println!("  server when started: RSS {rss0:.0} MiB, PSS {pss0:.0} MiB");
    println!(
        "  server with the {waits} proposals filed, before the waits: RSS {rss1:.0} MiB, PSS {pss1:.0} MiB ({before} sockets)"
    );
    let per_wait = (rss - rss1) * 1024.0 / waits as f64;
    println!(
        "  server with {open} connections open: RSS {rss:.0} MiB = {:.0} MB, PSS {pss:.0} MiB; {per_wait:.1} KiB more per wait",
        rss * 1_048_576.0 / 1_000_000.0,
    );
    // Both ends of each connection are on this machine: half is the server's.
    let kernel = (kernel_socket_kib() - kernel0) / 2.0 / waits as f64;
    println!("  the limit, what the kernel itself holds per open connection (socket and inode): {kernel:.1} KiB");
    println!(
        "  => server RSS {:.0} MB (target < 100 MB): {}",
        rss * 1_048_576.0 / 1_000_000.0,
        verdict(rss < 100.0 * 1_000_000.0 / 1_048_576.0)
    );

    // Decide them all, in batches; note when each batch was sent.
    let co = client()?;
    let mut sent_at = Vec::with_capacity(waits);
    let first = Instant::now();
    for chunk in ids.chunks(500) {
        let items: Vec<Value> = chunk.iter().map(|(id, _)| json!({"id": id, "outcome": "approve"})).collect();
        let sent = Instant::now();
        let r = co
            .post(format!("{}/decisions", srv.base))
            .bearer_auth(&owner)
            .json(&json!({"items": items}))
            .send()
            .await?;
        let v: Value = r.json().await?;
        if v["decided"].as_u64() != Some(chunk.len() as u64) {
            bail!("a batch decided {} of {}", v["decided"], chunk.len());
        }
        sent_at.extend(std::iter::repeat_n(sent, chunk.len()));
    }
    let decided = first.elapsed();
    let mut lag = Vec::with_capacity(waits);
    let mut last = first;
    for (w, sent) in waiting.into_iter().zip(sent_at) {
        let (t, status) = w.await??;
        if status != "approved" {
            bail!("a waiter saw {status}");
        }
        lag.push(t.saturating_duration_since(sent));
        last = last.max(t);
    }
    lag.sort();
    let worst = pct(&lag, 1.0);
    println!(
        "  {waits} decisions in {} (batches of 500); each wait answered after its decision: {}",
        ms(decided),
        spread_max(&lag)
    );
    println!(
        "  => all answered within {} of their decisions (target < 1 s): {}; last answer {} after the first decision",
        ms(worst),
        verdict(worst < Duration::from_secs(1)),
        ms(last - first)
    );
    drop(srv);
    Ok(())
}

/// What the kernel holds for TCP sockets, machine-wide: their slab objects (the socket and
/// its inode), in KiB. Needs root to read `/proc/slabinfo`; 0 without.
fn kernel_socket_kib() -> f64 {
    let info = std::fs::read_to_string("/proc/slabinfo").unwrap_or_default();
    info.lines()
        .filter(|l| l.starts_with("TCP ") || l.starts_with("sock_inode_cache "))
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            Some(f.get(1)?.parse::<f64>().ok()? * f.get(3)?.parse::<f64>().ok()?)
        })
        .sum::<f64>()
        / 1024.0
}
