//! A WMI session on one namespace: queries, instance creation and deletion, and method calls,
//! for NetNat (`MSFT_NetNat`) and adapter renames (`MSFT_NetAdapter`).

use windows::Win32::System::Com::{
    CLSCTX_INPROC_SERVER, CoCreateInstance, CoSetProxyBlanket, EOAC_NONE, RPC_C_AUTHN_LEVEL_CALL,
    RPC_C_IMP_LEVEL_IMPERSONATE,
};
use windows::Win32::System::Rpc::{RPC_C_AUTHN_WINNT, RPC_C_AUTHZ_NONE};
use windows::Win32::System::Wmi::{
    IEnumWbemClassObject, IWbemClassObject, IWbemLocator, IWbemServices, WBEM_FLAG_CREATE_ONLY,
    WBEM_FLAG_FORWARD_ONLY, WBEM_FLAG_RETURN_IMMEDIATELY, WBEM_FLAG_RETURN_WBEM_COMPLETE,
    WBEM_GENERIC_FLAG_TYPE, WBEM_INFINITE, WbemLocator,
};
use windows::core::{BSTR, PCWSTR};

use super::com::{ComApartment, Variant};
use super::errors::com_error;
use crate::Result;

/// The namespace of the network management classes (`MSFT_NetNat`, `MSFT_NetAdapter`).
pub(crate) const STANDARD_CIMV2: &str = r"root\StandardCimv2";

/// A connection to one WMI namespace, valid on the thread that made it.
#[derive(Debug)]
pub(crate) struct Wmi {
    services: IWbemServices,
    // Dropped after `services` (fields drop in order): COM stays up while the proxy is released.
    _apartment: ComApartment,
}

/// Quotes `text` as a WQL string literal.
pub(crate) fn wql_string(text: &str) -> String {
    format!("'{}'", text.replace('\\', r"\\").replace('\'', r"\'"))
}

impl Wmi {
    /// Connects to `namespace` on the local machine. A namespace the system lacks (Wine has no
    /// `root\StandardCimv2`) is `Unsupported { function: namespace }`.
    pub(crate) fn connect(namespace: &'static str) -> Result<Self> {
        let apartment = ComApartment::enter()?;
        // SAFETY: COM is initialized on this thread (apartment); WbemLocator is a CLSID.
        let locator: IWbemLocator =
            unsafe { CoCreateInstance(&WbemLocator, None, CLSCTX_INPROC_SERVER) }
                .map_err(|e| com_error("CoCreateInstance(WbemLocator)", "WbemLocator", e))?;
        let empty = BSTR::new();
        // SAFETY: all strings are valid BSTRs (empty = current user, default locale/authority).
        let services = unsafe {
            locator.ConnectServer(
                &BSTR::from(namespace),
                &empty,
                &empty,
                &empty,
                0,
                &empty,
                None,
            )
        }
        .map_err(|e| com_error("IWbemLocator::ConnectServer", namespace, e))?;
        // SAFETY: `services` is a live interface; a null principal name is allowed. An in-process
        // provider has no proxy and refuses the blanket, which is harmless.
        if let Err(error) = unsafe {
            CoSetProxyBlanket(
                &services,
                RPC_C_AUTHN_WINNT,
                RPC_C_AUTHZ_NONE,
                PCWSTR::null(),
                RPC_C_AUTHN_LEVEL_CALL,
                RPC_C_IMP_LEVEL_IMPERSONATE,
                None,
                EOAC_NONE,
            )
        } {
            tracing::debug!(%error, namespace, "CoSetProxyBlanket refused; using the default blanket");
        }
        Ok(Wmi {
            services,
            _apartment: apartment,
        })
    }

    /// The instances a WQL `query` selects; `class` names the class for errors.
    pub(crate) fn query(&self, query: &str, class: &'static str) -> Result<Vec<IWbemClassObject>> {
        let flags =
            WBEM_GENERIC_FLAG_TYPE(WBEM_FLAG_FORWARD_ONLY.0 | WBEM_FLAG_RETURN_IMMEDIATELY.0);
        // SAFETY: valid BSTRs and flags; no context object.
        let objects: IEnumWbemClassObject = unsafe {
            self.services
                .ExecQuery(&BSTR::from("WQL"), &BSTR::from(query), flags, None)
        }
        .map_err(|e| com_error("IWbemServices::ExecQuery", class, e))?;
        let mut found = Vec::new();
        loop {
            let mut slot = [None];
            let mut returned = 0u32;
            // SAFETY: one output slot and a counter, both live for the call.
            let hr = unsafe { objects.Next(WBEM_INFINITE, &mut slot, &mut returned) };
            hr.ok()
                .map_err(|e| com_error("IEnumWbemClassObject::Next", class, e))?;
            match slot {
                [Some(object)] if returned == 1 => found.push(object),
                _ => return Ok(found),
            }
        }
    }

