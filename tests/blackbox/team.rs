//! A team inbox: several real `assent serve` processes share one real PostgreSQL database.
//! A proposal is filed on the node its agent talks to, decided from any node, and carried out
//! only where it was filed.

use crate::harness::{Server, ends_within};
use crate::pg::{Postgres, shared};
use futures_util::StreamExt;
use reqwest::Method;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// A node on the team database `url`.
pub(crate) async fn node(pg: &Postgres, url: &str, name: &str, person: &str) -> Server {
    node_with(pg, url, name, person, "", &[]).await
}

/// [`node`] with `config` as its config.toml and `extra` environment.
async fn node_with(pg: &Postgres, url: &str, name: &str, person: &str, config: &str, extra: &[(&str, &str)]) -> Server {
    let env = pg.env(url, name, person);
    let mut env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    env.extend(extra);
    Server::start_with(config, &env).await
}

/// A new team database (its URL) and two nodes on it: `alpha`, Ana's, and `beta`, Ben's.
async fn alpha_and_beta(pg: &Postgres) -> (String, Server, Server) {
    let url = pg.new_db();
    let a = node(pg, &url, "alpha", "ana").await;
    let b = node(pg, &url, "beta", "ben").await;
    (url, a, b)
}

/// The `data` of the next events on `s`'s stream (owner), for `secs`.
async fn events(s: &Server, n: usize, secs: u64) -> tokio::task::JoinHandle<Vec<Value>> {
    let res = s.http.get(format!("{}/v1/events", s.url)).bearer_auth(&s.owner).send().await.unwrap();
    assert_eq!(res.status(), 200);
    tokio::spawn(async move {
        let mut stream = res.bytes_stream();
        let (mut buf, mut out) = (String::new(), Vec::new());
        let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
        while out.len() < n {
            let Ok(Some(Ok(chunk))) = tokio::time::timeout_at(deadline, stream.next()).await else { break };
            buf.push_str(&String::from_utf8_lossy(&chunk));
            while let Some(end) = buf.find("\n\n") {
                let ev = buf[..end].to_string();
                buf.drain(..end + 2);
                if let Some(data) = ev.lines().find_map(|l| l.strip_prefix("data: ")) {
                    out.push(serde_json::from_str(data).unwrap_or(Value::Null));
                }
            }
        }
        out
    })
}

fn audit(pg: &Postgres, url: &str, id: &str) -> Vec<String> {
    let rows = pg.psql(
        url,
        &format!(
            "SELECT node || ' ' || actor || ' ' || channel || ' ' || coalesce(from_status, '-') || ' ' || to_status \
             FROM audit WHERE proposal_id = '{id}' ORDER BY seq"
        ),
    );
    rows.lines().map(str::to_string).collect()
}

