//! The signals by which a client gives up on a call (SIGINT, SIGTERM, SIGHUP). A hook that
//! waits for the person is two processes in a row: `assent-run` files the call, then becomes the
//! whole `assent`, which listens for them. A signal sent in between (the question already in the
//! inbox, nothing listening yet) would end the hook by its default action and leave the question
//! behind until its lease lapsed. So `assent-run` holds the signals back from its start
//! ([`hold`]); they stay pending across the exec, and the whole `assent` lets them through
//! ([`release`]) once it listens, when a pending one is heard at once. Nothing is held on
//! Windows, which has no such signals.

/// The signals held.
#[cfg(unix)]
fn set() -> libc::sigset_t {
    // SAFETY: sigemptyset initialises the set it is given; sigaddset adds valid signal numbers.
    #[allow(unsafe_code)]
    unsafe {
        let mut s: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut s);
        for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            libc::sigaddset(&mut s, sig);
        }
        s
    }
}

/// Changes this thread's mask of the stop signals (`SIG_BLOCK` or `SIG_UNBLOCK`).
#[cfg(unix)]
fn mask(how: libc::c_int) {
    let s = set();
    // SAFETY: a valid set; the old mask is not asked for.
    #[allow(unsafe_code)]
    unsafe {
        libc::pthread_sigmask(how, &s, std::ptr::null_mut());
    }
}

/// Holds the stop signals back in this thread (and what it executes): they wait, pending.
pub fn hold() {
    #[cfg(unix)]
    mask(libc::SIG_BLOCK);
}

/// Lets the stop signals through again in this thread: one that came while they were held is
/// delivered now. Call once their handlers are in place.
pub fn release() {
    #[cfg(unix)]
    mask(libc::SIG_UNBLOCK);
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// A signal sent while held waits, and is delivered on release (to a handler put in place
    /// meanwhile), not lost and not acted on by default.
    #[test]
    fn a_held_signal_waits_for_its_release() {
        let child = std::thread::spawn(|| {
            hold();
            // SAFETY: raising a signal at this thread, which holds it.
            #[allow(unsafe_code)]
            let raised = unsafe { libc::pthread_kill(libc::pthread_self(), libc::SIGHUP) };
            assert_eq!(raised, 0);
            let mut pending: libc::sigset_t = unsafe_zeroed();
            // SAFETY: sigpending fills the set it is given.
            #[allow(unsafe_code)]
            let is = unsafe {
                libc::sigpending(&mut pending);
                libc::sigismember(&pending, libc::SIGHUP)
            };
            assert_eq!(is, 1, "held, pending");
            // Taken without a default action (which would end the process): sigwait.
            let s = set();
            let mut got = 0;
            // SAFETY: a valid set and a place for the signal taken.
            #[allow(unsafe_code)]
            let r = unsafe { libc::sigwait(&s, &mut got) };
            assert_eq!((r, got), (0, libc::SIGHUP));
            release();
        });
        child.join().expect("the thread ends");
    }

    fn unsafe_zeroed() -> libc::sigset_t {
        // SAFETY: sigset_t is plain data; all zeros is an empty set on every Unix.
        #[allow(unsafe_code)]
        unsafe {
            std::mem::zeroed()
        }
    }
}
