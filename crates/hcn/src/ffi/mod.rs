//! [`HcnClient`]: [`HcnApi`] over `computenetwork.dll`, the only `unsafe` code of the crate.
//!
//! The DLL is loaded at run time ([`exports`]), so the executable has no static import of it and
//! starts on hosts without HCN; those get one [`HcnError::Unavailable`] from
//! [`HcnClient::new`]. Every string HCN returns (properties, enumerations, error records) is
//! freed with `CoTaskMemFree` by [`OutString`]; every handle is closed by [`Handle`]'s `Drop`.

mod exports;

use std::ptr;

use serde::Serialize;
use serde::de::DeserializeOwned;
use windows_sys::Win32::System::Com::CoTaskMemFree;
use windows_sys::core::{GUID, HRESULT, PWSTR};

use self::exports::{CloseFn, Exports, KindExports, RawHandle};
use crate::api::HcnApi;
use crate::error::{HcnError, Operation, Result};
use crate::schema::{
    ErrorRecord, HostComputeEndpoint, HostComputeNamespace, HostComputeNetwork, HostComputeQuery,
    ModifyNamespaceSettingRequest, ModifyNetworkSettingRequest,
};
use crate::{Guid, Hresult};

/// The DLL of the HCN API.
const HCN_DLL: &str = "computenetwork.dll";

/// E_FAIL: the code reported when HNS returns S_OK with a failure record that has no code.
const E_FAIL: Hresult = Hresult(0x8000_4005);

/// The real HCN client. Holds `computenetwork.dll` loaded for its lifetime.
#[derive(Debug)]
pub struct HcnClient {
    exports: Exports,
}

impl HcnClient {
    /// Loads `computenetwork.dll` from System32 and resolves the HCN exports; a host without
    /// them gets [`HcnError::Unavailable`].
    pub fn new() -> Result<Self> {
        Self::load(HCN_DLL)
    }

    /// Loads the exports from `dll` (tests point it at a DLL that lacks them).
    pub(crate) fn load(dll: &'static str) -> Result<Self> {
        let exports = Exports::load(dll)?;
        tracing::debug!(dll, "HCN API loaded");
        Ok(HcnClient { exports })
    }
}

/// A string HCN allocated and handed to us; freed with `CoTaskMemFree` on drop.
struct OutString(PWSTR);

impl OutString {
    fn new() -> Self {
        OutString(ptr::null_mut())
    }

    fn as_out(&mut self) -> *mut PWSTR {
        &mut self.0
    }

    /// The text, or `None` for a null pointer.
    fn text(&self) -> Option<String> {
        if self.0.is_null() {
            return None;
        }
        let mut len = 0;
        // SAFETY: HCN returns NUL-terminated UTF-16 strings; reading stops at the terminator,
        // which lies inside the allocation.
        while unsafe { *self.0.add(len) } != 0 {
            len += 1;
        }
        // SAFETY: `len` units from `self.0` were just read and are initialised; the memory is
        // ours until Drop.
        let units = unsafe { std::slice::from_raw_parts(self.0, len) };
        Some(String::from_utf16_lossy(units))
    }
}

impl Drop for OutString {
    fn drop(&mut self) {
        if !self.0.is_null() {
            // SAFETY: the pointer was allocated by HCN with CoTaskMemAlloc (its documented
            // contract) and is freed exactly once, here.
            unsafe { CoTaskMemFree(self.0.cast()) };
        }
    }
}

/// An open HCN object handle, closed on drop.
struct Handle {
    raw: RawHandle,
    close: CloseFn,
}

impl Drop for Handle {
    fn drop(&mut self) {
        // SAFETY: `raw` was returned by the matching HcnOpen*/HcnCreate* and is closed exactly
        // once, with the close function of the same kind.
        let hr = unsafe { (self.close)(self.raw) };
        if hr < 0 {
            tracing::warn!(hresult = %Hresult(hr as u32), "closing an HCN handle failed");
        }
    }
}

fn wide(text: &str) -> Vec<u16> {
    text.encode_utf16().chain(Some(0)).collect()
}

fn raw_guid(id: Guid) -> GUID {
    let (data1, data2, data3, data4) = id.fields();
    GUID {
        data1,
        data2,
        data3,
        data4,
    }
}

