//! The store contract: every method of [`Store`], the same assertions, on both databases, a
//! SQLite file and a real PostgreSQL (Debian's, started by `scripts/postgres.sh` for this run,
//! a database per test). A new backend, or a new query in one, is proven here, in-process,
//! before the binary.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use assent_core::credentials::{CredentialMeta, Scheme};
use assent_core::error::CoreError;
use assent_core::light::Gist;
use assent_core::preview::Preview;
use assent_core::proposal::{Channel, Decision, Outcome, Proposal, RuleRef};
use assent_core::remote::Device;
use assent_core::rules::{Effect, Rule, RuleMatch};
use assent_core::status::Status;
use assent_core::store::{Idempotency, Inserted, ListQuery, NewRecord, Store, Transition, Transitioned};
use assent_core::time::Timestamp;
use assent_store::SqliteStore;
use assent_store::pg::{PgStore, TeamOptions};
use serde_json::json;
use std::sync::Arc;

mod common;
use common::{pg_database, proposal, record};

const AGENT: [u8; 32] = [7; 32];

/// Both stores, each fresh, with agent `a` added.
async fn stores() -> Vec<(&'static str, Arc<dyn Store>, Option<tempfile::TempDir>)> {
    let dir = tempfile::tempdir().unwrap();
    let lite: Arc<dyn Store> = Arc::new(SqliteStore::open(&dir.path().join("assent.db")).await.unwrap());
    let opts = TeamOptions {
        url: pg_database().await,
        node: "n1".into(),
        person: "owner".into(),
        password: Some(common::PASSWORD.into()),
    };
    let pg: Arc<dyn Store> = Arc::new(PgStore::open(&opts).await.unwrap_or_else(|e| panic!("{e}")));
    let all = vec![("sqlite", lite, Some(dir)), ("postgres", pg, None)];
    for (_, s, _) in &all {
        s.add_agent("a", AGENT, Timestamp(1), false).await.unwrap();
    }
    all
}

async fn created(s: &Arc<dyn Store>, rec: NewRecord) -> Proposal {
    match s.insert(rec).await {
        Ok(Inserted::Created { proposal, .. }) => proposal,
        other => panic!("not created: {other:?}"),
    }
}

fn change(id: &str, from: Status, to: Status, at: i64) -> Transition {
    Transition::status_change(id.into(), from, to, Timestamp(at), "owner", Channel::Cli)
}

fn rule(id: &str, tool: &str) -> Rule {
    Rule {
        id: id.into(),
        effect: Effect::Allow,
        matches: RuleMatch { tool: Some(tool.into()), ..RuleMatch::default() },
        everything: false,
        note: None,
        description: format!("allow {tool}"),
        created_by: "owner".into(),
        node: None,
        created_channel: Channel::Cli,
        created_at: Timestamp(5),
        expires_at: None,
        matched: 0,
    }
}

