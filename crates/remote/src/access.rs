//! What the remote listener remembers between requests, in memory only: pairing codes, failed
//! decisions, sessions, and the nonces a decision's challenge is derived with. None of it
//! survives a restart: a restart ends every session and every code, and the phone logs in again
//! with its passkey. Every secret here is random (the operating system's), single use where it
//! decides anything, short-lived, and bounded in number, so a flood fills nothing.
//!
//! Nothing a stranger can send fills what the owner needs. The doors a signature or a secret
//! guards never close on failures: a login is a paired passkey's signature over a fresh
//! challenge and a pairing code is 256 random bits, so guessing either is out of reach however
//! often it is tried, and a counter of failures would only let strangers keep the owner out.
//! What one client can fill is its own: at most [`SESSIONS_PER_DEVICE`] sessions per paired
//! device and [`NONCES_PER_SESSION`] nonces per session, the oldest dropped first, and failed
//! decisions close that session's decisions alone ([`Door`]).

use assent_core::secret::random_bytes;
use assent_core::time::Timestamp;
use sha2::{Digest, Sha256};
use std::collections::{HashMap, VecDeque};

/// How long a pairing code may be used.
pub const CODE_MS: i64 = 5 * 60 * 1000;
/// A session's longest life, and how long it lasts unused.
pub const SESSION_MS: i64 = 12 * 3600 * 1000;
/// How long a session lasts unused.
pub const IDLE_MS: i64 = 30 * 60 * 1000;
/// How long a decision's nonce may be signed with.
pub const NONCE_MS: i64 = 2 * 60 * 1000;
/// Failed decisions of one session that close its decisions...
pub const LOCK_AFTER: usize = 10;
/// ...when they fall within this long: for [`FIRST_LOCK_MS`], twice as long each time it
/// closes again, at most this long; a door quiet this long after it opened starts over.
pub const LOCK_MS: i64 = 15 * 60 * 1000;
/// How long a door first stays closed.
pub const FIRST_LOCK_MS: i64 = 60 * 1000;
/// Most sessions of one paired device (logging in again past it ends its oldest).
pub const SESSIONS_PER_DEVICE: usize = 8;
/// Most unused nonces of one session (asking past it drops its oldest).
pub const NONCES_PER_SESSION: usize = 16;

/// Where failed attempts close something: one session's decisions (an assertion that did not
/// verify, a nonce it was not given). Nothing else closes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Door {
    /// One session's decisions, by the hash of its token ([`session_key`]).
    Decide([u8; 32]),
}

impl Door {
    /// The door's name in the remote log.
    pub fn name(&self) -> &'static str {
        match self {
            Door::Decide(_) => "decide",
        }
    }
}

/// One door's recent failures and how long it stays closed.
#[derive(Default)]
struct Backoff {
    failures: VecDeque<Timestamp>,
    until: Option<Timestamp>,
    /// How many times it closed in a row (each closing twice as long).
    closings: u32,
}

/// Most pairing codes held at once (expired ones go first): only the owner makes them.
const MOST: usize = 64;

/// Why a request was refused: each a stable code for the API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The pairing code was never issued, or was used.
    UnknownCode,
    /// The pairing code is older than [`CODE_MS`].
    ExpiredCode,
    /// Too many failed decisions of this session: none is tried until then.
    LockedOut {
        /// When the lockout ends.
        until: Timestamp,
    },
    /// No session, or one that ended (expired, idle, revoked, or never was).
    NoSession,
    /// The decision's nonce was never issued to this device, was used, or expired.
    UnknownNonce,
    /// Too many pairing codes at once, or this session's decisions already being read.
    Busy,
}

impl Refusal {
    /// The stable error code.
    pub fn code(&self) -> &'static str {
        match self {
            Refusal::UnknownCode => "pairing_code_invalid",
            Refusal::ExpiredCode => "pairing_code_expired",
            Refusal::LockedOut { .. } => "locked_out",
            Refusal::NoSession => "session_required",
            Refusal::UnknownNonce => "challenge_invalid",
            Refusal::Busy => "remote_busy",
        }
    }
}

struct Session {
    device: String,
    started: Timestamp,
    seen: Timestamp,
}

/// A nonce: the session it was issued to (its key), its device, when.
struct Nonce {
    session: [u8; 32],
    device: String,
    at: Timestamp,
}

