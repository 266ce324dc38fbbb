//! The host NAT (`MSFT_NetNat`, what `New-NetNat` creates) that masquerades Pod traffic leaving
//! the Node in noEncap/hybrid setups: [`NetNat`] is what the agent calls, `FakeNetNat` (feature
//! `fake`) a stateful stand-in for tests and `WmiNetNat` (Windows only) talks to WMI
//! `root\StandardCimv2`.

#[cfg(feature = "fake")]
mod fake;
#[cfg(windows)]
mod native;

use ipnet::IpNet;

#[cfg(feature = "fake")]
pub use fake::{FakeNetNat, NetNatCall};
#[cfg(windows)]
pub use native::WmiNetNat;

use crate::{Ensured, Result};

/// The NAT name the agent owns.
pub const ANTREA_NAT: &str = "antrea-nat";

/// One NetNat instance as far as the agent uses it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NatInstance {
    /// The instance name (`Name`).
    pub name: String,
    /// The internal prefix whose traffic is translated (`InternalIPInterfaceAddressPrefix`).
    pub internal_prefix: IpNet,
}

/// The NetNat calls the agent makes. All calls block.
pub trait NetNat: Send + Sync + std::fmt::Debug {
    /// The instance called `name`, if there is one.
    fn get(&self, name: &str) -> Result<Option<NatInstance>>;

    /// Creates an instance; `AlreadyExists` when one is called `nat.name`.
    fn create(&self, nat: &NatInstance) -> Result<()>;

    /// Deletes the instance called `name`; `NotFound` when there is none.
    fn delete(&self, name: &str) -> Result<()>;

    /// Makes the instance called `name` translate `internal_prefix`: creates it, keeps it, or
    /// (another prefix) deletes and re-creates it, as Antrea does.
    fn ensure(&self, name: &str, internal_prefix: IpNet) -> Result<Ensured> {
        let wanted = NatInstance {
            name: name.to_owned(),
            internal_prefix: internal_prefix.trunc(),
        };
        let outcome = match self.get(name)? {
            Some(existing) if existing.internal_prefix.trunc() == wanted.internal_prefix => {
                return Ok(Ensured::Unchanged);
            }
            Some(_) => {
                self.delete(name)?;
                Ensured::Replaced
            }
            None => Ensured::Created,
        };
        self.create(&wanted)?;
        tracing::info!(name, prefix = %wanted.internal_prefix, ?outcome, "NetNat ensured");
        Ok(outcome)
    }

    /// Makes the instance called `name` absent; returns whether there was one.
    fn remove(&self, name: &str) -> Result<bool> {
        match self.delete(name) {
            Ok(()) => {
                tracing::info!(name, "NetNat removed");
                Ok(true)
            }
            Err(error) if error.is_not_found() => Ok(false),
            Err(error) => Err(error),
        }
    }
}
