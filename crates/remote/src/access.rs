//! What the remote listener remembers between requests, in memory only: pairing codes, failed
//! attempts, sessions, and the nonces a decision's challenge is derived with. None of it
//! survives a restart: a restart ends every session and every code, and the phone logs in again
//! with its passkey. Every secret here is random (the operating system's), single use where it
//! decides anything, short-lived, and bounded in number, so a flood fills nothing.
//!
//! Failed attempts close only the door they came through ([`Door`]): pairing, logging in, or
//! one device's decisions. Someone with no session can slow pairing and logging in, each on
//! its own and for a bounded while, but never a paired device's session, which reads and
//! decides whatever strangers send.

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
/// Failures at one door (a wrong code, an assertion that did not verify) that close it...
pub const LOCK_AFTER: usize = 10;
/// ...when they fall within this long: for [`FIRST_LOCK_MS`], twice as long each time it
/// closes again, at most this long; a door quiet this long after it opened starts over.
pub const LOCK_MS: i64 = 15 * 60 * 1000;
/// How long a door first stays closed.
pub const FIRST_LOCK_MS: i64 = 60 * 1000;

/// Where a failed attempt came in: each door is closed on its own.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Door {
    /// Pairing: a code and a new passkey (no session needed).
    Pair,
    /// Logging in with a passkey (no session needed).
    Login,
    /// One paired device's decisions (its session's assertions).
    Decide(String),
}

