//! The store's queries on a real SQLite file, through the storage contract the engine uses:
//! keyset paging, the compare-and-set of a status change, and the audit log the database keeps
//! append-only.

#![allow(missing_docs)]

use assent_core::proposal::{Channel, Proposal};
use assent_core::status::Status;
use assent_core::store::{Filing, Inserted, ListQuery, NewRecord, Records, Transition, Transitioned};
use assent_core::time::Timestamp;
use assent_store::SqliteStore;
use serde_json::json;

async fn store(dir: &std::path::Path) -> SqliteStore {
    let s = SqliteStore::open(&dir.join("assent.db")).await.unwrap_or_else(|e| panic!("{e}"));
    s.add_agent("a", [7; 32], Timestamp(1), false).await.unwrap_or_else(|e| panic!("{e}"));
    s
}

mod common;
use common::record;

/// Proposal `p_000n`, pending, never expiring.
fn pending(n: i64) -> Proposal {
    let mut p = common::proposal(&format!("p_{n:04}"), n);
    p.expires_at = Timestamp(i64::MAX / 2);
    p
}

async fn insert(s: &SqliteStore, n: i64) {
    assert!(matches!(s.insert(record(pending(n))).await, Ok(Inserted::Created { .. })));
}

#[tokio::test]
async fn keyset_pages_are_newest_first_without_gaps_or_repeats() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let s = store(dir.path()).await;
    for n in 0..7 {
        insert(&s, n).await;
    }
    let mut seen = Vec::new();
    let mut before = None;
    loop {
        let q = ListQuery { limit: 3, before, ..Default::default() };
        let page = s.list(&q).await.unwrap_or_else(|e| panic!("{e}"));
        seen.extend(page.iter().map(|(_, p)| p.id.clone()));
        if page.len() < 3 {
            break;
        }
        before = page.last().map(|(seq, _)| *seq);
    }
    let want: Vec<String> = (0..7).rev().map(|n| format!("p_{n:04}")).collect();
    assert_eq!(seen, want);
    // A filter and the cursor together.
    let q = ListQuery { limit: 10, text: Some("\"n\":3".into()), ..Default::default() };
    let found = s.list(&q).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(found.iter().map(|(_, p)| p.id.as_str()).collect::<Vec<_>>(), vec!["p_0003"]);
}

#[tokio::test]
async fn a_status_change_applies_only_to_the_status_it_was_computed_from() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let s = store(dir.path()).await;
    insert(&s, 1).await;
    let change =
        |to| Transition::status_change("p_0001".into(), Status::Pending, to, Timestamp(5_000), "owner", Channel::Cli);
    let first = s.transition(vec![change(Status::Approved)], true).await.unwrap_or_else(|e| panic!("{e}"));
    assert!(matches!(&first[0], Transitioned::Done(p) if p.status == Status::Approved));
    // Standing alone, the second change is reported as a conflict with the status found...
    let second = s.transition(vec![change(Status::Rejected)], false).await.unwrap_or_else(|e| panic!("{e}"));
    assert!(matches!(second[0], Transitioned::Conflict(Some(Status::Approved))), "{second:?}");
    // ...and as part of an all-or-nothing set, it fails the set.
    assert!(s.transition(vec![change(Status::Rejected)], true).await.is_err());
    let audit = s.audit_for("p_0001").await.unwrap_or_else(|e| panic!("{e}"));
    let path: Vec<Status> = audit.iter().map(|e| e.to).collect();
    assert_eq!(path, vec![Status::Pending, Status::Approved], "the refused change left no trace");
}

#[tokio::test]
async fn the_database_keeps_the_audit_log_append_only() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let s = store(dir.path()).await;
    insert(&s, 1).await;
    s.close().await;
    let conn = rusqlite::Connection::open(dir.path().join("assent.db")).unwrap_or_else(|e| panic!("{e}"));
    for sql in [
        "UPDATE audit SET actor = 'x'",
        "DELETE FROM audit",
        "UPDATE agent_log SET event = 'added'",
        "DELETE FROM agent_log",
    ] {
        let r = conn.execute(sql, []);
        assert!(r.is_err(), "{sql} was allowed");
    }
}