#[tokio::test]
async fn filed_on_one_node_decided_on_another_applied_once_where_it_was_filed() {
    let pg = shared();
    let (url, a, b) = alpha_and_beta(pg).await;
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("notes.txt");

    // B's inbox is open before anything happens (the app's list follows the same events).
    let seen_on_b = events(&b, 4, 20).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let body = json!({"kind": "file.write", "title": "notes",
        "payload": {"path": target.to_str().unwrap(), "content": "from alpha\n"}});
    let (st, p) = a.try_propose(body).await;
    assert_eq!(st, 201, "{p}");
    let id = p["id"].as_str().unwrap().to_string();
    assert_eq!(p["node"], "alpha");

    // A's agent waits on A; the person on B sees it in B's inbox and approves with B's CLI.
    let waiting = {
        let (http, url, tok, id) = (a.http.clone(), a.url.clone(), a.agent.clone(), id.clone());
        tokio::spawn(async move {
            let r = http.get(format!("{url}/v1/proposals/{id}?wait=60")).bearer_auth(tok).send().await.unwrap();
            (Instant::now(), r.json::<Value>().await.unwrap())
        })
    };
    let (_, page) = b.req(Method::GET, "/proposals?status=pending", Some(&b.owner), None).await;
    assert_eq!(page["items"][0]["id"], id.as_str(), "{page}");
    assert_eq!(page["items"][0]["node"], "alpha");
    // B's own agent has no business with it: an agent's name is its node's.
    let (st, _) = b.get(&id, &b.agent).await;
    assert_eq!(st, 404);
    let (_, mine) = b.req(Method::GET, "/proposals", Some(&b.agent), None).await;
    assert_eq!(mine["items"].as_array().unwrap().len(), 0, "{mine}");

    let out = b.cli(&["approve", &id, "--reason", "fine by me"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let decided_at = Instant::now();
    let (woke_at, settled) = waiting.await.unwrap();
    assert_eq!(settled["status"], "applied", "{settled}");
    assert!(woke_at.duration_since(decided_at) < Duration::from_secs(10));
    assert_eq!(settled["decision"]["by"], "ben");
    assert_eq!(settled["decision"]["node"], "beta");
    assert_eq!(settled["decision"]["channel"], "cli");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "from alpha\n");

    // Exactly once, and by A: B decided, only A applied.
    assert_eq!(
        audit(pg, &url, &id),
        [
            "alpha default agent - pending",
            "beta ben cli pending approved",
            "alpha assent system approved applying",
            "alpha assent system applying applied",
        ]
    );
    // B's stream followed it live: created, approved, applying, applied, each change once and
    // in order (its `from`). B reads the proposal as it is when it hears of a change, so when A
    // applies within milliseconds an event may already carry a later status.
    let seen = seen_on_b.await.unwrap();
    let froms: Vec<Option<&str>> = seen.iter().map(|e| e["from"].as_str()).collect();
    assert_eq!(froms, [None, Some("pending"), Some("approved"), Some("applying")], "{seen:?}");
    assert_eq!(seen[0]["type"], "proposal.created");
    assert_eq!(seen[3]["proposal"]["status"], "applied", "{seen:?}");
    // Both nodes agree.
    let (_, on_b) = b.get(&id, &b.owner).await;
    assert_eq!(on_b["status"], "applied");
}

#[tokio::test]
async fn rules_are_the_teams_and_agents_and_credentials_each_nodes() {
    let pg = shared();
    let (url, a, b) = alpha_and_beta(pg).await;
    // A rule made on B decides what A's agents propose.
    let (st, rule) =
        b.req(Method::POST, "/rules", Some(&b.owner), Some(json!({"effect": "allow", "match": {"tool": "ls"}}))).await;
    assert_eq!(st, 201, "{rule}");
    assert_eq!(rule["node"], "beta");
    assert_eq!(rule["created_by"], "ben");
    let mut decided = Value::Null;
    for _ in 0..50 {
        let (_, p) = a.try_propose(json!({"kind": "tool.call", "payload": {"tool": "ls"}})).await;
        if p["status"] == "approved" {
            decided = p;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(decided["decision"]["by"], "rule", "the rule made on B never reached A");
    // Agents are per node: an agent added on A is unknown on B.
    let (st, added) = a.req(Method::POST, "/agents", Some(&a.owner), Some(json!({"name": "ci"}))).await;
    assert_eq!(st, 201, "{added}");
    let token = added["token"].as_str().unwrap();
    let (st, _) = b.req(Method::GET, "/proposals", Some(token), None).await;
    assert_eq!(st, 401);
    let (_, on_b) = b.req(Method::GET, "/agents", Some(&b.owner), None).await;
    assert!(!on_b.to_string().contains("\"ci\""), "{on_b}");
    // A node's agents can be revoked there only, and each node keeps its own `default`.
    let (st, _) = b.req(Method::DELETE, "/agents/ci", Some(&b.owner), None).await;
    assert_eq!(st, 404);
    // `assent doctor` checks the team store: reachable, its schema, the nodes in it.
    let out = a.cli(&["doctor", "--json"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    let db = v["checks"].as_array().unwrap().iter().find(|c| c["name"] == "database").cloned().unwrap_or_default();
    let detail = db["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("node `alpha` among 2 (alpha, beta)"), "{v}");
    // And says so when it cannot be used (here: a database that does not exist).
    let mut elsewhere = a.env.clone();
    elsewhere.retain(|(k, _)| k != "ASSENT_STORE");
    elsewhere.push(("ASSENT_STORE".into(), format!("{}_missing", url)));
    let out = crate::harness::cli(a.home(), &elsewhere, &["doctor", "--json"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    assert!(!out.status.success());
    let db = v["checks"].as_array().unwrap().iter().find(|c| c["name"] == "database").cloned().unwrap_or_default();
    assert!(db["detail"].as_str().unwrap_or_default().contains("cannot be used"), "{v}");
}

#[tokio::test]
async fn a_second_server_with_the_same_node_name_refuses_to_start() {
    let pg = shared();
    let url = pg.new_db();
    let _a = node(pg, &url, "alpha", "ana").await;
    let home = tempfile::tempdir().unwrap();
    let mut env = pg.env(&url, "alpha", "ana");
    env.push(("ASSENT_OWNER_CREDENTIAL".into(), "file".into()));
    let out = crate::harness::cli(home.path(), &env, &["serve", "--port", "0"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("another Assent server is running as node `alpha`"), "{err}");
    assert!(!err.contains("assent-test"), "the password leaked: {err}");
}

#[tokio::test]
async fn bad_store_settings_get_a_clear_error_without_the_password() {
    let pg = shared();
    let url = pg.new_db();
    let home = tempfile::tempdir().unwrap();
    let run = |store: &str, pgpass: &str| {
        let env = vec![
            ("ASSENT_OWNER_CREDENTIAL".to_string(), "file".to_string()),
            ("ASSENT_STORE".into(), store.to_string()),
            ("PGPASSFILE".into(), pgpass.to_string()),
        ];
        let out = crate::harness::cli(home.path(), &env, &["serve", "--port", "0"]);
        assert!(!out.status.success(), "{store} started");
        String::from_utf8_lossy(&out.stderr).to_string()
    };
    let pgpass = pg.pgpass.to_str().unwrap();
    // A password in the URL is refused before anything is tried.
    let e = run(&url.replace("assent@", "assent:assent-test@"), pgpass);
    assert!(e.contains("holds a password") && !e.contains("assent-test"), "{e}");
    // Not PostgreSQL.
    let e = run("mysql://x@127.0.0.1/db", pgpass);
    assert!(e.contains("PostgreSQL URL"), "{e}");
    // Nobody listening.
    let e = run("postgres://assent@127.0.0.1:1/nothing", pgpass);
    assert!(e.contains("cannot connect to postgres://assent@127.0.0.1:1/nothing"), "{e}");
    // Wrong credentials (no pgpass, no keychain entry).
    let e = run(&url, "/nonexistent");
    assert!(e.contains("cannot connect to") && e.contains("password"), "{e}");
    // A schema from a newer Assent.
    pg.psql(&url, "CREATE TABLE _sqlx_migrations (version BIGINT PRIMARY KEY, description TEXT NOT NULL, installed_on TIMESTAMPTZ NOT NULL DEFAULT now(), success BOOLEAN NOT NULL, checksum BYTEA NOT NULL, execution_time BIGINT NOT NULL)");
    pg.psql(&url, "INSERT INTO _sqlx_migrations VALUES (99990101000000, 'future', now(), true, '\\x00', 1)");
    let e = run(&url, pgpass);
    assert!(e.contains("newer than this Assent knows"), "{e}");
}

#[tokio::test]
async fn a_single_users_history_moves_into_the_team_store_once_verified() {
    let pg = shared();
    let url = pg.new_db();
    // `migrate` brings a fresh database up to date, and says so when it already is.
    let mut team_env = pg.env(&url, "laptop", "ana");
    team_env.push(("ASSENT_OWNER_CREDENTIAL".into(), "file".into()));
    let scratch = tempfile::tempdir().unwrap();
    let out = crate::harness::cli(scratch.path(), &team_env, &["store", "migrate"]);
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success() && text.contains("schema 0 -> "), "{text}{}", String::from_utf8_lossy(&out.stderr));
    let out = crate::harness::cli(scratch.path(), &team_env, &["store", "migrate"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("is up to date"));

    // A person's history on SQLite.
    let mut s = Server::start().await;
    let kept = s.propose_tool("kept as it was").await;
    s.decide(&kept, json!({"outcome": "reject", "reason": "not today"})).await;
    let pending = s.propose_tool("still pending").await;
    assert!(s.cli(&["agent", "add", "ci-bot"]).status.success());
    let (st, _) =
        s.req(Method::POST, "/rules", Some(&s.owner), Some(json!({"effect": "deny", "match": {"tool": "rm"}}))).await;
    assert_eq!(st, 201);
    let (_, trail_before) = s.req(Method::GET, &format!("/proposals/{kept}/audit"), Some(&s.owner), None).await;
    let (_, before) = s.get(&kept, &s.owner).await;

    // While it runs, the history is not copied (it could change underneath).
    let mut copy_env = s.env.clone();
    copy_env.extend(pg.env(&url, "laptop", "ana"));
    let busy = crate::harness::cli(s.home(), &copy_env, &["store", "copy", "--to", &url]);
    assert!(!busy.status.success(), "copied while the server ran");
    s.stop();
    let out = crate::harness::cli(s.home(), &copy_env, &["store", "copy", "--to", &url]);
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("as node `laptop`") && text.contains("2 rules were not copied"), "{text}");
    let line = |t: &str| text.lines().find(|l| l.trim_start().starts_with(t)).unwrap_or_default().to_string();
    assert!(line("proposals").contains(" 2 rows") && line("audit").contains(" 3 rows"), "{text}");
    assert_eq!(pg.psql(&url, "SELECT count(*) FROM proposals WHERE node = 'laptop'"), "2");
    assert_eq!(pg.psql(&url, "SELECT count(*) FROM rules"), "0");
    // Once: a second copy is refused and changes nothing.
    let again = crate::harness::cli(s.home(), &copy_env, &["store", "copy", "--to", &url]);
    assert!(!again.status.success());
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("already has"),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    assert_eq!(pg.psql(&url, "SELECT count(*) FROM proposals"), "2");

    // The same home, now a node of the team: its history is there, trails and all, and its
    // agents' tokens still work.
    s.env.extend(pg.env(&url, "laptop", "ana"));
    s.spawn();
    let (_, after) = s.get(&kept, &s.owner).await;
    assert_eq!(after["decision"], before["decision"]);
    assert_eq!(after["payload"], before["payload"]);
    assert_eq!(after["node"], "laptop");
    let (_, trail_after) = s.req(Method::GET, &format!("/proposals/{kept}/audit"), Some(&s.owner), None).await;
    let strip = |v: &Value| -> Vec<(Value, Value, Value)> {
        v["items"].as_array().unwrap().iter().map(|e| (e["actor"].clone(), e["to"].clone(), e["at"].clone())).collect()
    };
    assert_eq!(strip(&trail_after), strip(&trail_before));
    let (st, p) = s.get(&pending, &s.agent).await;
    assert_eq!((st.as_u16(), p["status"].as_str()), (200, Some("pending")));
    let (st, _) = s.decide(&pending, json!({"outcome": "approve"})).await;
    assert_eq!(st, 200);
}

#[cfg(feature = "crash-points")]
#[tokio::test]
async fn a_node_killed_while_applying_settles_its_own_write_when_it_comes_back() {
    let pg = shared();
    let url = pg.new_db();
    let mut a = node_with(pg, &url, "alpha", "ana", "", &[("ASSENT_CRASH_AT", "applied-before-commit")]).await;
    let b = node(pg, &url, "beta", "ben").await;
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("once.txt");
    let body =
        json!({"kind": "file.write", "payload": {"path": target.to_str().unwrap(), "content": "exactly once\n"}});
    let (st, p) = a.try_propose(body).await;
    assert_eq!(st, 201, "{p}");
    let id = p["id"].as_str().unwrap().to_string();
    // B approves; A carries it out, writes the file, and dies before recording it.
    let (st, _) = b.decide(&id, json!({"outcome": "approve"})).await;
    assert_eq!(st, 200);
    let mut child = a.child.take().unwrap();
    let died = ends_within(&mut child, Duration::from_secs(10)).await;
    assert!(died, "A did not reach the crash point: {}", a.stderr());
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "exactly once\n");
    let (_, on_b) = b.get(&id, &b.owner).await;
    assert_eq!(on_b["status"], "applying", "B never applies A's write: {on_b}");
    // A comes back (its name is free again: the lock went with its connection) and its
    // reconciler finds the write done; B sees it settle.
    a.env.retain(|(k, _)| k != "ASSENT_CRASH_AT");
    a.spawn();
    let (_, settled) = b.req(Method::GET, &format!("/proposals/{id}?wait=30"), Some(&b.owner), None).await;
    assert_eq!(settled["status"], "applied", "{settled}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "exactly once\n");
    let trail = audit(pg, &url, &id);
    assert_eq!(trail.last().map(String::as_str), Some("alpha assent system applying applied"), "{trail:?}");
    assert!(!trail.iter().any(|r| r.starts_with("beta assent")), "B applied something: {trail:?}");
}

#[tokio::test]
async fn a_burst_of_proposals_is_each_answered_as_stored_within_the_pending_limit() {
    let pg = shared();
    let url = pg.new_db();
    let a = node_with(pg, &url, "alpha", "ana", "max_pending_per_agent = 25\n", &[]).await;
    let b = node(pg, &url, "beta", "ben").await;
    let post = |body: Value, key: Option<String>| {
        let (http, url, tok) = (a.http.clone(), a.url.clone(), a.agent.clone());
        tokio::spawn(async move {
            let mut r = http.post(format!("{url}/v1/proposals")).bearer_auth(tok).json(&body);
            if let Some(k) = key {
                r = r.header("Idempotency-Key", k);
            }
            let r = r.send().await.unwrap();
            (r.status().as_u16(), r.json::<Value>().await.unwrap())
        })
    };
    let tool =
        |n: usize| json!({"kind": "tool.call", "payload": {"tool": "Bash", "input": {"command": format!("echo {n}")}}});
    a.propose_tool("first").await;

    // 40 at once, 24 places left: exactly 24 stored, each answered with what is stored.
    let burst: Vec<_> = (0..40).map(|n| post(tool(n), None)).collect();
    let (mut created, mut refused) = (Vec::new(), 0);
    for h in burst {
        match h.await.unwrap() {
            (201, p) => created.push(p),
            (429, e) => {
                assert_eq!(e["error"]["code"], "too_many_pending", "{e}");
                refused += 1;
            }
            other => panic!("{other:?}"),
        }
    }
    assert_eq!((created.len(), refused), (24, 16));
    for p in &created {
        let (st, stored) = b.get(p["id"].as_str().unwrap(), &b.owner).await;
        assert_eq!(st, 200);
        for field in ["id", "status", "node", "payload", "created_at", "agent"] {
            assert_eq!(stored[field], p[field], "{field}");
        }
        assert_eq!(stored["node"], "alpha");
    }
    let count = |sql: &str| pg.psql(&url, sql).trim().parse::<usize>().unwrap();
    assert_eq!(count("SELECT count(*) FROM proposals WHERE agent = 'default' AND status = 'pending'"), 25);
    assert_eq!(count("SELECT count(*) FROM audit WHERE to_status = 'pending'"), 25, "one created row each");

    // Decisions on B make room on A; retries with one key, sent at once, file it once.
    for p in created.iter().take(6) {
        let (st, _) = b.decide(p["id"].as_str().unwrap(), json!({"outcome": "reject"})).await;
        assert_eq!(st, 200);
    }
    let retries: Vec<_> = (0..6).map(|_| post(tool(99), Some("retry-1".into()))).collect();
    let mut ids = std::collections::BTreeSet::new();
    let mut statuses = Vec::new();
    for h in retries {
        let (st, p) = h.await.unwrap();
        statuses.push(st);
        ids.insert(p["id"].as_str().unwrap().to_string());
    }
    statuses.sort_unstable();
    assert_eq!(statuses, [200, 200, 200, 200, 200, 201]);
    assert_eq!(ids.len(), 1);
    assert_eq!(count("SELECT count(*) FROM proposals WHERE idempotency_key = 'retry-1'"), 1);
    // And the room left is exactly what the decisions made.
    let more: Vec<_> = (100..110).map(|n| post(tool(n), None)).collect();
    let mut ok = 0;
    for h in more {
        ok += usize::from(h.await.unwrap().0 == 201);
    }
    assert_eq!(ok, 5);
    assert_eq!(count("SELECT count(*) FROM proposals WHERE agent = 'default' AND status = 'pending'"), 25);
}

#[tokio::test]
async fn a_group_is_one_nodes_agents_never_decided_across_nodes() {
    let pg = shared();
    let (_url, a, b) = alpha_and_beta(pg).await;
    // Each node's own `default` agent files a group named the same.
    let body = |what: &str| json!({"kind": "tool.call", "title": what, "group_id": "deploy", "payload": {"tool": "deploy", "input": {"env": what}}});
    let (st, on_a) = a.try_propose(body("staging")).await;
    assert_eq!(st, 201, "{on_a}");
    let (st, on_b) = b.try_propose(body("production")).await;
    assert_eq!(st, 201, "{on_b}");
    // Deciding "the group `deploy` of default" is ambiguous: two nodes' agents have one.
    let decide = |node: Option<&str>| {
        let mut d = json!({"group_id": "deploy", "agent": "default", "outcome": "approve"});
        if let Some(n) = node {
            d["node"] = json!(n);
        }
        d
    };
    let (st, v) = a.req(Method::POST, "/decisions", Some(&a.owner), Some(decide(None))).await;
    assert_eq!((st.as_u16(), v["error"]["code"].as_str()), (422, Some("ambiguous_group")), "{v}");
    for id in [&on_a["id"], &on_b["id"]] {
        assert_eq!(a.get(id.as_str().unwrap(), &a.owner).await.1["status"], "pending", "nothing decided");
    }
    // Named by its node, only that node's group is decided.
    let (st, v) = a.req(Method::POST, "/decisions", Some(&a.owner), Some(decide(Some("alpha")))).await;
    assert_eq!(st.as_u16(), 200, "{v}");
    assert_eq!(a.get(on_a["id"].as_str().unwrap(), &a.owner).await.1["status"], "approved");
    assert_eq!(a.get(on_b["id"].as_str().unwrap(), &a.owner).await.1["status"], "pending", "beta's production group");
}

/// Posts `n` `ls` calls on `s` at once; their statuses.
async fn ls_calls(s: &Server, n: usize) -> Vec<String> {
    let calls =
        (0..n).map(|i| s.try_propose(json!({"kind": "tool.call", "payload": {"tool": "ls", "input": {"n": i}}})));
    futures_util::future::join_all(calls)
        .await
        .into_iter()
        .map(|(st, p)| {
            assert_eq!(st, 201, "{p}");
            p["status"].as_str().unwrap_or_default().to_string()
        })
        .collect()
}

#[tokio::test]
async fn a_rule_removed_on_one_node_decides_nothing_anywhere_once_removed_even_unheard() {
    let pg = shared();
    let (url, a, b) = alpha_and_beta(pg).await;
    let allow = json!({"effect": "allow", "match": {"tool": "ls"}});
    let (st, rule) = a.req(Method::POST, "/rules", Some(&a.owner), Some(allow.clone())).await;
    assert_eq!(st, 201, "{rule}");
    let heard = async |s: &Server| {
        for _ in 0..100 {
            if ls_calls(s, 1).await == ["approved"] {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("the rule never reached the other node");
    };
    heard(&b).await;
    // The nodes stop hearing each other: every listening connection is cut, so B learns of
    // the removal only when it reconnects (half a second at best). The removal still holds on
    // B the moment it answers on A.
    let cut = "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
               WHERE datname = current_database() AND query ILIKE '%LISTEN%' AND pid <> pg_backend_pid()";
    assert_ne!(pg.psql(&url, cut).trim(), "0", "no listening connection was cut");
    let (st, _) =
        a.req(Method::DELETE, &format!("/rules/{}", rule["id"].as_str().unwrap()), Some(&a.owner), None).await;
    assert_eq!(st, 204);
    let after = ls_calls(&b, 40).await;
    assert!(after.iter().all(|s| s == "pending"), "decided by a removed rule: {after:?}");

    // A deny added on A holds on B the moment it answers, over an allow B still holds.
    let (st, _) = a.req(Method::POST, "/rules", Some(&a.owner), Some(allow)).await;
    assert_eq!(st, 201);
    heard(&b).await;
    assert_ne!(pg.psql(&url, cut).trim(), "0", "no listening connection was cut");
    let deny = json!({"effect": "deny", "match": {"tool": "ls"}, "note": "no more ls"});
    let (st, _) = a.req(Method::POST, "/rules", Some(&a.owner), Some(deny)).await;
    assert_eq!(st, 201);
    let after = ls_calls(&b, 40).await;
    assert!(after.iter().all(|s| s == "rejected"), "allowed over a deny added first: {after:?}");
}
