//! What a confined command may not call, whatever the kernel's other layers allow: the seccomp
//! policy of each profile, compiled by [`crate::bpf`].

use crate::bpf::Check;
use crate::{Error, Profile};

/// The seccomp filter of `profile`, compiled: the system calls a confined command is refused
/// (`EPERM`), whatever their arguments but for `ioctl` (only terminal input injection) and
/// `clone` (only new namespaces), and `clone3` answered "not implemented".
pub(crate) fn filter(profile: Profile) -> Result<seccompiler::BpfProgram, Error> {
    let mut denied: Vec<i64> = vec![
        // Sockets of every family: UDP and raw networks (Landlock covers TCP only), netlink, and
        // UNIX sockets, through which the session bus reaches the keychain. A pair of connected
        // sockets reaches nothing outside, so `socketpair` stays.
        libc::SYS_socket,
        // io_uring would open and connect sockets and files past this filter.
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        // Kernel keyrings hold secrets too.
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_keyctl,
        // Other processes' memory.
        libc::SYS_ptrace,
        libc::SYS_process_vm_readv,
        libc::SYS_process_vm_writev,
        // Mounts and namespaces (Landlock already refuses mounts; a new user namespace would give
        // back capabilities inside it).
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_pivot_root,
        libc::SYS_unshare,
        libc::SYS_setns,
        // Owners and extended attributes of files, which Landlock does not mediate.
        libc::SYS_chown,
        libc::SYS_fchown,
        libc::SYS_fchownat,
        libc::SYS_lchown,
        libc::SYS_setxattr,
        libc::SYS_lsetxattr,
        libc::SYS_fsetxattr,
        libc::SYS_removexattr,
        libc::SYS_lremovexattr,
        libc::SYS_fremovexattr,
        // The kernel itself.
        libc::SYS_bpf,
        libc::SYS_perf_event_open,
        libc::SYS_userfaultfd,
        libc::SYS_init_module,
        libc::SYS_finit_module,
        libc::SYS_delete_module,
        libc::SYS_kexec_load,
        libc::SYS_reboot,
        libc::SYS_swapon,
        libc::SYS_swapoff,
        libc::SYS_acct,
        libc::SYS_settimeofday,
        libc::SYS_clock_settime,
    ];
    match profile {
        // A build sets modes and times of what it makes.
        Profile::Workspace => {}
        // A read changes no file's mode or times either (Landlock does not mediate them).
        Profile::Read => denied.extend([
            libc::SYS_chmod,
            libc::SYS_fchmod,
            libc::SYS_fchmodat,
            libc::SYS_utime,
            libc::SYS_utimes,
            libc::SYS_utimensat,
            libc::SYS_futimesat,
        ]),
    }
    let mut rules: Vec<(i64, Check)> = denied.into_iter().map(|n| (n, Check::Refuse(libc::EPERM as u32))).collect();
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
    crate::bpf::program(&rules).map_err(|e| Error::Confine(format!("seccomp: {e}")))
}
