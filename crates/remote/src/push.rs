//! Reaching the person who is not looking: when a proposal is still pending `push_after`
//! seconds after it arrived (at once while the desktop's screen is locked), every paired phone
//! that asked for pushes gets one, by Web Push (RFC 8030, its payload encrypted per RFC 8291,
//! signed per RFC 8292 with the VAPID key from the keychain), and an ntfy topic if one is set.
//!
//! A push says how many proposals wait and nothing else: no path, command, host, title or
//! agent's words. Lock screens are read by others, and push services see what they carry.
//! Opening it opens the page, which asks for the passkey.
//!
//! A push that fails is retried with backoff and logged; it never holds up a decision or the
//! API (it runs on its own task). A subscription the push service says is gone is dropped.

use assent_core::events::Event;
use assent_core::{Engine, Principal, Status};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
use web_push_native::jwt_simple::algorithms::{ECDSAP256PublicKeyLike, ES256KeyPair};
use web_push_native::{Auth, WebPushBuilder, p256};

/// At most one push per this long: proposals that come due meanwhile ride on the next.
pub const MIN_GAP: Duration = Duration::from_secs(30);

/// Tries of one push, and the waits between them.
const BACKOFF: [Duration; 3] = [Duration::from_secs(1), Duration::from_secs(4), Duration::from_secs(16)];

/// The browsers' push services (and their subdomains): Chrome's and Edge's on Android
/// (Firebase), Firefox's (Mozilla's autopush), Safari's (Apple), Edge's on Windows (WNS).
pub const PUSH_SERVICES: [&str; 5] = [
    "fcm.googleapis.com",
    "android.googleapis.com",
    "push.services.mozilla.com",
    "push.apple.com",
    "notify.windows.com",
];

fn is_push_service(host: &str) -> bool {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    PUSH_SERVICES.iter().any(|s| host == *s || host.strip_suffix(s).is_some_and(|rest| rest.ends_with('.')))
}

/// Push services the owner named (`ASSENT_PUSH_SERVICES`: origins, comma-separated), such as a
/// self-hosted autopush; read once.
fn owner_named() -> &'static [String] {
    static NAMED: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    NAMED.get_or_init(|| {
        std::env::var("ASSENT_PUSH_SERVICES")
            .unwrap_or_default()
            .split(',')
            .filter_map(|o| webauthn_rs::prelude::Url::parse(o.trim()).ok())
            .map(|u| u.origin().ascii_serialization())
            .filter(|o| o != "null")
            .collect()
    })
}

/// The contact a push's signature (VAPID) names: no page's address, which push services would
/// see.
pub const VAPID_CONTACT: &str = "mailto:push@assent.invalid";

/// A Web Push subscription as the browser's `PushSubscription.toJSON()` gives it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Subscription {
    /// The push service's URL for this browser.
    pub endpoint: String,
    /// The browser's keys.
    pub keys: Keys,
}

/// A subscription's keys, base64url.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Keys {
    /// The browser's P-256 public key (65 bytes, uncompressed).
    pub p256dh: String,
    /// The shared authentication secret (16 bytes).
    pub auth: String,
}

impl Subscription {
    /// Checked: an endpoint at a browser's push service ([`PUSH_SERVICES`], `https`, or one
    /// the owner named in `ASSENT_PUSH_SERVICES`), a P-256 point, a 16-byte secret. A session
    /// alone can subscribe, so it can make Assent send only to a push service: never to a
    /// loopback or private address, or anything else on the machine or its network.
    pub fn checked(self) -> Result<Self, String> {
        let url =
            webauthn_rs::prelude::Url::parse(&self.endpoint).map_err(|_| "`endpoint` is not a URL".to_string())?;
        if !url.username().is_empty() || url.password().is_some() {
            return Err("`endpoint` must not carry a user name or password".into());
        }
        if self.endpoint.len() > 2048 {
            return Err("`endpoint` is longer than 2048 characters".into());
        }
        let origin = url.origin().ascii_serialization();
        let known = url.scheme() == "https"
            && url.port().is_none()
            && matches!(url.host(), Some(url::Host::Domain(d)) if is_push_service(d));
        if !known && !owner_named().contains(&origin) {
            return Err(format!(
                "`endpoint` is not at a browser's push service ({}): Assent sends pushes nowhere else",
                PUSH_SERVICES.join(", ")
            ));
        }
        self.public_key()?;
        self.auth()?;
        Ok(self)
    }

