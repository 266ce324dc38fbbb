//! Adapter rename through WMI: `MSFT_NetAdapter.Rename(NewName)` in `root\StandardCimv2`, the
//! method `Rename-NetAdapter` calls. IP Helper has no rename: `ConvertInterfaceLuidToAlias` only
//! reads the alias and `SetIfEntry` cannot change it.

use crate::native::com::Variant;
use crate::native::errors::com_error;
use crate::native::wmi::{self, STANDARD_CIMV2, Wmi, wql_string};
use crate::{Result, WinOsError};

const CLASS: &str = "MSFT_NetAdapter";
const FUNCTION: &str = "MSFT_NetAdapter.Rename";

/// Renames the adapter called `alias` to `new_alias`.
pub(super) fn rename(alias: &str, new_alias: &str) -> Result<()> {
    if new_alias.is_empty() {
        return Err(WinOsError::InvalidArgument {
            function: FUNCTION,
            detail: "the new name is empty".into(),
        });
    }
    let session = Wmi::connect(STANDARD_CIMV2)?;
    let by_name = |name: &str| {
        session.query(
            &format!("SELECT * FROM {CLASS} WHERE Name = {}", wql_string(name)),
            CLASS,
        )
    };
    let Some(adapter) = by_name(alias)?.into_iter().next() else {
        return Err(WinOsError::NotFound {
            function: FUNCTION,
            what: format!("adapter {alias:?}"),
        });
    };
    if alias == new_alias {
        return Ok(());
    }
    if !by_name(new_alias)?.is_empty() {
        return Err(WinOsError::AlreadyExists {
            function: FUNCTION,
            what: format!("adapter {new_alias:?}"),
        });
    }
    let class = session.class(CLASS)?;
    let mut input = None;
    // SAFETY: a NUL-terminated method name and an out slot for the input signature.
    unsafe {
        class.GetMethod(
            windows::core::w!("Rename"),
            0,
            &mut input,
            std::ptr::null_mut(),
        )
    }
    .map_err(|e| com_error("IWbemClassObject::GetMethod", CLASS, e))?;
    let signature = input.ok_or(WinOsError::Unsupported { function: FUNCTION })?;
    // SAFETY: `signature` is a live class object; flags must be 0.
    let parameters = unsafe { signature.SpawnInstance(0) }
        .map_err(|e| com_error("IWbemClassObject::SpawnInstance", CLASS, e))?;
    wmi::put(&parameters, "NewName", &Variant::string(new_alias), CLASS)?;
    let path = wmi::get_text(&adapter, "__PATH", CLASS)?;
    let output = session.exec_method(&path, "Rename", &parameters, CLASS)?;
    if let Some(output) = output {
        let code = wmi::get(&output, "ReturnValue", CLASS)?.to_u32(FUNCTION, "ReturnValue")?;
        if code != 0 {
            return Err(WinOsError::Os {
                function: FUNCTION,
                code,
                message: "the method returned a failure code".into(),
            });
        }
    }
    tracing::info!(alias, new_alias, "adapter renamed");
    Ok(())
}
