//! What every platform's notifications share, whatever shows them: which proposals get one and
//! with which buttons, what each button is bound to (an unguessable key per button, the proposal
//! and the hash of the payload the notification described), and what a click sends. A system's
//! notifier ([`Notifier`]: the freedesktop service, Windows' toasts) only shows, closes, and
//! hands back which button of which notification was clicked; the decision is made here.

use crate::{Host, Options, what};
use assent_core::events::Event;
use assent_core::proposal::{Channel, DecisionRequest, Outcome, Proposal};
use assent_core::{Engine, Principal, Status};
use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex};

/// A button.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Act {
    /// Approve the proposal.
    Approve,
    /// Reject it.
    Reject,
    /// Open the inbox (on the proposal, when there is one).
    Open,
}

/// A button a notifier shows: its key (what a press sends back), what it does and its label.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Button<'a> {
    pub(crate) key: &'a str,
    pub(crate) act: Act,
    pub(crate) label: &'a str,
}

/// A notification to show: its two lines, its proposal with the hash of the payload it
/// describes (none for a summary of several), and its buttons with their labels.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Note {
    pub(crate) summary: String,
    pub(crate) body: String,
    pub(crate) proposal: Option<(String, String)>,
    pub(crate) acts: Vec<(Act, &'static str)>,
}

/// The notification of one pending proposal: Approve, Reject and Open, or Open alone for a
/// destructive one (a delete, an HTTP DELETE, what cannot be read as its kind's).
pub(crate) fn one(p: &Proposal, destructive: bool) -> Note {
    let acts = if destructive {
        vec![(Act::Open, "Open")]
    } else {
        vec![(Act::Approve, "Approve"), (Act::Reject, "Reject"), (Act::Open, "Open")]
    };
    let summary = format!("{} proposes {}", p.agent, if destructive { "a destructive change" } else { "a change" });
    let seen = p.payload.sha256();
    Note { summary, body: what(p), proposal: Some((p.id.clone(), seen)), acts }
}

/// One notification for several proposals at once: Open alone.
pub(crate) fn many(ps: &[Proposal]) -> Note {
    let mut agents: Vec<&str> = ps.iter().map(|p| p.agent.as_str()).collect();
    agents.dedup();
    let body: Vec<String> = ps.iter().take(4).map(what).collect();
    let more = if ps.len() > 4 { format!("\n… and {} more", ps.len() - 4) } else { String::new() };
    let summary = format!("{} new proposals from {}", ps.len(), agents.join(", "));
    Note { summary, body: body.join("\n") + &more, proposal: None, acts: vec![(Act::Open, "Open")] }
}

/// A button's key: 128 random bits; empty (never honoured) without randomness.
fn key() -> String {
    let mut b = [0u8; 16];
    if getrandom::fill(&mut b).is_err() {
        return String::new();
    }
    hex::encode(b)
}

/// A click Assent honours: the button, and its notification's proposal and seen hash.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Click {
    pub(crate) act: Act,
    pub(crate) proposal: Option<String>,
    pub(crate) seen: Option<String>,
}

struct Shown {
    proposal: Option<String>,
    seen: Option<String>,
    keys: Vec<(String, Act)>,
}

/// The notifications Assent showed, by the notifier's id for each.
pub(crate) struct Registry<Id> {
    shown: Mutex<HashMap<Id, Shown>>,
}

impl<Id: Eq + Hash + Ord + Copy> Default for Registry<Id> {
    fn default() -> Self {
        Registry { shown: Mutex::new(HashMap::new()) }
    }
}

/// The most notifications remembered (the oldest forgotten first).
const REMEMBERED: usize = 1000;

impl<Id: Eq + Hash + Ord + Copy> Registry<Id> {
    /// A fresh key for each of `note`'s buttons (an empty one, for want of randomness, is left
    /// out by the notifier and never honoured).
    pub(crate) fn keys(note: &Note) -> Vec<(String, Act)> {
        note.acts.iter().map(|(a, _)| (key(), *a)).collect()
    }

    /// Remembers that notification `id` shows `note` with these button keys.
    pub(crate) fn shown(&self, id: Id, note: &Note, keys: Vec<(String, Act)>) {
        let (proposal, seen) = note.proposal.clone().unzip();
        let mut st = self.shown.lock().unwrap_or_else(|e| e.into_inner());
        st.insert(id, Shown { proposal, seen, keys });
        if st.len() > REMEMBERED
            && let Some(oldest) = st.keys().min().copied()
        {
            st.remove(&oldest);
        }
    }

    /// The click of button `key` on notification `id`, if it is one Assent gave; a decision's
    /// button is honoured once (its notification forgotten), Open as often as clicked.
    pub(crate) fn clicked(&self, id: Id, key: &str) -> Option<Click> {
        let mut st = self.shown.lock().unwrap_or_else(|e| e.into_inner());
        let s = st.get(&id)?;
        let act = s.keys.iter().find(|(k, _)| !k.is_empty() && k == key).map(|(_, a)| *a)?;
        let click = Click { act, proposal: s.proposal.clone(), seen: s.seen.clone() };
        if act != Act::Open {
            st.remove(&id);
        }
        Some(click)
    }