#[tokio::test]
async fn inserts_read_back_and_keep_their_promises() {
    for (db, s, _dir) in stores().await {
        let mut p = proposal("p_0001", 1);
        p.lease_secs = Some(15);
        p.session_id = Some("s1".into());
        let got = created(&s, record(p.clone())).await;
        assert_eq!((got.id.as_str(), got.status, got.lease_secs), ("p_0001", Status::Pending, Some(15)), "{db}");
        let read = s.get("p_0001").await.unwrap().expect(db);
        assert!(read.payload.typed().is_some(), "{db}: read back typed as its kind's");
        assert_eq!(
            (read.payload, read.session_id, read.lease_secs),
            (p.payload.clone(), Some("s1".into()), Some(15)),
            "{db}"
        );
        assert!(s.get("p_none").await.unwrap().is_none(), "{db}");
        // A pending proposal with a lease is found by its lease alone; one without is not.
        assert_eq!(s.pending_leases().await.unwrap(), vec![("p_0001".to_string(), 15)], "{db}");

        // The same idempotency key and body: the first proposal, not a second.
        let keyed = |id: &str| {
            let mut r = record(proposal(id, 2));
            r.idempotency = Some(Idempotency { key: "k1".into(), request_sha256: "h".into() });
            r
        };
        let first = created(&s, keyed("p_0002")).await;
        match s.insert(keyed("p_0003")).await {
            Ok(Inserted::Existing(e)) => assert_eq!(e.id, first.id, "{db}"),
            other => panic!("{db}: {other:?}"),
        }

        // A revision of a pending proposal withdraws it, in the same write.
        let mut rev = proposal("p_0004", 4);
        rev.supersedes = Some("p_0001".into());
        match s.insert(record(rev)).await {
            Ok(Inserted::Created { superseded: Some(old), .. }) => assert_eq!(old.status, Status::Withdrawn, "{db}"),
            other => panic!("{db}: {other:?}"),
        }
        assert_eq!(s.get("p_0001").await.unwrap().unwrap().status, Status::Withdrawn, "{db}");
        let mut orphan = proposal("p_0005", 5);
        orphan.supersedes = Some("p_nope".into());
        let e = s.insert(record(orphan)).await.expect_err(db);
        assert_eq!(e.code(), "unknown_supersedes", "{db}");

        // The pending bound counts what is stored.
        assert_eq!(s.count_pending().await.unwrap(), 2, "{db}");
        let mut full = record(proposal("p_0006", 6));
        full.max_pending = 2;
        assert!(matches!(s.insert(full).await, Err(CoreError::TooMany { .. })), "{db}");
        assert!(s.get("p_0006").await.unwrap().is_none(), "{db}: nothing of a refused insert");
    }
}

/// An idempotency key answers with its first proposal for a day, then files a new one: a
/// retry is never a replay of an old decision.
#[tokio::test]
async fn an_idempotency_key_is_a_retry_for_a_day_never_a_replay() {
    let day = assent_core::store::IDEMPOTENCY_TTL_MS;
    for (db, s, _dir) in stores().await {
        let keyed = |id: &str, at: i64| {
            let mut p = proposal(id, 1);
            p.created_at = Timestamp(at);
            p.updated_at = p.created_at;
            p.expires_at = Timestamp(at + 10 * day);
            let mut r = record(p);
            r.idempotency = Some(Idempotency { key: "call_0".into(), request_sha256: "h".into() });
            r
        };
        let first = created(&s, keyed("p_0001", 1_000)).await;
        match s.insert(keyed("p_0002", 1_000 + day)).await {
            Ok(Inserted::Existing(e)) => assert_eq!(e.id, first.id, "{db}: a retry within the day"),
            other => panic!("{db}: {other:?}"),
        }
        let later = created(&s, keyed("p_0003", 1_001 + day)).await;
        assert_eq!(later.id, "p_0003", "{db}: a day on, a new proposal");
        match s.insert(keyed("p_0004", 2_000 + day)).await {
            Ok(Inserted::Existing(e)) => assert_eq!(e.id, "p_0003", "{db}: the new one answers retries now"),
            other => panic!("{db}: {other:?}"),
        }
        assert!(s.get("p_0001").await.unwrap().is_some(), "{db}: the old proposal keeps its history");
    }
}

