//! The exports of `computenetwork.dll`, with the documented C prototypes of the ones
//! `hcn::HcnClient` resolves (crates/hcn/src/ffi/exports.rs), and the only `unsafe` code of the
//! shim: reading the caller's GUIDs and NUL-terminated UTF-16 strings, and writing handles and
//! `CoTaskMemAlloc`'d strings to its out pointers. Each export hands over to [`Service`].
//!
//! Handles are the service's handle numbers, carried as pointer-sized values and never
//! dereferenced. On success the ErrorRecord output is set to null; on failure it receives the
//! record HNS writes, and the export returns the failure's HRESULT.
//!
//! [`DllMain`] refuses to load in a process whose environment has [`ABSENT_ENV`] set to `1`, so
//! a test can run a program as on a host without HCN (Wine takes `WINEDLLOVERRIDES` from the
//! Unix environment only, so a child process cannot have the DLL disabled that way).
// The exports carry HCN's names.
#![allow(non_snake_case)]

use std::ffi::c_void;
use std::ptr;

use hcn::{Guid, Hresult};
use windows_sys::Win32::System::Com::CoTaskMemAlloc;
use windows_sys::core::{GUID, HRESULT, PCWSTR, PWSTR};

use crate::ABSENT_ENV;
use crate::service::{E_POINTER, Failure, Kind, Reply, Service};

/// `HCN_NETWORK`, `HCN_ENDPOINT`, `HCN_NAMESPACE`.
type RawHandle = *mut c_void;

/// `DLL_PROCESS_ATTACH`: the DLL is being loaded into a process.
const DLL_PROCESS_ATTACH: u32 = 1;

/// The DLL's entry point (called by the C runtime's): refuses `DLL_PROCESS_ATTACH` when
/// [`ABSENT_ENV`] is `1`. Reading the environment is allowed under the loader lock (it loads
/// no library).
#[unsafe(no_mangle)]
pub extern "system" fn DllMain(_instance: *mut c_void, reason: u32, _reserved: *mut c_void) -> i32 {
    let absent = reason == DLL_PROCESS_ATTACH
        && std::env::var_os(ABSENT_ENV).is_some_and(|value| value == "1");
    i32::from(!absent)
}

/// E_OUTOFMEMORY: CoTaskMemAlloc failed.
const E_OUTOFMEMORY: Hresult = Hresult(0x8007_000E);

fn hresult(code: Hresult) -> HRESULT {
    code.0 as HRESULT
}

/// The GUID at `id`.
///
/// # Safety
/// `id` is null or points to a readable `GUID`.
unsafe fn read_guid(id: *const GUID) -> Reply<Guid> {
    // SAFETY: the caller guarantees `id` is null or valid; `as_ref` checks null.
    let raw = unsafe { id.as_ref() }.ok_or_else(|| Failure::new(E_POINTER, "the Id is null"))?;
    Ok(Guid::from_fields(
        raw.data1, raw.data2, raw.data3, raw.data4,
    ))
}

/// The text at `text`; null is empty.
///
/// # Safety
/// `text` is null or points to a NUL-terminated UTF-16 string.
unsafe fn read_text(text: PCWSTR) -> Reply<String> {
    if text.is_null() {
        return Ok(String::new());
    }
    let mut len = 0;
    // SAFETY: the string is NUL-terminated; reading stops at the terminator.
    while unsafe { *text.add(len) } != 0 {
        len += 1;
    }
    // SAFETY: `len` units from `text` were just read.
    let units = unsafe { std::slice::from_raw_parts(text, len) };
    String::from_utf16(units).map_err(|e| Failure::new(Hresult::INVALID_ARG, e))
}

