//! Windows-only plumbing shared by the native implementations: run-time resolution of functions
//! an older Windows or Wine may lack, COM apartments and `VARIANT`s, WMI sessions, and Win32 /
//! `HRESULT` error mapping. Every `unsafe` block of the crate outside the per-API FFI modules
//! lives here.

pub(crate) mod com;
pub(crate) mod dynamic;
pub(crate) mod errors;
pub(crate) mod wmi;
