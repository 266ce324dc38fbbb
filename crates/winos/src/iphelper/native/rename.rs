//! Adapter rename through WMI: `MSFT_NetAdapter.Rename(NewName)` in `root\StandardCimv2`, the
//! method `Rename-NetAdapter` calls. IP Helper has no rename: `ConvertInterfaceLuidToAlias` only
//! reads the alias and `SetIfEntry` cannot change it.

use crate::native::wmi::{self, STANDARD_CIMV2, Wmi};
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
    let by_name = |name: &str| session.find_by(CLASS, "Name", name);
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
    let path = wmi::get_text(&adapter, "__PATH", CLASS)?;
    let code = session.call_method(CLASS, &path, "Rename", &[("NewName", new_alias)])?;
    if code != 0 {
        return Err(WinOsError::Os {
            function: FUNCTION,
            code,
            message: "the method returned a failure code".into(),
        });
    }
    tracing::info!(alias, new_alias, "adapter renamed");
    Ok(())
}
