//! The remote listener's routes, behind [`crate::front::Front`]: pairing, passkey login, the
//! inbox as the person sees it, its live events, and decisions, each decision its own passkey
//! assertion over a challenge derived from what it decides.
//!
//! | route | needs |
//! |---|---|
//! | `POST /api/pair/options` `{code, name}` | a pairing code (used up here) |
//! | `POST /api/pair` `{ceremony, credential}` | that pairing's ceremony |
//! | `POST /api/login/options` | nothing |
//! | `POST /api/login` `{ceremony, credential}` | a paired device's passkey |
//! | `POST /api/logout`, `GET /api/me` | a session |
//! | `GET /api/proposals`, `GET /api/proposals/{id}`, `GET /api/events` | a session |
//! | `POST /api/decisions/options` `{items, outcome, reason?, feedback?, edits?}` | a session |
//! | `POST /api/decisions` `{nonce, items, outcome, ..., credential}` | a session and an assertion |
//!
//! The error type is in [`fail`], the decisions in [`decide`].
//!
//! A session only reads. Nothing here creates a proposal or administers anything, and an
//! `Authorization` header is refused at the door.

mod decide;
mod fail;
mod inbox;
mod light;
mod seal;

pub use decide::MOST_ITEMS;
pub use fail::Fail;
use fail::{Body, passkey_fail};

