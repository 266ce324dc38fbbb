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

/// Characters a name may not contain: WQL would need escapes for them, which Windows reads but
/// Wine's WQL parser refuses. No name the agent uses (`antrea-nat`, adapter aliases such as
/// `vEthernet (Ethernet0)`) has them.
const UNQUOTABLE: [char; 3] = ['\'', '"', '\\'];

/// `text` as a single-quoted WQL string literal; `InvalidArgument` when it holds a quote or a
/// backslash.
fn wql_string(text: &str) -> Result<String> {
    if text.contains(UNQUOTABLE) {
        return Err(crate::WinOsError::InvalidArgument {
            function: "WQL",
            detail: format!("{text:?} contains a quote or a backslash"),
        });
    }
    Ok(format!("'{text}'"))
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

    /// The instances of `class` whose `property` is `name`.
    pub(crate) fn find_by(
        &self,
        class: &'static str,
        property: &str,
        name: &str,
    ) -> Result<Vec<IWbemClassObject>> {
        self.query(
            &format!(
                "SELECT * FROM {class} WHERE {property} = {}",
                wql_string(name)?
            ),
            class,
        )
    }

    /// The class definition `class` (to spawn instances or read method signatures); a class
    /// the namespace does not have is `Unsupported { function: class }`.
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
        .map_err(|e| match com_error("IWbemServices::GetObject", class, e) {
            crate::WinOsError::NotFound { .. } => {
                crate::WinOsError::Unsupported { function: class }
            }
            other => other,
        })?;
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

    /// Calls `method` on the object at `path` (an instance's `__PATH`, or the class name for a
    /// static method) with string arguments and returns its `ReturnValue` (0 when it has none).
    pub(crate) fn call_method(
        &self,
        class: &'static str,
        path: &str,
        method: &str,
        arguments: &[(&str, &str)],
    ) -> Result<u32> {
        let definition = self.class(class)?;
        let mut signature = None;
        let name = windows::core::HSTRING::from(method);
        // SAFETY: a NUL-terminated method name and an out slot for the input signature.
        unsafe { definition.GetMethod(&name, 0, &mut signature, std::ptr::null_mut()) }
            .map_err(|e| com_error("IWbemClassObject::GetMethod", class, e))?;
        let signature = signature.ok_or(crate::WinOsError::Unsupported { function: class })?;
        // SAFETY: `signature` is a live class object; flags must be 0.
        let input = unsafe { signature.SpawnInstance(0) }
            .map_err(|e| com_error("IWbemClassObject::SpawnInstance", class, e))?;
        for (argument, value) in arguments {
            put(&input, argument, &Variant::string(value), class)?;
        }
        let mut output = None;
        // SAFETY: valid BSTRs, a live input object and an out slot for the output object.
        unsafe {
            self.services.ExecMethod(
                &BSTR::from(path),
                &BSTR::from(method),
                WBEM_FLAG_RETURN_WBEM_COMPLETE,
                None,
                &input,
                Some(&mut output),
                None,
            )
        }
        .map_err(|e| com_error("IWbemServices::ExecMethod", class, e))?;
        match output {
            Some(output) => get(&output, "ReturnValue", class)?.to_u32(class, "ReturnValue"),
            None => Ok(0),
        }
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

#[cfg(test)]
mod tests {
    //! The session code against the WMI namespace every system has, `root\cimv2` (Wine too).

    use super::*;

    const CIMV2: &str = r"root\cimv2";

    #[test]
    fn queries_read_string_properties() {
        let session = Wmi::connect(CIMV2).unwrap();
        let systems = session
            .query(
                "SELECT * FROM Win32_OperatingSystem",
                "Win32_OperatingSystem",
            )
            .unwrap();
        assert!(!systems.is_empty());
        assert!(
            !get_text(&systems[0], "Caption", "Win32_OperatingSystem")
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn find_by_quotes_names_and_refuses_what_cannot_be_quoted() {
        let session = Wmi::connect(CIMV2).unwrap();
        let found = session
            .find_by("Win32_Process", "Name", "vEthernet (no such) #2")
            .unwrap();
        assert!(found.is_empty());
        for name in ["it's", "say \"hi\"", r"C:\x"] {
            let error = session.find_by("Win32_Process", "Name", name).unwrap_err();
            assert!(
                matches!(
                    error,
                    crate::WinOsError::InvalidArgument {
                        function: "WQL",
                        ..
                    }
                ),
                "{name}: {error}"
            );
        }
    }

    #[test]
    fn static_method_call_returns_its_return_value() {
        let session = Wmi::connect(CIMV2).unwrap();
        let code = session
            .call_method(
                "Win32_Process",
                "Win32_Process",
                "Create",
                &[("CommandLine", "cmd.exe /c exit 0")],
            )
            .unwrap();
        assert_eq!(code, 0);
    }

    #[test]
    fn missing_class_is_unsupported() {
        let session = Wmi::connect(CIMV2).unwrap();
        assert_eq!(
            session.class("MSFT_NoSuchClass").unwrap_err(),
            crate::WinOsError::Unsupported {
                function: "MSFT_NoSuchClass"
            }
        );
    }
}