#[tokio::test]
async fn a_status_change_is_a_compare_and_set_and_atomic_batches_are_all_or_nothing() {
    for (db, s, _dir) in stores().await {
        for n in 1..=3 {
            created(&s, record(proposal(&format!("p_000{n}"), n))).await;
        }
        let done = s.transition(vec![change("p_0001", Status::Pending, Status::Approved, 2_000)], true).await.unwrap();
        assert!(matches!(&done[0], Transitioned::Done(p) if p.status == Status::Approved && p.settled), "{db}");
        let again =
            s.transition(vec![change("p_0001", Status::Pending, Status::Rejected, 2_001)], false).await.unwrap();
        assert!(matches!(again[0], Transitioned::Conflict(Some(Status::Approved))), "{db}: {again:?}");
        let atomic = s.transition(vec![change("p_0001", Status::Pending, Status::Rejected, 2_001)], true).await;
        assert!(matches!(atomic, Err(CoreError::InvalidState { .. })), "{db}: {atomic:?}");
        let none = s.transition(vec![change("p_none", Status::Pending, Status::Rejected, 2_001)], false).await.unwrap();
        assert!(matches!(none[0], Transitioned::Conflict(None)), "{db}");

        // One conflict in an atomic batch: nothing of it is applied.
        let batch = vec![
            change("p_0002", Status::Pending, Status::Rejected, 2_002),
            change("p_0001", Status::Pending, Status::Rejected, 2_002),
        ];
        let r = s.transition(batch.clone(), true).await;
        assert!(matches!(&r, Err(CoreError::InvalidState { message }) if message.contains("p_0001")), "{db}: {r:?}");
        assert_eq!(s.get("p_0002").await.unwrap().unwrap().status, Status::Pending, "{db}: rolled back");
        // Without `atomic`, each stands alone.
        let r = s.transition(batch, false).await.unwrap();
        assert!(matches!(&r[0], Transitioned::Done(_)) && matches!(r[1], Transitioned::Conflict(_)), "{db}");

        // A decision is recorded with the change, and the audit trail has each step in order.
        let mut t = change("p_0003", Status::Pending, Status::Rejected, 2_003);
        t.decision = Some(Decision {
            outcome: Outcome::Reject,
            reason: Some("no".into()),
            feedback: None,
            edited_payload: None,
            approved_sha256: None,
            by: "owner".into(),
            node: None,
            rule: None,
            confine: None,
            hosts: Vec::new(),
            channel: Channel::Cli,
            device: None,
            receipt: None,
            at: Timestamp(2_003),
        });
        t.detail = Some(json!({"reason": "why"}));
        s.transition(vec![t], true).await.unwrap();
        let p = s.get("p_0003").await.unwrap().unwrap();
        assert_eq!(p.decision.map(|d| d.reason), Some(Some("no".into())), "{db}");
        let trail = s.audit_for("p_0003").await.unwrap();
        let steps: Vec<(Option<Status>, Status)> = trail.iter().map(|a| (a.from, a.to)).collect();
        assert_eq!(steps, [(None, Status::Pending), (Some(Status::Pending), Status::Rejected)], "{db}");
        assert_eq!(trail[1].detail, Some(json!({"reason": "why"})), "{db}");
        let all = s.audit_after(0, 100).await.unwrap();
        assert!(all.windows(2).all(|w| w[0].seq < w[1].seq) && all.len() >= 6, "{db}: {}", all.len());
        let later = s.audit_after(all[2].seq, 2).await.unwrap();
        assert_eq!(later.iter().map(|a| a.seq).collect::<Vec<_>>(), [all[3].seq, all[4].seq], "{db}");
    }
}

#[tokio::test]
async fn lists_groups_and_expiry_read_what_was_stored() {
    for (db, s, _dir) in stores().await {
        for n in 1..=5 {
            let mut p = proposal(&format!("p_000{n}"), n);
            p.group_id = (n <= 2).then(|| "g".to_string());
            created(&s, record(p)).await;
        }
        s.transition(vec![change("p_0005", Status::Pending, Status::Rejected, 3_000)], true).await.unwrap();
        let page = s.list(&ListQuery { limit: 2, ..ListQuery::default() }).await.unwrap();
        let ids: Vec<&str> = page.iter().map(|(_, p)| p.id.as_str()).collect();
        assert_eq!(ids, ["p_0005", "p_0004"], "{db}: newest first");
        // As a list shows them: the same rows, the gist stored when each was filed, no payload read.
        let rows = s.list_rows(&ListQuery { limit: 2, ..ListQuery::default() }).await.unwrap();
        assert_eq!(rows.iter().map(|(seq, _)| *seq).collect::<Vec<_>>(), [page[0].0, page[1].0], "{db}");
        for ((_, whole), (_, row)) in page.iter().zip(&rows) {
            assert_eq!(row.proposal.id, whole.id, "{db}");
            assert_eq!(row.proposal.payload, serde_json::Value::Null, "{db}: the payload is not read");
            assert_eq!(row.gist, Gist::of(&whole.payload.to_value(), &whole.preview.to_value()), "{db}");
            assert_eq!(row.proposal.status, whole.status, "{db}");
        }
        let next = s.list(&ListQuery { limit: 10, before: Some(page[1].0), ..ListQuery::default() }).await.unwrap();
        assert_eq!(next.iter().map(|(_, p)| p.id.as_str()).collect::<Vec<_>>(), ["p_0003", "p_0002", "p_0001"], "{db}");
        let pending =
            s.list(&ListQuery { status: Some(Status::Pending), limit: 10, ..ListQuery::default() }).await.unwrap();
        assert_eq!(pending.len(), 4, "{db}");
        let theirs = s.list(&ListQuery { agent: Some("b".into()), limit: 10, ..ListQuery::default() }).await.unwrap();
        assert!(theirs.is_empty(), "{db}");
        let group = s.group(Some("a"), "g").await.unwrap();
        assert_eq!(group.iter().map(|p| p.id.as_str()).collect::<Vec<_>>(), ["p_0001", "p_0002"], "{db}: oldest first");
        assert!(s.group(Some("b"), "g").await.unwrap().is_empty(), "{db}");
        assert_eq!(s.group(None, "g").await.unwrap().len(), 2, "{db}");

        assert_eq!(s.next_expiry().await.unwrap(), Some(Timestamp(1_000_001)), "{db}");
        let due = s.due_for_expiry(Timestamp(1_000_002), 10).await.unwrap();
        assert_eq!(due, [("p_0001".to_string(), Status::Pending), ("p_0002".to_string(), Status::Pending)], "{db}");
        assert!(s.due_for_expiry(Timestamp(1_000_000), 10).await.unwrap().is_empty(), "{db}");
        assert_eq!(s.count_pending().await.unwrap(), 4, "{db}");
    }
}