    fn public_key(&self) -> Result<p256::PublicKey, String> {
        let bytes = URL_SAFE_NO_PAD
            .decode(self.keys.p256dh.trim_end_matches('='))
            .map_err(|_| "`keys.p256dh` is not base64url")?;
        p256::PublicKey::from_sec1_bytes(&bytes).map_err(|_| "`keys.p256dh` is not a P-256 public key".to_string())
    }

    fn auth(&self) -> Result<Auth, String> {
        let bytes =
            URL_SAFE_NO_PAD.decode(self.keys.auth.trim_end_matches('=')).map_err(|_| "`keys.auth` is not base64url")?;
        if bytes.len() != 16 {
            return Err("`keys.auth` is not 16 bytes".into());
        }
        let mut auth = Auth::default();
        auth.copy_from_slice(&bytes);
        Ok(auth)
    }
}

/// The sender's VAPID key pair, from its 32 private bytes (kept in the keychain).
pub struct Vapid(ES256KeyPair);

impl Vapid {
    /// A new key's private bytes, base64url (to keep).
    pub fn generate() -> String {
        URL_SAFE_NO_PAD.encode(ES256KeyPair::generate().to_bytes())
    }

    /// The key kept as `generate` gave it.
    pub fn from_kept(kept: &str) -> Result<Self, String> {
        let bytes = URL_SAFE_NO_PAD.decode(kept.trim()).map_err(|_| "the VAPID key is not base64url".to_string())?;
        ES256KeyPair::from_bytes(&bytes).map(Vapid).map_err(|e| format!("the VAPID key: {e}"))
    }

    /// The public key, uncompressed and base64url, as `pushManager.subscribe` takes it.
    pub fn public_key(&self) -> String {
        URL_SAFE_NO_PAD.encode(self.0.public_key().public_key().to_bytes_uncompressed())
    }
}

/// Where and how the pushes go.
pub(crate) struct Sender {
    pub(crate) engine: Engine,
    pub(crate) vapid: Option<Arc<Vapid>>,
    pub(crate) push_after: Duration,
    pub(crate) ntfy: Option<String>,
    pub(crate) ntfy_token: Option<Arc<dyn Fn() -> Option<String> + Send + Sync>>,
    pub(crate) locked: Option<Arc<dyn Fn() -> futures_util::future::BoxFuture<'static, bool> + Send + Sync>>,
    pub(crate) http: reqwest::Client,
}

/// What a push carries: the count, and nothing else.
#[derive(Serialize)]
struct Payload {
    pending: u64,
}

fn words(n: u64) -> String {
    if n == 1 { "1 proposal waits for you".into() } else { format!("{n} proposals wait for you") }
}

