//! Notifications on Windows: toasts with Approve, Reject and Open buttons, through Tauri's
//! maintained WinRT toast crate (`tauri-winrt-notification`: the toast XML, the buttons and the
//! activation callback, without a hand-written COM layer). Each button carries its notification's
//! number and its key as its argument; the click comes back through the callback to the same
//! decision logic as on Linux (`decisions`). A toast cannot be withdrawn through that crate: one
//! whose proposal was decided elsewhere stays until dismissed, and its buttons then decide
//! nothing (the registry forgot it). Compiled in the test run (cross-built); Wine shows no toasts.

use crate::decisions::{Note, Notifier, Registry, act, announce};
use crate::{Availability, Host, Options, ServiceInfo};
use assent_core::Engine;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::sync::mpsc;

/// The app the toasts are shown as: the desktop app's identifier (tauri.conf.json). Windows names a
/// toast after the Start menu shortcut that carries this id as its AppUserModelID; the
/// installer's shortcut does not set it yet, so a toast may show under a generic name.
const APP_ID: &str = "dev.assent.inbox";

/// Windows 10 and later show toasts with buttons.
pub async fn probe() -> Result<ServiceInfo, String> {
    Ok(ServiceInfo { server: "Windows (toasts)".into(), actions: true })
}

/// Starts showing toasts; clicks come back through a channel to the decision logic.
pub async fn start(engine: Engine, host: Arc<dyn Host>, opts: Options) -> Availability {
    let (tx, mut rx) = mpsc::unbounded_channel::<(u64, String)>();
    let reg = Arc::new(Registry::default());
    {
        let (engine, reg) = (engine.clone(), reg.clone());
        tokio::spawn(async move {
            while let Some((id, key)) = rx.recv().await {
                // No key: the toast itself was clicked, which opens the inbox on its proposal.
                let click = if key.is_empty() { reg.opened(id) } else { reg.clicked(id, &key) };
                match click {
                    Some(click) => act(&engine, host.as_ref(), click).await,
                    None => tracing::debug!(id, "a toast's button that is not one of Assent's"),
                }
            }
        });
    }
    let rx = engine.subscribe();
    tokio::spawn(announce(Arc::new(Toasts { next: AtomicU64::new(1), clicks: tx }), engine, rx, reg, opts));
    Availability::Available
}

/// Not known here: false, so pushes to a phone keep their usual delay.
pub async fn screen_locked() -> bool {
    false
}

/// Windows' toasts, numbered by Assent.
struct Toasts {
    next: AtomicU64,
    clicks: mpsc::UnboundedSender<(u64, String)>,
}

/// A button's argument: the toast's number and the button's key.
fn argument(id: u64, key: &str) -> String {
    format!("{id}:{key}")
}

/// The toast's number and the button's key of an argument.
fn parse(argument: &str) -> Option<(u64, String)> {
    let (id, key) = argument.split_once(':')?;
    Some((id.parse().ok()?, key.to_string()))
}

#[async_trait::async_trait]
impl Notifier for Toasts {
    type Id = u64;

    async fn show(&self, note: &Note, buttons: &[(&str, &str)]) -> Result<u64, String> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let mut toast = tauri_winrt_notification::Toast::new(APP_ID).title(&note.summary).text1(&note.body);
        for (key, label) in buttons {
            toast = toast.add_button(label, &argument(id, key));
        }
        let clicks = self.clicks.clone();
        let toast = toast.on_activated(move |arg| {
            let click = match arg.as_deref() {
                None => Some((id, String::new())),
                Some(arg) => parse(arg),
            };
            if let Some(click) = click {
                let _ = clicks.send(click);
            }
            Ok(())
        });
        toast.show().map_err(|e| e.to_string())?;
        Ok(id)
    }

    async fn close(&self, _id: u64) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_buttons_argument_names_its_toast_and_its_key() {
        assert_eq!(parse(&argument(7, "ab12")), Some((7, "ab12".to_string())));
        assert_eq!(parse("7"), None);
        assert_eq!(parse("x:ab"), None);
    }
}
