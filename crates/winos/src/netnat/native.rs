//! [`WmiNetNat`]: the [`NetNat`] calls over WMI: `MSFT_NetNat` in `root\StandardCimv2`, the
//! class `New-NetNat`/`Get-NetNat`/`Remove-NetNat` wrap. Each call opens its own session on the
//! calling thread.

use super::{NatInstance, NetNat};
use crate::native::com::Variant;
use crate::native::wmi::{self, STANDARD_CIMV2, Wmi};
use crate::{Result, WinOsError};

const CLASS: &str = "MSFT_NetNat";
const NAME: &str = "Name";
const PREFIX: &str = "InternalIPInterfaceAddressPrefix";

/// Host NAT instances through WMI.
#[derive(Debug, Default, Clone, Copy)]
pub struct WmiNetNat;

impl WmiNetNat {
    /// The NAT of this host.
    pub fn new() -> Self {
        WmiNetNat
    }
}

fn find(session: &Wmi, name: &str) -> Result<Vec<windows::Win32::System::Wmi::IWbemClassObject>> {
    session.find_by(CLASS, NAME, name)
}

impl NetNat for WmiNetNat {
    fn get(&self, name: &str) -> Result<Option<NatInstance>> {
        let session = Wmi::connect(STANDARD_CIMV2)?;
        let Some(object) = find(&session, name)?.into_iter().next() else {
            return Ok(None);
        };
        let prefix = wmi::get_text(&object, PREFIX, CLASS)?;
        let internal_prefix = prefix.parse().map_err(|_| WinOsError::Malformed {
            function: CLASS,
            detail: format!("{PREFIX} {prefix:?} is not a prefix"),
        })?;
        Ok(Some(NatInstance {
            name: wmi::get_text(&object, NAME, CLASS)?,
            internal_prefix,
        }))
    }

    fn create(&self, nat: &NatInstance) -> Result<()> {
        let session = Wmi::connect(STANDARD_CIMV2)?;
        if !find(&session, &nat.name)?.is_empty() {
            return Err(WinOsError::AlreadyExists {
                function: "MSFT_NetNat.Put",
                what: format!("NetNat {:?}", nat.name),
            });
        }
        let class = session.class(CLASS)?;
        // SAFETY: `class` is a live class object; flags must be 0.
        let instance = unsafe { class.SpawnInstance(0) }.map_err(|e| {
            crate::native::errors::com_error("IWbemClassObject::SpawnInstance", CLASS, e)
        })?;
        wmi::put(&instance, NAME, &Variant::string(&nat.name), CLASS)?;
        wmi::put(
            &instance,
            PREFIX,
            &Variant::string(&nat.internal_prefix.trunc().to_string()),
            CLASS,
        )?;
        session.create_instance(&instance, CLASS)?;
        tracing::debug!(name = nat.name, prefix = %nat.internal_prefix, "NetNat created");
        Ok(())
    }

    fn delete(&self, name: &str) -> Result<()> {
        let session = Wmi::connect(STANDARD_CIMV2)?;
        let found = find(&session, name)?;
        if found.is_empty() {
            return Err(WinOsError::NotFound {
                function: "MSFT_NetNat.Delete",
                what: format!("NetNat {name:?}"),
            });
        }
        for object in found {
            session.delete_instance(&wmi::get_text(&object, "__PATH", CLASS)?, CLASS)?;
        }
        Ok(())
    }
}
