//! What a boxed command may not call, whatever the box's namespaces and Landlock allow: the
//! seccomp policy of each profile, compiled by [`crate::boxed::bpf`]. A reviewed list: each entry is
//! something a sandboxed build or test never needs, with why beside it.
//!
//! The namespaces do most of the work already (a process in the box cannot name, signal, limit
//! or renice one outside, and holds no capability over anything outside); this layer closes
//! what namespaces do not cover (vsock and other socket families that ignore network
//! namespaces, file handles that open by inode past the mounts, the kernel's own state), and
//! stands in for a capability the box dropped should a kernel bug give one back.

use crate::boxed::bpf::Check;
use crate::boxed::{Confine, Error};

/// `S_IFCHR`: the bit that character and block devices' modes share (`S_IFBLK` is
/// `S_IFCHR | S_IFDIR`); a FIFO or a socket made with `mknod` does not have it.
const DEVICE_BIT: u32 = 0o020000;

/// The system calls a boxed command is refused (`EPERM`), with why.
const REFUSED: &[(i64, &str)] = &[
    // io_uring would open and connect sockets and files past this filter.
    (libc::SYS_io_uring_setup, "io_uring runs calls past this filter"),
    (libc::SYS_io_uring_enter, "io_uring runs calls past this filter"),
    (libc::SYS_io_uring_register, "io_uring runs calls past this filter"),
    (libc::SYS_add_key, "kernel keyrings hold secrets of the user's other sessions"),
    (libc::SYS_request_key, "kernel keyrings hold secrets of the user's other sessions"),
    (libc::SYS_keyctl, "kernel keyrings hold secrets of the user's other sessions"),
    (libc::SYS_ptrace, "no process is debugged in a box (another's memory and registers)"),
    (libc::SYS_process_vm_readv, "another process's memory"),
    (libc::SYS_process_vm_writev, "another process's memory"),
    (libc::SYS_pidfd_getfd, "another process's open files"),
    (libc::SYS_mount, "the box's mounts are fixed before the command starts"),
    (libc::SYS_umount2, "the box's mounts are fixed before the command starts"),
    (libc::SYS_pivot_root, "the box's mounts are fixed before the command starts"),
    (libc::SYS_open_tree, "the new mount API: the mounts are fixed"),
    (libc::SYS_move_mount, "the new mount API: the mounts are fixed"),
    (libc::SYS_fsopen, "the new mount API: the mounts are fixed"),
    (libc::SYS_fsconfig, "the new mount API: the mounts are fixed"),
    (libc::SYS_fsmount, "the new mount API: the mounts are fixed"),
    (libc::SYS_fspick, "the new mount API: the mounts are fixed"),
    (libc::SYS_mount_setattr, "the new mount API: the mounts are fixed"),
    (libc::SYS_unshare, "a new namespace inside would give capabilities back within it"),
    (libc::SYS_setns, "joining another namespace"),
    (libc::SYS_open_by_handle_at, "opens a file by its handle, past the box's mounts"),
    (libc::SYS_name_to_handle_at, "file handles, for the call above"),
    (libc::SYS_chown, "owners of files (a build sets modes and times, not owners)"),
    (libc::SYS_fchown, "owners of files"),
    (libc::SYS_fchownat, "owners of files"),
    (libc::SYS_lchown, "owners of files"),
    (libc::SYS_setxattr, "extended attributes (capabilities, security labels) of files"),
    (libc::SYS_lsetxattr, "extended attributes of files"),
    (libc::SYS_fsetxattr, "extended attributes of files"),
    (libc::SYS_removexattr, "extended attributes of files"),
    (libc::SYS_lremovexattr, "extended attributes of files"),
    (libc::SYS_fremovexattr, "extended attributes of files"),
    (libc::SYS_bpf, "programs loaded into the kernel"),
    (libc::SYS_perf_event_open, "the kernel's and other processes' performance counters"),
    (libc::SYS_userfaultfd, "a kernel exploit's usual tool"),
    (libc::SYS_fanotify_init, "watching a whole filesystem's accesses"),
    (libc::SYS_init_module, "kernel modules"),
    (libc::SYS_finit_module, "kernel modules"),
    (libc::SYS_delete_module, "kernel modules"),
    (libc::SYS_kexec_load, "replacing the running kernel"),
    (libc::SYS_kexec_file_load, "replacing the running kernel"),
    (libc::SYS_reboot, "the machine's power"),
    (libc::SYS_swapon, "the machine's swap"),
    (libc::SYS_swapoff, "the machine's swap"),
    (libc::SYS_acct, "process accounting"),
    (libc::SYS_quotactl, "disk quotas"),
    (libc::SYS_quotactl_fd, "disk quotas"),
    (libc::SYS_settimeofday, "the system clock"),
    (libc::SYS_clock_settime, "the system clock"),
    (libc::SYS_clock_adjtime, "the system clock"),
    (libc::SYS_adjtimex, "the system clock (read-only queries go through clock_gettime)"),
    (libc::SYS_sethostname, "the host's name"),
    (libc::SYS_setdomainname, "the host's domain name"),
    (libc::SYS_syslog, "the kernel's log"),
    (libc::SYS_vhangup, "hanging up a terminal"),
    (libc::SYS_iopl, "direct hardware I/O"),
    (libc::SYS_ioperm, "direct hardware I/O"),
    (libc::SYS_lookup_dcookie, "kernel profiling"),
];

