//! The tests' hooks into a running binary, built only with the `crash-points` feature (the
//! tests' builds; never a release):
//!
//! - labelled crash points for the exactly-once tests: when `ASSENT_CRASH_AT` names the point,
//!   the process aborts there, as abruptly as `kill -9` (no destructors, no flushing);
//! - a clock the tests move: with `ASSENT_TEST_CLOCK` set (to the milliseconds it starts ahead
//!   of the system's clock, usually 0), the owner may move the engine's clock forward
//!   (`POST /v1/testing/clock`), so leases, expiry and back-off are tested without sleeping;
//! - labelled pauses (`ASSENT_TEST_PAUSE=label:ms`), to land a signal in a short window.

/// Aborts the process if `ASSENT_CRASH_AT` equals `label` (only with the `crash-points` feature).
#[inline]
pub fn point(label: &str) {
    #[cfg(feature = "crash-points")]
    if std::env::var("ASSENT_CRASH_AT").is_ok_and(|v| v == label) {
        eprintln!("crash point {label}: aborting");
        std::process::abort();
    }
    #[cfg(not(feature = "crash-points"))]
    let _ = label;
}

/// Sleeps at `label` when `ASSENT_TEST_PAUSE` is `label:MILLISECONDS` (only with the
/// `crash-points` feature): a test puts a signal or a kill in a window that is otherwise too
/// short to hit.
#[inline]
pub fn pause(label: &str) {
    #[cfg(feature = "crash-points")]
    if let Some(ms) = std::env::var("ASSENT_TEST_PAUSE")
        .ok()
        .and_then(|v| v.strip_prefix(label)?.strip_prefix(':')?.parse::<u64>().ok())
    {
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
    #[cfg(not(feature = "crash-points"))]
    let _ = label;
}

/// With the `crash-points` feature and `ASSENT_TEST_CLOCK` set to a whole number of
/// milliseconds: that skew, and the engine's clock may be moved by the owner. Otherwise none.
pub fn test_clock() -> Option<i64> {
    #[cfg(feature = "crash-points")]
    if let Ok(v) = std::env::var("ASSENT_TEST_CLOCK") {
        return v.trim().parse().ok();
    }
    None
}
