//! Notifications on Windows: toasts with Approve, Reject and Open buttons, through Microsoft's
//! maintained WinRT bindings (the `windows` crate: the toast's XML built with the system's own
//! DOM, the activation callback, the notification history), without a hand-written COM layer.
//! Each toast is tagged with Assent's number for it, so one whose proposal was decided elsewhere
//! is taken back from the screen and from the Action Center. Each button carries its toast's
//! number and its key as its argument; the click comes back through the callback to the same
//! decision logic as on Linux and macOS (`decisions`). Compiled in the test run (cross-built);
//! Wine shows no toasts.

use crate::decisions::{Button, Note, Notifier, Registry, act, announce};
use crate::{Availability, Host, Options, ServiceInfo};
use assent_core::Engine;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::sync::mpsc;
use windows::Data::Xml::Dom::XmlDocument;
use windows::Foundation::TypedEventHandler;
use windows::UI::Notifications::{ToastActivatedEventArgs, ToastNotification, ToastNotificationManager};
use windows::core::{HSTRING, IInspectable, Interface, h};

/// The app the toasts are shown as: the desktop app's identifier (tauri.conf.json). The installer
/// registers its name and icon under `HKCU\Software\Classes\AppUserModelId\` this id, which is
/// where Windows reads an unpackaged app's.
const APP_ID: &str = "dev.assent.inbox";

/// The group of Assent's toasts in the history.
const GROUP: &str = "proposals";

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

/// The toast's number and the button's key of an argument (the toast's number alone: the toast
/// itself was clicked, and the key is empty).
fn parse(argument: &str) -> Option<(u64, String)> {
    let (id, key) = argument.split_once(':').unwrap_or((argument, ""));
    Some((id.parse().ok()?, key.to_string()))
}

#[async_trait::async_trait]
impl Notifier for Toasts {
    type Id = u64;

    async fn show(&self, note: &Note, buttons: &[Button<'_>]) -> Result<u64, String> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        toast(id, note, buttons, self.clicks.clone()).map_err(|e| e.to_string())?;
        Ok(id)
    }

    async fn close(&self, id: u64) {
        let taken = ToastNotificationManager::History().and_then(|h| {
            h.RemoveGroupedTagWithId(&HSTRING::from(id.to_string()), &HSTRING::from(GROUP), &HSTRING::from(APP_ID))
        });
        if let Err(e) = taken {
            tracing::debug!(id, error = %e, "a toast could not be taken back");
        }
    }
}

/// Shows toast `id`: `note`'s two lines, a button per `(key, label)` whose argument is the toast's
/// number and the key, the toast itself opening the inbox (its number alone); a click goes to
/// `clicks`.
fn toast(
    id: u64,
    note: &Note,
    buttons: &[Button<'_>],
    clicks: mpsc::UnboundedSender<(u64, String)>,
) -> windows::core::Result<()> {
    let doc = XmlDocument::new()?;
    let root = doc.CreateElement(h!("toast"))?;
    root.SetAttribute(h!("launch"), &HSTRING::from(id.to_string()))?;
    let visual = doc.CreateElement(h!("visual"))?;
    let binding = doc.CreateElement(h!("binding"))?;
    binding.SetAttribute(h!("template"), h!("ToastGeneric"))?;
    for line in [&note.summary, &note.body] {
        let text = doc.CreateElement(h!("text"))?;
        // Text, never markup: the system's DOM escapes it.
        text.SetInnerText(&HSTRING::from(line.as_str()))?;
        binding.AppendChild(&text)?;
    }
    visual.AppendChild(&binding)?;
    root.AppendChild(&visual)?;
    let actions = doc.CreateElement(h!("actions"))?;
    for Button { key, label, .. } in buttons {
        let action = doc.CreateElement(h!("action"))?;
        action.SetAttribute(h!("content"), &HSTRING::from(*label))?;
        action.SetAttribute(h!("arguments"), &HSTRING::from(argument(id, key)))?;
        actions.AppendChild(&action)?;
    }
    root.AppendChild(&actions)?;
    doc.AppendChild(&root)?;
    let toast = ToastNotification::CreateToastNotification(&doc)?;
    toast.SetTag(&HSTRING::from(id.to_string()))?;
    toast.SetGroup(&HSTRING::from(GROUP))?;
    toast.Activated(&TypedEventHandler::<ToastNotification, IInspectable>::new(move |_, args| {
        let args: &Option<IInspectable> = &args;
        let arg = args
            .as_ref()
            .and_then(|a| a.cast::<ToastActivatedEventArgs>().ok())
            .and_then(|a| a.Arguments().ok())
            .map(|a| a.to_string_lossy());
        if let Some(click) = arg.as_deref().and_then(parse) {
            let _ = clicks.send(click);
        }
        Ok(())
    }))?;
    ToastNotificationManager::CreateToastNotifierWithId(&HSTRING::from(APP_ID))?.Show(&toast)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_buttons_argument_names_its_toast_and_its_key() {
        assert_eq!(parse(&argument(7, "ab12")), Some((7, "ab12".to_string())));
        assert_eq!(parse("7"), Some((7, String::new())), "the toast itself: the inbox");
        assert_eq!(parse("x:ab"), None);
        assert_eq!(parse(""), None);
    }
}