/// `document` as NUL-terminated UTF-16 JSON, the form every HCN call takes.
fn to_json<T: Serialize>(document: &T, operation: Operation, subject: &str) -> Result<Vec<u16>> {
    serde_json::to_string(document)
        .map(|text| wide(&text))
        .map_err(|source| HcnError::Encode {
            operation,
            subject: subject.to_owned(),
            source,
        })
}

/// Turns an HCN call's HRESULT and error record into a result. Like Microsoft's own client, a
/// failure record counts as failure even when the HRESULT is S_OK.
fn check(operation: Operation, subject: &str, hr: HRESULT, record: OutString) -> Result<()> {
    let record = record.text().filter(|t| !t.trim().is_empty()).map(|text| {
        serde_json::from_str::<ErrorRecord>(&text).unwrap_or(ErrorRecord {
            success: false,
            error: text,
            error_code: None,
        })
    });
    let hresult = if hr < 0 {
        Hresult(hr as u32)
    } else {
        match &record {
            Some(r) if !r.success => r.error_code.map_or(E_FAIL, Hresult),
            _ => return Ok(()),
        }
    };
    let error = HcnError::Hns {
        operation,
        subject: subject.to_owned(),
        hresult,
        record,
    };
    tracing::debug!(%error, "HCN call failed");
    Err(error)
}

fn decode<T: DeserializeOwned>(
    operation: Operation,
    subject: &str,
    text: Option<String>,
) -> Result<T> {
    let document = text.unwrap_or_default();
    crate::schema::decode(&document).map_err(|source| HcnError::Decode {
        operation,
        subject: subject.to_owned(),
        document,
        source,
    })
}

impl HcnClient {
    fn open(&self, kind: &KindExports, operation: Operation, id: Guid) -> Result<Handle> {
        let guid = raw_guid(id);
        let mut raw: RawHandle = ptr::null_mut();
        let mut record = OutString::new();
        // SAFETY: `guid` and both out pointers are valid for the call.
        let hr = unsafe { (kind.open)(&guid, &mut raw, record.as_out()) };
        check(operation, &id.to_string(), hr, record)?;
        Ok(Handle {
            raw,
            close: kind.close,
        })
    }

    fn query<T: DeserializeOwned>(
        &self,
        kind: &KindExports,
        operation: Operation,
        handle: &Handle,
        subject: &str,
    ) -> Result<T> {
        let query = to_json(&HostComputeQuery::default(), operation, subject)?;
        let mut properties = OutString::new();
        let mut record = OutString::new();
        // SAFETY: `handle` is open; `query` is NUL-terminated and outlives the call; the out
        // pointers are valid.
        let hr = unsafe {
            (kind.query)(
                handle.raw,
                query.as_ptr(),
                properties.as_out(),
                record.as_out(),
            )
        };
        check(operation, subject, hr, record)?;
        decode(operation, subject, properties.text())
    }

    fn open_and_query<T: DeserializeOwned>(
        &self,
        kind: &KindExports,
        operation: Operation,
        id: Guid,
    ) -> Result<T> {
        let handle = self.open(kind, operation, id)?;
        self.query(kind, operation, &handle, &id.to_string())
    }

    fn enumerate(
        &self,
        kind: &KindExports,
        operation: Operation,
        query: &HostComputeQuery,
    ) -> Result<Vec<Guid>> {
        let subject = query.filter.clone();
        let text = to_json(query, operation, &subject)?;
        let mut ids = OutString::new();
        let mut record = OutString::new();
        // SAFETY: `text` is NUL-terminated and outlives the call; the out pointers are valid.
        let hr = unsafe { (kind.enumerate)(text.as_ptr(), ids.as_out(), record.as_out()) };
        check(operation, &subject, hr, record)?;
        // HCN answers "none" with a null pointer, an empty string or `[]`/`null`.
        match ids.text().filter(|t| !t.trim().is_empty()) {
            None => Ok(Vec::new()),
            Some(text) => decode::<Option<Vec<Guid>>>(operation, &subject, Some(text))
                .map(Option::unwrap_or_default),
        }
    }

    fn delete(&self, kind: &KindExports, operation: Operation, id: Guid) -> Result<()> {
        let guid = raw_guid(id);
        let mut record = OutString::new();
        // SAFETY: `guid` and the out pointer are valid for the call.
        let hr = unsafe { (kind.delete)(&guid, record.as_out()) };
        check(operation, &id.to_string(), hr, record)
    }