impl Sender {
    /// Watches proposals as they arrive and pushes those left pending, until the task ends.
    pub(crate) async fn run(self: Arc<Self>) {
        let mut events = self.engine.subscribe();
        let mut due: BTreeMap<(i64, String), ()> = BTreeMap::new();
        let mut last_push: Option<std::time::Instant> = None;
        let clock = self.engine.clock().clone();
        loop {
            let next = due.keys().next().map(|(at, _)| *at);
            let sleep = match next {
                Some(at) => Duration::from_millis((at - clock.now().0).max(0) as u64),
                None => Duration::from_secs(3600),
            };
            tokio::select! {
                ev = events.recv() => match ev {
                    Ok(Event::Created { proposal }) if proposal.status == Status::Pending => {
                        let at_once = self.push_after.is_zero() || self.screen_locked().await;
                        let wait = if at_once { 0 } else { self.push_after.as_millis() as i64 };
                        due.insert((clock.now().0 + wait, proposal.id.clone()), ());
                    }
                    Ok(_) => {}
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                },
                () = clock.sleep(sleep) => {
                    let since = last_push.map(|at| clock.instant().saturating_duration_since(at));
                    if let Some(since) = since
                        && since < MIN_GAP
                    {
                        // Too soon after the last: what came due waits for the gap to pass.
                        let wait = (MIN_GAP - since).as_millis() as i64;
                        let now = clock.now().0;
                        due = due.into_keys().map(|(t, id)| ((t.max(now + wait), id), ())).collect();
                        continue;
                    }
                    let now = clock.now().0;
                    let ready: Vec<String> = due.keys().filter(|(t, _)| *t <= now).map(|(_, id)| id.clone()).collect();
                    due.retain(|(t, _), ()| *t > now);
                    let mut still = false;
                    for id in &ready {
                        if let Ok(p) = self.engine.get(&Principal::Owner, id).await
                            && p.status == Status::Pending
                        {
                            still = true;
                        }
                    }
                    if still {
                        last_push = Some(clock.instant());
                        let me = self.clone();
                        tokio::spawn(async move { me.push_all().await });
                    }
                }
            }
        }
    }

    async fn screen_locked(&self) -> bool {
        match &self.locked {
            Some(f) => f().await,
            None => false,
        }
    }

    /// One push to every subscribed device and to ntfy, each on its own, with retries.
    pub(crate) async fn push_all(self: Arc<Self>) {
        let pending = match self.engine.pending_count().await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        let devices = self.engine.devices().await.unwrap_or_default();
        let mut tasks = Vec::new();
        if let Some(vapid) = &self.vapid {
            for d in devices.into_iter().filter(|d| d.revoked_at.is_none()) {
                let Some(sub) = d.push.as_deref().and_then(|s| serde_json::from_str::<Subscription>(s).ok()) else {
                    continue;
                };
                let (me, vapid) = (self.clone(), vapid.clone());
                tasks.push(tokio::spawn(async move { me.web_push(&d.name, &sub, &vapid, pending).await }));
            }
        }
        if let Some(url) = self.ntfy.clone() {
            let me = self.clone();
            tasks.push(tokio::spawn(async move { me.ntfy(&url, pending).await }));
        }
        for t in tasks {
            let _ = t.await;
        }
    }

    async fn web_push(&self, device: &str, sub: &Subscription, vapid: &Vapid, pending: u64) {
        // Checked again: a subscription stored before the push services were checked.
        if let Err(why) = sub.clone().checked() {
            tracing::warn!(%device, %why, "not pushing to this subscription; dropping it");
            let _ = self.engine.set_device_push(device, None).await;
            return;
        }
        let (Ok(endpoint), Ok(key), Ok(auth)) = (sub.endpoint.parse::<axum::http::Uri>(), sub.public_key(), sub.auth())
        else {
            return;
        };
        let body = serde_json::to_vec(&Payload { pending }).unwrap_or_default();
        for (i, wait) in BACKOFF.iter().enumerate() {
            let built = WebPushBuilder::new(endpoint.clone(), key, auth)
                .with_valid_duration(Duration::from_secs(3600))
                .with_vapid(&vapid.0, VAPID_CONTACT)
                .build(body.clone());
            let req = match built {
                Ok(r) => r,
                Err(e) => {
                    tracing::error!(%device, error = %e, "cannot build a push");
                    return;
                }
            };
            let mut r = self.http.post(sub.endpoint.as_str()).header("Urgency", "high");
            for (name, value) in req.headers() {
                r = r.header(name.as_str(), value.as_bytes());
            }
            match r.body(req.into_body()).send().await {
                Ok(res) if res.status().is_success() => {
                    tracing::info!(%device, pending, "pushed to a paired device");
                    return;
                }
                Ok(res) if matches!(res.status().as_u16(), 404 | 410) => {
                    // The browser unsubscribed (or the service forgot it): stop pushing there.
                    tracing::info!(%device, "the push service says this subscription is gone; dropping it");
                    let _ = self.engine.set_device_push(device, None).await;
                    return;
                }
                Ok(res) => tracing::warn!(%device, status = %res.status(), attempt = i + 1, "a push was refused"),
                Err(e) => tracing::warn!(%device, error = %e, attempt = i + 1, "a push could not be sent"),
            }
            self.engine.clock().sleep(*wait).await;
        }
        tracing::error!(%device, "gave up pushing to a paired device after {} tries", BACKOFF.len());
    }