impl Door {
    /// The door's name in the remote log.
    pub fn name(&self) -> &'static str {
        match self {
            Door::Pair => "pair",
            Door::Login => "login",
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

/// Most codes, sessions and nonces held at once (expired ones go first).
const MOST: usize = 64;

/// Why a request was refused: each a stable code for the API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The pairing code was never issued, or was used.
    UnknownCode,
    /// The pairing code is older than [`CODE_MS`].
    ExpiredCode,
    /// Too many failures: nothing is tried until then.
    LockedOut {
        /// When the lockout ends.
        until: Timestamp,
    },
    /// No session, or one that ended (expired, idle, revoked, or never was).
    NoSession,
    /// The decision's nonce was never issued to this device, was used, or expired.
    UnknownNonce,
    /// Too many codes, sessions or nonces at once.
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

/// The listener's memory. One per listener; callers hold it behind a lock.
#[derive(Default)]
pub struct Access {
    /// Pairing codes by their hash, with when they were issued.
    codes: HashMap<[u8; 32], Timestamp>,
    /// Sessions by their token's hash.
    sessions: HashMap<[u8; 32], Session>,
    /// Nonces, with the device they were issued to and when.
    nonces: HashMap<[u8; 32], (String, Timestamp)>,
    /// Each door's failures (at most one per paired device's decisions, and two).
    doors: HashMap<Door, Backoff>,
}

fn hash(s: &str) -> [u8; 32] {
    Sha256::digest(s.as_bytes()).into()
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

    /// Counts a failure at `door`: the [`LOCK_AFTER`]th within [`LOCK_MS`] closes that door
    /// (and no other) for [`FIRST_LOCK_MS`], doubled each time it closes again, at most
    /// [`LOCK_MS`]. True when this failure closed it.
    pub fn failed(&mut self, door: &Door, now: Timestamp) -> bool {
        if let Door::Decide(_) = door {
            // At most one entry per device that ever failed; a flood of devices is not possible
            // (a session is needed), but the map stays bounded all the same.
            if !self.doors.contains_key(door) && self.doors.len() >= MOST {
                self.doors.retain(|d, b| !matches!(d, Door::Decide(_)) || b.until.is_some_and(|u| now.0 < u.0));
            }
        }
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

    /// Opens the pairing door: the owner, at the computer, asked for a new code.
    pub fn open_pairing(&mut self) {
        self.doors.remove(&Door::Pair);
    }

    /// A new pairing code, for the link and QR code the person opens on the phone.
    pub fn pairing_code(&mut self, now: Timestamp) -> Result<String, Refusal> {
        room(&mut self.codes, |at| now.0 - at.0 < CODE_MS)?;
        let code = token();
        self.codes.insert(hash(&code), now);
        Ok(code)
    }

    /// Whether `code` is a pairing code still to be used, within [`CODE_MS`]: its hash, which
    /// [`Access::redeem`] takes once the pairing is done. A wrong code counts as a failure at
    /// the pairing door (true in the second place when it closed it).
    pub fn valid_code(&mut self, code: &str, now: Timestamp) -> Result<[u8; 32], (Refusal, bool)> {
        self.check(&Door::Pair, now).map_err(|r| (r, false))?;
        let key = hash(code);
        match self.codes.get(&key) {
            Some(at) if now.0 - at.0 < CODE_MS => Ok(key),
            Some(_) => {
                self.codes.remove(&key);
                Err((Refusal::ExpiredCode, false))
            }
            None => Err((Refusal::UnknownCode, self.failed(&Door::Pair, now))),
        }
    }

    /// Uses the pairing code of hash `key` up (its pairing is done): false if it was used or
    /// expired meanwhile.
    pub fn redeem(&mut self, key: &[u8; 32], now: Timestamp) -> bool {
        self.codes.remove(key).is_some_and(|at| now.0 - at.0 < CODE_MS)
    }

    /// A session for `device`, after its passkey logged in: the cookie's value.
    pub fn login(&mut self, device: &str, now: Timestamp) -> Result<String, Refusal> {
        room(&mut self.sessions, |s| live(s, now))?;
        let t = token();
        self.sessions.insert(hash(&t), Session { device: device.to_string(), started: now, seen: now });
        Ok(t)
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

    /// Ends a session (logging out).
    pub fn logout(&mut self, token: &str) {
        self.sessions.remove(&hash(token));
    }

    /// Ends everything of a device (it was revoked): its sessions and its nonces, at once.
    pub fn forget(&mut self, device: &str) {
        self.sessions.retain(|_, s| s.device != device);
        self.nonces.retain(|_, (d, _)| d != device);
    }

    /// Ends everything (the listener was turned off); closed doors stay closed.
    pub fn clear(&mut self) {
        let doors = std::mem::take(&mut self.doors);
        *self = Access { doors, ..Access::default() };
    }

    /// A fresh nonce for a decision `device` is about to sign.
    pub fn nonce(&mut self, device: &str, now: Timestamp) -> Result<[u8; 32], Refusal> {
        room(&mut self.nonces, |(_, at)| now.0 - at.0 < NONCE_MS)?;
        let n = random_bytes::<32>();
        self.nonces.insert(n, (device.to_string(), now));
        Ok(n)
    }

    /// Takes a nonce to verify a decision with: once, by the device it was issued to, in time.
    pub fn take_nonce(&mut self, nonce: &[u8; 32], device: &str, now: Timestamp) -> Result<(), Refusal> {
        match self.nonces.remove(nonce) {
            Some((d, at)) if d == device && now.0 - at.0 < NONCE_MS => Ok(()),
            Some((d, at)) if d != device => {
                // Another device's: it stays theirs.
                self.nonces.insert(*nonce, (d, at));
                Err(Refusal::UnknownNonce)
            }
            _ => Err(Refusal::UnknownNonce),
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
        assert_eq!(a.valid_code(&code, at(3)), Err((Refusal::UnknownCode, false)), "used");
        let late = a.pairing_code(T).unwrap();
        let key = a.valid_code(&late, at(CODE_MS - 1)).unwrap();
        assert!(!a.redeem(&key, at(CODE_MS)), "expired between the two");
        let later = a.pairing_code(T).unwrap();
        assert_eq!(a.valid_code(&later, at(CODE_MS)), Err((Refusal::ExpiredCode, false)));
        assert_eq!(a.valid_code(&later, at(CODE_MS)), Err((Refusal::UnknownCode, false)), "gone once tried");
        assert_ne!(a.pairing_code(T).unwrap(), a.pairing_code(T).unwrap());
    }

    #[test]
    fn failures_close_only_their_own_door_for_a_while_and_longer_each_time() {
        let mut a = Access::default();
        let good = a.pairing_code(T).unwrap();
        for i in 0..LOCK_AFTER as i64 {
            let closed = i == LOCK_AFTER as i64 - 1;
            assert_eq!(a.valid_code("guess", at(i)), Err((Refusal::UnknownCode, closed)), "{i}");
        }
        let until = Timestamp(at(LOCK_AFTER as i64 - 1).0 + FIRST_LOCK_MS);
        assert_eq!(a.valid_code(&good, at(20)), Err((Refusal::LockedOut { until }, false)), "even the right code");
        assert_eq!(a.check(&Door::Pair, Timestamp(until.0 - 1)), Err(Refusal::LockedOut { until }));
        // Every other door stays open, and so does every session.
        let s = a.login("pixel", at(20)).unwrap();
        assert_eq!(a.check(&Door::Login, at(20)), Ok(()));
        assert_eq!(a.check(&Door::Decide("pixel".into()), at(20)), Ok(()));
        assert_eq!(a.session(&s, at(20)).as_deref(), Ok("pixel"));
        assert_eq!(a.check(&Door::Pair, until), Ok(()), "for a while");
        assert!(a.valid_code(&good, until).is_ok());
        // Closed again at once: twice as long; and so on, at most LOCK_MS.
        let mut t = until.0;
        let mut want = 2 * FIRST_LOCK_MS;
        for _ in 0..6 {
            for _ in 0..LOCK_AFTER {
                a.failed(&Door::Pair, Timestamp(t));
            }
            assert_eq!(a.check(&Door::Pair, Timestamp(t)), Err(Refusal::LockedOut { until: Timestamp(t + want) }));
            t += want;
            want = (want * 2).min(LOCK_MS);
        }
        // Quiet for LOCK_MS after it opened: a first closing again.
        t += LOCK_MS;
        for _ in 0..LOCK_AFTER {
            a.failed(&Door::Pair, Timestamp(t));
        }
        assert_eq!(a.check(&Door::Pair, Timestamp(t)), Err(Refusal::LockedOut { until: Timestamp(t + FIRST_LOCK_MS) }));
        // The owner asking for a new code opens it.
        a.open_pairing();
        assert_eq!(a.check(&Door::Pair, Timestamp(t)), Ok(()));
        // Failures spread out over more than the window never close a door.
        let mut b = Access::default();
        for i in 0..30 {
            b.failed(&Door::Login, at(i * LOCK_MS / 5));
            assert_eq!(b.check(&Door::Login, at(i * LOCK_MS / 5)), Ok(()));
        }
        // One device's failed decisions close its own decisions only.
        for _ in 0..LOCK_AFTER {
            b.failed(&Door::Decide("pixel".into()), T);
        }
        assert!(b.check(&Door::Decide("pixel".into()), T).is_err());
        assert_eq!(b.check(&Door::Decide("ipad".into()), T), Ok(()));
        assert_eq!(b.check(&Door::Login, T), Ok(()));
    }

    #[test]
    fn a_session_ends_when_idle_when_old_when_revoked_or_on_logout() {
        let mut a = Access::default();
        let s = a.login("pixel", T).unwrap();
        assert_eq!(a.session(&s, at(IDLE_MS - 1)).as_deref(), Ok("pixel"));
        assert_eq!(a.session(&s, at(2 * IDLE_MS - 2)).as_deref(), Ok("pixel"), "use keeps it alive");
        assert_eq!(a.session(&s, at(3 * IDLE_MS)), Err(Refusal::NoSession), "idle");
        let mut b = Access::default();
        let s = b.login("pixel", T).unwrap();
        let mut t = 0;
        while t + IDLE_MS / 2 < SESSION_MS {
            t += IDLE_MS / 2;
            assert!(b.session(&s, at(t)).is_ok());
        }
        assert_eq!(b.session(&s, at(SESSION_MS)), Err(Refusal::NoSession), "12 hours at most");
        let (p, q) = (b.login("pixel", T).unwrap(), b.login("ipad", T).unwrap());
        b.forget("pixel");
        assert_eq!(b.session(&p, T), Err(Refusal::NoSession), "revoked");
        assert_eq!(b.session(&q, T).as_deref(), Ok("ipad"), "another device's stays");
        b.logout(&q);
        assert_eq!(b.session(&q, T), Err(Refusal::NoSession));
        assert_eq!(b.session("made-up", T), Err(Refusal::NoSession));
    }

    #[test]
    fn a_nonce_is_taken_once_by_its_own_device_in_time() {
        let mut a = Access::default();
        let n = a.nonce("pixel", T).unwrap();
        assert_eq!(a.take_nonce(&n, "ipad", T), Err(Refusal::UnknownNonce), "another device");
        assert_eq!(a.take_nonce(&n, "pixel", at(NONCE_MS - 1)), Ok(()));
        assert_eq!(a.take_nonce(&n, "pixel", at(NONCE_MS - 1)), Err(Refusal::UnknownNonce), "replayed");
        let late = a.nonce("pixel", T).unwrap();
        assert_eq!(a.take_nonce(&late, "pixel", at(NONCE_MS)), Err(Refusal::UnknownNonce), "expired");
        let revoked = a.nonce("pixel", T).unwrap();
        a.forget("pixel");
        assert_eq!(a.take_nonce(&revoked, "pixel", T), Err(Refusal::UnknownNonce), "revoked");
    }

    #[test]
    fn a_flood_fills_nothing() {
        let mut a = Access::default();
        for _ in 0..MOST {
            a.nonce("pixel", T).unwrap();
            a.login("pixel", T).unwrap();
            a.pairing_code(T).unwrap();
        }
        assert_eq!(a.nonce("pixel", T), Err(Refusal::Busy));
        assert_eq!(a.login("pixel", T), Err(Refusal::Busy));
        assert_eq!(a.pairing_code(T), Err(Refusal::Busy));
        // What expired makes room.
        assert!(a.nonce("pixel", at(NONCE_MS)).is_ok());
        assert!(a.pairing_code(at(CODE_MS)).is_ok());
        assert!(a.login("pixel", at(IDLE_MS)).is_ok());
    }
}
