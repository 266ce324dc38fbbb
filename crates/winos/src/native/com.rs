//! COM on the calling thread: an apartment guard and the `VARIANT` values WMI properties use.

use std::mem::ManuallyDrop;

use windows::Win32::Foundation::RPC_E_CHANGED_MODE;
use windows::Win32::System::Com::{COINIT_MULTITHREADED, CoInitializeEx, CoUninitialize};
use windows::Win32::System::Variant::{
    VARIANT, VT_BSTR, VT_EMPTY, VT_I4, VT_NULL, VT_UI4, VariantClear,
};
use windows::core::BSTR;

use crate::{Result, WinOsError};

/// COM initialized on this thread for as long as the guard lives. The calls here are short and
/// made from whichever thread the caller uses, so each enters the multithreaded apartment and
/// leaves it afterwards; a thread already in a single-threaded apartment is used as it is.
#[derive(Debug)]
pub(crate) struct ComApartment {
    initialized: bool,
}

impl ComApartment {
    /// Enters the multithreaded apartment (or uses the thread's existing apartment).
    pub(crate) fn enter() -> Result<Self> {
        // SAFETY: no reserved pointer; balanced by CoUninitialize in Drop when it succeeded.
        let hr = unsafe { CoInitializeEx(None, COINIT_MULTITHREADED) };
        if hr == RPC_E_CHANGED_MODE {
            return Ok(ComApartment { initialized: false });
        }
        hr.ok().map_err(|e| WinOsError::Os {
            function: "CoInitializeEx",
            code: e.code().0 as u32,
            message: e.message(),
        })?;
        Ok(ComApartment { initialized: true })
    }
}

impl Drop for ComApartment {
    fn drop(&mut self) {
        if self.initialized {
            // SAFETY: balances the successful CoInitializeEx of this guard; guards live in one
            // call on one thread (they are locals of the native calls, never moved across threads).
            unsafe { CoUninitialize() }
        }
    }
}

/// An owned `VARIANT`, cleared on drop.
pub(crate) struct Variant(pub(crate) VARIANT);

impl std::fmt::Debug for Variant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Variant(vt={})", self.vt())
    }
}

impl Variant {
    /// An empty variant, for out-parameters.
    pub(crate) fn empty() -> Self {
        Variant(VARIANT::default())
    }

    /// A `VT_BSTR` variant holding `text`.
    pub(crate) fn string(text: &str) -> Self {
        let mut variant = VARIANT::default();
        // SAFETY: the default VARIANT is VT_EMPTY with zeroed storage; setting the tag and the
        // matching union member yields a valid VT_BSTR that VariantClear frees in Drop.
        unsafe {
            let inner = &mut *variant.Anonymous.Anonymous;
            inner.vt = VT_BSTR;
            inner.Anonymous.bstrVal = ManuallyDrop::new(BSTR::from(text));
        }
        Variant(variant)
    }

    fn vt(&self) -> u16 {
        // SAFETY: `vt` is valid in every VARIANT.
        unsafe { self.0.Anonymous.Anonymous.vt.0 }
    }

    /// The text of a `VT_BSTR` variant; `None` for `VT_NULL`/`VT_EMPTY`; an error otherwise.
    pub(crate) fn to_text(&self, function: &'static str, property: &str) -> Result<Option<String>> {
        match self.vt() {
            vt if vt == VT_BSTR.0 => {
                // SAFETY: the tag says the union holds a BSTR.
                Ok(Some(unsafe {
                    self.0.Anonymous.Anonymous.Anonymous.bstrVal.to_string()
                }))
            }
            vt if vt == VT_NULL.0 || vt == VT_EMPTY.0 => Ok(None),
            vt => Err(WinOsError::Malformed {
                function,
                detail: format!("{property} has variant type {vt}, not a string"),
            }),
        }
    }

    /// The value of a `VT_I4`/`VT_UI4` variant (WMI returns `uint32` as `VT_I4`).
    pub(crate) fn to_u32(&self, function: &'static str, property: &str) -> Result<u32> {
        match self.vt() {
            vt if vt == VT_I4.0 || vt == VT_UI4.0 => {
                // SAFETY: the tag says the union holds a 32-bit integer; the bits are reinterpreted.
                Ok(unsafe { self.0.Anonymous.Anonymous.Anonymous.ulVal })
            }
            vt => Err(WinOsError::Malformed {
                function,
                detail: format!("{property} has variant type {vt}, not an integer"),
            }),
        }
    }
}

impl Drop for Variant {
    fn drop(&mut self) {
        // SAFETY: the variant is valid (built here or filled by a COM call); clearing frees what
        // it owns. A failure only means an unknown type, which leaks nothing we own.
        let _ = unsafe { VariantClear(&mut self.0) };
    }
}