/// The listener's memory. One per listener; callers hold it behind a lock.
#[derive(Default)]
pub struct Access {
    /// Pairing codes by their hash, with when they were issued.
    codes: HashMap<[u8; 32], Timestamp>,
    /// Sessions by their token's hash.
    sessions: HashMap<[u8; 32], Session>,
    /// Nonces, with the session they were issued to.
    nonces: HashMap<[u8; 32], Nonce>,
    /// Each session's failed decisions (an entry per session that failed, dropped with it).
    doors: HashMap<Door, Backoff>,
}

fn hash(s: &str) -> [u8; 32] {
    Sha256::digest(s.as_bytes()).into()
}

/// The key a session is known by here: the hash of its token (the token itself is kept nowhere).
pub fn session_key(token: &str) -> [u8; 32] {
    hash(token)
}

fn token() -> String {
    hex::encode(random_bytes::<32>())
}

/// Drops what expired; refuses when `map` is still full.
fn room<V>(map: &mut HashMap<[u8; 32], V>, live: impl Fn(&V) -> bool) -> Result<(), Refusal> {
    map.retain(|_, v| live(v));
    if map.len() >= MOST { Err(Refusal::Busy) } else { Ok(()) }
}

impl Access {
    /// Refused while `door` is closed.
    pub fn check(&self, door: &Door, now: Timestamp) -> Result<(), Refusal> {
        match self.doors.get(door).and_then(|b| b.until) {
            Some(until) if now.0 < until.0 => Err(Refusal::LockedOut { until }),
            _ => Ok(()),
        }
    }

    /// Counts a failed decision at `door`: the [`LOCK_AFTER`]th within [`LOCK_MS`] closes that
    /// door (and no other) for [`FIRST_LOCK_MS`], doubled each time it closes again, at most
    /// [`LOCK_MS`]. True when this failure closed it.
    pub fn failed(&mut self, door: &Door, now: Timestamp) -> bool {
        // One entry per session that failed, dropped with the session (see `drop_ended`).
        let b = self.doors.entry(door.clone()).or_default();
        if b.until.is_some_and(|u| now.0 - u.0 >= LOCK_MS) {
            // Quiet for long enough since it opened: it starts over.
            b.closings = 0;
            b.until = None;
        }
        while b.failures.front().is_some_and(|t| now.0 - t.0 >= LOCK_MS) {
            b.failures.pop_front();
        }
        b.failures.push_back(now);
        if b.failures.len() < LOCK_AFTER {
            return false;
        }
        let ms = FIRST_LOCK_MS.saturating_mul(1 << b.closings.min(16)).min(LOCK_MS);
        b.until = Some(Timestamp(now.0 + ms));
        b.closings = b.closings.saturating_add(1);
        b.failures.clear();
        true
    }

    /// A new pairing code, for the link and QR code the person opens on the phone.
    pub fn pairing_code(&mut self, now: Timestamp) -> Result<String, Refusal> {
        room(&mut self.codes, |at| now.0 - at.0 < CODE_MS)?;
        let code = token();
        self.codes.insert(hash(&code), now);
        Ok(code)
    }

    /// Whether `code` is a pairing code still to be used, within [`CODE_MS`]: its hash, which
    /// [`Access::redeem`] takes once the pairing is done. A wrong code closes nothing: with
    /// 2^256 codes, a stranger sending a million a second for a year finds one with a chance
    /// under 2^-200 (docs/phone.md).
    pub fn valid_code(&mut self, code: &str, now: Timestamp) -> Result<[u8; 32], Refusal> {
        let key = hash(code);
        match self.codes.get(&key) {
            Some(at) if now.0 - at.0 < CODE_MS => Ok(key),
            Some(_) => {
                self.codes.remove(&key);
                Err(Refusal::ExpiredCode)
            }
            None => Err(Refusal::UnknownCode),
        }
    }

    /// Uses the pairing code of hash `key` up (its pairing is done): false if it was used or
    /// expired meanwhile.
    pub fn redeem(&mut self, key: &[u8; 32], now: Timestamp) -> bool {
        self.codes.remove(key).is_some_and(|at| now.0 - at.0 < CODE_MS)
    }