#[tokio::test]
async fn agents_and_credentials_are_added_replaced_and_revoked() {
    for (db, s, _dir) in stores().await {
        assert!(matches!(s.add_agent("a", [8; 32], Timestamp(2), false).await, Err(CoreError::Conflict(_))), "{db}");
        assert!(s.set_agent_token("a", [9; 32], Timestamp(3)).await.unwrap(), "{db}");
        assert_eq!(s.agent_tokens().await.unwrap(), [("a".to_string(), [9; 32])], "{db}");
        assert!(s.revoke_agent("a", Timestamp(4)).await.unwrap(), "{db}");
        assert!(!s.revoke_agent("a", Timestamp(4)).await.unwrap(), "{db}: once");
        assert!(!s.set_agent_token("a", [1; 32], Timestamp(5)).await.unwrap(), "{db}: a revoked agent keeps revoked");
        assert!(s.agent_tokens().await.unwrap().is_empty(), "{db}");
        assert!(matches!(s.add_agent("a", [2; 32], Timestamp(6), false).await, Err(CoreError::Conflict(_))), "{db}");
        s.add_agent("a", [2; 32], Timestamp(6), true).await.unwrap();
        let agents = s.agents().await.unwrap();
        assert_eq!(agents.iter().map(|a| (a.name.as_str(), a.revoked_at)).collect::<Vec<_>>(), [("a", None)], "{db}");

        let meta = CredentialMeta {
            name: "gh".into(),
            scheme: Scheme::Bearer,
            origins: vec!["https://api.github.com:443".into()],
            created_at: Timestamp(7),
        };
        s.add_credential(meta.clone()).await.unwrap();
        assert!(matches!(s.add_credential(meta.clone()).await, Err(CoreError::Conflict(_))), "{db}");
        assert_eq!(s.credentials().await.unwrap(), [meta], "{db}");
        assert!(s.remove_credential("gh").await.unwrap() && !s.remove_credential("gh").await.unwrap(), "{db}");
        assert!(s.credentials().await.unwrap().is_empty(), "{db}");
    }
}

