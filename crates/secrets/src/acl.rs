//! A file the user alone can open, on Windows: its access list replaced by one entry, full
//! control for the user Assent runs as, and protected from what its folder passes down (what
//! mode 0600 is on Unix). Built from the process token's user with the Win32 security calls;
//! no crate that is kept up wraps them.

use std::fs::File;
use std::io;
use std::os::windows::io::AsRawHandle;
use windows_sys::Win32::Foundation::{CloseHandle, HANDLE};
use windows_sys::Win32::Security::Authorization::{SE_FILE_OBJECT, SetSecurityInfo};
use windows_sys::Win32::Security::{
    ACCESS_ALLOWED_ACE, ACL, ACL_REVISION, AddAccessAllowedAce, DACL_SECURITY_INFORMATION, GetLengthSid,
    GetTokenInformation, InitializeAcl, PROTECTED_DACL_SECURITY_INFORMATION, TOKEN_QUERY, TOKEN_USER, TokenUser,
};
use windows_sys::Win32::Storage::FileSystem::{FILE_ALL_ACCESS, FILE_GENERIC_WRITE, WRITE_DAC};
use windows_sys::Win32::System::Threading::{GetCurrentProcess, OpenProcessToken};

/// The access a file opened to be made private needs: writing it, and replacing its access list.
pub(crate) const ACCESS: u32 = FILE_GENERIC_WRITE | WRITE_DAC;

/// The process token's user, as the TOKEN_USER the system wrote (its SID points into it), in a
/// buffer aligned for it.
fn token_user() -> io::Result<Vec<u64>> {
    let mut token: HANDLE = std::ptr::null_mut();
    // SAFETY: GetCurrentProcess returns a pseudo-handle that needs no closing; `token` is
    // written on success and closed below.
    if unsafe { OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &mut token) } == 0 {
        return Err(io::Error::last_os_error());
    }
    let mut len = 0u32;
    // SAFETY: a query of the size alone (no buffer); it fails with the size in `len`.
    unsafe { GetTokenInformation(token, TokenUser, std::ptr::null_mut(), 0, &mut len) };
    let mut buf = vec![0u64; (len as usize).div_ceil(8).max(1)];
    // SAFETY: `buf` holds at least `len` bytes, aligned for TOKEN_USER.
    let ok = unsafe { GetTokenInformation(token, TokenUser, buf.as_mut_ptr().cast(), len, &mut len) };
    let err = io::Error::last_os_error();
    // SAFETY: `token` was opened above and is not used after this.
    unsafe { CloseHandle(token) };
    if ok == 0 { Err(err) } else { Ok(buf) }
}

/// Makes `file` (opened with [`ACCESS`]) the user's alone.
pub(crate) fn owner_only(file: &File) -> io::Result<()> {
    let user = token_user()?;
    // SAFETY: `user` holds the TOKEN_USER GetTokenInformation wrote, and outlives `sid`.
    let sid = unsafe { (*user.as_ptr().cast::<TOKEN_USER>()).User.Sid };
    // SAFETY: `sid` is the valid SID above.
    let sid_len = unsafe { GetLengthSid(sid) } as usize;
    let size = std::mem::size_of::<ACL>() + std::mem::size_of::<ACCESS_ALLOWED_ACE>() + sid_len;
    let mut acl = vec![0u64; size.div_ceil(8)];
    let acl_ptr = acl.as_mut_ptr().cast::<ACL>();
    let acl_len = u32::try_from(acl.len() * 8).map_err(|_| io::Error::other("access list too large"))?;
    // SAFETY: `acl` is `acl_len` bytes, aligned for an ACL, and holds one ACE for `sid`.
    let built = unsafe {
        InitializeAcl(acl_ptr, acl_len, ACL_REVISION) != 0
            && AddAccessAllowedAce(acl_ptr, ACL_REVISION, FILE_ALL_ACCESS, sid) != 0
    };
    if !built {
        return Err(io::Error::last_os_error());
    }
    let what = DACL_SECURITY_INFORMATION | PROTECTED_DACL_SECURITY_INFORMATION;
    let none = std::ptr::null_mut();
    // SAFETY: the handle is `file`'s, open with WRITE_DAC; the ACL is the one built above.
    let err =
        unsafe { SetSecurityInfo(file.as_raw_handle(), SE_FILE_OBJECT, what, none, none, acl_ptr, std::ptr::null()) };
    // A file system with no access lists (FAT, exFAT): nothing to set; the folder is the guard.
    const ERROR_INVALID_FUNCTION: u32 = 1;
    const ERROR_NOT_SUPPORTED: u32 = 50;
    match err {
        0 => Ok(()),
        ERROR_INVALID_FUNCTION | ERROR_NOT_SUPPORTED => {
            tracing::warn!("this disk keeps no access lists: a secret file is as private as its folder");
            Ok(())
        }
        _ => Err(io::Error::from_raw_os_error(err as i32)),
    }
}

