//! Windows FFI, the only `unsafe` code of the crate: security descriptors parsed from SDDL, pipe
//! instances created with one, a handle's DACL read back as SDDL, and whether a pipe exists.

use std::io;
use std::os::windows::io::{AsRawHandle, BorrowedHandle};
use std::ptr;

use tokio::net::windows::named_pipe::{NamedPipeServer, ServerOptions};
use windows_sys::Win32::Foundation::{
    ERROR_FILE_NOT_FOUND, ERROR_SEM_TIMEOUT, ERROR_SUCCESS, HLOCAL, LocalFree,
};
use windows_sys::Win32::Security::Authorization::{
    ConvertSecurityDescriptorToStringSecurityDescriptorW,
    ConvertStringSecurityDescriptorToSecurityDescriptorW, GetSecurityInfo, SDDL_REVISION_1,
    SE_KERNEL_OBJECT,
};
use windows_sys::Win32::Security::{
    DACL_SECURITY_INFORMATION, PSECURITY_DESCRIPTOR, SECURITY_ATTRIBUTES,
};
use windows_sys::Win32::System::Pipes::WaitNamedPipeW;

/// A self-relative security descriptor allocated by Windows (freed with `LocalFree`).
#[derive(Debug)]
pub(crate) struct SecurityDescriptor(PSECURITY_DESCRIPTOR);

// SAFETY: the descriptor is a plain, self-relative memory block owned by this value; it is
// never mutated after creation, so moving it to or sharing it with another thread is sound.
unsafe impl Send for SecurityDescriptor {}
// SAFETY: as above; Windows only reads the descriptor.
unsafe impl Sync for SecurityDescriptor {}

impl SecurityDescriptor {
    /// Parses an SDDL string such as `D:P(A;;GA;;;SY)(A;;GA;;;BA)`.
    pub(crate) fn from_sddl(sddl: &str) -> io::Result<Self> {
        let wide: Vec<u16> = sddl.encode_utf16().chain(Some(0)).collect();
        let mut descriptor: PSECURITY_DESCRIPTOR = ptr::null_mut();
        // SAFETY: `wide` is NUL-terminated and outlives the call; `descriptor` is a valid out
        // pointer; the size out pointer may be null.
        let ok = unsafe {
            ConvertStringSecurityDescriptorToSecurityDescriptorW(
                wide.as_ptr(),
                SDDL_REVISION_1,
                &mut descriptor,
                ptr::null_mut(),
            )
        };
        if ok == 0 {
            let e = io::Error::last_os_error();
            return Err(io::Error::new(
                e.kind(),
                format!("invalid security descriptor {sddl:?}: {e}"),
            ));
        }
        Ok(SecurityDescriptor(descriptor))
    }
}

impl Drop for SecurityDescriptor {
    fn drop(&mut self) {
        // SAFETY: the pointer came from ConvertStringSecurityDescriptorToSecurityDescriptorW,
        // which allocates with LocalAlloc, and is freed exactly once here.
        unsafe { LocalFree(self.0 as HLOCAL) };
    }
}

/// Creates a pipe instance whose security descriptor is `security` (not inheritable).
pub(crate) fn create_pipe_instance(
    options: &ServerOptions,
    name: &str,
    security: &SecurityDescriptor,
) -> io::Result<NamedPipeServer> {
    let mut attributes = SECURITY_ATTRIBUTES {
        nLength: size_of::<SECURITY_ATTRIBUTES>() as u32,
        lpSecurityDescriptor: security.0,
        bInheritHandle: 0,
    };
    // SAFETY: `attributes` is a fully initialised SECURITY_ATTRIBUTES whose descriptor is a
    // valid self-relative descriptor kept alive by `security`; both outlive the call, and
    // CreateNamedPipeW only reads them.
    unsafe { options.create_with_security_attributes_raw(name, (&raw mut attributes).cast()) }
}

/// The DACL of the object behind `handle`, as SDDL (`D:P(A;;GA;;;SY)...`). The handle needs
/// `READ_CONTROL` access, which a pipe server's own instance has.
pub fn dacl_sddl(handle: BorrowedHandle<'_>) -> io::Result<String> {
    let mut descriptor: PSECURITY_DESCRIPTOR = ptr::null_mut();
    // SAFETY: `handle` is a live handle for the duration of the borrow; the owner, group, DACL
    // and SACL out pointers may be null; `descriptor` receives a LocalAlloc'd block freed below.
    let status = unsafe {
        GetSecurityInfo(
            handle.as_raw_handle(),
            SE_KERNEL_OBJECT,
            DACL_SECURITY_INFORMATION,
            ptr::null_mut(),
            ptr::null_mut(),
            ptr::null_mut(),
            ptr::null_mut(),
            &mut descriptor,
        )
    };
    if status != ERROR_SUCCESS {
        let e = io::Error::from_raw_os_error(status as i32);
        return Err(io::Error::new(
            e.kind(),
            format!("read security descriptor: {e}"),
        ));
    }
    let descriptor = SecurityDescriptor(descriptor);
    let mut text: *mut u16 = ptr::null_mut();
    let mut len: u32 = 0;
    // SAFETY: `descriptor` is a valid descriptor from GetSecurityInfo; `text` and `len` are
    // valid out pointers; `text` is LocalAlloc'd and freed below.
    let ok = unsafe {
        ConvertSecurityDescriptorToStringSecurityDescriptorW(
            descriptor.0,
            SDDL_REVISION_1,
            DACL_SECURITY_INFORMATION,
            &mut text,
            &mut len,
        )
    };
    if ok == 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(
            e.kind(),
            format!("convert security descriptor to SDDL: {e}"),
        ));
    }
    // SAFETY: on success `text` points to `len` UTF-16 units (the count includes the
    // terminating NUL, which is dropped below).
    let units = unsafe { std::slice::from_raw_parts(text, len as usize) };
    let sddl = String::from_utf16_lossy(units.split(|&u| u == 0).next().unwrap_or_default());
    // SAFETY: `text` was LocalAlloc'd by the conversion above and is freed exactly once.
    unsafe { LocalFree(text as HLOCAL) };
    Ok(sddl)
}

/// Whether a pipe named `name` exists (some server has an instance of it), asked without
/// connecting to it: `WaitNamedPipeW` with a 1 ms timeout succeeds when an instance is free and
/// times out when all are busy; a missing pipe is `ERROR_FILE_NOT_FOUND`.
pub(crate) fn pipe_exists(name: &str) -> io::Result<bool> {
    let wide: Vec<u16> = name.encode_utf16().chain(Some(0)).collect();
    // SAFETY: `wide` is NUL-terminated and outlives the call.
    if unsafe { WaitNamedPipeW(wide.as_ptr(), 1) } != 0 {
        return Ok(true);
    }
    let e = io::Error::last_os_error();
    match e.raw_os_error().map(|code| code as u32) {
        Some(ERROR_SEM_TIMEOUT) => Ok(true),
        Some(ERROR_FILE_NOT_FOUND) => Ok(false),
        _ => Err(io::Error::new(
            e.kind(),
            format!("check whether the pipe exists: {e}"),
        )),
    }
}