    /// A session for `device`, after its passkey logged in: the cookie's value. A device with
    /// [`SESSIONS_PER_DEVICE`] live sessions loses its oldest: logging in always works.
    pub fn login(&mut self, device: &str, now: Timestamp) -> String {
        self.sessions.retain(|_, s| live(s, now));
        let mut mine: Vec<([u8; 32], Timestamp)> =
            self.sessions.iter().filter(|(_, s)| s.device == device).map(|(k, s)| (*k, s.started)).collect();
        if mine.len() >= SESSIONS_PER_DEVICE {
            mine.sort_by_key(|(_, started)| started.0);
            for (k, _) in &mine[..=mine.len() - SESSIONS_PER_DEVICE] {
                self.sessions.remove(k);
            }
        }
        self.drop_ended();
        let t = token();
        self.sessions.insert(hash(&t), Session { device: device.to_string(), started: now, seen: now });
        t
    }

    /// Drops the nonces and failures of sessions that ended.
    fn drop_ended(&mut self) {
        let sessions = &self.sessions;
        self.nonces.retain(|_, n| sessions.contains_key(&n.session));
        self.doors.retain(|Door::Decide(k), _| sessions.contains_key(k));
    }

    /// The device a session belongs to, if it is live; using it keeps it from going idle.
    pub fn session(&mut self, token: &str, now: Timestamp) -> Result<String, Refusal> {
        let key = hash(token);
        match self.sessions.get_mut(&key) {
            Some(s) if live(s, now) => {
                s.seen = now;
                Ok(s.device.clone())
            }
            Some(_) => {
                self.sessions.remove(&key);
                Err(Refusal::NoSession)
            }
            None => Err(Refusal::NoSession),
        }
    }

    /// Whether `token` is still a live session of `device`, without counting this as a use (an
    /// open event stream checks it).
    pub fn alive(&self, token: &str, device: &str, now: Timestamp) -> bool {
        self.sessions.get(&hash(token)).is_some_and(|s| s.device == device && live(s, now))
    }

    /// Whether `token` is a live session, without counting this as a use.
    pub fn live(&self, token: &str, now: Timestamp) -> bool {
        self.sessions.get(&hash(token)).is_some_and(|s| live(s, now))
    }

    /// Ends a session (logging out).
    pub fn logout(&mut self, token: &str) {
        self.sessions.remove(&hash(token));
        self.drop_ended();
    }

    /// Ends everything of a device (it was revoked): its sessions and its nonces, at once.
    pub fn forget(&mut self, device: &str) {
        self.sessions.retain(|_, s| s.device != device);
        self.drop_ended();
    }

    /// Ends everything (the listener was turned off).
    pub fn clear(&mut self) {
        *self = Access::default();
    }

    /// A fresh nonce for a decision the session of key `session` (of `device`) is about to
    /// sign. A session holding [`NONCES_PER_SESSION`] unused ones loses its oldest: asking
    /// always works, and fills nothing of another session's.
    pub fn nonce(&mut self, session: &[u8; 32], device: &str, now: Timestamp) -> [u8; 32] {
        self.nonces.retain(|_, n| now.0 - n.at.0 < NONCE_MS);
        let mut mine: Vec<([u8; 32], Timestamp)> =
            self.nonces.iter().filter(|(_, n)| n.session == *session).map(|(k, n)| (*k, n.at)).collect();
        if mine.len() >= NONCES_PER_SESSION {
            mine.sort_by_key(|(_, at)| at.0);
            for (k, _) in &mine[..=mine.len() - NONCES_PER_SESSION] {
                self.nonces.remove(k);
            }
        }
        let n = random_bytes::<32>();
        self.nonces.insert(n, Nonce { session: *session, device: device.to_string(), at: now });
        n
    }

    /// Takes a nonce to verify a decision with: once, by the session (and device) it was issued
    /// to, in time.
    pub fn take_nonce(
        &mut self,
        nonce: &[u8; 32],
        session: &[u8; 32],
        device: &str,
        now: Timestamp,
    ) -> Result<(), Refusal> {
        match self.nonces.get(nonce) {
            Some(n) if n.session != *session || n.device != device => {
                // Another session's: it stays theirs.
                Err(Refusal::UnknownNonce)
            }
            Some(n) if now.0 - n.at.0 < NONCE_MS => {
                self.nonces.remove(nonce);
                Ok(())
            }
            Some(_) => {
                self.nonces.remove(nonce);
                Err(Refusal::UnknownNonce)
            }
            None => Err(Refusal::UnknownNonce),
        }
    }
}

