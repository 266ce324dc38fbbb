//! Windows-only plumbing shared by the native implementations: run-time resolution of functions
//! an older Windows or Wine may lack, COM apartments and `VARIANT`s, WMI sessions, and Win32 /
//! `HRESULT` error mapping. Every `unsafe` block of the crate outside the per-API FFI modules
//! lives here.

pub(crate) mod com;
pub(crate) mod dynamic;
pub(crate) mod errors;
pub(crate) mod wmi;

/// Whether this process runs under Wine (its `ntdll.dll` exports `wine_get_version`). Tests use
/// it to tell Wine's known gaps from failures.
pub fn under_wine() -> bool {
    use windows::Win32::System::LibraryLoader::{GetModuleHandleW, GetProcAddress};
    use windows::core::{s, w};
    // SAFETY: NUL-terminated literals; ntdll is loaded in every process.
    unsafe {
        GetModuleHandleW(w!("ntdll.dll"))
            .is_ok_and(|ntdll| GetProcAddress(ntdll, s!("wine_get_version")).is_some())
    }
}