    /// The click on notification `id` itself (not a button): the inbox, on its proposal.
    pub(crate) fn opened(&self, id: Id) -> Option<Click> {
        let st = self.shown.lock().unwrap_or_else(|e| e.into_inner());
        st.get(&id).map(|s| Click { act: Act::Open, proposal: s.proposal.clone(), seen: None })
    }

    /// Forgets the notification of `proposal` (decided elsewhere): its id, to close it.
    pub(crate) fn decided(&self, proposal: &str) -> Option<Id> {
        let mut st = self.shown.lock().unwrap_or_else(|e| e.into_inner());
        let id = st.iter().find(|(_, s)| s.proposal.as_deref() == Some(proposal)).map(|(id, _)| *id)?;
        st.remove(&id);
        Some(id)
    }
}

/// What a click asks of the engine: a decision bound to the payload the notification described
/// (approve, or reject with a reason), or none (Open).
pub(crate) fn request(click: &Click) -> Option<DecisionRequest> {
    let (outcome, reason) = match click.act {
        Act::Approve => (Outcome::Approve, None),
        Act::Reject => (Outcome::Reject, Some("Rejected from the notification".to_string())),
        Act::Open => return None,
    };
    Some(DecisionRequest {
        outcome,
        reason,
        feedback: None,
        edits: None,
        allow_similar: None,
        seen: click.seen.clone(),
        run: None,
        hosts: None,
    })
}

/// Carries out a click: the decision (channel `notification`), or the inbox opened.
pub(crate) async fn act(engine: &Engine, host: &dyn Host, click: Click) {
    match (request(&click), click.proposal) {
        (Some(req), Some(p)) => {
            let actor = engine.person(Channel::Notification);
            match engine.decide(&actor, &p, req).await {
                Ok(done) => {
                    tracing::info!(proposal = %p, status = %done.status.as_str(), "decided from a notification")
                }
                Err(e) => tracing::warn!(proposal = %p, error = %e, "a decision from a notification was refused"),
            }
        }
        (_, p) => host.open(p.as_deref()),
    }
}

