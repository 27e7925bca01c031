//! Timestamps: milliseconds since the Unix epoch in storage, RFC 3339 on the wire. And the
//! engine's [`Clock`]: what leases, expiry and back-off read the time from and sleep on, so
//! that tests can move it forward instead of sleeping.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// A point in time, in milliseconds since the Unix epoch (UTC).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export, type = "string"))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(value_type = String, format = DateTime))]
pub struct Timestamp(pub i64);

impl Timestamp {
    /// The current time.
    pub fn now() -> Self {
        let ms = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0);
        Timestamp(ms)
    }

    /// This time plus `secs` seconds.
    pub fn plus_secs(self, secs: u64) -> Self {
        Timestamp(self.0.saturating_add((secs as i64).saturating_mul(1000)))
    }

    /// RFC 3339 with milliseconds, UTC (`2026-11-22T14:05:39.123Z`).
    pub fn to_rfc3339(self) -> String {
        let nanos = i128::from(self.0) * 1_000_000;
        match time::OffsetDateTime::from_unix_timestamp_nanos(nanos) {
            Ok(t) => {
                let fmt = time::macros::format_description!(
                    "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z"
                );
                t.format(&fmt).unwrap_or_else(|_| self.0.to_string())
            }
            Err(_) => self.0.to_string(),
        }
    }

    /// Parses RFC 3339.
    pub fn parse_rfc3339(s: &str) -> Option<Self> {
        let t = time::OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339).ok()?;
        Some(Timestamp((t.unix_timestamp_nanos() / 1_000_000) as i64))
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_rfc3339())
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Timestamp::parse_rfc3339(&s).ok_or_else(|| serde::de::Error::custom("expected an RFC 3339 time"))
    }
}

/// The engine's time: the system's, plus a skew that only moves forward and only when a test
/// moves it ([`Clock::advance`]). Everything that waits on the time (a lease, an expiry, a
/// push held back) reads [`Clock::now`] or [`Clock::instant`] and sleeps with
/// [`Clock::sleep`], which wakes when the clock is moved.
#[derive(Debug)]
pub struct Clock {
    /// Milliseconds added to the system's time.
    skew: tokio::sync::watch::Sender<i64>,
}

impl Default for Clock {
    fn default() -> Self {
        Self::skewed(0)
    }
}

impl Clock {
    /// A clock `skew_ms` milliseconds ahead of the system's.
    pub fn skewed(skew_ms: i64) -> Self {
        Self { skew: tokio::sync::watch::Sender::new(skew_ms) }
    }

    /// How far ahead of the system's clock this one is, in milliseconds.
    pub fn skew_ms(&self) -> i64 {
        *self.skew.borrow()
    }

    /// The current time.
    pub fn now(&self) -> Timestamp {
        Timestamp(Timestamp::now().0.saturating_add(self.skew_ms()))
    }

    /// The current instant, for durations.
    pub fn instant(&self) -> Instant {
        let skew = Duration::from_millis(self.skew_ms().max(0) as u64);
        Instant::now().checked_add(skew).unwrap_or_else(Instant::now)
    }

    /// Moves the clock forward by `by` and wakes every [`Clock::sleep`] to look again.
    pub fn advance(&self, by: Duration) {
        let by = i64::try_from(by.as_millis()).unwrap_or(i64::MAX);
        self.skew.send_modify(|s| *s = s.saturating_add(by));
    }

    /// Sleeps until `d` has passed on this clock: the system's time passing or the clock being
    /// moved forward, whichever gets there first.
    pub async fn sleep(&self, d: Duration) {
        let until = self.instant().checked_add(d);
        let mut moved = self.skew.subscribe();
        loop {
            let left = match until {
                Some(u) => u.saturating_duration_since(self.instant()),
                None => Duration::from_secs(365 * 24 * 3600),
            };
            if left.is_zero() {
                return;
            }
            tokio::select! {
                () = tokio::time::sleep(left) => {}
                r = moved.changed() => {
                    if r.is_err() {
                        // No sender: the clock is gone, and with it anyone who could move it.
                        tokio::time::sleep(left).await;
                    }
                }
            }
        }
    }

    /// Sleeps until `at` on this clock (at once if it has passed).
    pub async fn sleep_until(&self, at: Timestamp) {
        let left = at.0.saturating_sub(self.now().0).max(0) as u64;
        self.sleep(Duration::from_millis(left)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn moving_the_clock_wakes_a_sleeper_and_only_forward() {
        let c = std::sync::Arc::new(Clock::default());
        let t0 = c.now();
        let sleeper = tokio::spawn({
            let c = c.clone();
            async move { c.sleep(Duration::from_secs(3600)).await }
        });
        tokio::task::yield_now().await;
        c.advance(Duration::from_secs(1800));
        tokio::task::yield_now().await;
        assert!(!sleeper.is_finished(), "half an hour of an hour's sleep");
        c.advance(Duration::from_secs(1800));
        tokio::time::timeout(Duration::from_secs(5), sleeper).await.expect("woke").expect("joined");
        assert!(c.now().0 - t0.0 >= 3_600_000);
        // A sleep already over returns at once.
        tokio::time::timeout(Duration::from_millis(100), c.sleep_until(t0)).await.expect("at once");
    }

    #[test]
    fn formats_and_parses() {
        let t = Timestamp(1_795_356_339_123);
        let s = t.to_rfc3339();
        assert_eq!(s, "2026-11-22T14:05:39.123Z");
        assert_eq!(Timestamp::parse_rfc3339(&s), Some(t));
    }
}
