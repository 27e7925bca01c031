//! The process table: a live process's parent and when it started (with its id, the start names
//! one process, never a later one given the same id). The hook watches the client that started
//! it through this ([`crate::hook::Watch`]). Linux reads `/proc`, macOS asks the kernel
//! (`proc_pidinfo`), Windows takes a snapshot of its processes and asks each one's times
//! through a handle; elsewhere there is none, and a hook's wait ends by its own bound.

/// A live process, as the system's process table says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Process {
    /// Its parent's id.
    pub parent: u32,
    /// When it started, in the system's own unit (Linux: clock ticks since boot; macOS:
    /// microseconds since the epoch; Windows: its creation time in 100 ns).
    pub start: String,
}

/// The process `pid`; none once it has exited (a zombie included), or where there is no
/// process table to read.
pub fn process(pid: u32) -> Option<Process> {
    #[cfg(target_os = "linux")]
    {
        linux(pid)
    }
    #[cfg(target_os = "macos")]
    {
        macos(pid)
    }
    #[cfg(windows)]
    {
        windows(pid)
    }
    #[cfg(not(any(target_os = "linux", target_os = "macos", windows)))]
    {
        let _ = pid;
        None
    }
}

#[cfg(target_os = "linux")]
fn linux(pid: u32) -> Option<Process> {
    // Read at once (the file says it is empty, so a plain read would grow its buffer from 32
    // bytes, a call each time).
    let mut s = String::with_capacity(1024);
    std::io::Read::read_to_string(&mut std::fs::File::open(format!("/proc/{pid}/stat")).ok()?, &mut s).ok()?;
    // After the command name (in parentheses, which may hold anything): state, ppid, ...
    let rest = s.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    if matches!(fields.first(), Some(&"Z") | Some(&"X")) {
        return None;
    }
    Some(Process { parent: fields.get(1)?.parse().ok()?, start: fields.get(19)?.to_string() })
}

#[cfg(target_os = "macos")]
#[allow(unsafe_code)]
fn macos(pid: u32) -> Option<Process> {
    // SAFETY: proc_bsdinfo is plain data (integers and byte arrays): all zeros is a value of it.
    let mut info: libc::proc_bsdinfo = unsafe { std::mem::zeroed() };
    let size = std::mem::size_of::<libc::proc_bsdinfo>() as libc::c_int;
    // SAFETY: `info` is a proc_bsdinfo of `size` bytes, the buffer PROC_PIDTBSDINFO fills.
    let n = unsafe { libc::proc_pidinfo(pid as libc::c_int, libc::PROC_PIDTBSDINFO, 0, (&raw mut info).cast(), size) };
    // A zombie (SZOMB) has exited.
    if n != size || info.pbi_status == 5 {
        return None;
    }
    let start = info.pbi_start_tvsec * 1_000_000 + info.pbi_start_tvusec;
    Some(Process { parent: info.pbi_ppid, start: start.to_string() })
}

#[cfg(windows)]
#[allow(unsafe_code)]
fn windows(pid: u32) -> Option<Process> {
    use windows_sys::Win32::Foundation::{CloseHandle, INVALID_HANDLE_VALUE};
    use windows_sys::Win32::System::Diagnostics::ToolHelp::{
        CreateToolhelp32Snapshot, PROCESSENTRY32W, Process32FirstW, Process32NextW, TH32CS_SNAPPROCESS,
    };
    use windows_sys::Win32::System::Threading::{OpenProcess, PROCESS_QUERY_LIMITED_INFORMATION, PROCESS_SYNCHRONIZE};
    // Its parent, from a snapshot of the processes.
    // SAFETY: a snapshot handle is closed below; the entries are PROCESSENTRY32W with their size set.
    let parent = unsafe {
        let snap = CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS, 0);
        if snap == INVALID_HANDLE_VALUE {
            return None;
        }
        let mut e = PROCESSENTRY32W { dwSize: std::mem::size_of::<PROCESSENTRY32W>() as u32, ..Default::default() };
        let mut found = None;
        let mut more = Process32FirstW(snap, &mut e) != 0;
        while more {
            if e.th32ProcessID == pid {
                found = Some(e.th32ParentProcessID);
                break;
            }
            more = Process32NextW(snap, &mut e) != 0;
        }
        CloseHandle(snap);
        found?
    };
    // SAFETY: the process handle is checked, used and closed here.
    let start = unsafe {
        let h = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION | PROCESS_SYNCHRONIZE, 0, pid);
        if h.is_null() {
            return None;
        }
        let start = started(h);
        CloseHandle(h);
        start
    };
    Some(Process { parent, start: start? })
}

/// When the process behind `h` started (its creation time in 100 ns), while it is alive (its
/// handle not signalled); `h` is opened for `PROCESS_QUERY_LIMITED_INFORMATION` and
/// `PROCESS_SYNCHRONIZE`. Asked through a handle, it names the process the handle was opened on,
/// never a later one given the same id.
#[cfg(windows)]
#[allow(unsafe_code)]
pub(crate) fn started(h: windows_sys::Win32::Foundation::HANDLE) -> Option<String> {
    use windows_sys::Win32::Foundation::{FILETIME, WAIT_TIMEOUT};
    use windows_sys::Win32::System::Threading::{GetProcessTimes, WaitForSingleObject};
    let zero = FILETIME { dwLowDateTime: 0, dwHighDateTime: 0 };
    let (mut created, mut exited, mut kernel, mut user) = (zero, zero, zero, zero);
    // SAFETY: `h` is an open process handle (the caller's); the times are written into FILETIMEs.
    let (alive, timed) = unsafe {
        (
            WaitForSingleObject(h, 0) == WAIT_TIMEOUT,
            GetProcessTimes(h, &mut created, &mut exited, &mut kernel, &mut user) != 0,
        )
    };
    let start = (u64::from(created.dwHighDateTime) << 32) | u64::from(created.dwLowDateTime);
    (alive && timed).then(|| start.to_string())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[cfg(any(target_os = "linux", target_os = "macos", windows))]
    #[test]
    fn this_process_and_a_child_that_exits() {
        let me = process(std::process::id()).unwrap();
        assert_eq!(process(std::process::id()), Some(me), "the same process reads the same");
        let mut child = if cfg!(windows) {
            std::process::Command::new("cmd").args(["/c", "ping -n 30 127.0.0.1 > NUL"]).spawn()
        } else {
            std::process::Command::new("sleep").arg("30").spawn()
        }
        .unwrap();
        let seen = process(child.id()).unwrap();
        assert_eq!(seen.parent, std::process::id());
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(process(child.id()), None, "gone once it exited");
    }
}