fn live(s: &Session, now: Timestamp) -> bool {
    now.0 - s.started.0 < SESSION_MS && now.0 - s.seen.0 < IDLE_MS
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const T: Timestamp = Timestamp(1_800_000_000_000);
    fn at(ms: i64) -> Timestamp {
        Timestamp(T.0 + ms)
    }

    #[test]
    fn a_pairing_code_works_once_and_only_in_time() {
        let mut a = Access::default();
        let code = a.pairing_code(T).unwrap();
        assert_eq!(code.len(), 64, "256 random bits");
        // Checked as often as needed (a cancelled passkey sheet tries again), used once.
        let key = a.valid_code(&code, at(1)).unwrap();
        assert_eq!(a.valid_code(&code, at(2)), Ok(key));
        assert!(a.redeem(&key, at(CODE_MS - 1)));
        assert!(!a.redeem(&key, at(CODE_MS - 1)), "used");
        assert_eq!(a.valid_code(&code, at(3)), Err(Refusal::UnknownCode), "used");
        let late = a.pairing_code(T).unwrap();
        let key = a.valid_code(&late, at(CODE_MS - 1)).unwrap();
        assert!(!a.redeem(&key, at(CODE_MS)), "expired between the two");
        let later = a.pairing_code(T).unwrap();
        assert_eq!(a.valid_code(&later, at(CODE_MS)), Err(Refusal::ExpiredCode));
        assert_eq!(a.valid_code(&later, at(CODE_MS)), Err(Refusal::UnknownCode), "gone once tried");
        assert_ne!(a.pairing_code(T).unwrap(), a.pairing_code(T).unwrap());
    }

    #[test]
    fn wrong_codes_close_nothing_and_failed_decisions_close_their_session_alone() {
        let mut a = Access::default();
        let good = a.pairing_code(T).unwrap();
        for i in 0..1000 {
            assert_eq!(a.valid_code(&format!("guess{i}"), at(i)), Err(Refusal::UnknownCode), "{i}");
        }
        assert!(a.valid_code(&good, at(1000)).is_ok(), "the owner's code works after a thousand guesses");
        let (p, q) = (a.login("pixel", T), a.login("pixel", T));
        let (dp, dq) = (Door::Decide(session_key(&p)), Door::Decide(session_key(&q)));
        for i in 0..LOCK_AFTER as i64 {
            assert_eq!(a.failed(&dp, at(i)), i == LOCK_AFTER as i64 - 1, "{i}");
        }
        let until = Timestamp(at(LOCK_AFTER as i64 - 1).0 + FIRST_LOCK_MS);
        assert_eq!(a.check(&dp, at(20)), Err(Refusal::LockedOut { until }));
        assert_eq!(a.check(&dq, at(20)), Ok(()), "the same device's other session decides");
        assert_eq!(a.check(&dp, until), Ok(()), "for a while");
        // Closed again at once: twice as long; and so on, at most LOCK_MS.
        let mut t = until.0;
        let mut want = 2 * FIRST_LOCK_MS;
        for _ in 0..6 {
            for _ in 0..LOCK_AFTER {
                a.failed(&dp, Timestamp(t));
            }
            assert_eq!(a.check(&dp, Timestamp(t)), Err(Refusal::LockedOut { until: Timestamp(t + want) }));
            t += want;
            want = (want * 2).min(LOCK_MS);
        }
        // Failures spread out over more than the window never close a door.
        let mut b = Access::default();
        let r = b.login("ipad", T);
        let dr = Door::Decide(session_key(&r));
        for i in 0..30 {
            b.failed(&dr, at(i * LOCK_MS / 5));
            assert_eq!(b.check(&dr, at(i * LOCK_MS / 5)), Ok(()));
        }
        // A session that ends takes its failures with it.
        b.logout(&r);
        assert!(b.doors.is_empty());
    }

    #[test]
    fn a_session_ends_when_idle_when_old_when_revoked_or_on_logout() {
        let mut a = Access::default();
        let s = a.login("pixel", T);
        assert_eq!(a.session(&s, at(IDLE_MS - 1)).as_deref(), Ok("pixel"));
        assert_eq!(a.session(&s, at(2 * IDLE_MS - 2)).as_deref(), Ok("pixel"), "use keeps it alive");
        assert_eq!(a.session(&s, at(3 * IDLE_MS)), Err(Refusal::NoSession), "idle");
        let mut b = Access::default();
        let s = b.login("pixel", T);
        let mut t = 0;
        while t + IDLE_MS / 2 < SESSION_MS {
            t += IDLE_MS / 2;
            assert!(b.session(&s, at(t)).is_ok());
        }
        assert_eq!(b.session(&s, at(SESSION_MS)), Err(Refusal::NoSession), "12 hours at most");
        let (p, q) = (b.login("pixel", T), b.login("ipad", T));
        b.forget("pixel");
        assert_eq!(b.session(&p, T), Err(Refusal::NoSession), "revoked");
        assert_eq!(b.session(&q, T).as_deref(), Ok("ipad"), "another device's stays");
        b.logout(&q);
        assert_eq!(b.session(&q, T), Err(Refusal::NoSession));
        assert_eq!(b.session("made-up", T), Err(Refusal::NoSession));
    }

    #[test]
    fn a_nonce_is_taken_once_by_its_own_session_in_time() {
        let mut a = Access::default();
        let (p, q) = (session_key(&a.login("pixel", T)), session_key(&a.login("pixel", T)));
        let n = a.nonce(&p, "pixel", T);
        assert_eq!(a.take_nonce(&n, &p, "ipad", T), Err(Refusal::UnknownNonce), "another device");
        assert_eq!(a.take_nonce(&n, &q, "pixel", T), Err(Refusal::UnknownNonce), "another session");
        assert_eq!(a.take_nonce(&n, &p, "pixel", at(NONCE_MS - 1)), Ok(()), "still its own");
        assert_eq!(a.take_nonce(&n, &p, "pixel", at(NONCE_MS - 1)), Err(Refusal::UnknownNonce), "replayed");
        let late = a.nonce(&p, "pixel", T);
        assert_eq!(a.take_nonce(&late, &p, "pixel", at(NONCE_MS)), Err(Refusal::UnknownNonce), "expired");
        let revoked = a.nonce(&p, "pixel", T);
        a.forget("pixel");
        assert_eq!(a.take_nonce(&revoked, &p, "pixel", T), Err(Refusal::UnknownNonce), "revoked");
    }

    #[test]
    fn a_flood_fills_only_its_own() {
        let mut a = Access::default();
        let owner = a.login("pixel", T);
        let mine = a.nonce(&session_key(&owner), "pixel", T);
        // A stolen cookie asks for nonces over and over: its own oldest go, the owner's stays.
        let thief = session_key(&a.login("pixel", T));
        let first = a.nonce(&thief, "pixel", T);
        for i in 0..1000 {
            a.nonce(&thief, "pixel", at(i));
        }
        assert_eq!(a.nonces.len(), NONCES_PER_SESSION + 1);
        assert_eq!(a.take_nonce(&first, &thief, "pixel", at(1000)), Err(Refusal::UnknownNonce), "its oldest went");
        assert_eq!(a.take_nonce(&mine, &session_key(&owner), "pixel", at(1000)), Ok(()));
        // A device logging in over and over keeps its newest sessions; another device's stay.
        let ipad = a.login("ipad", T);
        let mut last = String::new();
        for i in 0..100 {
            last = a.login("pixel", at(i));
        }
        assert_eq!(a.sessions.values().filter(|s| s.device == "pixel").count(), SESSIONS_PER_DEVICE);
        assert_eq!(a.session(&last, at(100)).as_deref(), Ok("pixel"));
        assert_eq!(a.session(&ipad, at(100)).as_deref(), Ok("ipad"));
        assert_eq!(a.session(&owner, at(100)), Err(Refusal::NoSession), "the oldest went");
        // Codes, which only the owner makes, are bounded; what expired makes room.
        for _ in 0..MOST {
            a.pairing_code(T).unwrap();
        }
        assert_eq!(a.pairing_code(T), Err(Refusal::Busy));
        assert!(a.pairing_code(at(CODE_MS)).is_ok());
    }
}