    /// The class definition `class` (to spawn instances or read method signatures).
    pub(crate) fn class(&self, class: &'static str) -> Result<IWbemClassObject> {
        let mut object = None;
        // SAFETY: valid BSTR path; `object` receives an owned interface.
        unsafe {
            self.services.GetObject(
                &BSTR::from(class),
                WBEM_FLAG_RETURN_WBEM_COMPLETE,
                None,
                Some(&mut object),
                None,
            )
        }
        .map_err(|e| com_error("IWbemServices::GetObject", class, e))?;
        object.ok_or(crate::WinOsError::Unsupported { function: class })
    }

    /// Stores a new instance (create only: an existing one is an error).
    pub(crate) fn create_instance(
        &self,
        instance: &IWbemClassObject,
        class: &'static str,
    ) -> Result<()> {
        // SAFETY: `instance` is a live object spawned from the class.
        unsafe {
            self.services.PutInstance(
                instance,
                WBEM_GENERIC_FLAG_TYPE(WBEM_FLAG_CREATE_ONLY.0),
                None,
                None,
            )
        }
        .map_err(|e| com_error("IWbemServices::PutInstance", class, e))
    }

    /// Deletes the instance at `path` (its `__PATH`).
    pub(crate) fn delete_instance(&self, path: &str, class: &'static str) -> Result<()> {
        // SAFETY: valid BSTR path, no context.
        unsafe {
            self.services.DeleteInstance(
                &BSTR::from(path),
                WBEM_FLAG_RETURN_WBEM_COMPLETE,
                None,
                None,
            )
        }
        .map_err(|e| com_error("IWbemServices::DeleteInstance", class, e))
    }

    /// Calls `method` of the instance at `path` with `input` and returns the output parameters.
    pub(crate) fn exec_method(
        &self,
        path: &str,
        method: &str,
        input: &IWbemClassObject,
        class: &'static str,
    ) -> Result<Option<IWbemClassObject>> {
        let mut output = None;
        // SAFETY: valid BSTRs, a live input object and an out slot for the output object.
        unsafe {
            self.services.ExecMethod(
                &BSTR::from(path),
                &BSTR::from(method),
                WBEM_FLAG_RETURN_WBEM_COMPLETE,
                None,
                input,
                Some(&mut output),
                None,
            )
        }
        .map_err(|e| com_error("IWbemServices::ExecMethod", class, e))?;
        Ok(output)
    }
}

/// Reads property `name` of `object`.
pub(crate) fn get(object: &IWbemClassObject, name: &str, class: &'static str) -> Result<Variant> {
    let mut value = Variant::empty();
    let wide = windows::core::HSTRING::from(name);
    // SAFETY: a NUL-terminated property name and an out VARIANT owned by `value`.
    unsafe { object.Get(&wide, 0, &mut value.0, None, None) }
        .map_err(|e| com_error("IWbemClassObject::Get", class, e))?;
    Ok(value)
}

/// Reads string property `name` of `object`; a missing value is an error.
pub(crate) fn get_text(
    object: &IWbemClassObject,
    name: &str,
    class: &'static str,
) -> Result<String> {
    get(object, name, class)?
        .to_text(class, name)?
        .ok_or_else(|| crate::WinOsError::Malformed {
            function: class,
            detail: format!("{name} is null"),
        })
}

/// Sets property `name` of `object` to `value`.
pub(crate) fn put(
    object: &IWbemClassObject,
    name: &str,
    value: &Variant,
    class: &'static str,
) -> Result<()> {
    let wide = windows::core::HSTRING::from(name);
    // SAFETY: a NUL-terminated property name and a valid VARIANT; type 0 = the property's own.
    unsafe { object.Put(&wide, 0, &value.0, 0) }
        .map_err(|e| com_error("IWbemClassObject::Put", class, e))
}
