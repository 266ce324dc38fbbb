//! The `computenetwork.dll` exports this crate calls, declared from their documented C
//! signatures, and [`Exports`]: the DLL loaded at run time with each of them resolved.

use std::ffi::{CStr, c_void};

use windows_sys::Win32::Foundation::{FreeLibrary, HMODULE};
use windows_sys::Win32::System::LibraryLoader::{
    GetProcAddress, LOAD_LIBRARY_SEARCH_SYSTEM32, LoadLibraryExW,
};
use windows_sys::core::{GUID, HRESULT, PCWSTR, PWSTR};

use crate::error::HcnError;

/// `HCN_NETWORK`, `HCN_ENDPOINT`, `HCN_NAMESPACE`: opaque handles (`DECLARE_HANDLE`).
pub(super) type RawHandle = *mut c_void;

/// `HcnEnumerate*(Query, *Objects, *ErrorRecord)`.
pub(super) type EnumerateFn = unsafe extern "system" fn(PCWSTR, *mut PWSTR, *mut PWSTR) -> HRESULT;
/// `HcnCreateNetwork` / `HcnCreateNamespace`: `(Id, Settings, *Handle, *ErrorRecord)`.
pub(super) type CreateFn =
    unsafe extern "system" fn(*const GUID, PCWSTR, *mut RawHandle, *mut PWSTR) -> HRESULT;
/// `HcnCreateEndpoint(Network, Id, Settings, *Endpoint, *ErrorRecord)`.
pub(super) type CreateEndpointFn = unsafe extern "system" fn(
    RawHandle,
    *const GUID,
    PCWSTR,
    *mut RawHandle,
    *mut PWSTR,
) -> HRESULT;
/// `HcnOpen*(Id, *Handle, *ErrorRecord)`.
pub(super) type OpenFn =
    unsafe extern "system" fn(*const GUID, *mut RawHandle, *mut PWSTR) -> HRESULT;
/// `HcnQuery*Properties(Handle, Query, *Properties, *ErrorRecord)`.
pub(super) type QueryFn =
    unsafe extern "system" fn(RawHandle, PCWSTR, *mut PWSTR, *mut PWSTR) -> HRESULT;
/// `HcnDelete*(Id, *ErrorRecord)`.
pub(super) type DeleteFn = unsafe extern "system" fn(*const GUID, *mut PWSTR) -> HRESULT;
/// `HcnClose*(Handle)`.
pub(super) type CloseFn = unsafe extern "system" fn(RawHandle) -> HRESULT;
/// `HcnModifyNetwork` / `HcnModifyNamespace`: `(Handle, Settings, *ErrorRecord)`.
pub(super) type ModifyFn = unsafe extern "system" fn(RawHandle, PCWSTR, *mut PWSTR) -> HRESULT;

/// The exports every object kind (network, endpoint, namespace) has in the same shape.
#[derive(Debug, Clone, Copy)]
pub(super) struct KindExports {
    pub(super) enumerate: EnumerateFn,
    pub(super) open: OpenFn,
    pub(super) query: QueryFn,
    pub(super) delete: DeleteFn,
    pub(super) close: CloseFn,
}

/// The loaded DLL and its exports. The function pointers stay valid while `module` is loaded,
/// that is until this value is dropped.
#[derive(Debug)]
pub(super) struct Exports {
    module: HMODULE,
    pub(super) network: KindExports,
    pub(super) endpoint: KindExports,
    pub(super) namespace: KindExports,
    pub(super) create_network: CreateFn,
    pub(super) create_endpoint: CreateEndpointFn,
    pub(super) create_namespace: CreateFn,
    pub(super) modify_network: ModifyFn,
    pub(super) modify_namespace: ModifyFn,
}

// SAFETY: the module handle and the function pointers are plain values; the HCN functions are
// RPC stubs to the HNS service, callable from any thread; FreeLibrary runs once, in Drop.
unsafe impl Send for Exports {}
// SAFETY: as above; nothing in `Exports` is mutated after loading.
unsafe impl Sync for Exports {}