/// What a read changes no file of either (Landlock does not mediate modes and times).
const REFUSED_TO_READ: &[(i64, &str)] = &[
    (libc::SYS_chmod, "a file's mode"),
    (libc::SYS_fchmod, "a file's mode"),
    (libc::SYS_fchmodat, "a file's mode"),
    (libc::SYS_utime, "a file's times"),
    (libc::SYS_utimes, "a file's times"),
    (libc::SYS_utimensat, "a file's times"),
    (libc::SYS_futimesat, "a file's times"),
];

/// The socket families a box may make: its own loopback network (its network namespace has no
/// other) and UNIX sockets (which reach only what the box's mounts show). Every other family is
/// refused: netlink, raw packets, and above all `vsock`, which reaches a virtual machine's host
/// whatever the network namespace.
const SOCKET_FAMILIES: &[i32] = &[libc::AF_UNIX, libc::AF_INET, libc::AF_INET6];

/// The seccomp filter of `profile`, compiled (see the module's documentation).
pub(crate) fn filter(profile: Confine) -> Result<seccompiler::BpfProgram, Error> {
    let mut denied: Vec<i64> = REFUSED.iter().map(|(n, _)| *n).collect();
    if profile == Confine::Read {
        denied.extend(REFUSED_TO_READ.iter().map(|(n, _)| *n));
    }
    let mut rules: Vec<(i64, Check)> = denied.into_iter().map(|n| (n, Check::Refuse(libc::EPERM as u32))).collect();
    #[allow(clippy::cast_sign_loss)]
    let families = SOCKET_FAMILIES.iter().map(|f| *f as u32).collect();
    rules.push((libc::SYS_socket, Check::NotIn { arg: 0, values: families, errno: libc::EAFNOSUPPORT as u32 }));
    // Device nodes (a block device is a raw read of a disk): `mknod`'s mode is its second
    // argument, `mknodat`'s its third. FIFOs and sockets stay.
    rules.push((libc::SYS_mknod, Check::AnyBit { arg: 1, bits: DEVICE_BIT }));
    rules.push((libc::SYS_mknodat, Check::AnyBit { arg: 2, bits: DEVICE_BIT }));
    // Typing into the terminal the command was started from (`TIOCSTI`, `TIOCLINUX`): the
    // kernel reads the request as 32 bits. (Its type is the C library's: `c_ulong` on glibc,
    // `c_int` on musl.)
    #[allow(clippy::unnecessary_cast)]
    rules.push((libc::SYS_ioctl, Check::Equals { arg: 1, values: vec![libc::TIOCSTI as u32, libc::TIOCLINUX as u32] }));
    // `clone` making a namespace: any of the flags set (all of them in the low 32 bits).
    let namespaces = libc::CLONE_NEWUSER
        | libc::CLONE_NEWNS
        | libc::CLONE_NEWNET
        | libc::CLONE_NEWPID
        | libc::CLONE_NEWIPC
        | libc::CLONE_NEWUTS
        | libc::CLONE_NEWCGROUP;
    rules.push((libc::SYS_clone, Check::AnyBit { arg: 0, bits: namespaces as u32 }));
    // `clone3` passes its flags in memory a filter cannot read: it answers "not implemented", on
    // which the C library falls back to `clone`, whose flags are read above.
    rules.push((libc::SYS_clone3, Check::Refuse(libc::ENOSYS as u32)));
    crate::boxed::bpf::program(&rules).map_err(|e| Error::Confine(format!("seccomp: {e}")))
}
