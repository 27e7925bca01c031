//! Notifications on macOS: the User Notifications framework (`UNUserNotificationCenter`), through
//! the objc2 project's maintained, generated bindings (`objc2-user-notifications`: no hand-written
//! Objective-C, no C compiled at build time, so the Mac targets cross-check from Linux).
//!
//! Two categories are registered once: one with Approve, Reject and Open, one with Open alone
//! (destructive proposals, summaries). Each notification carries its buttons' keys in its
//! `userInfo`, by the button's action; a response hands back the notification (whose identifier
//! is Assent's number for it) and the action chosen, and the key read from the notification's own
//! content goes to the same decision logic as on Linux and Windows (`decisions`): the proposal
//! and the hash of the payload shown, a decision's buttons honoured once. macOS delivers a
//! response only to the app that posted the notification, so no other process can press them.
//!
//! The framework serves an app bundle only (it raises an exception in a bare executable): the
//! desktop app (`Assent.app`) shows notifications; `assent serve` outside a bundle shows none and
//! says so. Compiled for both Mac targets in the test run; never run here (no Mac).

use crate::decisions::{Act, Button, Note, Notifier, Registry, act, announce};
use crate::{Availability, Host, Options, ServiceInfo};
use assent_core::Engine;
use objc2::rc::Retained;
use objc2::runtime::{Bool, ProtocolObject};
use objc2::{AnyThread, DefinedClass, define_class, msg_send};
use objc2_foundation::{NSArray, NSBundle, NSDictionary, NSError, NSObject, NSObjectProtocol, NSSet, NSString};
use objc2_user_notifications::{
    UNAuthorizationOptions, UNMutableNotificationContent, UNNotification, UNNotificationAction,
    UNNotificationActionOptions, UNNotificationCategory, UNNotificationCategoryOptions,
    UNNotificationDefaultActionIdentifier, UNNotificationPresentationOptions, UNNotificationRequest,
    UNNotificationResponse, UNUserNotificationCenter, UNUserNotificationCenterDelegate,
};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::sync::mpsc;

/// The category of a notification with Approve, Reject and Open.
const DECIDE: &str = "dev.assent.decide";
/// The category of a notification with Open alone.
const OPEN_ONLY: &str = "dev.assent.open";

/// A button's action identifier (the key it carries is in the notification's `userInfo`).
fn action_id(a: Act) -> &'static str {
    match a {
        Act::Approve => "approve",
        Act::Reject => "reject",
        Act::Open => "open",
    }
}

/// Why there are no notifications here, when there are none.
fn unavailable() -> Option<String> {
    let bundled = NSBundle::mainBundle().bundleIdentifier().is_some();
    (!bundled).then(|| {
        "macOS shows notifications for an app bundle only: the desktop app (Assent.app) shows them, `assent serve` does not"
            .to_string()
    })
}

/// The Notification Center, for an app bundle.
pub async fn probe() -> Result<ServiceInfo, String> {
    match unavailable() {
        Some(why) => Err(why),
        None => Ok(ServiceInfo { server: "macOS Notification Center".into(), actions: true }),
    }
}

/// Starts showing notifications; a response comes back through a channel to the decision logic.
pub async fn start(engine: Engine, host: Arc<dyn Host>, opts: Options) -> Availability {
    if let Some(why) = unavailable() {
        tracing::warn!("{why}: Assent works on without desktop notifications");
        return Availability::Unavailable(why);
    }
    let (tx, mut rx) = mpsc::unbounded_channel::<Pressed>();
    register(tx);
    let reg = Arc::new(Registry::default());
    {
        let (engine, reg) = (engine.clone(), reg.clone());
        tokio::spawn(async move {
            while let Some(p) = rx.recv().await {
                let click = match &p.key {
                    Some(key) => reg.clicked(p.id, key),
                    None => reg.opened(p.id),
                };
                match click {
                    Some(click) => act(&engine, host.as_ref(), click).await,
                    None => tracing::debug!(id = p.id, "a response to a notification that decides nothing now"),
                }
            }
        });
    }
    let rx = engine.subscribe();
    tokio::spawn(announce(Arc::new(Center { next: AtomicU64::new(1) }), engine, rx, reg, opts));
    Availability::Available
}

/// Not known here: false, so pushes to a phone keep their usual delay.
pub async fn screen_locked() -> bool {
    false
}

/// A response: Assent's number of the notification and the key of the button pressed (none: the
/// notification itself was clicked).
struct Pressed {
    id: u64,
    key: Option<String>,
}

define_class!(
    // SAFETY: NSObject has no subclassing requirements; `Responses` does not implement Drop.
    #[unsafe(super(NSObject))]
    #[ivars = mpsc::UnboundedSender<Pressed>]
    struct Responses;

    unsafe impl NSObjectProtocol for Responses {}

    unsafe impl UNUserNotificationCenterDelegate for Responses {
        #[unsafe(method(userNotificationCenter:didReceiveNotificationResponse:withCompletionHandler:))]
        fn did_receive(
            &self,
            _center: &UNUserNotificationCenter,
            response: &UNNotificationResponse,
            done: &block2::DynBlock<dyn Fn()>,
        ) {
            if let Some(p) = pressed(response) {
                let _ = self.ivars().send(p);
            }
            done.call(());
        }

        #[unsafe(method(userNotificationCenter:willPresentNotification:withCompletionHandler:))]
        fn will_present(
            &self,
            _center: &UNUserNotificationCenter,
            _notification: &UNNotification,
            done: &block2::DynBlock<dyn Fn(UNNotificationPresentationOptions)>,
        ) {
            // Shown while the inbox is in front too: a proposal waits on the person either way.
            done.call((UNNotificationPresentationOptions::Banner | UNNotificationPresentationOptions::List,));
        }
    }
);