/// Resolves export `$name` of `$module` as a function of type `$ty`, or returns
/// `HcnError::Unavailable` from the enclosing function.
macro_rules! resolve {
    ($module:expr, $dll:expr, $name:literal, $ty:ty) => {{
        let name: &CStr = $name;
        // SAFETY: `module` is a loaded module and `name` a NUL-terminated export name.
        let proc = unsafe { GetProcAddress($module, name.as_ptr().cast()) };
        match proc {
            // SAFETY: the export has exactly the signature `$ty` (the documented C prototype,
            // `WINAPI` = `extern "system"`); both are plain function pointers of the same size.
            Some(f) => unsafe {
                std::mem::transmute::<unsafe extern "system" fn() -> isize, $ty>(f)
            },
            None => {
                let e = std::io::Error::last_os_error();
                // SAFETY: `module` was loaded by LoadLibraryExW above and is released once here,
                // on this error path, before returning.
                unsafe { FreeLibrary($module) };
                return Err(HcnError::Unavailable {
                    dll: $dll,
                    reason: format!("export {} is missing: {e}", name.to_string_lossy()),
                });
            }
        }
    }};
}

impl Exports {
    /// Loads `dll` from System32 only (no search of the current or application directory) and
    /// resolves every export, or says what is missing.
    pub(super) fn load(dll: &'static str) -> Result<Exports, HcnError> {
        let wide: Vec<u16> = dll.encode_utf16().chain(Some(0)).collect();
        // SAFETY: `wide` is a NUL-terminated UTF-16 file name that outlives the call; the file
        // handle argument must be null.
        let module = unsafe {
            LoadLibraryExW(
                wide.as_ptr(),
                std::ptr::null_mut(),
                LOAD_LIBRARY_SEARCH_SYSTEM32,
            )
        };
        if module.is_null() {
            let e = std::io::Error::last_os_error();
            return Err(HcnError::Unavailable {
                dll,
                reason: format!("cannot load it from System32: {e}"),
            });
        }
        let network = KindExports {
            enumerate: resolve!(module, dll, c"HcnEnumerateNetworks", EnumerateFn),
            open: resolve!(module, dll, c"HcnOpenNetwork", OpenFn),
            query: resolve!(module, dll, c"HcnQueryNetworkProperties", QueryFn),
            delete: resolve!(module, dll, c"HcnDeleteNetwork", DeleteFn),
            close: resolve!(module, dll, c"HcnCloseNetwork", CloseFn),
        };
        let endpoint = KindExports {
            enumerate: resolve!(module, dll, c"HcnEnumerateEndpoints", EnumerateFn),
            open: resolve!(module, dll, c"HcnOpenEndpoint", OpenFn),
            query: resolve!(module, dll, c"HcnQueryEndpointProperties", QueryFn),
            delete: resolve!(module, dll, c"HcnDeleteEndpoint", DeleteFn),
            close: resolve!(module, dll, c"HcnCloseEndpoint", CloseFn),
        };
        let namespace = KindExports {
            enumerate: resolve!(module, dll, c"HcnEnumerateNamespaces", EnumerateFn),
            open: resolve!(module, dll, c"HcnOpenNamespace", OpenFn),
            query: resolve!(module, dll, c"HcnQueryNamespaceProperties", QueryFn),
            delete: resolve!(module, dll, c"HcnDeleteNamespace", DeleteFn),
            close: resolve!(module, dll, c"HcnCloseNamespace", CloseFn),
        };
        Ok(Exports {
            module,
            network,
            endpoint,
            namespace,
            create_network: resolve!(module, dll, c"HcnCreateNetwork", CreateFn),
            create_endpoint: resolve!(module, dll, c"HcnCreateEndpoint", CreateEndpointFn),
            create_namespace: resolve!(module, dll, c"HcnCreateNamespace", CreateFn),
            modify_network: resolve!(module, dll, c"HcnModifyNetwork", ModifyFn),
            modify_namespace: resolve!(module, dll, c"HcnModifyNamespace", ModifyFn),
        })
    }
}

impl Drop for Exports {
    fn drop(&mut self) {
        // SAFETY: `module` was loaded by `load` and is released exactly once; no function
        // pointer of it is used after this value is gone (they live in it).
        unsafe { FreeLibrary(self.module) };
    }
}