#[tokio::test]
async fn devices_are_paired_used_revoked_and_paired_again() {
    for (db, s, _dir) in stores().await {
        let pixel = |cred: &str, at: i64| Device {
            name: "pixel".into(),
            credential_id: cred.into(),
            passkey: format!("{{\"cred\":\"{cred}\"}}"),
            added_at: Timestamp(at),
            last_used_at: None,
            revoked_at: None,
            push: None,
        };
        assert!(s.devices().await.unwrap().is_empty(), "{db}");
        s.add_device(pixel("c1", 1)).await.unwrap();
        assert!(
            matches!(s.add_device(pixel("c2", 2)).await, Err(CoreError::Conflict(_))),
            "{db}: one name, one device"
        );
        // Another name may not take a credential already paired.
        let twin = Device { name: "tablet".into(), ..pixel("c1", 2) };
        assert!(s.add_device(twin).await.is_err(), "{db}: a credential pairs one device");
        assert!(s.device_used("pixel", "{\"counter\":5}", Timestamp(3)).await.unwrap(), "{db}");
        let used = s.devices().await.unwrap();
        assert_eq!((used[0].passkey.as_str(), used[0].last_used_at), ("{\"counter\":5}", Some(Timestamp(3))), "{db}");
        assert!(s.set_device_push("pixel", Some("{\"endpoint\":\"e\"}")).await.unwrap(), "{db}");
        assert_eq!(s.devices().await.unwrap()[0].push.as_deref(), Some("{\"endpoint\":\"e\"}"), "{db}");
        assert!(!s.set_device_push("ghost", None).await.unwrap(), "{db}");
        assert!(s.revoke_device("pixel", Timestamp(4)).await.unwrap(), "{db}");
        assert_eq!(s.devices().await.unwrap()[0].push, None, "{db}: a revoked device is pushed nothing");
        assert!(!s.set_device_push("pixel", Some("{}")).await.unwrap(), "{db}: nor subscribes again");
        assert!(!s.revoke_device("pixel", Timestamp(5)).await.unwrap(), "{db}: once");
        assert!(!s.device_used("pixel", "{}", Timestamp(5)).await.unwrap(), "{db}: a revoked device is not used");
        assert!(!s.device_used("ghost", "{}", Timestamp(5)).await.unwrap(), "{db}");
        assert_eq!(s.devices().await.unwrap()[0].revoked_at, Some(Timestamp(4)), "{db}: a revoked device stays listed");
        // Paired again under its name: the new passkey, nothing of the old.
        s.add_device(pixel("c3", 6)).await.unwrap();
        assert_eq!(s.devices().await.unwrap(), [pixel("c3", 6)], "{db}");
    }
}

#[tokio::test]
async fn the_remote_log_keeps_what_happened_in_order() {
    for (db, s, _dir) in stores().await {
        assert!(s.remote_log_after(0, 10).await.unwrap().is_empty(), "{db}");
        s.remote_log("", "pairing_refused", Timestamp(1), Some(serde_json::json!({"code": "pairing_code_invalid"})))
            .await
            .unwrap();
        s.remote_log("pixel", "paired", Timestamp(2), None).await.unwrap();
        let log = s.remote_log_after(0, 10).await.unwrap();
        let got: Vec<_> = log.iter().map(|e| (e.device.as_deref(), e.event.as_str(), e.at)).collect();
        assert_eq!(got, [(None, "pairing_refused", Timestamp(1)), (Some("pixel"), "paired", Timestamp(2))], "{db}");
        assert_eq!(log[0].detail, Some(serde_json::json!({"code": "pairing_code_invalid"})), "{db}");
        assert!(log[0].seq < log[1].seq, "{db}");
        let rest = s.remote_log_after(log[0].seq, 10).await.unwrap();
        assert_eq!(rest.len(), 1, "{db}");
        assert_eq!(s.remote_log_after(0, 1).await.unwrap().len(), 1, "{db}: limit");
    }
}