    /// Opens object `id` and applies the modify `request` to it.
    fn modify<T: Serialize>(
        &self,
        kind: &KindExports,
        modify: exports::ModifyFn,
        operation: Operation,
        id: Guid,
        request: &T,
    ) -> Result<()> {
        let settings = to_json(request, operation, &id.to_string())?;
        let handle = self.open(kind, operation, id)?;
        let mut record = OutString::new();
        // SAFETY: the handle is open; `settings` is NUL-terminated and outlives the call; the
        // out pointer is valid.
        let hr = unsafe { modify(handle.raw, settings.as_ptr(), record.as_out()) };
        check(operation, &id.to_string(), hr, record)
    }

    /// Creates a network or namespace from `document` and returns its properties.
    fn create<T: Serialize + DeserializeOwned>(
        &self,
        kind: &KindExports,
        create: exports::CreateFn,
        operation: Operation,
        subject: &str,
        document: &T,
    ) -> Result<T> {
        let settings = to_json(document, operation, subject)?;
        let guid = raw_guid(Guid::NIL);
        let mut raw: RawHandle = ptr::null_mut();
        let mut record = OutString::new();
        // SAFETY: `guid` and `settings` (NUL-terminated) outlive the call; the out pointers are
        // valid.
        let hr = unsafe { create(&guid, settings.as_ptr(), &mut raw, record.as_out()) };
        check(operation, subject, hr, record)?;
        let handle = Handle {
            raw,
            close: kind.close,
        };
        self.query(kind, operation, &handle, subject)
    }
}

impl HcnApi for HcnClient {
    fn create_network(&self, network: &HostComputeNetwork) -> Result<HostComputeNetwork> {
        let e = &self.exports;
        self.create(
            &e.network,
            e.create_network,
            Operation::CreateNetwork,
            &network.name,
            network,
        )
    }

    fn query_network(&self, id: Guid) -> Result<HostComputeNetwork> {
        self.open_and_query(&self.exports.network, Operation::QueryNetwork, id)
    }

    fn enumerate_networks(&self, query: &HostComputeQuery) -> Result<Vec<Guid>> {
        self.enumerate(&self.exports.network, Operation::EnumerateNetworks, query)
    }

    fn delete_network(&self, id: Guid) -> Result<()> {
        self.delete(&self.exports.network, Operation::DeleteNetwork, id)
    }

    fn modify_network(&self, id: Guid, request: &ModifyNetworkSettingRequest) -> Result<()> {
        let e = &self.exports;
        self.modify(
            &e.network,
            e.modify_network,
            Operation::ModifyNetwork,
            id,
            request,
        )
    }

    fn create_endpoint(
        &self,
        network: Guid,
        endpoint: &HostComputeEndpoint,
    ) -> Result<HostComputeEndpoint> {
        let operation = Operation::CreateEndpoint;
        let network_handle = self.open(&self.exports.network, operation, network)?;
        let document = HostComputeEndpoint {
            host_compute_network: network,
            ..endpoint.clone()
        };
        let settings = to_json(&document, operation, &endpoint.name)?;
        let guid = raw_guid(Guid::NIL);
        let mut raw: RawHandle = ptr::null_mut();
        let mut record = OutString::new();
        // SAFETY: the network handle is open; `guid` and `settings` (NUL-terminated) outlive
        // the call; the out pointers are valid.
        let hr = unsafe {
            (self.exports.create_endpoint)(
                network_handle.raw,
                &guid,
                settings.as_ptr(),
                &mut raw,
                record.as_out(),
            )
        };
        check(operation, &endpoint.name, hr, record)?;
        let handle = Handle {
            raw,
            close: self.exports.endpoint.close,
        };
        self.query(&self.exports.endpoint, operation, &handle, &endpoint.name)
    }

    fn query_endpoint(&self, id: Guid) -> Result<HostComputeEndpoint> {
        self.open_and_query(&self.exports.endpoint, Operation::QueryEndpoint, id)
    }

    fn enumerate_endpoints(&self, query: &HostComputeQuery) -> Result<Vec<Guid>> {
        self.enumerate(&self.exports.endpoint, Operation::EnumerateEndpoints, query)
    }

    fn delete_endpoint(&self, id: Guid) -> Result<()> {
        self.delete(&self.exports.endpoint, Operation::DeleteEndpoint, id)
    }