/// Stores `text` at `out` as a `CoTaskMemAlloc`'d NUL-terminated UTF-16 string, which the
/// caller frees with `CoTaskMemFree`; a null `out` receives nothing.
///
/// # Safety
/// `out` is null or points to a writable `PWSTR`.
unsafe fn write_text(out: *mut PWSTR, text: Option<&str>) -> Result<(), Hresult> {
    if out.is_null() {
        return Ok(());
    }
    let value = match text {
        None => ptr::null_mut(),
        Some(text) => {
            let units: Vec<u16> = text.encode_utf16().chain(Some(0)).collect();
            // SAFETY: CoTaskMemAlloc takes any size and returns null or that many bytes.
            let memory = unsafe { CoTaskMemAlloc(std::mem::size_of_val(units.as_slice())) };
            if memory.is_null() {
                return Err(E_OUTOFMEMORY);
            }
            let memory = memory.cast::<u16>();
            // SAFETY: `memory` has room for `units.len()` u16 values (CoTaskMemAlloc aligns
            // for any type) and is a new allocation, so it does not overlap `units`.
            unsafe { ptr::copy_nonoverlapping(units.as_ptr(), memory, units.len()) };
            memory
        }
    };
    // SAFETY: the caller guarantees `out` is writable.
    unsafe { out.write(value) };
    Ok(())
}

/// Writes the record of `reply` to `record` (null on success) and returns its HRESULT.
///
/// # Safety
/// `record` is null or points to a writable `PWSTR`.
unsafe fn finish<T>(reply: &Reply<T>, record: *mut PWSTR) -> HRESULT {
    let (code, text) = match reply {
        Ok(_) => (Hresult(0), None),
        Err(failure) => (failure.hresult, Some(failure.record_json())),
    };
    // SAFETY: the caller's guarantee on `record`.
    match unsafe { write_text(record, text.as_deref()) } {
        Ok(()) => hresult(code),
        Err(code) => hresult(code),
    }
}

/// Stores the handle of `reply` (null on failure) at `out`.
///
/// # Safety
/// `out` is null or points to a writable handle.
unsafe fn write_handle(out: *mut RawHandle, reply: Reply<usize>) -> Reply<usize> {
    if out.is_null() {
        return Err(Failure::new(E_POINTER, "the handle output is null"));
    }
    let value = reply.as_ref().map_or(ptr::null_mut(), |&handle| {
        ptr::without_provenance_mut(handle)
    });
    // SAFETY: `out` is writable (the caller's guarantee) and not null.
    unsafe { out.write(value) };
    reply
}

/// `HcnEnumerate*`.
///
/// # Safety
/// `query` is null or a NUL-terminated UTF-16 string; `objects` and `record` are null or
/// writable.
unsafe fn enumerate(kind: Kind, query: PCWSTR, objects: *mut PWSTR, record: *mut PWSTR) -> HRESULT {
    if objects.is_null() {
        let reply: Reply<()> = Err(Failure::new(E_POINTER, "the objects output is null"));
        // SAFETY: the caller's guarantee on `record`.
        return unsafe { finish(&reply, record) };
    }
    // SAFETY: the caller's guarantee on `query`.
    let reply = unsafe { read_text(query) }.and_then(|q| Service::global().enumerate(kind, &q));
    let reply = match &reply {
        // SAFETY: the caller's guarantee on `objects`.
        Ok(ids) => match unsafe { write_text(objects, Some(ids)) } {
            Ok(()) => reply,
            Err(code) => Err(Failure::new(code, "out of memory")),
        },
        Err(_) => reply,
    };
    // SAFETY: the caller's guarantee on `record`.
    unsafe { finish(&reply, record) }
}

/// `HcnOpen*`.
///
/// # Safety
/// `id` is null or a readable GUID; `handle` and `record` are null or writable.
unsafe fn open(kind: Kind, id: *const GUID, handle: *mut RawHandle, record: *mut PWSTR) -> HRESULT {
    // SAFETY: the caller's guarantees.
    let reply = unsafe { read_guid(id) }.and_then(|id| Service::global().open(kind, id));
    // SAFETY: the caller's guarantees.
    unsafe { finish(&write_handle(handle, reply), record) }
}

/// `HcnQuery*Properties`.
///
/// # Safety
/// `query` is null or a NUL-terminated UTF-16 string; `properties` and `record` are null or
/// writable.
unsafe fn query(
    kind: Kind,
    handle: RawHandle,
    query: PCWSTR,
    properties: *mut PWSTR,
    record: *mut PWSTR,
) -> HRESULT {
    if properties.is_null() {
        let reply: Reply<()> = Err(Failure::new(E_POINTER, "the properties output is null"));
        // SAFETY: the caller's guarantee on `record`.
        return unsafe { finish(&reply, record) };
    }
    // SAFETY: the caller's guarantee on `query`.
    let reply =
        unsafe { read_text(query) }.and_then(|q| Service::global().query(kind, handle.addr(), &q));
    // SAFETY: the caller's guarantee on `properties`.
    let written = unsafe { write_text(properties, reply.as_ref().ok().map(String::as_str)) };
    let reply = match written {
        Ok(()) => reply,
        Err(code) => Err(Failure::new(code, "out of memory")),
    };
    // SAFETY: the caller's guarantee on `record`.
    unsafe { finish(&reply, record) }
}