#[tokio::test]
async fn receipt_keys_are_published_retired_and_dropped_when_their_receipts_expire() {
    use assent_core::store::ReceiptKey;
    let key = |kid: &str, at: i64| ReceiptKey {
        kid: kid.into(),
        x: format!("x-{kid}"),
        node: None,
        added_at: Timestamp(at),
        publish_until: None,
    };
    for (db, s, _dir) in stores().await {
        let node = (db == "postgres").then(|| "n1".to_string());
        assert!(s.receipt_keys(Timestamp(0)).await.unwrap().is_empty(), "{db}");
        s.publish_receipt_key(key("k1", 10), Timestamp(1000)).await.unwrap();
        // Published again (a restart): nothing changes.
        s.publish_receipt_key(key("k1", 20), Timestamp(2000)).await.unwrap();
        let one = s.receipt_keys(Timestamp(30)).await.unwrap();
        assert_eq!(one, [ReceiptKey { node: node.clone(), ..key("k1", 10) }], "{db}");
        // Rotated at 100: k1 stays published until 700, k2 signs.
        s.publish_receipt_key(key("k2", 100), Timestamp(700)).await.unwrap();
        let both = s.receipt_keys(Timestamp(699)).await.unwrap();
        let got: Vec<_> = both.iter().map(|k| (k.kid.as_str(), k.publish_until)).collect();
        assert_eq!(got, [("k1", Some(Timestamp(700))), ("k2", None)], "{db}");
        let later = s.receipt_keys(Timestamp(700)).await.unwrap();
        assert_eq!(later.iter().map(|k| k.kid.as_str()).collect::<Vec<_>>(), ["k2"], "{db}: past its last receipt");
        // Rotating again does not extend what was retired before.
        s.publish_receipt_key(key("k3", 800), Timestamp(5000)).await.unwrap();
        let now: Vec<_> = s.receipt_keys(Timestamp(801)).await.unwrap().into_iter().map(|k| k.kid).collect();
        assert_eq!(now, ["k2", "k3"], "{db}");
    }
}

#[tokio::test]
async fn rules_their_log_and_what_they_decided() {
    for (db, s, _dir) in stores().await {
        assert_eq!(s.rule_seq().await.unwrap(), 0, "{db}");
        let seq1 = s.add_rule(rule("r_1", "Bash")).await.unwrap();
        let seq2 = s.add_rule(rule("r_2", "Read")).await.unwrap();
        assert!(seq2 > seq1 && s.rule_seq().await.unwrap() == seq2, "{db}");
        let r1 = s.rule("r_1").await.unwrap().expect(db);
        assert!(r1.matches.tool.as_deref() == Some("Bash") && r1.description.contains("`Bash`"), "{db}: {r1:?}");
        assert!(s.rule("r_9").await.unwrap().is_none(), "{db}");
        let page = s.rules_after(0, 1).await.unwrap();
        assert_eq!(page.iter().map(|(_, r)| r.id.as_str()).collect::<Vec<_>>(), ["r_1"], "{db}");
        let rest = s.rules_after(page[0].0, 10).await.unwrap();
        assert_eq!(rest.iter().map(|(_, r)| r.id.as_str()).collect::<Vec<_>>(), ["r_2"], "{db}");

        // A proposal a rule decided as it arrived: stored decided, counted for the rule. (Its id
        // carries its time, as real ids do: decisions "since" are found by id.)
        let id = format!("{}x", assent_core::engine::proposal_id_floor(Timestamp(1_001)));
        let p = proposal(&id, 1);
        let mut t = change(&id, Status::Pending, Status::Approved, 1_001);
        t.decision = Some(Decision {
            outcome: Outcome::Approve,
            reason: None,
            feedback: None,
            edited_payload: None,
            approved_sha256: None,
            by: "rule".into(),
            node: None,
            rule: Some(RuleRef { id: "r_1".into(), description: "allow Bash".into() }),
            confine: None,
            hosts: Vec::new(),
            channel: Channel::System,
            device: None,
            receipt: None,
            at: Timestamp(1_001),
        });
        let mut rec = record(p.clone());
        rec.decided = Some(t.clone());
        rec.rule = Some("r_1".into());
        rec.rules_seq = Some(seq1);
        assert!(matches!(s.insert(rec).await, Err(CoreError::RulesChanged)), "{db}: the rules changed since");
        let mut rec = record(p);
        rec.decided = Some(t);
        rec.rule = Some("r_1".into());
        rec.rules_seq = Some(seq2);
        let stored = created(&s, rec).await;
        assert_eq!(stored.status, Status::Approved, "{db}: never pending");
        assert_eq!(s.rule("r_1").await.unwrap().unwrap().matched, 1, "{db}");
        assert_eq!(s.rule_decisions_since(Timestamp(0)).await.unwrap(), [("r_1".to_string(), 1)], "{db}");
        assert!(s.rule_decisions_since(Timestamp(2_000)).await.unwrap().is_empty(), "{db}");

        let (gone, seq3) = s.remove_rule("r_1", "owner", Channel::App, Timestamp(9)).await.unwrap().expect(db);
        assert!(gone.id == "r_1" && seq3 > seq2, "{db}");
        assert!(s.remove_rule("r_1", "owner", Channel::App, Timestamp(9)).await.unwrap().is_none(), "{db}");
        assert_eq!(s.rules().await.unwrap().iter().map(|r| r.id.as_str()).collect::<Vec<_>>(), ["r_2"], "{db}");
        let log = s.rule_log_after(0, 10).await.unwrap();
        let events: Vec<(&str, &str)> = log.iter().map(|e| (e.rule_id.as_str(), e.event.as_str())).collect();
        assert_eq!(events, [("r_1", "added"), ("r_2", "added"), ("r_1", "removed")], "{db}");
        assert_eq!(s.rule_log_after(seq2, 10).await.unwrap().len(), 1, "{db}");
    }
}