#[tokio::test]
async fn a_write_that_fails_half_way_leaves_nothing_of_itself() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let s = store(dir.path()).await;
    insert(&s, 1).await;
    insert(&s, 2).await;
    // A new proposal superseding p_0001 withdraws it first, then its row fails to go in (its
    // id is taken): the withdrawal must go with it.
    let mut p = pending(2);
    p.supersedes = Some("p_0001".into());
    assert!(s.insert(record(p)).await.is_err(), "a taken id was filed");
    let still = s.get("p_0001").await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(still.map(|p| p.status), Some(Status::Pending));
    let audit = s.audit_for("p_0001").await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(audit.iter().map(|e| e.to).collect::<Vec<_>>(), vec![Status::Pending]);
    // And the writer goes on: the next change commits.
    let change = Transition::status_change(
        "p_0001".into(),
        Status::Pending,
        Status::Approved,
        Timestamp(6_000),
        "owner",
        Channel::Cli,
    );
    let done = s.transition(vec![change], false).await.unwrap_or_else(|e| panic!("{e}"));
    assert!(matches!(&done[0], Transitioned::Done(p) if p.status == Status::Approved));
}

#[tokio::test]
async fn what_each_agent_stored_is_summed_per_minute_and_a_day_is_kept() {
    const MINUTE: i64 = 60_000;
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let s = store(dir.path()).await;
    s.add_agent("b", [8; 32], Timestamp(1), false).await.unwrap_or_else(|e| panic!("{e}"));
    let day = 24 * 60 * MINUTE;
    // Agent a: two proposals in minute 10, one in minute 11; agent b: one in minute 10.
    let mut want: std::collections::BTreeMap<(String, i64), (u64, i64)> = Default::default();
    for (n, agent, at) in
        [(1, "a", 10 * MINUTE + 5), (2, "a", 10 * MINUTE + 59_000), (3, "a", 11 * MINUTE), (4, "b", 10 * MINUTE + 7)]
    {
        let mut p = pending(n);
        p.agent = agent.into();
        p.created_at = Timestamp(day + at);
        p.updated_at = p.created_at;
        let rec = record(p);
        let bytes = (rec.stored.payload.len() + rec.stored.preview.len()) as u64;
        let e = want.entry((agent.to_string(), at / MINUTE)).or_default();
        e.0 += bytes;
        e.1 = e.1.max(day + at);
        assert!(matches!(s.insert(rec).await, Ok(Inserted::Created { .. })));
    }
    let got = s.stored_bytes_since(Timestamp(0)).await.unwrap_or_else(|e| panic!("{e}"));
    let mut got_rows: Vec<(String, i64, u64)> = got.iter().map(|(a, t, b)| (a.clone(), t.0, *b)).collect();
    got_rows.sort();
    let mut want_rows: Vec<(String, i64, u64)> = want.iter().map(|((a, _), (b, t))| (a.clone(), *t, *b)).collect();
    want_rows.sort();
    assert_eq!(got_rows, want_rows);
    // A minute whose last proposal is before `since` is not read.
    let later = s.stored_bytes_since(Timestamp(day + 10 * MINUTE + 59_001)).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(later.len(), 1, "{later:?}");
    assert_eq!(later[0].1, Timestamp(day + 11 * MINUTE));
    // A proposal of agent a a day and two minutes after minute 10 forgets a's minute 10 (only).
    let mut p = pending(5);
    p.created_at = Timestamp(2 * day + 12 * MINUTE);
    p.updated_at = p.created_at;
    assert!(matches!(s.insert(record(p)).await, Ok(Inserted::Created { .. })));
    let all = s.stored_bytes_since(Timestamp(0)).await.unwrap_or_else(|e| panic!("{e}"));
    let minutes: Vec<(String, i64)> = all.iter().map(|(a, t, _)| (a.clone(), t.0 / MINUTE)).collect();
    assert!(!minutes.contains(&("a".to_string(), (day + 10 * MINUTE) / MINUTE)), "{minutes:?}");
    assert!(minutes.contains(&("a".to_string(), (day + 11 * MINUTE) / MINUTE)), "{minutes:?}");
    assert!(minutes.contains(&("b".to_string(), (day + 10 * MINUTE) / MINUTE)), "{minutes:?}");
    assert_eq!(all.len(), 3, "{all:?}");
}