/// `HcnDelete*`.
///
/// # Safety
/// `id` is null or a readable GUID; `record` is null or writable.
unsafe fn delete(kind: Kind, id: *const GUID, record: *mut PWSTR) -> HRESULT {
    // SAFETY: the caller's guarantee on `id`.
    let reply = unsafe { read_guid(id) }.and_then(|id| Service::global().delete(kind, id));
    // SAFETY: the caller's guarantee on `record`.
    unsafe { finish(&reply, record) }
}

/// `HcnClose*`: no error record.
fn close(kind: Kind, handle: RawHandle) -> HRESULT {
    match Service::global().close(kind, handle.addr()) {
        Ok(()) => 0,
        Err(failure) => hresult(failure.hresult),
    }
}

/// `HcnCreateNetwork` / `HcnCreateNamespace`.
///
/// # Safety
/// `id` is null or a readable GUID; `settings` is null or a NUL-terminated UTF-16 string;
/// `handle` and `record` are null or writable.
unsafe fn create(
    create: fn(&Service, Guid, &str) -> Reply<usize>,
    id: *const GUID,
    settings: PCWSTR,
    handle: *mut RawHandle,
    record: *mut PWSTR,
) -> HRESULT {
    // SAFETY: the caller's guarantee on `id`.
    let id = unsafe { read_guid(id) };
    // SAFETY: the caller's guarantee on `settings`.
    let settings = unsafe { read_text(settings) };
    let reply = id.and_then(|id| create(Service::global(), id, &settings?));
    // SAFETY: the caller's guarantees on `handle` and `record`.
    unsafe { finish(&write_handle(handle, reply), record) }
}

/// `HcnModifyNetwork` / `HcnModifyNamespace`.
///
/// # Safety
/// `settings` is null or a NUL-terminated UTF-16 string; `record` is null or writable.
unsafe fn modify(
    modify: fn(&Service, usize, &str) -> Reply<()>,
    handle: RawHandle,
    settings: PCWSTR,
    record: *mut PWSTR,
) -> HRESULT {
    // SAFETY: the caller's guarantee on `settings`.
    let reply = unsafe { read_text(settings) }
        .and_then(|settings| modify(Service::global(), handle.addr(), &settings));
    // SAFETY: the caller's guarantee on `record`.
    unsafe { finish(&reply, record) }
}

/// Defines the five exports every kind has: `HcnEnumerate<Kinds>`, `HcnOpen<Kind>`,
/// `HcnQuery<Kind>Properties`, `HcnDelete<Kind>`, `HcnClose<Kind>`.
macro_rules! kind_exports {
    ($kind:expr, $enumerate:ident, $open:ident, $query:ident, $delete:ident, $close:ident) => {
        /// # Safety
        /// As the documented prototype: `query` null or NUL-terminated UTF-16; out pointers
        /// null or writable.
        #[unsafe(no_mangle)]
        pub unsafe extern "system" fn $enumerate(
            query: PCWSTR,
            objects: *mut PWSTR,
            record: *mut PWSTR,
        ) -> HRESULT {
            // SAFETY: the caller's guarantees, passed on.
            unsafe { enumerate($kind, query, objects, record) }
        }

        /// # Safety
        /// As the documented prototype: `id` null or a readable GUID; out pointers null or
        /// writable.
        #[unsafe(no_mangle)]
        pub unsafe extern "system" fn $open(
            id: *const GUID,
            handle: *mut RawHandle,
            record: *mut PWSTR,
        ) -> HRESULT {
            // SAFETY: the caller's guarantees, passed on.
            unsafe { open($kind, id, handle, record) }
        }

        /// # Safety
        /// As the documented prototype: `query` null or NUL-terminated UTF-16; out pointers
        /// null or writable.
        #[unsafe(no_mangle)]
        pub unsafe extern "system" fn $query(
            handle: RawHandle,
            query_text: PCWSTR,
            properties: *mut PWSTR,
            record: *mut PWSTR,
        ) -> HRESULT {
            // SAFETY: the caller's guarantees, passed on.
            unsafe { query($kind, handle, query_text, properties, record) }
        }

        /// # Safety
        /// As the documented prototype: `id` null or a readable GUID; `record` null or
        /// writable.
        #[unsafe(no_mangle)]
        pub unsafe extern "system" fn $delete(id: *const GUID, record: *mut PWSTR) -> HRESULT {
            // SAFETY: the caller's guarantees, passed on.
            unsafe { delete($kind, id, record) }
        }

        /// The handle is only looked up, never dereferenced.
        #[unsafe(no_mangle)]
        pub extern "system" fn $close(handle: RawHandle) -> HRESULT {
            close($kind, handle)
        }
    };
}

