//! Notifications through the freedesktop service on the D-Bus session bus (Linux desktops).

use crate::decisions::{Button, Note, Notifier, Registry, act, announce};
use crate::{Availability, Host, Options, ServiceInfo};
use assent_core::Engine;
use futures_util::StreamExt;
use std::collections::HashMap;
use std::sync::Arc;
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
    let reg = Arc::new(Registry::default());
    tokio::spawn(listen(conn.clone(), engine.clone(), host, reg.clone()));
    // Subscribed before returning, so nothing proposed after start is missed.
    let rx = engine.subscribe();
    tokio::spawn(announce(Arc::new(Freedesktop { conn }), engine, rx, reg, opts));
    Availability::Available
}

/// The freedesktop notification service, over the connection the listener reads (the daemon
/// sends its action signals to the connection that asked for the notification).
struct Freedesktop {
    conn: zbus::Connection,
}

#[async_trait::async_trait]
impl Notifier for Freedesktop {
    type Id = u32;

    async fn show(&self, note: &Note, buttons: &[Button<'_>]) -> Result<u32, String> {
        let mut actions: Vec<&str> = buttons.iter().flat_map(|b| [b.key, b.label]).collect();
        // "default" is the click on the notification itself: it only opens the inbox.
        actions.extend(["default", "Open Assent"]);
        let hints: HashMap<&str, zbus::zvariant::Value<'_>> = HashMap::new();
        let reply = self
            .conn
            .call_method(
                Some(SERVICE),
                "/org/freedesktop/Notifications",
                Some(SERVICE),
                "Notify",
                &("Assent", 0u32, "", note.summary.as_str(), note.body.as_str(), actions, hints, 0i32),
            )
            .await;
        reply.and_then(|m| m.body().deserialize::<u32>()).map_err(|e| e.to_string())
    }

    async fn close(&self, id: u32) {
        let _ = self
            .conn
            .call_method(Some(SERVICE), "/org/freedesktop/Notifications", Some(SERVICE), "CloseNotification", &(id,))
            .await;
    }
}

/// The unique name that owns the notification service now.
async fn owner(conn: &zbus::Connection) -> Option<String> {
    let dbus = zbus::fdo::DBusProxy::new(conn).await.ok()?;
    let name = zbus::names::BusName::try_from(SERVICE).ok()?;
    dbus.get_name_owner(name).await.ok().map(|o| o.to_string())
}

/// Listens for action signals and honours only the genuine ones.
async fn listen(conn: zbus::Connection, engine: Engine, host: Arc<dyn Host>, reg: Arc<Registry<u32>>) {
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
        // The click on the notification itself opens the inbox; a button is honoured only with
        // the key Assent gave it.
        let click = if action == "default" { reg.opened(id) } else { reg.clicked(id, &action) };
        match click {
            Some(click) => act(&engine, host.as_ref(), click).await,
            None => tracing::debug!(id, "a notification action that is not one of Assent's"),
        }
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
