//! The engine in-process on a real SQLite file, with no HTTP and no background tasks: what it
//! guarantees whatever the expiry sweeper's timing, and how groups stay one agent's.

#![allow(missing_docs)]

use assent_core::engine::{Actor, BatchItem, GroupDecision};
use assent_core::kinds::KindRegistry;
use assent_core::proposal::{Channel, DecisionRequest, Outcome};
use assent_core::secret::token_hash;
use assent_core::{CoreError, Engine, EngineConfig, EngineParts, Principal, Status};
use assent_store::SqliteStore;
use serde_json::json;
use std::sync::Arc;

async fn engine(dir: &std::path::Path) -> Engine {
    let store = SqliteStore::open(&dir.join("assent.db")).await.unwrap_or_else(|e| panic!("{e}"));
    Engine::new(EngineParts {
        store: Arc::new(store),
        kinds: KindRegistry::with_builtins(),
        config: EngineConfig::default(),
        owner_hash: token_hash("owner"),
        secrets: None,
        receipts: None,
    })
    .await
    .unwrap_or_else(|e| panic!("{e}"))
}

fn owner() -> Actor {
    Actor { by: "owner".into(), channel: Channel::Cli, device: None }
}

fn approve() -> DecisionRequest {
    DecisionRequest {
        outcome: Outcome::Approve,
        reason: None,
        feedback: None,
        edits: None,
        allow_similar: None,
        seen: None,
        run: None,
        hosts: None,
    }
}

async fn propose(e: &Engine, agent: &str, body: serde_json::Value) -> String {
    e.propose(agent, assent_core::NewProposal::read(body).unwrap_or_else(|err| panic!("{err}")), None)
        .await
        .unwrap_or_else(|err| panic!("{err}"))
        .proposal
        .id
}

#[tokio::test]
async fn a_decision_after_expiry_is_refused_though_no_sweeper_ran() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let e = engine(dir.path()).await;
    e.set_agent_token("default", "agent-token").await.unwrap_or_else(|err| panic!("{err}"));
    let body = |n: u32| json!({"kind": "tool.call", "payload": {"tool": "deploy", "input": {"n": n}}, "expires_in": 1});
    let (one, two, three) = (
        propose(&e, "default", body(1)).await,
        propose(&e, "default", body(2)).await,
        propose(&e, "default", body(3)).await,
    );
    // No sweeper runs here: the decision itself must find the proposal past its expiry.
    e.clock().advance(std::time::Duration::from_millis(1100));

    let late = e.decide(&owner(), &one, approve()).await;
    assert!(matches!(late, Err(CoreError::InvalidState { .. })), "{late:?}");
    let now = e.get(&Principal::Owner, &one).await.unwrap_or_else(|err| panic!("{err}"));
    assert_eq!(now.status, Status::Expired, "the late decision found it expired");
    assert!(now.decision.is_none());

    let batch = e
        .decide_batch(&owner(), vec![BatchItem { id: two.clone(), decision: approve() }])
        .await
        .unwrap_or_else(|err| panic!("{err}"));
    assert_eq!((batch.decided, batch.skipped), (0, 1));
    assert_eq!(batch.results[0].status, Some(Status::Expired));

    let none = GroupDecision {
        group_id: "none".into(),
        agent: None,
        node: None,
        outcome: Outcome::Approve,
        reason: None,
        feedback: None,
    };
    assert!(e.decide_group(&owner(), none).await.is_err());
    assert_eq!(e.get(&Principal::Owner, &three).await.map(|p| p.status).ok(), Some(Status::Pending), "not swept yet");
    e.expire_due().await;
    assert_eq!(e.get(&Principal::Owner, &three).await.map(|p| p.status).ok(), Some(Status::Expired));
}

#[tokio::test]
async fn a_group_belongs_to_one_agent() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let e = engine(dir.path()).await;
    e.add_agent("alice").await.unwrap_or_else(|err| panic!("{err}"));
    e.add_agent("mallory").await.unwrap_or_else(|err| panic!("{err}"));
    let body = |tool: &str| json!({"kind": "tool.call", "payload": {"tool": tool}, "group_id": "release"});
    let a1 = propose(&e, "alice", body("tag")).await;
    let a2 = propose(&e, "alice", body("publish")).await;
    let m1 = propose(&e, "mallory", body("exfiltrate")).await;

    // The id alone names two groups: the decision must say whose.
    let ambiguous = e
        .decide_group(
            &owner(),
            GroupDecision {
                group_id: "release".into(),
                agent: None,
                node: None,
                outcome: Outcome::Approve,
                reason: None,
                feedback: None,
            },
        )
        .await;
    assert!(matches!(&ambiguous, Err(err) if err.code() == "ambiguous_group"), "{ambiguous:?}");
    let done = e
        .decide_group(
            &owner(),
            GroupDecision {
                group_id: "release".into(),
                agent: Some("alice".into()),
                node: None,
                outcome: Outcome::Approve,
                reason: None,
                feedback: None,
            },
        )
        .await
        .unwrap_or_else(|err| panic!("{err}"));
    assert_eq!(done.decided, 2);
    let status = |id: String| {
        let e = e.clone();
        async move { e.get(&Principal::Owner, &id).await.map(|p| p.status).ok() }
    };
    assert_eq!(status(a1).await, Some(Status::Approved));
    assert_eq!(status(a2).await, Some(Status::Approved));
    assert_eq!(status(m1).await, Some(Status::Pending), "another agent's proposal is never in the batch");
}

#[tokio::test]
async fn a_token_names_its_agent_among_many_and_a_revoked_or_replaced_one_names_none() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let e = engine(dir.path()).await;
    let mut tokens = Vec::new();
    for i in 0..40 {
        tokens.push(e.add_agent(&format!("agent-{i}")).await.unwrap_or_else(|err| panic!("{err}")));
    }
    for (i, t) in tokens.iter().enumerate() {
        assert!(matches!(e.authenticate(t), Some(Principal::Agent(a)) if a == format!("agent-{i}")));
    }
    assert!(matches!(e.authenticate("owner"), Some(Principal::Owner)));
    assert!(e.authenticate("no-such-token").is_none());
    e.revoke_agent("agent-3").await.unwrap_or_else(|err| panic!("{err}"));
    assert!(e.authenticate(&tokens[3]).is_none());
    assert!(e.set_agent_token("agent-4", "a-new-token-of-agent-four").await.unwrap_or_else(|err| panic!("{err}")));
    assert!(e.authenticate(&tokens[4]).is_none());
    assert!(matches!(e.authenticate("a-new-token-of-agent-four"), Some(Principal::Agent(a)) if a == "agent-4"));
    // An engine started on the same database knows the same agents.
    drop(e);
    let again = engine(dir.path()).await;
    assert!(matches!(again.authenticate(&tokens[5]), Some(Principal::Agent(a)) if a == "agent-5"));
    assert!(again.authenticate(&tokens[3]).is_none());
}