#[tokio::test]
async fn facts_bytes_unsettled_writes_and_pruning() {
    for (db, s, _dir) in stores().await {
        let big = "x".repeat(2_000);
        let mut p = proposal("p_0001", 1);
        p.payload = assent_core::held::Held::read(p.kind, json!({"tool": "t", "input": {"text": big}}));
        created(&s, record(p)).await;
        let mut w = Proposal::applying(
            "p_0002",
            assent_core::payloads::KindName::FileWrite,
            "a",
            json!({"path": "/tmp/x", "content": "y"}),
            None,
        );
        w.status = Status::Pending;
        w.preview = Preview::read(json!({"type": "file.write", "path": "/tmp/x"}));
        w.created_at = Timestamp(1_002);
        w.updated_at = w.created_at;
        w.expires_at = Timestamp(1_000_002);
        w.refresh_derived();
        created(&s, record(w)).await;
        s.transition(vec![change("p_0002", Status::Pending, Status::Approved, 1_003)], true).await.unwrap();
        let unsettled = s.unsettled_applies().await.unwrap();
        assert_eq!(unsettled.iter().map(|p| p.id.as_str()).collect::<Vec<_>>(), ["p_0002"], "{db}");

        let bytes = s.stored_bytes_since(Timestamp(0)).await.unwrap();
        let total: u64 = bytes.iter().filter(|(a, _, _)| a == "a").map(|(_, _, b)| b).sum();
        assert!(total > 2_000, "{db}: {bytes:?}");
        assert!(s.stored_bytes_since(Timestamp(10_000_000)).await.unwrap().is_empty(), "{db}");

        let facts = s.recent_facts(10).await.unwrap();
        assert_eq!(
            facts.iter().map(|(a, k, _)| (a.as_str(), k.as_str())).collect::<Vec<_>>(),
            [("a", "file.write"), ("a", "tool.call")],
            "{db}"
        );

        // Only settled proposals are pruned, and only once.
        s.transition(vec![change("p_0001", Status::Pending, Status::Rejected, 1_004)], true).await.unwrap();
        assert_eq!(s.prune(Timestamp(5_000), Timestamp(6_000), 10).await.unwrap(), 1, "{db}");
        assert_eq!(s.prune(Timestamp(5_000), Timestamp(6_000), 10).await.unwrap(), 0, "{db}");
        let pruned = s.get("p_0001").await.unwrap().unwrap();
        assert_eq!(pruned.pruned_at, Some(Timestamp(6_000)), "{db}");
        assert!(pruned.payload.typed().is_none(), "{db}: a pruned payload is held as it was kept, not typed");
        assert!(!pruned.payload.to_value().to_string().contains(&big), "{db}");
        // A pruned proposal's gist is cut from what was kept of it.
        let rows = s.list_rows(&ListQuery { limit: 10, ..ListQuery::default() }).await.unwrap();
        let row = &rows.iter().find(|(_, l)| l.proposal.id == "p_0001").expect("listed").1;
        assert_eq!(row.gist, Gist::of(&pruned.payload.to_value(), &pruned.preview.to_value()), "{db}");
        assert!(
            s.recent_facts(10).await.unwrap().iter().all(|(_, k, _)| *k != assent_core::payloads::KindName::ToolCall),
            "{db}: pruned ones left out"
        );
    }
}