kind_exports!(
    Kind::Network,
    HcnEnumerateNetworks,
    HcnOpenNetwork,
    HcnQueryNetworkProperties,
    HcnDeleteNetwork,
    HcnCloseNetwork
);
kind_exports!(
    Kind::Endpoint,
    HcnEnumerateEndpoints,
    HcnOpenEndpoint,
    HcnQueryEndpointProperties,
    HcnDeleteEndpoint,
    HcnCloseEndpoint
);
kind_exports!(
    Kind::Namespace,
    HcnEnumerateNamespaces,
    HcnOpenNamespace,
    HcnQueryNamespaceProperties,
    HcnDeleteNamespace,
    HcnCloseNamespace
);

/// # Safety
/// As the documented prototype: `id` null or a readable GUID; `settings` null or
/// NUL-terminated UTF-16; out pointers null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn HcnCreateNetwork(
    id: *const GUID,
    settings: PCWSTR,
    network: *mut RawHandle,
    record: *mut PWSTR,
) -> HRESULT {
    // SAFETY: the caller's guarantees, passed on.
    unsafe { create(Service::create_network, id, settings, network, record) }
}

/// # Safety
/// As the documented prototype: `id` null or a readable GUID; `settings` null or
/// NUL-terminated UTF-16; out pointers null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn HcnCreateNamespace(
    id: *const GUID,
    settings: PCWSTR,
    namespace: *mut RawHandle,
    record: *mut PWSTR,
) -> HRESULT {
    // SAFETY: the caller's guarantees, passed on.
    unsafe { create(Service::create_namespace, id, settings, namespace, record) }
}

/// # Safety
/// As the documented prototype: `id` null or a readable GUID; `settings` null or
/// NUL-terminated UTF-16; out pointers null or writable. `network` is only looked up.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn HcnCreateEndpoint(
    network: RawHandle,
    id: *const GUID,
    settings: PCWSTR,
    endpoint: *mut RawHandle,
    record: *mut PWSTR,
) -> HRESULT {
    // SAFETY: the caller's guarantee on `id`.
    let id = unsafe { read_guid(id) };
    // SAFETY: the caller's guarantee on `settings`.
    let settings = unsafe { read_text(settings) };
    let reply = id.and_then(|id| Service::global().create_endpoint(network.addr(), id, &settings?));
    // SAFETY: the caller's guarantees on `endpoint` and `record`.
    unsafe { finish(&write_handle(endpoint, reply), record) }
}

/// # Safety
/// As the documented prototype: `settings` null or NUL-terminated UTF-16; `record` null or
/// writable. `network` is only looked up.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn HcnModifyNetwork(
    network: RawHandle,
    settings: PCWSTR,
    record: *mut PWSTR,
) -> HRESULT {
    // SAFETY: the caller's guarantees, passed on.
    unsafe { modify(Service::modify_network, network, settings, record) }
}

/// # Safety
/// As the documented prototype: `settings` null or NUL-terminated UTF-16; `record` null or
/// writable. `namespace` is only looked up.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn HcnModifyNamespace(
    namespace: RawHandle,
    settings: PCWSTR,
    record: *mut PWSTR,
) -> HRESULT {
    // SAFETY: the caller's guarantees, passed on.
    unsafe { modify(Service::modify_namespace, namespace, settings, record) }
}
