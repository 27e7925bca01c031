//! # assent-notify
//!
//! An OS notification for each new pending proposal, answerable from the notification: Approve,
//! Reject, Open. Several within a few seconds coalesce into one summary. Decisions made here are
//! recorded with the channel `notification`.
//!
//! Anyone on the session bus can emit an `ActionInvoked` signal, so an action is honoured only
//! when (1) the signal comes from the connection that currently owns the
//! `org.freedesktop.Notifications` name, (2) it names a notification Assent showed, and (3) it
//! carries that notification's unguessable action key. Destructive proposals (file deletes, HTTP
//! DELETE) offer Open only. Where no notification service runs, Assent works on without one and
//! says so once.

use assent_core::preview::Preview;
use assent_core::proposal::Proposal;
use std::sync::Arc;
use std::time::Duration;

// The platform's notification service: the freedesktop one on the session bus (Linux), Windows'
// toasts, macOS's Notification Center. Elsewhere Assent works on without notifications and says
// so. What a click decides is the same everywhere (`decisions`; unused where nothing is shown).
#[cfg_attr(not(any(target_os = "linux", windows, target_os = "macos")), allow(dead_code))]
mod decisions;
#[cfg(target_os = "linux")]
mod freedesktop;
#[cfg(target_os = "linux")]
pub use freedesktop::{probe, screen_locked, start};
#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::{probe, screen_locked, start};
#[cfg(target_os = "macos")]
#[allow(unsafe_code)]
mod macos;
#[cfg(target_os = "macos")]
pub use macos::{probe, screen_locked, start};
#[cfg(not(any(target_os = "linux", windows, target_os = "macos")))]
mod elsewhere;
#[cfg(not(any(target_os = "linux", windows, target_os = "macos")))]
pub use elsewhere::{probe, screen_locked, start};

/// What the host does when the person asks to see a proposal (or the inbox, for a summary).
pub trait Host: Send + Sync + 'static {
    /// Shows the app, on proposal `id` when given.
    fn open(&self, id: Option<&str>);
}

/// A host with no window (`assent serve --notify`): "Open" is logged.
pub struct Headless;

impl Host for Headless {
    fn open(&self, id: Option<&str>) {
        tracing::info!(proposal = id.unwrap_or("-"), "a notification asked to open the inbox");
    }
}

/// Settings.
#[derive(Debug, Clone)]
pub struct Options {
    /// New proposals within this window share one notification.
    pub coalesce: Duration,
    /// While set, nothing new is shown (decided proposals' notifications are still closed).
    pub pause: Pause,
}

impl Default for Options {
    fn default() -> Self {
        Options { coalesce: Duration::from_secs(2), pause: Pause::default() }
    }
}

/// "Pause notifications": until when no new proposal is announced. Proposals still arrive and
/// wait in the inbox; only the notifications stop.
#[derive(Debug, Clone, Default)]
pub struct Pause(Arc<std::sync::atomic::AtomicI64>);

impl Pause {
    /// Pauses for `d` from now.
    pub fn pause_for(&self, d: Duration) {
        let until = assent_core::time::Timestamp::now().0.saturating_add(d.as_millis() as i64);
        self.0.store(until, std::sync::atomic::Ordering::Relaxed);
    }

    /// Resumes now.
    pub fn resume(&self) {
        self.0.store(0, std::sync::atomic::Ordering::Relaxed);
    }

    /// Until when notifications are paused, if they are.
    pub fn until(&self) -> Option<assent_core::time::Timestamp> {
        let until = self.0.load(std::sync::atomic::Ordering::Relaxed);
        (until > assent_core::time::Timestamp::now().0).then_some(assent_core::time::Timestamp(until))
    }
}

/// What the notification service says of itself (for `assent doctor`).
#[derive(Debug, Clone)]
pub struct ServiceInfo {
    /// Its name and version, e.g. "dunst 1.9.0".
    pub server: String,
    /// Whether it shows action buttons (Approve / Reject).
    pub actions: bool,
}

/// Whether notifications work here, for the settings page.
#[derive(Debug, Clone)]
pub enum Availability {
    /// A notification service is running.
    Available,
    /// None: why.
    Unavailable(String),
}

impl Availability {
    /// One word or a short phrase for the settings page.
    pub fn describe(&self) -> String {
        match self {
            Availability::Available => "available".into(),
            Availability::Unavailable(why) => format!("unavailable ({why})"),
        }
    }
}

/// One line that says what a proposal does, from what Assent computed (never the agent's words).
#[cfg_attr(not(any(target_os = "linux", windows, target_os = "macos")), allow(dead_code))]
pub(crate) fn what(p: &Proposal) -> String {
    let line = match &p.preview {
        Preview::FileWrite(f) => match f.diff.stats {
            Some(s) => format!("Write {} (+{} −{})", f.path, s.added, s.removed),
            None => format!("Write {}", f.path),
        },
        Preview::FileDelete(f) => format!("Delete {}", f.path),
        Preview::HttpRequest(h) => {
            format!("{} {}{}", h.method, h.host.as_deref().unwrap_or(""), h.path.as_deref().unwrap_or(""))
        }
        Preview::ToolCall(t) => {
            let input: String = t.input_text.split_whitespace().collect::<Vec<_>>().join(" ");
            format!("{}: {}", t.tool, input)
        }
        Preview::Unreadable { .. } => p.kind.to_string(),
    };
    let line = assent_core::invisible::make_visible(&line);
    let mut out: String = line.chars().take(160).collect();
    if let Preview::ToolCall(t) = &p.preview {
        if let Some(b) = t.runs_in {
            out.push_str(&format!("\nApprove runs it in the {} box", b.as_str()));
            if !t.reaches.is_empty() {
                out.push_str(&format!(", reaching {}", t.reaches.join(", ")));
            }
        }
        let start = assent_core::kinds::project_hooks::NOTE_START;
        if t.notes.iter().any(|n| n.starts_with(start)) {
            out.push_str("\n⚠ this project's settings change the agent's hooks (see the inbox)");
        }
    }
    if !p.preview.invisible_characters().is_empty() {
        out.push_str("\n⚠ contains hidden characters");
    }
    out
}