/// Whether `file` (opened to read) is the user's alone: an access list protected from its
/// folder's, holding one entry, which allows this process's user (the tests' check).
#[cfg(test)]
pub(crate) fn is_owner_only(file: &File) -> io::Result<bool> {
    use windows_sys::Win32::Foundation::LocalFree;
    use windows_sys::Win32::Security::Authorization::GetSecurityInfo;
    use windows_sys::Win32::Security::{EqualSid, GetAce, GetSecurityDescriptorControl, SE_DACL_PROTECTED};
    let user = token_user()?;
    // SAFETY: as in `owner_only`.
    let sid = unsafe { (*user.as_ptr().cast::<TOKEN_USER>()).User.Sid };
    let (mut dacl, mut sd): (*mut ACL, *mut core::ffi::c_void) = (std::ptr::null_mut(), std::ptr::null_mut());
    let (no_sid, no_acl) = (std::ptr::null_mut(), std::ptr::null_mut());
    // SAFETY: the handle is `file`'s; on success `dacl` points into `sd`, freed below.
    let err = unsafe {
        GetSecurityInfo(
            file.as_raw_handle(),
            SE_FILE_OBJECT,
            DACL_SECURITY_INFORMATION,
            no_sid,
            no_sid,
            &mut dacl,
            no_acl,
            &mut sd,
        )
    };
    if err != 0 {
        return Err(io::Error::from_raw_os_error(err as i32));
    }
    let (mut control, mut revision) = (0u16, 0u32);
    let mut ace: *mut core::ffi::c_void = std::ptr::null_mut();
    // SAFETY: `sd` and `dacl` are the system's, valid until LocalFree; the one ACE is read only
    // when the list holds exactly one, and is an ACCESS_ALLOWED_ACE when its type says so.
    let alone = unsafe {
        GetSecurityDescriptorControl(sd, &mut control, &mut revision) != 0
            && control & SE_DACL_PROTECTED != 0
            && !dacl.is_null()
            && (*dacl).AceCount == 1
            && GetAce(dacl, 0, &mut ace) != 0
            && {
                let allowed = ace.cast::<ACCESS_ALLOWED_ACE>();
                u32::from((*allowed).Header.AceType)
                    == windows_sys::Win32::System::SystemServices::ACCESS_ALLOWED_ACE_TYPE
                    && EqualSid(std::ptr::addr_of_mut!((*allowed).SidStart).cast(), sid) != 0
            }
    };
    // SAFETY: `sd` was allocated by GetSecurityInfo and is not used after this.
    unsafe { LocalFree(sd) };
    Ok(alone)
}

#[cfg(test)]
mod tests {
    #[test]
    #[ignore = "Wine 8 neither keeps nor enforces a file's access list (it reads back one made from \
                the Unix mode): run on Windows with --include-ignored"]
    fn a_private_file_is_the_users_alone_and_a_plain_one_is_not() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let secret = dir.path().join("owner.token");
        crate::owner::write_private(&secret, "s3cret").unwrap_or_else(|e| panic!("{e}"));
        let f = std::fs::File::open(&secret).unwrap_or_else(|e| panic!("{e}"));
        assert!(super::is_owner_only(&f).unwrap_or_else(|e| panic!("{e}")));
        // Written again over an existing file: still the user's alone.
        crate::owner::write_private(&secret, "again").unwrap_or_else(|e| panic!("{e}"));
        let f = std::fs::File::open(&secret).unwrap_or_else(|e| panic!("{e}"));
        assert!(super::is_owner_only(&f).unwrap_or_else(|e| panic!("{e}")));
        let plain = dir.path().join("notes.txt");
        std::fs::write(&plain, "x").unwrap_or_else(|e| panic!("{e}"));
        let f = std::fs::File::open(&plain).unwrap_or_else(|e| panic!("{e}"));
        assert!(!super::is_owner_only(&f).unwrap_or_else(|e| panic!("{e}")), "the check can tell");
    }
}
