//! Waiting for processes to exit with the system's own events, where it has them: kqueue's
//! process events on macOS (`EVFILT_PROC`, `NOTE_EXIT`), the processes' handles on Windows
//! (waited on together). Each process is named by its id and its start time (the process
//! table's, [`crate::procs`]): the event is registered first and the start checked after, so a
//! process that exits in between is seen, and an id reused by a later process is not taken for
//! it. Elsewhere (Linux, whose hook looks at `/proc` four times a second) there is none.

use std::time::Duration;

/// The exits of some processes, being watched by the system.
pub struct Exits {
    /// One of them was gone already when the watch was set.
    gone: bool,
    #[cfg(target_os = "macos")]
    queue: std::os::fd::OwnedFd,
    #[cfg(windows)]
    handles: Handles,
}

impl Exits {
    /// Watches `processes` (id, start time) for their exit; none where the system has no events
    /// for it.
    pub fn watch(processes: &[(u32, String)]) -> Option<Self> {
        #[cfg(any(target_os = "macos", windows))]
        {
            sys::watch(processes)
        }
        #[cfg(not(any(target_os = "macos", windows)))]
        {
            let _ = processes;
            None
        }
    }

    /// Waits up to `timeout`; whether one of the processes has exited.
    pub fn wait(&self, timeout: Duration) -> bool {
        if self.gone {
            return true;
        }
        #[cfg(any(target_os = "macos", windows))]
        {
            sys::wait(self, timeout)
        }
        #[cfg(not(any(target_os = "macos", windows)))]
        {
            let _ = timeout;
            false
        }
    }
}

/// Whether `pid` is still the process that started at `start`.
#[cfg(target_os = "macos")]
fn same(pid: u32, start: &str) -> bool {
    crate::procs::process(pid).is_some_and(|p| p.start == start)
}

#[cfg(target_os = "macos")]
#[allow(unsafe_code)]
mod sys {
    use super::{Exits, same};
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::time::Duration;

    /// A change list entry for `pid`'s exit.
    fn on_exit(pid: u32) -> libc::kevent {
        libc::kevent {
            ident: pid as libc::uintptr_t,
            filter: libc::EVFILT_PROC,
            flags: libc::EV_ADD | libc::EV_ONESHOT,
            fflags: libc::NOTE_EXIT,
            data: 0,
            udata: std::ptr::null_mut(),
        }
    }

    pub(super) fn watch(processes: &[(u32, String)]) -> Option<Exits> {
        // SAFETY: kqueue takes no arguments; a descriptor it returns is owned here alone.
        let fd = unsafe { libc::kqueue() };
        if fd < 0 {
            return None;
        }
        // SAFETY: `fd` is a fresh descriptor nothing else owns.
        let queue = unsafe { OwnedFd::from_raw_fd(fd) };
        let mut gone = false;
        for (pid, start) in processes {
            let change = on_exit(*pid);
            // SAFETY: one change read from `change`; no events asked for, no timeout needed.
            let r = unsafe { libc::kevent(queue.as_raw_fd(), &change, 1, std::ptr::null_mut(), 0, std::ptr::null()) };
            // ESRCH: it has exited already. Registered first, checked after: an exit in between
            // is an event.
            gone |= r < 0 || !same(*pid, start);
        }
        Some(Exits { gone, queue })
    }

    pub(super) fn wait(e: &Exits, timeout: Duration) -> bool {
        let ts = libc::timespec {
            tv_sec: timeout.as_secs() as libc::time_t,
            tv_nsec: timeout.subsec_nanos() as libc::c_long,
        };
        let mut event = on_exit(0);
        // SAFETY: room for one event in `event`; `ts` lives across the call.
        let n = unsafe { libc::kevent(e.queue.as_raw_fd(), std::ptr::null(), 0, &mut event, 1, &ts) };
        n > 0 && event.fflags & libc::NOTE_EXIT != 0
    }
}

/// The processes' handles, closed when dropped.
#[cfg(windows)]
struct Handles(Vec<windows_sys::Win32::Foundation::HANDLE>);

