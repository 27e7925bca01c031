//! Existing homes upgrade in place: a home and a team database made by the last landed build
//! (`tests/fixtures/upgrade`, made by `make.sh` there) open with this build, migrate, and keep
//! every proposal, audit row, rule, rule-log entry and agent as that build answered about them,
//! and the agent's token still works, now with what the new build adds (a lease).

use crate::harness::Server;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/upgrade").join(name)
}

fn copy_dir(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

/// Figures that depend on the day they are read, not on what is stored.
const OF_TODAY: [&str; 2] = ["saved_this_week", "would_have_matched"];

/// Whether everything `old` says is in `new`, the same (what the new build adds may be more).
fn kept(old: &Value, new: &Value, at: &str) -> Result<(), String> {
    match (old, new) {
        (Value::Object(o), Value::Object(n)) => {
            for (k, v) in o.iter().filter(|(k, _)| !OF_TODAY.contains(&k.as_str())) {
                kept(v, n.get(k).unwrap_or(&Value::Null), &format!("{at}.{k}"))?;
            }
            Ok(())
        }
        (Value::Array(o), Value::Array(n)) if o.len() == n.len() => {
            o.iter().zip(n).enumerate().try_for_each(|(i, (a, b))| kept(a, b, &format!("{at}[{i}]")))
        }
        _ if old == new => Ok(()),
        _ => Err(format!("{at}: was {old}, is {new}")),
    }
}

async fn items(s: &Server, path: &str) -> Value {
    let (st, v) = s.req(Method::GET, path, Some(&s.owner), None).await;
    assert_eq!(st, StatusCode::OK, "{path}: {v}");
    if v.is_array() { v } else { v["items"].clone() }
}

/// The upgraded server answers as the old one did, but for what time did since: a proposal
/// pending in the fixture may have expired (and the audit then has that row more).
async fn answers_as_before(s: &Server, expected: &Value) {
    let now = now_ms();
    let old = expected["proposals"].as_array().unwrap();
    // The server expires what is due as it starts: once none that was due is still pending, the
    // proposals and the audit are read as they will stay.
    let mut proposals = items(s, "/proposals?limit=100").await;
    for _ in 0..100 {
        let due_pending = old
            .iter()
            .zip(proposals.as_array().unwrap())
            .any(|(o, n)| o["status"] == "pending" && n["status"] == "pending" && time_ms(&o["expires_at"]) <= now);
        if !due_pending {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        proposals = items(s, "/proposals?limit=100").await;
    }
    assert_eq!(proposals.as_array().unwrap().len(), old.len(), "every proposal is there");
    let mut expired = 0;
    for (o, n) in old.iter().zip(proposals.as_array_mut().unwrap()) {
        if o["status"] == "pending" && n["status"] == "expired" {
            let due = time_ms(&o["expires_at"]);
            assert!(due <= now, "{} expired before its time", o["id"]);
            expired += 1;
            n["status"] = json!("pending");
            n["updated_at"] = o["updated_at"].clone();
            n["settled"] = o["settled"].clone();
        }
    }
    kept(&expected["proposals"], &proposals, "proposals").unwrap();
    let audit = items(s, "/audit?limit=1000").await;
    let old_audit = expected["audit"].as_array().unwrap();
    let new_audit = audit.as_array().unwrap();
    assert_eq!(new_audit.len(), old_audit.len() + expired, "no audit row lost, none added but expiries");
    kept(&Value::Array(old_audit.clone()), &Value::Array(new_audit[..old_audit.len()].to_vec()), "audit").unwrap();
    for (key, path) in [("rules", "/rules"), ("rule_log", "/rules/log?limit=1000"), ("agents", "/agents")] {
        let (mut was, mut now) = (expected[key].clone(), items(s, path).await);
        if key == "rules" {
            // A rule's words are written from its match, which is kept: they may say more in a
            // newer release (that the built-in rule runs confined, that an allow is unconfined).
            for r in was.as_array_mut().into_iter().flatten().chain(now.as_array_mut().into_iter().flatten()) {
                let words = r.as_object_mut().and_then(|o| o.remove("description"));
                assert!(words.as_ref().and_then(Value::as_str).is_some_and(|w| !w.is_empty()), "{r}");
            }
        }
        kept(&was, &now, key).unwrap();
    }
    assert!(old.len() >= 6 && old_audit.len() >= 10, "the fixture holds something to keep");
    assert!(expected["rules"].as_array().is_some_and(|r| !r.is_empty()), "and a rule");
}

fn time_ms(v: &Value) -> i64 {
    serde_json::from_value::<assent_core::time::Timestamp>(v.clone()).unwrap_or_else(|e| panic!("{v}: {e}")).0
}

fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64
}

/// What the new build adds works on the upgraded store: a proposal with a lease.
async fn new_features_work(s: &Server) {
    let body = json!({"kind": "tool.call", "payload": {"tool": "Bash", "input": {"command": "ls"}}, "lease_secs": 30});
    let (st, v) = s.try_propose(body).await;
    assert_eq!(st, StatusCode::CREATED, "{v}");
    assert_eq!(s.get(v["id"].as_str().unwrap(), &s.owner).await.1["lease_secs"], 30);
}

#[tokio::test]
async fn a_home_made_by_the_last_release_opens_migrates_and_keeps_everything() {
    let expected: Value = serde_json::from_str(&std::fs::read_to_string(fixture("expected.json")).unwrap()).unwrap();
    let home = tempfile::tempdir().unwrap();
    copy_dir(&fixture("home"), home.path());
    let s = Server::start_in(home, "", &[], &[]).await;
    answers_as_before(&s, &expected).await;
    new_features_work(&s).await;
}

#[tokio::test]
async fn a_team_database_made_by_the_last_release_opens_migrates_and_keeps_everything() {
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("expected-team.json")).unwrap()).unwrap();
    let pg = crate::pg::shared();
    let url = pg.new_db();
    let restored = std::process::Command::new("psql")
        .args([url.as_str(), "-v", "ON_ERROR_STOP=1", "-q", "-f"])
        .arg(fixture("team.sql"))
        .env("PGPASSFILE", &pg.pgpass)
        .output()
        .unwrap();
    assert!(restored.status.success(), "restoring the dump: {}", String::from_utf8_lossy(&restored.stderr));
    let home = tempfile::tempdir().unwrap();
    copy_dir(&fixture("team"), home.path());
    let env = pg.env(&url, "solo", "owner");
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let s = Server::start_in(home, "", &env, &[]).await;
    answers_as_before(&s, &expected).await;
    new_features_work(&s).await;
}
