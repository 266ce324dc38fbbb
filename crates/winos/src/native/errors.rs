//! Win32 error codes and `HRESULT`s to [`WinOsError`].

use windows::Win32::Foundation::{
    E_NOTIMPL, ERROR_INVALID_FUNCTION, ERROR_NOT_SUPPORTED, WIN32_ERROR,
};
use windows::Win32::System::Wmi::{
    WBEM_E_ALREADY_EXISTS, WBEM_E_INVALID_CLASS, WBEM_E_INVALID_NAMESPACE, WBEM_E_NOT_FOUND,
};
use windows::core::HRESULT;

use crate::{ERROR_FILE_NOT_FOUND, WinOsError};

/// `REGDB_E_CLASSNOTREG`: the COM class is not registered.
const REGDB_E_CLASSNOTREG: i32 = 0x8004_0154_u32 as i32;
/// `HRESULT_FROM_WIN32(ERROR_ALREADY_EXISTS)`.
const E_ALREADY_EXISTS: i32 = 0x8007_00B7_u32 as i32;

/// `Ok` for `NO_ERROR`, else the typed error for `code`; `what` names the object.
/// `ERROR_NOT_SUPPORTED` and `ERROR_INVALID_FUNCTION` (how Wine answers calls it implements
/// only for some inputs, e.g. IPv6 neighbors) are [`WinOsError::Unsupported`].
pub(crate) fn check_win32(
    function: &'static str,
    code: WIN32_ERROR,
    what: impl FnOnce() -> String,
) -> crate::Result<()> {
    if code.0 == 0 {
        return Ok(());
    }
    if code == ERROR_NOT_SUPPORTED || code == ERROR_INVALID_FUNCTION {
        return Err(WinOsError::Unsupported { function });
    }
    Err(match WinOsError::from_win32(function, code.0, what) {
        WinOsError::Os { function, code, .. } => WinOsError::Os {
            function,
            code,
            message: windows::core::Error::from_hresult(HRESULT::from_win32(code)).message(),
        },
        typed => typed,
    })
}

/// Whether `error` is `HRESULT_FROM_WIN32(ERROR_FILE_NOT_FOUND)`, how COM collections say "no
/// such item".
pub(crate) fn is_file_not_found(error: &windows::core::Error) -> bool {
    error.code() == HRESULT::from_win32(ERROR_FILE_NOT_FOUND)
}

/// The typed error for a failed COM or WMI call: missing namespaces and classes are
/// [`WinOsError::Unsupported`] (`missing` names them), as is `E_NOTIMPL` (naming `function`,
/// the method Wine implements as a stub); WMI "not found" / "already exists" get
/// their variants.
pub(crate) fn com_error(
    function: &'static str,
    missing: &'static str,
    error: windows::core::Error,
) -> WinOsError {
    let code = error.code().0;
    if error.code() == E_NOTIMPL {
        WinOsError::Unsupported { function }
    } else if code == WBEM_E_INVALID_NAMESPACE.0
        || code == WBEM_E_INVALID_CLASS.0
        || code == REGDB_E_CLASSNOTREG
    {
        WinOsError::Unsupported { function: missing }
    } else if code == WBEM_E_NOT_FOUND.0 {
        WinOsError::NotFound {
            function,
            what: error.message(),
        }
    } else if code == WBEM_E_ALREADY_EXISTS.0 || code == E_ALREADY_EXISTS {
        WinOsError::AlreadyExists {
            function,
            what: error.message(),
        }
    } else {
        WinOsError::Os {
            function,
            code: code as u32,
            message: error.message(),
        }
    }
}
