//! The IP Helper side of the host: adapters, routes, unicast addresses, neighbors, per-interface
//! IP settings and adapter renames. [`IpHelper`] is what the agent calls; `FakeIpHelper`
//! (feature `fake`) is a stateful stand-in for tests and `NativeIpHelper` (Windows only) calls
//! `iphlpapi.dll` (and WMI for the rename).
//!
//! Calls mirror Windows: a create of something that exists fails with
//! [`WinOsError::AlreadyExists`](crate::WinOsError::AlreadyExists), a delete of something missing
//! with [`WinOsError::NotFound`](crate::WinOsError::NotFound). Callers build idempotency on those
//! (or use the `ensure_*` helpers here, which do exactly that).

#[cfg(feature = "fake")]
mod fake;
#[cfg(windows)]
mod native;

use std::net::IpAddr;

use model::MacAddr;

#[cfg(feature = "fake")]
pub use fake::{FakeIpHelper, IpHelperCall, IpHelperOp};
#[cfg(windows)]
pub use native::NativeIpHelper;

use crate::model::{
    Adapter, IpFamily, IpInterface, IpInterfaceChange, Neighbor, Route, RouteKey, UnicastAddress,
};
use crate::{Ensured, Result};

/// The IP Helper calls the agent makes. All calls block (run them on a blocking thread from
/// async code).
pub trait IpHelper: Send + Sync + std::fmt::Debug {
    /// Every adapter of the host (`GetAdaptersAddresses`, including down adapters and all
    /// compartments), with IPv4 addresses, DNS settings and status.
    fn adapters(&self) -> Result<Vec<Adapter>>;

    /// Every IPv4 and IPv6 route (`GetIpForwardTable2`).
    fn routes(&self) -> Result<Vec<Route>>;

    /// Adds `route` (`CreateIpForwardEntry2`). Fails with `NotFound` when its interface does not
    /// exist and `AlreadyExists` when a route with the same [`RouteKey`] does.
    fn create_route(&self, route: &Route) -> Result<()>;

    /// Removes the route `key` names (`DeleteIpForwardEntry2`); `NotFound` when there is none.
    fn delete_route(&self, key: &RouteKey) -> Result<()>;

    /// Every unicast address of every interface (`GetUnicastIpAddressTable`).
    fn unicast_addresses(&self) -> Result<Vec<UnicastAddress>>;

    /// Binds an address (`CreateUnicastIpAddressEntry`, permanent, not skipped as source);
    /// `NotFound` for an unknown interface, `AlreadyExists` when the interface has the address.
    fn create_unicast_address(&self, address: &UnicastAddress) -> Result<()>;

    /// Unbinds an address (`DeleteUnicastIpAddressEntry`); the prefix length is not compared.
    fn delete_unicast_address(&self, address: &UnicastAddress) -> Result<()>;

    /// Every neighbor cache entry of a family (`GetIpNetTable2`).
    fn neighbors(&self, family: IpFamily) -> Result<Vec<Neighbor>>;

    /// Adds a permanent neighbor entry (`CreateIpNetEntry2`, state `NlnsPermanent`); `NotFound`
    /// for an unknown interface, `AlreadyExists` when the interface has an entry for the address.
    fn create_permanent_neighbor(
        &self,
        interface_index: u32,
        address: IpAddr,
        mac: MacAddr,
    ) -> Result<()>;

    /// Removes the neighbor entry of `address` on the interface (`DeleteIpNetEntry2`).
    fn delete_neighbor(&self, interface_index: u32, address: IpAddr) -> Result<()>;

    /// The forwarding and MTU settings of an interface for a family (`GetIpInterfaceEntry`).
    fn ip_interface(&self, interface_index: u32, family: IpFamily) -> Result<IpInterface>;

    /// Changes forwarding and/or the network-layer MTU of an interface for a family
    /// (`GetIpInterfaceEntry` then `SetIpInterfaceEntry`).
    fn set_ip_interface(
        &self,
        interface_index: u32,
        family: IpFamily,
        change: IpInterfaceChange,
    ) -> Result<()>;

    /// Replaces the static DNS servers of one family on an interface (`SetInterfaceDnsSettings`,
    /// what `Set-DnsClientServerAddress` does); an empty list clears them. `InvalidArgument`
    /// when a server is of the other family, `NotFound` for an unknown interface.
    fn set_dns_servers(
        &self,
        interface_index: u32,
        family: IpFamily,
        servers: &[IpAddr],
    ) -> Result<()>;

    /// Renames the adapter whose alias is `alias` to `new_alias` (on Windows the
    /// `MSFT_NetAdapter.Rename` WMI method, what `Rename-NetAdapter` calls: IP Helper has no
    /// rename). `NotFound` when no adapter has `alias`, `AlreadyExists` when another has
    /// `new_alias`.
    fn rename_adapter(&self, alias: &str, new_alias: &str) -> Result<()>;

    /// Makes `route` present: creates it, or, when a route with its key exists with another
    /// metric, replaces it.
    fn ensure_route(&self, route: &Route) -> Result<Ensured> {
        let key = route.key();
        match self.routes()?.into_iter().find(|r| r.key() == key) {
            Some(existing) if existing.metric == route.metric => Ok(Ensured::Unchanged),
            Some(_) => {
                self.delete_route(&key)?;
                self.create_route(route)?;
                Ok(Ensured::Replaced)
            }
            None => {
                self.create_route(route)?;
                Ok(Ensured::Created)
            }
        }
    }

    /// Makes the route `key` names absent; returns whether there was one.
    fn remove_route(&self, key: &RouteKey) -> Result<bool> {
        match self.delete_route(key) {
            Ok(()) => Ok(true),
            Err(error) if error.is_not_found() => Ok(false),
            Err(error) => Err(error),
        }
    }

    /// The adapter whose alias is `alias`, if any.
    fn adapter_by_alias(&self, alias: &str) -> Result<Option<Adapter>> {
        Ok(self.adapters()?.into_iter().find(|a| a.alias == alias))
    }
}