/// A system's notifier: shows a note with its buttons (each labelled, sent back with its key
/// when clicked) and closes one.
#[async_trait::async_trait]
pub(crate) trait Notifier: Send + Sync + 'static {
    /// The notifier's id of a notification.
    type Id: Eq + Hash + Ord + Copy + Send + Sync + 'static;
    /// Shows `note` with `buttons`; its id.
    async fn show(&self, note: &Note, buttons: &[Button<'_>]) -> Result<Self::Id, String>;
    /// Closes notification `id` (where the system can).
    async fn close(&self, id: Self::Id);
}

/// Shows `note` through `n` with fresh keys and remembers it.
async fn show<N: Notifier>(n: &N, reg: &Registry<N::Id>, note: &Note) {
    let keys = Registry::<N::Id>::keys(note);
    let buttons: Vec<Button<'_>> = keys
        .iter()
        .zip(&note.acts)
        .filter(|((k, _), _)| !k.is_empty())
        .map(|((k, _), (act, label))| Button { key: k.as_str(), act: *act, label })
        .collect();
    match n.show(note, &buttons).await {
        Ok(id) => reg.shown(id, note, keys),
        Err(e) => tracing::warn!(error = %e, "could not show a notification"),
    }
}

/// Shows new pending proposals, coalescing bursts, and closes notifications of proposals that
/// were decided elsewhere; runs until the engine's events end.
pub(crate) async fn announce<N: Notifier>(
    n: Arc<N>,
    engine: Engine,
    mut rx: tokio::sync::broadcast::Receiver<Event>,
    reg: Arc<Registry<N::Id>>,
    opts: Options,
) {
    loop {
        let first = match rx.recv().await {
            Ok(Event::Created { proposal }) if proposal.status == Status::Pending => proposal.id,
            Ok(Event::Updated { proposal, from: Status::Pending }) => {
                if let Some(id) = reg.decided(&proposal.id) {
                    n.close(id).await;
                }
                continue;
            }
            Ok(_) => continue,
            Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
            Err(_) => return,
        };
        let mut ids = vec![first];
        let deadline = tokio::time::Instant::now() + opts.coalesce;
        while let Ok(Ok(ev)) = tokio::time::timeout_at(deadline, rx.recv()).await {
            if let Event::Created { proposal } = ev
                && proposal.status == Status::Pending
            {
                ids.push(proposal.id);
            }
        }
        let mut pending = Vec::new();
        for id in ids {
            if let Ok(p) = engine.get(&Principal::Owner, &id).await
                && p.status == Status::Pending
            {
                pending.push(p);
            }
        }
        if opts.pause.until().is_some() {
            tracing::debug!(n = pending.len(), "notifications paused: not shown");
            continue;
        }
        match pending.as_slice() {
            [] => {}
            [p] => show(n.as_ref(), &reg, &one(p, destructive(&engine, p))).await,
            ps => show(n.as_ref(), &reg, &many(ps)).await,
        }
    }
}

/// Whether approving `p` from a notification is too dangerous (what cannot be read as its
/// kind's is treated as the dangerous case).
fn destructive(engine: &Engine, p: &Proposal) -> bool {
    engine.kinds().kind(p.kind).is_some_and(|k| match p.typed_payload() {
        Ok(t) => k.destructive(&t),
        Err(_) => true,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn proposal(kind: &str, payload: serde_json::Value) -> Proposal {
        let v = json!({"id": "p_1", "kind": kind, "agent": "builder", "payload": payload,
            "preview": null, "status": "pending", "settled": false, "created_at": "1970-01-01T00:00:00.000Z",
            "updated_at": "1970-01-01T00:00:00.000Z", "expires_at": "1970-01-01T00:00:00.000Z"});
        serde_json::from_value(v).unwrap()
    }

    /// A notification the stand-in was asked to show, with its buttons (key, label).
    type Asked = (Note, Vec<(String, String)>);

    /// A stand-in for the system's notifier: what it was asked to show, by its own ids.
    #[derive(Default)]
    struct StandIn {
        shown: Mutex<Vec<Asked>>,
    }

    #[async_trait::async_trait]
    impl Notifier for StandIn {
        type Id = u64;
        async fn show(&self, note: &Note, buttons: &[Button<'_>]) -> Result<u64, String> {
            let mut s = self.shown.lock().unwrap();
            s.push((note.clone(), buttons.iter().map(|b| (b.key.to_string(), b.label.to_string())).collect()));
            Ok(s.len() as u64)
        }
        async fn close(&self, _id: u64) {}
    }

    #[tokio::test]
    async fn a_click_sends_the_decision_bound_to_the_payload_the_notification_showed() {
        let (n, reg) = (StandIn::default(), Registry::<u64>::default());
        let p = proposal("tool.call", json!({"tool": "Bash", "input": {"command": "ls"}}));
        let note = one(&p, false);
        show(&n, &reg, &note).await;
        let buttons = n.shown.lock().unwrap()[0].1.clone();
        let labels: Vec<&str> = buttons.iter().map(|(_, l)| l.as_str()).collect();
        assert_eq!(labels, ["Approve", "Reject", "Open"]);
        let key_of = |label: &str| buttons.iter().find(|(_, l)| l == label).unwrap().0.clone();
        assert_eq!(key_of("Approve").len(), 32, "128 random bits");
        // A made-up key, another notification, a key of another button: nothing.
        assert_eq!(reg.clicked(1, "0123"), None);
        assert_eq!(reg.clicked(2, &key_of("Approve")), None);
        // Open is honoured as often as clicked; it decides nothing.
        let open = reg.clicked(1, &key_of("Open")).unwrap();
        assert!(open.act == Act::Open && request(&open).is_none());
        let click = reg.clicked(1, &key_of("Approve")).unwrap();
        let req = request(&click).unwrap();
        assert_eq!(click.proposal.as_deref(), Some("p_1"));
        assert_eq!(req.outcome, Outcome::Approve);
        assert_eq!(req.seen, Some(p.payload.sha256()), "bound to what was shown");
        assert_eq!(reg.clicked(1, &key_of("Reject")), None, "a decision's buttons are honoured once");
    }

    #[tokio::test]
    async fn a_destructive_proposal_offers_open_alone_and_a_reject_says_where_it_came_from() {
        let (n, reg) = (StandIn::default(), Registry::<u64>::default());
        let p = proposal("file.delete", json!({"path": "/w/a"}));
        show(&n, &reg, &one(&p, true)).await;
        let buttons = n.shown.lock().unwrap()[0].1.clone();
        assert_eq!(buttons.iter().map(|(_, l)| l.as_str()).collect::<Vec<_>>(), ["Open"]);
        assert!(n.shown.lock().unwrap()[0].0.summary.contains("a destructive change"));
        let reject = Click { act: Act::Reject, proposal: Some("p_1".into()), seen: Some("h".into()) };
        let req = request(&reject).unwrap();
        assert_eq!((req.outcome, req.reason.as_deref()), (Outcome::Reject, Some("Rejected from the notification")));
    }

    #[tokio::test]
    async fn a_proposal_decided_elsewhere_is_forgotten_and_its_notification_named() {
        let (n, reg) = (StandIn::default(), Registry::<u64>::default());
        let p = proposal("tool.call", json!({"tool": "Bash", "input": {}}));
        show(&n, &reg, &one(&p, false)).await;
        let approve = n.shown.lock().unwrap()[0].1[0].0.clone();
        assert_eq!(reg.decided("p_1"), Some(1));
        assert_eq!(reg.clicked(1, &approve), None, "its buttons no longer decide");
        let summary = many(&[p.clone(), p]);
        assert_eq!((summary.acts, summary.proposal), (vec![(Act::Open, "Open")], None));
    }
}
