//! Notifications through the freedesktop service on the D-Bus session bus (Linux desktops).

use crate::{Availability, Host, Options, ServiceInfo, what};
use assent_core::events::Event;
use assent_core::proposal::{Channel, DecisionRequest, Outcome, Proposal};
use assent_core::{Engine, Principal, Status};
use futures_util::StreamExt;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const SERVICE: &str = "org.freedesktop.Notifications";

/// Asks the session's notification service who it is and whether it supports actions.
pub async fn probe() -> Result<ServiceInfo, String> {
    let conn = zbus::Connection::session().await.map_err(|_| "no D-Bus session bus".to_string())?;
    if owner(&conn).await.is_none() {
        return Err("no notification service is running on the session bus".into());
    }
    let path = "/org/freedesktop/Notifications";
    let caps = conn
        .call_method(Some(SERVICE), path, Some(SERVICE), "GetCapabilities", &())
        .await
        .and_then(|m| m.body().deserialize::<Vec<String>>())
        .map_err(|e| format!("the notification service did not answer: {e}"))?;
    let server = conn
        .call_method(Some(SERVICE), path, Some(SERVICE), "GetServerInformation", &())
        .await
        .and_then(|m| m.body().deserialize::<(String, String, String, String)>())
        .map(|(name, _vendor, version, _spec)| format!("{name} {version}"))
        .unwrap_or_else(|_| "unknown".into());
    Ok(ServiceInfo { server, actions: caps.iter().any(|c| c == "actions") })
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Act {
    Approve,
    Reject,
    Open,
}

/// One notification Assent showed: its proposal (none for a summary) and its action keys.
struct Shown {
    proposal: Option<String>,
    /// The SHA-256 of the canonical payload the notification described: what a decision from
    /// it says was seen (a proposal whose payload is not that any more is not decided).
    seen: Option<String>,
    keys: Vec<(String, Act)>,
}

#[derive(Default)]
struct State {
    shown: HashMap<u32, Shown>,
}

fn key() -> String {
    let mut b = [0u8; 16];
    if getrandom::fill(&mut b).is_err() {
        // No randomness: no actions can be honoured, so none are offered (see `actions`).
        return String::new();
    }
    hex::encode(b)
}

/// Starts the notifier on the session bus; it runs until the process ends.
pub async fn start(engine: Engine, host: Arc<dyn Host>, opts: Options) -> Availability {
    let conn = match zbus::Connection::session().await {
        Ok(c) => c,
        Err(e) => {
            tracing::warn!(error = %e, "no D-Bus session: Assent works on without desktop notifications");
            return Availability::Unavailable("no D-Bus session".into());
        }
    };
    if owner(&conn).await.is_none() {
        tracing::warn!("no notification service is running: Assent works on without desktop notifications");
        return Availability::Unavailable("no notification service".into());
    }
    let state = Arc::new(Mutex::new(State::default()));
    tokio::spawn(listen(conn.clone(), engine.clone(), host, state.clone()));
    // Subscribed before returning, so nothing proposed after start is missed.
    let rx = engine.subscribe();
    tokio::spawn(announce(conn, engine, rx, state, opts));
    Availability::Available
}

/// The unique name that owns the notification service now.
async fn owner(conn: &zbus::Connection) -> Option<String> {
    let dbus = zbus::fdo::DBusProxy::new(conn).await.ok()?;
    let name = zbus::names::BusName::try_from(SERVICE).ok()?;
    dbus.get_name_owner(name).await.ok().map(|o| o.to_string())
}

/// Listens for action signals and honours only the genuine ones.
async fn listen(conn: zbus::Connection, engine: Engine, host: Arc<dyn Host>, state: Arc<Mutex<State>>) {
    let rule = match zbus::MatchRule::builder()
        .msg_type(zbus::message::Type::Signal)
        .interface(SERVICE)
        .and_then(|b| b.member("ActionInvoked"))
    {
        Ok(b) => b.build(),
        Err(e) => {
            tracing::error!(error = %e, "cannot listen for notification actions");
            return;
        }
    };
    let mut stream = match zbus::MessageStream::for_match_rule(rule, &conn, Some(64)).await {
        Ok(s) => s,
        Err(e) => {
            tracing::error!(error = %e, "cannot listen for notification actions");
            return;
        }
    };
    while let Some(msg) = stream.next().await {
        let Ok(msg) = msg else { continue };
        let header = msg.header();
        let sender = header.sender().map(|s| s.to_string());
        let Ok((id, action)) = msg.body().deserialize::<(u32, String)>() else { continue };
        // Only the notification service itself may answer, and only with a key it was given.
        let genuine = match (&sender, owner(&conn).await) {
            (Some(s), Some(o)) => *s == o,
            _ => false,
        };
        if !genuine {
            tracing::warn!(
                sender = sender.as_deref().unwrap_or("?"),
                "ignored a notification action from another bus connection"
            );
            continue;
        }
        let found = {
            let mut st = state.lock().unwrap_or_else(|e| e.into_inner());
            let hit = st.shown.get(&id).and_then(|s| {
                s.keys
                    .iter()
                    .find(|(k, _)| !k.is_empty() && *k == action)
                    .map(|(_, a)| (*a, s.proposal.clone(), s.seen.clone()))
            });
            if matches!(hit, Some((Act::Approve | Act::Reject, _, _))) {
                st.shown.remove(&id);
            }
            hit
        };
        let Some((act, proposal, seen)) = found else {
            tracing::debug!(id, "a notification action that is not one of Assent's");
            continue;
        };
        match (act, proposal) {
            (Act::Open, p) => host.open(p.as_deref()),
            (act, Some(p)) => {
                let (outcome, reason) = match act {
                    Act::Approve => (Outcome::Approve, None),
                    _ => (Outcome::Reject, Some("Rejected from the notification".to_string())),
                };
                let actor = engine.person(Channel::Notification);
                let req = DecisionRequest {
                    outcome,
                    reason,
                    feedback: None,
                    edits: None,
                    allow_similar: None,
                    seen,
                    run: None,
                    hosts: None,
                };
                match engine.decide(&actor, &p, req).await {
                    Ok(done) => {
                        tracing::info!(proposal = %p, status = %done.status.as_str(), "decided from a notification")
                    }
                    Err(e) => tracing::warn!(proposal = %p, error = %e, "a decision from a notification was refused"),
                }
            }
            (_, None) => host.open(None),
        }
    }
}

/// Shows new pending proposals, coalescing bursts, and closes notifications of proposals that
/// were decided elsewhere.
async fn announce(
    conn: zbus::Connection,
    engine: Engine,
    mut rx: tokio::sync::broadcast::Receiver<Event>,
    state: Arc<Mutex<State>>,
    opts: Options,
) {
    loop {
        let first = match rx.recv().await {
            Ok(Event::Created { proposal }) if proposal.status == Status::Pending => proposal.id,
            Ok(Event::Updated { proposal, from: Status::Pending }) => {
                close_for(&conn, &state, &proposal.id).await;
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
        match pending.len() {
            0 => {}
            1 => show_one(&conn, &engine, &state, &pending[0]).await,
            n => show_summary(&conn, &state, &pending, n).await,
        }
    }
}

/// Sends a notification over `conn`: the daemon sends its action signals to the connection that
/// asked for the notification, so this is the connection the listener reads.
async fn show(
    conn: &zbus::Connection,
    state: &Arc<Mutex<State>>,
    summary: &str,
    body: &str,
    proposal: Option<(String, String)>,
    acts: &[(Act, &str)],
) {
    let mut keys: Vec<(String, Act)> = acts.iter().map(|(a, _)| (key(), *a)).collect();
    let mut actions: Vec<&str> = Vec::new();
    for ((k, _), (_, label)) in keys.iter().zip(acts) {
        if !k.is_empty() {
            actions.push(k);
            actions.push(label);
        }
    }
    // "default" is the click on the notification itself: it only opens the inbox.
    actions.extend(["default", "Open Assent"]);
    let hints: HashMap<&str, zbus::zvariant::Value<'_>> = HashMap::new();
    let reply = conn
        .call_method(
            Some(SERVICE),
            "/org/freedesktop/Notifications",
            Some(SERVICE),
            "Notify",
            &("Assent", 0u32, "", summary, body, actions, hints, 0i32),
        )
        .await;
    match reply.and_then(|m| m.body().deserialize::<u32>()) {
        Ok(id) => {
            keys.push(("default".into(), Act::Open));
            let mut st = state.lock().unwrap_or_else(|e| e.into_inner());
            let (proposal, seen) = proposal.unzip();
            st.shown.insert(id, Shown { proposal, seen, keys });
            if st.shown.len() > 1000 {
                let oldest = st.shown.keys().min().copied();
                if let Some(o) = oldest {
                    st.shown.remove(&o);
                }
            }
        }
        Err(e) => tracing::warn!(error = %e, "could not show a notification"),
    }
}

async fn show_one(conn: &zbus::Connection, engine: &Engine, state: &Arc<Mutex<State>>, p: &Proposal) {
    // What cannot be read as its kind's is treated as the dangerous case.
    let destructive = engine.kinds().kind(p.kind).is_some_and(|k| match p.typed_payload() {
        Ok(t) => k.destructive(&t),
        Err(_) => true,
    });
    let acts: &[(Act, &str)] = if destructive {
        &[(Act::Open, "Open")]
    } else {
        &[(Act::Approve, "Approve"), (Act::Reject, "Reject"), (Act::Open, "Open")]
    };
    let summary = format!("{} proposes {}", p.agent, if destructive { "a destructive change" } else { "a change" });
    let seen = assent_core::canonical::canonical_sha256(&p.payload);
    show(conn, state, &summary, &what(p), Some((p.id.clone(), seen)), acts).await;
}

async fn show_summary(conn: &zbus::Connection, state: &Arc<Mutex<State>>, ps: &[Proposal], n: usize) {
    let mut agents: Vec<&str> = ps.iter().map(|p| p.agent.as_str()).collect();
    agents.dedup();
    let body: Vec<String> = ps.iter().take(4).map(what).collect();
    let more = if n > 4 { format!("\n… and {} more", n - 4) } else { String::new() };
    let summary = format!("{n} new proposals from {}", agents.join(", "));
    show(conn, state, &summary, &(body.join("\n") + &more), None, &[(Act::Open, "Open")]).await;
}

/// Closes the notification of a proposal decided elsewhere.
async fn close_for(conn: &zbus::Connection, state: &Arc<Mutex<State>>, proposal: &str) {
    let id = {
        let mut st = state.lock().unwrap_or_else(|e| e.into_inner());
        let id = st.shown.iter().find(|(_, s)| s.proposal.as_deref() == Some(proposal)).map(|(id, _)| *id);
        if let Some(i) = id {
            st.shown.remove(&i);
        }
        id
    };
    if let Some(id) = id {
        let _ = conn
            .call_method(Some(SERVICE), "/org/freedesktop/Notifications", Some(SERVICE), "CloseNotification", &(id,))
            .await;
    }
}

/// Whether the desktop's screen saver or lock is on now (the freedesktop `ScreenSaver`
/// `GetActive`), so that someone away from the desk is pushed at once. False where there is no
/// session bus or no screen saver service to ask.
pub async fn screen_locked() -> bool {
    static BUS: tokio::sync::OnceCell<Option<zbus::Connection>> = tokio::sync::OnceCell::const_new();
    let Some(conn) = BUS.get_or_init(|| async { zbus::Connection::session().await.ok() }).await else {
        return false;
    };
    let call = conn.call_method(
        Some("org.freedesktop.ScreenSaver"),
        "/org/freedesktop/ScreenSaver",
        Some("org.freedesktop.ScreenSaver"),
        "GetActive",
        &(),
    );
    match tokio::time::timeout(Duration::from_millis(500), call).await {
        Ok(Ok(reply)) => reply.body().deserialize::<bool>().unwrap_or(false),
        _ => false,
    }
}
