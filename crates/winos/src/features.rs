//! The Windows optional features (`Microsoft-Hyper-V`, `Containers`): their install state from
//! WMI's `Win32_OptionalFeature` (namespace `root\cimv2`), what `Get-WindowsOptionalFeature`
//! reads. Windows only; `prepare-node` checks them.

use crate::Result;
use crate::native::wmi::{self, Wmi};

/// `Win32_OptionalFeature.InstallState` of an enabled feature (2 is disabled, 3 absent).
pub const INSTALL_STATE_ENABLED: u32 = 1;

const CLASS: &str = "Win32_OptionalFeature";
const CIMV2: &str = r"root\cimv2";

/// Reads optional features through WMI.
#[derive(Debug, Default, Clone, Copy)]
pub struct WmiFeatures;

impl WmiFeatures {
    /// A reader (each call opens its own WMI session on the calling thread).
    pub fn new() -> Self {
        WmiFeatures
    }

    /// The `InstallState` of the feature called `name`, `None` when WMI lists no such feature.
    /// A system without the class (Wine: a query of an unknown class answers nothing) is
    /// `Unsupported { function: "Win32_OptionalFeature" }`.
    pub fn install_state(&self, name: &str) -> Result<Option<u32>> {
        let session = Wmi::connect(CIMV2)?;
        session.class(CLASS)?;
        let found = session.find_by(CLASS, "Name", name)?;
        match found.first() {
            None => Ok(None),
            Some(feature) => wmi::get(feature, "InstallState", CLASS)?
                .to_u32(CLASS, "InstallState")
                .map(Some),
        }
    }
}