    async fn ntfy(&self, url: &str, pending: u64) {
        let token = match &self.ntfy_token {
            Some(f) => {
                let f = f.clone();
                tokio::task::spawn_blocking(move || f()).await.ok().flatten()
            }
            None => None,
        };
        for (i, wait) in BACKOFF.iter().enumerate() {
            let mut r = self
                .http
                .post(url)
                .header("Title", "Assent")
                .header("Priority", "high")
                .header("Tags", "hourglass")
                .body(words(pending));
            if let Some(t) = &token {
                r = r.bearer_auth(t);
            }
            match r.send().await {
                Ok(res) if res.status().is_success() => {
                    tracing::info!(pending, "pushed to ntfy");
                    return;
                }
                Ok(res) => tracing::warn!(status = %res.status(), attempt = i + 1, "ntfy refused a push"),
                Err(e) => tracing::warn!(error = %e, attempt = i + 1, "a push to ntfy could not be sent"),
            }
            self.engine.clock().sleep(*wait).await;
        }
        tracing::error!("gave up pushing to ntfy after {} tries", BACKOFF.len());
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn sub(endpoint: &str, p256dh: &str, auth: &str) -> Subscription {
        Subscription { endpoint: endpoint.into(), keys: Keys { p256dh: p256dh.into(), auth: auth.into() } }
    }

    #[test]
    fn a_subscription_is_an_https_endpoint_and_real_keys() {
        let secret = p256::SecretKey::from_slice(&assent_core::secret::random_bytes::<32>()).unwrap();
        let point = URL_SAFE_NO_PAD
            .encode(p256::elliptic_curve::sec1::ToEncodedPoint::to_encoded_point(&secret.public_key(), false));
        let auth = URL_SAFE_NO_PAD.encode([7u8; 16]);
        for ok in [
            "https://fcm.googleapis.com/fcm/send/abc",
            "https://updates.push.services.mozilla.com/wpush/v2/abc",
            "https://web.push.apple.com/abc",
            "https://wns2-par02p.notify.windows.com/w/?token=abc",
        ] {
            assert!(sub(ok, &point, &auth).checked().is_ok(), "{ok}");
        }
        let bad_endpoints = [
            "http://push.example/abc",
            "https://push.example/abc",
            "http://127.0.0.1:9/abc",
            "https://127.0.0.1/abc",
            "https://localhost/abc",
            "https://10.0.0.1/abc",
            "https://fcm.googleapis.com.evil.example/abc",
            "https://evilfcm.googleapis.com.example/abc",
            "https://notfcm.googleapis.com/abc",
            "https://fcm.googleapis.com:8443/abc",
            "http://fcm.googleapis.com/abc",
            "ftp://push.example/abc",
            "https://u:p@push.example/abc",
        ];
        let bad_keys = [
            sub("https://push.example/abc", "AAAA", &auth),
            sub("https://push.example/abc", &point, &URL_SAFE_NO_PAD.encode([7u8; 15])),
        ];
        for bad in bad_endpoints.map(|u| sub(u, &point, &auth)).into_iter().chain(bad_keys) {
            assert!(bad.clone().checked().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_vapid_key_survives_being_kept() {
        let kept = Vapid::generate();
        let a = Vapid::from_kept(&kept).unwrap();
        assert_eq!(a.public_key(), Vapid::from_kept(&kept).unwrap().public_key());
        assert_eq!(URL_SAFE_NO_PAD.decode(a.public_key()).unwrap().len(), 65);
        assert!(Vapid::from_kept("not a key").is_err());
    }
}