#[tokio::test]
async fn a_point_read_sees_each_acknowledged_write() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let s = store(dir.path()).await;
    assert!(s.get("p_0001").await.unwrap_or_else(|e| panic!("{e}")).is_none());
    insert(&s, 1).await;
    let read = s.get("p_0001").await.unwrap_or_else(|e| panic!("{e}")).unwrap_or_else(|| panic!("not found"));
    assert_eq!(
        (read.status, read.payload.to_value().into_owned()),
        (Status::Pending, json!({"tool": "t", "input": {"n": 1}}))
    );
    let change = Transition::status_change(
        "p_0001".into(),
        Status::Pending,
        Status::Approved,
        Timestamp(5_000),
        "owner",
        Channel::Cli,
    );
    s.transition(vec![change], true).await.unwrap_or_else(|e| panic!("{e}"));
    let read = s.get("p_0001").await.unwrap_or_else(|e| panic!("{e}")).unwrap_or_else(|| panic!("not found"));
    assert_eq!((read.status, read.updated_at), (Status::Approved, Timestamp(5_000)));
    // Many readers at once, each on a connection of its own or a kept one.
    let reads = (0..16).map(|_| {
        let s = s.clone();
        tokio::spawn(async move { s.get("p_0001").await.map(|p| p.map(|p| p.status)) })
    });
    for r in reads {
        assert_eq!(r.await.unwrap_or_else(|e| panic!("{e}")).unwrap_or_else(|e| panic!("{e}")), Some(Status::Approved));
    }
}

#[tokio::test]
async fn a_point_read_that_cannot_open_its_own_connection_goes_through_the_pool() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let s = store(dir.path()).await;
    insert(&s, 1).await;
    // The open connections keep reading the file; a new one finds no database to open.
    std::fs::rename(dir.path().join("assent.db"), dir.path().join("moved.db")).unwrap_or_else(|e| panic!("{e}"));
    let read = s.get("p_0001").await.unwrap_or_else(|e| panic!("{e}")).map(|p| p.status);
    assert_eq!(read, Some(Status::Pending));
}

#[tokio::test]
async fn the_pending_limit_counts_what_is_stored_across_restarts_and_decisions() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let limited = |n: i64| NewRecord { max_pending: 3, ..record(pending(n)) };
    let code = |r: Result<Inserted, assent_core::error::CoreError>| r.err().map(|e| e.code());
    {
        let s = store(dir.path()).await;
        for n in 0..3 {
            assert_eq!(code(s.insert(limited(n)).await), None);
        }
        assert_eq!(code(s.insert(limited(3)).await), Some("too_many_pending"));
        s.close().await;
    }
    // A store opened again knows nothing in memory: the count comes from the database.
    let s = SqliteStore::open(&dir.path().join("assent.db")).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(code(s.insert(limited(4)).await), Some("too_many_pending"), "three are still pending");
    let decided = Transition::status_change(
        "p_0001".into(),
        Status::Pending,
        Status::Rejected,
        Timestamp(5_000),
        "o",
        Channel::Cli,
    );
    s.transition(vec![decided], true).await.unwrap_or_else(|e| panic!("{e}"));
    s.close().await;
    drop(s);
    let s = SqliteStore::open(&dir.path().join("assent.db")).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(code(s.insert(limited(5)).await), None, "a decision leaves room for one");
    assert_eq!(code(s.insert(limited(6)).await), Some("too_many_pending"));
}

#[tokio::test]
async fn a_rules_decision_is_written_only_while_the_rules_are_as_it_read_them() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let s = store(dir.path()).await;
    assert_eq!(s.rule_seq().await.ok(), Some(0));
    let rule = assent_core::rules::Rule {
        id: "r_1".into(),
        effect: assent_core::rules::Effect::Allow,
        matches: assent_core::rules::RuleMatch { tool: Some("t".into()), ..Default::default() },
        everything: false,
        note: None,
        description: "allow tool t".into(),
        created_by: "owner".into(),
        node: None,
        created_channel: Channel::Api,
        created_at: Timestamp(1),
        expires_at: None,
        matched: 0,
    };
    let added = s.add_rule(rule).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.rule_seq().await.ok(), Some(added));
    // Read before the rule was added: refused, nothing written.
    let stale = NewRecord { rules_seq: Some(added - 1), ..record(pending(1)) };
    assert!(matches!(s.insert(stale).await, Err(assent_core::error::CoreError::RulesChanged)));
    assert!(s.get("p_0001").await.ok().flatten().is_none());
    let current = NewRecord { rules_seq: Some(added), ..record(pending(1)) };
    assert!(matches!(s.insert(current).await, Ok(Inserted::Created { .. })));
    // The removal moves the log on: what read the rule with it in force is refused.
    let removed = s.remove_rule("r_1", "owner", Channel::Api, Timestamp(2)).await.unwrap_or_else(|e| panic!("{e}"));
    let (gone, seq) = removed.unwrap_or_else(|| panic!("the rule was there"));
    assert_eq!((gone.id.as_str(), seq), ("r_1", added + 1));
    let stale = NewRecord { rules_seq: Some(added), ..record(pending(2)) };
    assert!(matches!(s.insert(stale).await, Err(assent_core::error::CoreError::RulesChanged)));
    assert!(s.get("p_0002").await.ok().flatten().is_none());
}
