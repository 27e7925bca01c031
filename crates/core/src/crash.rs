//! Labelled crash points for the exactly-once tests. Built only with the `crash-points`
//! feature: when `ASSENT_CRASH_AT` names the point, the process aborts there, as abruptly as
//! `kill -9` (no destructors, no flushing).

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