/// What a response says: the notification it answers and the key of the button pressed.
fn pressed(response: &UNNotificationResponse) -> Option<Pressed> {
    let content = response.notification().request().content();
    let id: u64 = response.notification().request().identifier().to_string().parse().ok()?;
    let action = response.actionIdentifier();
    // SAFETY: a static string the framework defines.
    if &*action == unsafe { UNNotificationDefaultActionIdentifier } {
        return Some(Pressed { id, key: None });
    }
    let info = content.userInfo();
    let key = info.objectForKey(&action)?.downcast::<NSString>().ok()?.to_string();
    Some(Pressed { id, key: Some(key) })
}

/// Registers the categories and the delegate that hands responses to `tx`, and asks the person
/// once to allow notifications (macOS asks them; the answer is theirs, kept in System Settings).
fn register(tx: mpsc::UnboundedSender<Pressed>) {
    let center = UNUserNotificationCenter::currentNotificationCenter();
    let button = |a: Act, title: &str| {
        let options = match a {
            Act::Open => UNNotificationActionOptions::Foreground,
            Act::Reject => UNNotificationActionOptions::Destructive,
            Act::Approve => UNNotificationActionOptions::AuthenticationRequired,
        };
        UNNotificationAction::actionWithIdentifier_title_options(
            &NSString::from_str(action_id(a)),
            &NSString::from_str(title),
            options,
        )
    };
    let category = |id: &str, actions: &[Retained<UNNotificationAction>]| {
        UNNotificationCategory::categoryWithIdentifier_actions_intentIdentifiers_options(
            &NSString::from_str(id),
            &NSArray::from_retained_slice(actions),
            &NSArray::new(),
            UNNotificationCategoryOptions::CustomDismissAction,
        )
    };
    let decide =
        category(DECIDE, &[button(Act::Approve, "Approve"), button(Act::Reject, "Reject"), button(Act::Open, "Open")]);
    let open_only = category(OPEN_ONLY, &[button(Act::Open, "Open")]);
    center.setNotificationCategories(&NSSet::from_retained_slice(&[decide, open_only]));
    let delegate: Retained<Responses> = {
        let this = Responses::alloc().set_ivars(tx);
        // SAFETY: NSObject's init, on a freshly allocated object.
        unsafe { msg_send![super(this), init] }
    };
    center.setDelegate(Some(ProtocolObject::from_ref(&*delegate)));
    // The centre holds its delegate weakly: this one lives as long as the process.
    std::mem::forget(delegate);
    let asked = block2::RcBlock::new(|granted: Bool, _error: *mut NSError| {
        if !granted.as_bool() {
            tracing::warn!("notifications are not allowed for Assent (System Settings, Notifications)");
        }
    });
    center.requestAuthorizationWithOptions_completionHandler(
        UNAuthorizationOptions::Alert | UNAuthorizationOptions::Sound,
        &asked,
    );
}

/// The Notification Center, its notifications numbered by Assent.
struct Center {
    next: AtomicU64,
}

#[async_trait::async_trait]
impl Notifier for Center {
    type Id = u64;

    async fn show(&self, note: &Note, buttons: &[Button<'_>]) -> Result<u64, String> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        post(id, note, buttons);
        Ok(id)
    }

    async fn close(&self, id: u64) {
        let center = UNUserNotificationCenter::currentNotificationCenter();
        let ids = NSArray::from_retained_slice(&[NSString::from_str(&id.to_string())]);
        center.removeDeliveredNotificationsWithIdentifiers(&ids);
        center.removePendingNotificationRequestsWithIdentifiers(&ids);
    }
}

/// Posts notification `id`: `note`'s lines, the category of its buttons, and each button's key
/// by its action. Labels are the category's; a button without a key (no randomness) is absent
/// from `userInfo`, so pressing it decides nothing.
fn post(id: u64, note: &Note, buttons: &[Button<'_>]) {
    let content = UNMutableNotificationContent::new();
    content.setTitle(&NSString::from_str(&note.summary));
    content.setBody(&NSString::from_str(&note.body));
    let decides = note.acts.iter().any(|(a, _)| *a != Act::Open);
    content.setCategoryIdentifier(&NSString::from_str(if decides { DECIDE } else { OPEN_ONLY }));
    let (keys, actions): (Vec<Retained<NSString>>, Vec<Retained<NSString>>) =
        buttons.iter().map(|b| (NSString::from_str(b.key), NSString::from_str(action_id(b.act)))).unzip();
    let actions: Vec<&NSString> = actions.iter().map(|a| &**a).collect();
    let keys: Vec<&NSString> = keys.iter().map(|k| &**k).collect();
    let info: Retained<NSDictionary<NSString, NSString>> = NSDictionary::from_slices(&actions, &keys);
    // SAFETY: a dictionary of strings is a property-list dictionary, as `userInfo` requires.
    unsafe { content.setUserInfo(info.cast_unchecked()) };
    let request = UNNotificationRequest::requestWithIdentifier_content_trigger(
        &NSString::from_str(&id.to_string()),
        &content,
        None,
    );
    UNUserNotificationCenter::currentNotificationCenter().addNotificationRequest_withCompletionHandler(&request, None);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_button_has_an_action_of_its_own() {
        let ids = [Act::Approve, Act::Reject, Act::Open].map(action_id);
        assert_eq!(ids, ["approve", "reject", "open"]);
    }
}