// SAFETY: a process handle is a kernel object's, usable from any thread; these are only waited on.
#[cfg(windows)]
#[allow(unsafe_code)]
unsafe impl Send for Handles {}
// SAFETY: as above: waiting on a handle from several threads at once is allowed.
#[cfg(windows)]
#[allow(unsafe_code)]
unsafe impl Sync for Handles {}

#[cfg(windows)]
#[allow(unsafe_code)]
impl Drop for Handles {
    fn drop(&mut self) {
        for h in &self.0 {
            // SAFETY: each handle was opened by `watch` and is closed once, here.
            unsafe { windows_sys::Win32::Foundation::CloseHandle(*h) };
        }
    }
}

#[cfg(windows)]
#[allow(unsafe_code)]
mod sys {
    use super::{Exits, Handles};
    use std::time::Duration;
    use windows_sys::Win32::Foundation::{WAIT_OBJECT_0, WAIT_TIMEOUT};
    use windows_sys::Win32::System::Threading::{
        OpenProcess, PROCESS_QUERY_LIMITED_INFORMATION, PROCESS_SYNCHRONIZE, WaitForMultipleObjects,
    };

    pub(super) fn watch(processes: &[(u32, String)]) -> Option<Exits> {
        let mut handles = Handles(Vec::new());
        let mut gone = false;
        for (pid, start) in processes {
            // SAFETY: a handle opened for waiting on, kept in `handles` (closed when it drops).
            let h = unsafe { OpenProcess(PROCESS_SYNCHRONIZE | PROCESS_QUERY_LIMITED_INFORMATION, 0, *pid) };
            if h.is_null() {
                gone = true;
                continue;
            }
            handles.0.push(h);
            // Its start asked through the handle (no snapshot of every process): the process
            // the handle names, alive, and the one that started then, not a reused id's.
            gone |= crate::procs::started(h).as_deref() != Some(start.as_str());
        }
        Some(Exits { gone, handles })
    }

    pub(super) fn wait(e: &Exits, timeout: Duration) -> bool {
        let hs = &e.handles.0;
        if hs.is_empty() {
            std::thread::sleep(timeout);
            return false;
        }
        let ms = u32::try_from(timeout.as_millis()).unwrap_or(u32::MAX - 1);
        // SAFETY: `hs` holds open process handles (at most two: fewer than MAXIMUM_WAIT_OBJECTS).
        let r = unsafe { WaitForMultipleObjects(hs.len() as u32, hs.as_ptr(), 0, ms) };
        match r {
            WAIT_TIMEOUT => false,
            r if (r.wrapping_sub(WAIT_OBJECT_0) as usize) < hs.len() => true,
            // A failed wait: waited out instead (the proposal's lease still ends a lost client).
            _ => {
                std::thread::sleep(timeout);
                false
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// Where the system has events: a child's exit wakes the wait at once, and a process that
    /// is not the one that started then (a reused id) is gone from the start.
    #[cfg(any(target_os = "macos", windows))]
    #[test]
    fn an_exit_wakes_the_wait() {
        let mut child = if cfg!(windows) {
            std::process::Command::new("cmd").args(["/c", "ping -n 30 127.0.0.1 >NUL"]).spawn().unwrap()
        } else {
            std::process::Command::new("sleep").arg("30").spawn().unwrap()
        };
        let start = crate::procs::process(child.id()).unwrap().start;
        let exits = Exits::watch(&[(child.id(), start.clone())]).unwrap();
        assert!(!exits.wait(Duration::from_millis(100)), "still running");
        child.kill().unwrap();
        let since = std::time::Instant::now();
        assert!(exits.wait(Duration::from_secs(5)), "its exit is an event");
        assert!(since.elapsed() < Duration::from_secs(2), "at once, not at the end of the wait");
        child.wait().unwrap();
        let other = Exits::watch(&[(std::process::id(), format!("{start}0"))]).unwrap();
        assert!(other.wait(Duration::ZERO), "another start time is another process");
    }

    #[cfg(not(any(target_os = "macos", windows)))]
    #[test]
    fn no_events_here() {
        assert!(Exits::watch(&[(std::process::id(), String::new())]).is_none());
    }
}