use crate::access::{Access, Door, NONCE_MS, Refusal, session_key};
use crate::{Passkeys, RemoteError};
use assent_core::Engine;
use assent_core::time::Timestamp;
use axum::Router;
use axum::extract::{DefaultBodyLimit, FromRequestParts, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::Deserialize;
use serde_json::json;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use webauthn_rs::prelude::{Passkey, PasskeyRegistration, PublicKeyCredential, RegisterPublicKeyCredential};

/// The session cookie: `__Host-` so that it is Secure, host-only and for every path.
pub const COOKIE: &str = "__Host-assent";

/// A pairing under way, until its answer comes back (once): the device's name, the passkey
/// registration, and the hash of the code it was begun with (used up only once it is done).
struct Ceremony {
    name: String,
    state: Box<PasskeyRegistration>,
    code: [u8; 32],
}

/// Pairings by their id, with when they began: at most one per code (a new one for the same
/// code, after a cancelled passkey sheet, replaces it). A login keeps no state here (see
/// [`seal`]), and a decision none but its nonce, in [`Access`].
#[derive(Default)]
struct Ceremonies(HashMap<String, (Ceremony, Timestamp)>);

impl Ceremonies {
    const MOST: usize = 64;

    fn start(&mut self, id: String, c: Ceremony, now: Timestamp) -> Result<(), Refusal> {
        self.0.retain(|_, (old, at)| now.0 - at.0 < NONCE_MS && old.code != c.code);
        if self.0.len() >= Self::MOST {
            return Err(Refusal::Busy);
        }
        self.0.insert(id, (c, now));
        Ok(())
    }

    fn take(&mut self, id: &str, now: Timestamp) -> Option<Ceremony> {
        self.0.remove(id).filter(|(_, at)| now.0 - at.0 < NONCE_MS).map(|(c, _)| c)
    }
}

/// What one listener holds: its relying party and its memory. A new one each time the
/// listener starts, so turning it off ends every session, code and ceremony.
pub(crate) struct Listener {
    engine: Engine,
    passkeys: Passkeys,
    /// The Web Push key's public half, for the page to subscribe with (none: no Web Push).
    vapid: Option<String>,
    pub(crate) access: Mutex<Access>,
    ceremonies: Mutex<Ceremonies>,
    /// Decision bodies being read, per session key (see [`Reading`]).
    reading: Mutex<HashMap<[u8; 32], usize>>,
    logins: seal::Sealer,
}

impl Listener {
    pub(crate) fn new(engine: Engine, origin: &str, vapid: Option<String>) -> Result<Self, RemoteError> {
        Ok(Self {
            engine,
            passkeys: Passkeys::new(origin)?,
            vapid,
            access: Mutex::default(),
            ceremonies: Mutex::default(),
            reading: Mutex::default(),
            logins: seal::Sealer::new().ok_or_else(|| RemoteError::State("no key to seal logins with".into()))?,
        })
    }

    fn access(&self) -> std::sync::MutexGuard<'_, Access> {
        self.access.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn ceremonies(&self) -> std::sync::MutexGuard<'_, Ceremonies> {
        self.ceremonies.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records a refused attempt in the remote log; one at a door that closes (a session's
    /// decisions) counts there too, and a closing is logged.
    async fn refused(&self, door: Option<&Door>, device: &str, event: &str, fail: &Fail) {
        let now = Timestamp::now();
        let closed = door.is_some_and(|d| self.access().failed(d, now));
        self.engine.remote_log(device, event, now, Some(json!({ "code": fail.code }))).await;
        if let Some(door) = door.filter(|_| closed) {
            tracing::warn!(door = door.name(), "remote listener: a session's decisions closed after repeated failures");
            self.engine.remote_log(device, "locked_out", now, Some(json!({ "door": door.name() }))).await;
        }
    }
}

/// The routes of a listener.
pub(crate) fn router(listener: Arc<Listener>) -> Router {
    Router::new()
        .route("/api/pair/options", post(pair_options))
        .route("/api/pair", post(pair))
        .route("/api/login/options", post(login_options))
        .route("/api/login", post(login))
        .route("/api/logout", post(logout))
        .route("/api/me", get(me))
        .route("/api/proposals", get(inbox::list))
        .route("/api/proposals/{id}", get(inbox::show))
        .route("/api/events", get(inbox::events))
        .route("/api/push", get(push_state).put(subscribe).delete(unsubscribe))
        .merge(
            // A decision carries the person's edit, as large as a proposal: a larger body, read
            // only once the session is known (the handlers take it before the body).
            Router::new()
                .route("/api/decisions/options", post(decide::decision_options))
                .route("/api/decisions", post(decide::decide))
                .layer(DefaultBodyLimit::max(crate::front::MAX_DECISION_BODY)),
        )
        .with_state(listener)
}

/// Which live session a request's headers carry (for the accept loop, which keeps such
/// connections apart from strangers': see [`crate::serve`]).
pub(crate) fn vouch(l: Arc<Listener>) -> crate::serve::Vouch {
    Arc::new(move |headers: &HeaderMap| {
        let token = cookie(headers)?;
        l.access().live(token, Timestamp::now()).then(|| session_key(token))
    })
}

fn cookie(headers: &HeaderMap) -> Option<&str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .find_map(|c| c.trim().strip_prefix(COOKIE)?.strip_prefix('='))
}

/// A live session: the device it is and the key it is known by ([`session_key`]).
pub(super) struct Session {
    pub(super) device: String,
    pub(super) key: [u8; 32],
}

impl FromRequestParts<Arc<Listener>> for Session {
    type Rejection = Fail;

    async fn from_request_parts(parts: &mut Parts, l: &Arc<Listener>) -> Result<Self, Fail> {
        let token = cookie(&parts.headers).ok_or(Refusal::NoSession)?;
        let device = l.access().session(token, Timestamp::now())?;
        Ok(Session { device, key: session_key(token) })
    }
}

/// Most decision bodies one session has read at once: a decision carries up to
/// [`crate::front::MAX_DECISION_BODY`], so one session (a stolen cookie) holds at most this
/// many times that, whatever it sends; another session reads its own.
pub const BODIES_PER_SESSION: usize = 2;

/// A decision body being read for a session: taken before the body (past
/// [`BODIES_PER_SESSION`], refused at once, nothing read), given back when the request ends.
pub(super) struct Reading {
    l: Arc<Listener>,
    key: [u8; 32],
}

impl FromRequestParts<Arc<Listener>> for Reading {
    type Rejection = Fail;

    async fn from_request_parts(parts: &mut Parts, l: &Arc<Listener>) -> Result<Self, Fail> {
        let key = session_key(cookie(&parts.headers).ok_or(Refusal::NoSession)?);
        let mut reading = l.reading.lock().unwrap_or_else(|e| e.into_inner());
        let n = reading.entry(key).or_default();
        if *n >= BODIES_PER_SESSION {
            return Err(Fail::new(
                StatusCode::TOO_MANY_REQUESTS,
                "session_busy",
                "this session is already sending decisions: wait for them",
            ));
        }
        *n += 1;
        Ok(Reading { l: l.clone(), key })
    }
}

impl Drop for Reading {
    fn drop(&mut self) {
        let mut reading = self.l.reading.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = reading.get_mut(&self.key) {
            *n -= 1;
            if *n == 0 {
                reading.remove(&self.key);
            }
        }
    }
}

fn session_cookie(token: &str) -> HeaderValue {
    let max_age = crate::access::SESSION_MS / 1000;
    HeaderValue::from_str(&format!("{COOKIE}={token}; Path=/; Secure; HttpOnly; SameSite=Strict; Max-Age={max_age}"))
        .unwrap_or_else(|_| HeaderValue::from_static(""))
}

/// A session begins: the cookie and who it is.
fn logged_in(l: &Listener, device: &str) -> Result<Response, Fail> {
    let token = l.access().login(device, Timestamp::now());
    let mut res = axum::Json(json!({ "device": device })).into_response();
    res.headers_mut().insert(header::SET_COOKIE, session_cookie(&token));
    res.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(res)
}

fn ceremony_id() -> String {
    hex::encode(assent_core::secret::random_bytes::<32>())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PairAsk {
    code: String,
    name: String,
}

async fn pair_options(State(l): State<Arc<Listener>>, Body(ask): Body<PairAsk>) -> Result<Response, Fail> {
    let now = Timestamp::now();
    // A name that cannot be paired does not use the code.
    assent_core::engine::devices::validate_device_name(&ask.name)?;
    if l.engine.devices().await?.iter().any(|d| d.name == ask.name && d.revoked_at.is_none()) {
        return Err(Fail::new(
            StatusCode::CONFLICT,
            "device_exists",
            format!("a device named `{}` is already paired: pick another name, or revoke it first", ask.name),
        ));
    }
    // The code is checked here and used up once the pairing is done, so that a passkey sheet
    // cancelled on the phone can be tried again. A wrong code closes nothing (see `access`);
    // every refusal is logged.
    let checked = l.access().valid_code(&ask.code, now);
    let code = match checked {
        Ok(code) => code,
        Err(r) => {
            let fail = Fail::from(r);
            l.engine.remote_log("", "pairing_refused", now, Some(json!({ "code": fail.code }))).await;
            return Err(fail);
        }
    };
    let (options, state) = l.passkeys.pairing(&ask.name).map_err(|e| passkey_fail(&e))?;
    let id = ceremony_id();
    l.ceremonies().start(id.clone(), Ceremony { name: ask.name, state: Box::new(state), code }, now)?;
    Ok(axum::Json(json!({ "ceremony": id, "options": options })).into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Answer<C> {
    ceremony: String,
    credential: C,
}

async fn pair(
    State(l): State<Arc<Listener>>,
    Body(a): Body<Answer<RegisterPublicKeyCredential>>,
) -> Result<Response, Fail> {
    let now = Timestamp::now();
    let Some(Ceremony { name, state, code }) = l.ceremonies().take(&a.ceremony, now) else {
        return Err(Fail::new(
            StatusCode::FORBIDDEN,
            "ceremony_invalid",
            "this pairing was used or expired: start again",
        ));
    };
    let key = match l.passkeys.paired(&a.credential, &state) {
        Ok(k) => k,
        Err(e) => {
            let fail = passkey_fail(&e);
            l.refused(None, &name, "pairing_refused", &fail).await;
            return Err(fail);
        }
    };
    // The code is used up now, once: a second pairing begun with it finds it gone.
    if !l.access().redeem(&code, now) {
        let fail = Fail::from(Refusal::UnknownCode);
        l.engine.remote_log(&name, "pairing_refused", now, Some(json!({ "code": fail.code }))).await;
        return Err(fail);
    }
    let device = assent_core::remote::Device {
        name: name.clone(),
        credential_id: URL_SAFE_NO_PAD.encode(key.cred_id()),
        passkey: serde_json::to_string(&key).map_err(|e| passkey_fail(&RemoteError::State(e.to_string())))?,
        added_at: now,
        last_used_at: None,
        revoked_at: None,
        push: None,
    };
    l.engine.pair_device(device).await?;
    tracing::info!(device = %name, "a device was paired to answer from");
    logged_in(&l, &name)
}

async fn login_options(State(l): State<Arc<Listener>>) -> Result<Response, Fail> {
    let now = Timestamp::now();
    let (options, state) = l.passkeys.login().map_err(|e| passkey_fail(&e))?;
    // Nothing is kept here: the ceremony travels sealed, as its id.
    let id = l.logins.seal(state, now).ok_or_else(|| passkey_fail(&RemoteError::State("cannot seal".into())))?;
    Ok(axum::Json(json!({ "ceremony": id, "options": options })).into_response())
}

/// The paired (not revoked) devices with their passkeys.
pub(super) async fn paired(engine: &Engine) -> Result<Vec<(String, String, Passkey)>, Fail> {
    Ok(engine
        .devices()
        .await?
        .into_iter()
        .filter(|d| d.revoked_at.is_none())
        .filter_map(|d| Some((d.name, d.credential_id, serde_json::from_str(&d.passkey).ok()?)))
        .collect())
}

async fn login(State(l): State<Arc<Listener>>, Body(a): Body<Answer<PublicKeyCredential>>) -> Result<Response, Fail> {
    let now = Timestamp::now();
    let Some((state, spent)) = l.logins.open(&a.ceremony, now) else {
        return Err(Fail::new(
            StatusCode::FORBIDDEN,
            "ceremony_invalid",
            "this login was used or expired: start again",
        ));
    };
    let devices = paired(&l.engine).await?;
    let mut who = String::new();
    let found = |id: &[u8]| {
        let id = URL_SAFE_NO_PAD.encode(id);
        devices.iter().find(|(_, c, _)| *c == id).map(|(n, _, k)| {
            who = n.clone();
            k.clone()
        })
    };
    let key = match l.passkeys.logged_in(&a.credential, state, found) {
        Ok(k) => k,
        Err(e) => {
            let fail = passkey_fail(&e);
            l.refused(None, &who, "login_refused", &fail).await;
            return Err(fail);
        }
    };
    if !l.logins.spend(spent, now) {
        return Err(Fail::new(StatusCode::FORBIDDEN, "ceremony_invalid", "this login was used: start again"));
    }
    used(&l, &who, &key).await?;
    logged_in(&l, &who)
}

/// Records a device's use (its counter); refused if it was revoked meanwhile.
pub(super) async fn used(l: &Listener, device: &str, key: &Passkey) -> Result<(), Fail> {
    let json = serde_json::to_string(key).map_err(|e| passkey_fail(&RemoteError::State(e.to_string())))?;
    if !l.engine.device_used(device, &json).await? {
        l.access().forget(device);
        return Err(Fail::new(StatusCode::FORBIDDEN, "unknown_device", "this device was revoked"));
    }
    Ok(())
}

async fn logout(State(l): State<Arc<Listener>>, headers: HeaderMap) -> Response {
    if let Some(token) = cookie(&headers) {
        l.access().logout(token);
    }
    let mut res = StatusCode::NO_CONTENT.into_response();
    let gone = format!("{COOKIE}=; Path=/; Secure; HttpOnly; SameSite=Strict; Max-Age=0");
    if let Ok(v) = HeaderValue::from_str(&gone) {
        res.headers_mut().insert(header::SET_COOKIE, v);
    }
    res
}

async fn me(State(l): State<Arc<Listener>>, s: Session) -> Result<Response, Fail> {
    let pending = l.engine.pending_count().await?;
    Ok(no_store(axum::Json(json!({ "device": s.device, "pending": pending }))))
}

pub(super) fn no_store(body: impl IntoResponse) -> Response {
    let mut res = body.into_response();
    res.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    res
}

/// Whether this device gets pushes, and the key to subscribe with.
async fn push_state(State(l): State<Arc<Listener>>, s: Session) -> Result<Response, Fail> {
    let subscribed = l.engine.devices().await?.iter().any(|d| d.name == s.device && d.push.is_some());
    Ok(no_store(axum::Json(json!({ "public_key": l.vapid, "subscribed": subscribed }))))
}

/// This device asks for pushes: its browser's subscription. A push carries a count only.
async fn subscribe(
    State(l): State<Arc<Listener>>,
    s: Session,
    Body(sub): Body<crate::push::Subscription>,
) -> Result<Response, Fail> {
    if l.vapid.is_none() {
        return Err(Fail::new(
            StatusCode::CONFLICT,
            "push_unavailable",
            "this Assent has no Web Push key (see its log)",
        ));
    }
    let sub = sub.checked().map_err(|m| Fail::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid_subscription", m))?;
    let text = serde_json::to_string(&sub).unwrap_or_default();
    if !l.engine.set_device_push(&s.device, Some(&text)).await? {
        l.access().forget(&s.device);
        return Err(Fail::new(StatusCode::FORBIDDEN, "unknown_device", "this device was revoked"));
    }
    l.engine.remote_log(&s.device, "push_on", Timestamp::now(), None).await;
    Ok(StatusCode::NO_CONTENT.into_response())
}

async fn unsubscribe(State(l): State<Arc<Listener>>, s: Session) -> Result<Response, Fail> {
    l.engine.set_device_push(&s.device, None).await?;
    l.engine.remote_log(&s.device, "push_off", Timestamp::now(), None).await;
    Ok(StatusCode::NO_CONTENT.into_response())
}
