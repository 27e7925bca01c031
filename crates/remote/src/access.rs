//! What the remote listener remembers between requests, in memory only: pairing codes, failed
//! attempts, sessions, and the nonces a decision's challenge is derived with. None of it
//! survives a restart: a restart ends every session and every code, and the phone logs in again
//! with its passkey. Every secret here is random (the operating system's), single use where it
//! decides anything, short-lived, and bounded in number, so a flood fills nothing.

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
/// Failures (a wrong code, an assertion that did not verify) that lock the listener...
pub const LOCK_AFTER: usize = 10;
/// ...when they fall within this long, and for this long after the last of them.
pub const LOCK_MS: i64 = 15 * 60 * 1000;

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
    /// When recent failures happened (within [`LOCK_MS`]).
    failures: VecDeque<Timestamp>,
    /// Until when everything is refused.
    locked_until: Option<Timestamp>,
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
    /// Refused while locked out.
    pub fn check(&self, now: Timestamp) -> Result<(), Refusal> {
        match self.locked_until {
            Some(until) if now.0 < until.0 => Err(Refusal::LockedOut { until }),
            _ => Ok(()),
        }
    }

    /// Counts a failure (a wrong code, an assertion that did not verify): the [`LOCK_AFTER`]th
    /// within [`LOCK_MS`] locks everything out for [`LOCK_MS`].
    pub fn failed(&mut self, now: Timestamp) {
        while self.failures.front().is_some_and(|t| now.0 - t.0 >= LOCK_MS) {
            self.failures.pop_front();
        }
        self.failures.push_back(now);
        if self.failures.len() >= LOCK_AFTER {
            self.locked_until = Some(Timestamp(now.0 + LOCK_MS));
            self.failures.clear();
        }
    }

    /// A new pairing code, for the link and QR code the person opens on the phone.
    pub fn pairing_code(&mut self, now: Timestamp) -> Result<String, Refusal> {
        room(&mut self.codes, |at| now.0 - at.0 < CODE_MS)?;
        let code = token();
        self.codes.insert(hash(&code), now);
        Ok(code)
    }

    /// Uses a pairing code: once, within [`CODE_MS`]. A wrong one counts as a failure.
    pub fn redeem(&mut self, code: &str, now: Timestamp) -> Result<(), Refusal> {
        self.check(now)?;
        match self.codes.remove(&hash(code)) {
            Some(at) if now.0 - at.0 < CODE_MS => Ok(()),
            Some(_) => Err(Refusal::ExpiredCode),
            None => {
                self.failed(now);
                Err(Refusal::UnknownCode)
            }
        }
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

    /// Ends everything (the listener was turned off).
    pub fn clear(&mut self) {
        let (failures, locked_until) = (std::mem::take(&mut self.failures), self.locked_until);
        *self = Access { failures, locked_until, ..Access::default() };
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
        assert_eq!(a.redeem(&code, at(CODE_MS - 1)), Ok(()));
        assert_eq!(a.redeem(&code, at(CODE_MS - 1)), Err(Refusal::UnknownCode), "used");
        let late = a.pairing_code(T).unwrap();
        assert_eq!(a.redeem(&late, at(CODE_MS)), Err(Refusal::ExpiredCode));
        assert_eq!(a.redeem(&late, at(CODE_MS)), Err(Refusal::UnknownCode), "gone once tried");
        assert_ne!(a.pairing_code(T).unwrap(), a.pairing_code(T).unwrap());
    }

    #[test]
    fn ten_failures_lock_everything_out_for_a_while() {
        let mut a = Access::default();
        let good = a.pairing_code(T).unwrap();
        for i in 0..LOCK_AFTER as i64 {
            assert_eq!(a.redeem("guess", at(i)), Err(Refusal::UnknownCode));
        }
        let until = Timestamp(at(LOCK_AFTER as i64 - 1).0 + LOCK_MS);
        assert_eq!(a.redeem(&good, at(20)), Err(Refusal::LockedOut { until }), "even the right code");
        assert_eq!(a.check(Timestamp(until.0 - 1)), Err(Refusal::LockedOut { until }));
        assert_eq!(a.check(until), Ok(()), "for a while");
        assert_eq!(a.redeem(&good, until), Err(Refusal::ExpiredCode), "a code does not outlive the lockout");
        // Failures spread out over more than the window never lock.
        let mut b = Access::default();
        for i in 0..30 {
            b.failed(at(i * LOCK_MS / 5));
            assert_eq!(b.check(at(i * LOCK_MS / 5)), Ok(()));
        }
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
