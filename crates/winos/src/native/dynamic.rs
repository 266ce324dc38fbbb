//! Functions resolved at run time with `GetProcAddress`, for the `iphlpapi.dll` calls Wine 8 (and
//! some Windows versions) do not export. A static import of a missing function would stop the
//! whole executable from loading; resolved this way it becomes [`WinOsError::Unsupported`].

use windows::Win32::System::LibraryLoader::{GetModuleHandleW, GetProcAddress, LoadLibraryW};
use windows::core::{PCSTR, w};

use crate::{Result, WinOsError};

/// The address of `name` (NUL-terminated) in `iphlpapi.dll`, as the function pointer type `F`.
///
/// # Safety
/// `F` must be an `unsafe extern "system" fn` type matching the function's real signature.
pub(crate) unsafe fn iphlpapi<F: Copy>(function: &'static str, name: &'static [u8]) -> Result<F> {
    assert_eq!(name.last(), Some(&0), "function names are NUL-terminated");
    assert_eq!(
        size_of::<F>(),
        size_of::<usize>(),
        "F is a function pointer"
    );
    // SAFETY: both calls take a NUL-terminated wide string literal; the module stays loaded for
    // the life of the process (it is also imported statically for the read calls).
    let module = unsafe {
        GetModuleHandleW(w!("iphlpapi.dll")).or_else(|_| LoadLibraryW(w!("iphlpapi.dll")))
    }
    .map_err(|_| WinOsError::Unsupported {
        function: "iphlpapi.dll",
    })?;
    // SAFETY: `module` is a loaded module and `name` a NUL-terminated ANSI string.
    let address = unsafe { GetProcAddress(module, PCSTR(name.as_ptr())) }
        .ok_or(WinOsError::Unsupported { function })?;
    // SAFETY: `F` is a function pointer type of the same size (asserted above) whose signature
    // the caller guarantees matches the exported function.
    Ok(unsafe { std::mem::transmute_copy::<_, F>(&address) })
}