    fn create_namespace(&self, namespace: &HostComputeNamespace) -> Result<HostComputeNamespace> {
        let e = &self.exports;
        let subject = format!("{:?}", namespace.kind);
        self.create(
            &e.namespace,
            e.create_namespace,
            Operation::CreateNamespace,
            &subject,
            namespace,
        )
    }

    fn query_namespace(&self, id: Guid) -> Result<HostComputeNamespace> {
        self.open_and_query(&self.exports.namespace, Operation::QueryNamespace, id)
    }

    fn enumerate_namespaces(&self, query: &HostComputeQuery) -> Result<Vec<Guid>> {
        self.enumerate(
            &self.exports.namespace,
            Operation::EnumerateNamespaces,
            query,
        )
    }

    fn delete_namespace(&self, id: Guid) -> Result<()> {
        self.delete(&self.exports.namespace, Operation::DeleteNamespace, id)
    }

    fn modify_namespace(&self, id: Guid, request: &ModifyNamespaceSettingRequest) -> Result<()> {
        let e = &self.exports;
        self.modify(
            &e.namespace,
            e.modify_namespace,
            Operation::ModifyNamespace,
            id,
            request,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A DLL that exists in System32 but has no HCN export: the error names the first missing
    /// export and the DLL, and nothing panics or aborts.
    #[test]
    fn a_dll_without_the_exports_is_unavailable() {
        match HcnClient::load("kernel32.dll") {
            Err(HcnError::Unavailable { dll, reason }) => {
                assert_eq!(dll, "kernel32.dll");
                assert!(reason.contains("HcnEnumerateNetworks"), "{reason}");
            }
            other => panic!("expected Unavailable, got {other:?}"),
        }
    }

    #[test]
    fn a_missing_dll_is_unavailable() {
        match HcnClient::load("antrea-rs-no-such.dll") {
            Err(HcnError::Unavailable { dll, reason }) => {
                assert_eq!(dll, "antrea-rs-no-such.dll");
                assert!(reason.contains("System32"), "{reason}");
            }
            other => panic!("expected Unavailable, got {other:?}"),
        }
    }

    #[test]
    fn record_with_s_ok_is_a_failure_and_the_code_comes_from_it() {
        let text = wide(r#"{"Success":false,"Error":"Network not found ","ErrorCode":2151350273}"#);
        // The record is built as HCN would hand it over; CoTaskMemFree in Drop must accept it,
        // so it is copied into CoTaskMemAlloc'd memory.
        let record = co_task_string(&text);
        let error = check(Operation::QueryNetwork, "n", 0, record).unwrap_err();
        assert_eq!(error.hresult(), Some(Hresult::NETWORK_NOT_FOUND));
        assert_eq!(
            error.to_string(),
            "HcnQueryNetworkProperties n: 0x803B0001 (HCN_E_NETWORK_NOT_FOUND): Network not found"
        );
        assert!(check(Operation::QueryNetwork, "n", 0, OutString::new()).is_ok());
        let failed = check(
            Operation::DeleteNetwork,
            "n",
            0x8007_0490_u32 as i32,
            OutString::new(),
        )
        .unwrap_err();
        assert!(failed.is_not_found());
    }

    #[test]
    fn guid_layout_matches_windows() {
        let id: Guid = "583CC151-73EC-4A6A-8B47-578297AD7623".parse().unwrap();
        let expected = GUID::from_u128(0x583CC151_73EC_4A6A_8B47_578297AD7623);
        let raw = raw_guid(id);
        assert_eq!(
            (raw.data1, raw.data2, raw.data3, raw.data4),
            (
                expected.data1,
                expected.data2,
                expected.data3,
                expected.data4
            )
        );
    }

    fn co_task_string(units: &[u16]) -> OutString {
        use windows_sys::Win32::System::Com::CoTaskMemAlloc;
        let bytes = std::mem::size_of_val(units);
        // SAFETY: CoTaskMemAlloc returns `bytes` writable bytes or null (checked).
        let memory = unsafe { CoTaskMemAlloc(bytes) }.cast::<u16>();
        assert!(!memory.is_null());
        // SAFETY: `memory` has room for `units.len()` u16 values and does not overlap `units`.
        unsafe { ptr::copy_nonoverlapping(units.as_ptr(), memory, units.len()) };
        OutString(memory)
    }
}
