//! Timestamps: milliseconds since the Unix epoch in storage, RFC 3339 on the wire.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::time::{SystemTime, UNIX_EPOCH};

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_and_parses() {
        let t = Timestamp(1_795_356_339_123);
        let s = t.to_rfc3339();
        assert_eq!(s, "2026-11-22T14:05:39.123Z");
        assert_eq!(Timestamp::parse_rfc3339(&s), Some(t));
    }
}
