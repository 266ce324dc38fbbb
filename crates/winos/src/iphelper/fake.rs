//! [`FakeIpHelper`]: an in-memory host with adapters, routes, unicast addresses, neighbors and
//! per-interface settings that answers the [`IpHelper`] calls the way Windows does.
//!
//! The host model, kept small on purpose:
//! - Adapters are keyed by interface index and alias (both unique). Adding one also gives it IPv4
//!   and IPv6 [`IpInterface`] settings (forwarding off, `nl_mtu` = the adapter MTU).
//! - The unicast address table is the one source of addresses: an adapter's `ipv4` list is read
//!   from it, and adding or updating an adapter writes its `ipv4` list into it.
//! - Routes, addresses and neighbors must name an existing interface index; removing an adapter
//!   removes everything that names it (as Windows does when an interface goes away).
//! - Nothing is derived: creating an address adds no on-link route and routes are not checked
//!   for reachable next hops. A test that needs those rows adds them.
//!
//! Every trait call is appended to a call log ([`FakeIpHelper::calls`]), failed ones included, and
//! [`FakeIpHelper::fail_next`] makes the next call of one kind fail with a chosen error.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::sync::{Mutex, MutexGuard};

use ipnet::IpNet;
use model::MacAddr;

use super::IpHelper;
use crate::model::{
    Adapter, IpFamily, IpInterface, IpInterfaceChange, Neighbor, NeighborState, Route, RouteKey,
    RouteOrigin, RouteProtocol, UnicastAddress,
};
use crate::model::{check_dns_family, same_family};
use crate::recorder::{Recorder, lock};
use crate::{Result, WinOsError};

/// One [`IpHelper`] call as the fake received it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IpHelperCall {
    /// [`IpHelper::adapters`].
    Adapters,
    /// [`IpHelper::routes`].
    Routes,
    /// [`IpHelper::create_route`].
    CreateRoute(Route),
    /// [`IpHelper::delete_route`].
    DeleteRoute(RouteKey),
    /// [`IpHelper::unicast_addresses`].
    UnicastAddresses,
    /// [`IpHelper::create_unicast_address`].
    CreateUnicastAddress(UnicastAddress),
    /// [`IpHelper::delete_unicast_address`].
    DeleteUnicastAddress(UnicastAddress),
    /// [`IpHelper::neighbors`] of a family.
    Neighbors(IpFamily),
    /// [`IpHelper::create_permanent_neighbor`].
    CreatePermanentNeighbor {
        /// Interface index.
        interface_index: u32,
        /// Neighbor address.
        address: IpAddr,
        /// Neighbor MAC.
        mac: MacAddr,
    },
    /// [`IpHelper::delete_neighbor`].
    DeleteNeighbor {
        /// Interface index.
        interface_index: u32,
        /// Neighbor address.
        address: IpAddr,
    },
    /// [`IpHelper::ip_interface`].
    IpInterface {
        /// Interface index.
        interface_index: u32,
        /// Family.
        family: IpFamily,
    },
    /// [`IpHelper::set_ip_interface`].
    SetIpInterface {
        /// Interface index.
        interface_index: u32,
        /// Family.
        family: IpFamily,
        /// The requested change.
        change: IpInterfaceChange,
    },
    /// [`IpHelper::set_dns_servers`].
    SetDnsServers {
        /// Interface index.
        interface_index: u32,
        /// Family.
        family: IpFamily,
        /// The new servers.
        servers: Vec<IpAddr>,
    },
    /// [`IpHelper::rename_adapter`].
    RenameAdapter {
        /// Old alias.
        alias: String,
        /// New alias.
        new_alias: String,
    },
}

/// The kind of an [`IpHelperCall`], to choose which call [`FakeIpHelper::fail_next`] fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IpHelperOp {
    /// [`IpHelper::adapters`].
    Adapters,
    /// [`IpHelper::routes`].
    Routes,
    /// [`IpHelper::create_route`].
    CreateRoute,
    /// [`IpHelper::delete_route`].
    DeleteRoute,
    /// [`IpHelper::unicast_addresses`].
    UnicastAddresses,
    /// [`IpHelper::create_unicast_address`].
    CreateUnicastAddress,
    /// [`IpHelper::delete_unicast_address`].
    DeleteUnicastAddress,
    /// [`IpHelper::neighbors`].
    Neighbors,
    /// [`IpHelper::create_permanent_neighbor`].
    CreatePermanentNeighbor,
    /// [`IpHelper::delete_neighbor`].
    DeleteNeighbor,
    /// [`IpHelper::ip_interface`].
    IpInterface,
    /// [`IpHelper::set_ip_interface`].
    SetIpInterface,
    /// [`IpHelper::set_dns_servers`].
    SetDnsServers,
    /// [`IpHelper::rename_adapter`].
    RenameAdapter,
}

impl IpHelperCall {
    /// The kind of this call.
    pub fn op(&self) -> IpHelperOp {
        match self {
            IpHelperCall::Adapters => IpHelperOp::Adapters,
            IpHelperCall::Routes => IpHelperOp::Routes,
            IpHelperCall::CreateRoute(_) => IpHelperOp::CreateRoute,
            IpHelperCall::DeleteRoute(_) => IpHelperOp::DeleteRoute,
            IpHelperCall::UnicastAddresses => IpHelperOp::UnicastAddresses,
            IpHelperCall::CreateUnicastAddress(_) => IpHelperOp::CreateUnicastAddress,
            IpHelperCall::DeleteUnicastAddress(_) => IpHelperOp::DeleteUnicastAddress,
            IpHelperCall::Neighbors(_) => IpHelperOp::Neighbors,
            IpHelperCall::CreatePermanentNeighbor { .. } => IpHelperOp::CreatePermanentNeighbor,
            IpHelperCall::DeleteNeighbor { .. } => IpHelperOp::DeleteNeighbor,
            IpHelperCall::IpInterface { .. } => IpHelperOp::IpInterface,
            IpHelperCall::SetIpInterface { .. } => IpHelperOp::SetIpInterface,
            IpHelperCall::SetDnsServers { .. } => IpHelperOp::SetDnsServers,
            IpHelperCall::RenameAdapter { .. } => IpHelperOp::RenameAdapter,
        }
    }
}

/// The fake host's tables.
#[derive(Debug, Default)]
struct Host {
    /// Adapters by interface index; their `ipv4` lists are filled from `addresses` on read.
    adapters: BTreeMap<u32, Adapter>,
    routes: Vec<Route>,
    addresses: Vec<UnicastAddress>,
    neighbors: Vec<Neighbor>,
    interfaces: BTreeMap<(u32, IpFamily), IpInterface>,
    recorder: Recorder<IpHelperCall, IpHelperOp>,
}

impl Host {
    fn has_interface(&self, function: &'static str, index: u32) -> Result<()> {
        if self.adapters.contains_key(&index) {
            Ok(())
        } else {
            Err(WinOsError::NotFound {
                function,
                what: format!("interface {index}"),
            })
        }
    }

    /// Replaces the IPv4 rows of `index` in the address table by `ipv4`.
    fn write_ipv4(&mut self, index: u32, ipv4: &[ipnet::Ipv4Net]) {
        self.addresses
            .retain(|a| !(a.interface_index == index && matches!(a.address, IpNet::V4(_))));
        self.addresses.extend(ipv4.iter().map(|net| UnicastAddress {
            interface_index: index,
            address: IpNet::V4(*net),
        }));
    }

    fn adapter_view(&self, adapter: &Adapter) -> Adapter {
        let mut view = adapter.clone();
        view.ipv4 = self
            .addresses
            .iter()
            .filter(|a| a.interface_index == adapter.index)
            .filter_map(|a| match a.address {
                IpNet::V4(net) => Some(net),
                IpNet::V6(_) => None,
            })
            .collect();
        view
    }

    /// Logs `call` and returns the failure injected for its kind, if any.
    fn enter(&mut self, call: IpHelperCall) -> Result<()> {
        let op = call.op();
        self.recorder.enter(call, op)
    }
}

/// A stateful, in-memory [`IpHelper`]; see the module documentation for its host model.
#[derive(Debug, Default)]
pub struct FakeIpHelper {
    host: Mutex<Host>,
}

impl FakeIpHelper {
    /// An empty host: no adapters, no routes.
    pub fn new() -> Self {
        Self::default()
    }

    fn host(&self) -> MutexGuard<'_, Host> {
        lock(&self.host)
    }

    /// Adds an adapter (its `ipv4` addresses go into the address table); `AlreadyExists` when
    /// its index or alias is taken.
    pub fn add_adapter(&self, adapter: Adapter) -> Result<()> {
        let mut host = self.host();
        let function = "FakeIpHelper::add_adapter";
        if host.adapters.contains_key(&adapter.index) {
            return Err(WinOsError::AlreadyExists {
                function,
                what: format!("interface {}", adapter.index),
            });
        }
        if host.adapters.values().any(|a| a.alias == adapter.alias) {
            return Err(WinOsError::AlreadyExists {
                function,
                what: format!("adapter {:?}", adapter.alias),
            });
        }
        let settings = IpInterface {
            forwarding: false,
            nl_mtu: adapter.mtu,
        };
        for family in [IpFamily::V4, IpFamily::V6] {
            host.interfaces.insert((adapter.index, family), settings);
        }
        host.write_ipv4(adapter.index, &adapter.ipv4);
        host.adapters.insert(adapter.index, adapter);
        Ok(())
    }

    /// Removes an adapter with its addresses, routes, neighbors and settings, and returns it.
    pub fn remove_adapter(&self, index: u32) -> Result<Adapter> {
        let mut host = self.host();
        let adapter = host
            .adapters
            .remove(&index)
            .ok_or_else(|| WinOsError::NotFound {
                function: "FakeIpHelper::remove_adapter",
                what: format!("interface {index}"),
            })?;
        let removed = host.adapter_view(&adapter);
        host.routes.retain(|r| r.interface_index != index);
        host.addresses.retain(|a| a.interface_index != index);
        host.neighbors.retain(|n| n.interface_index != index);
        host.interfaces.retain(|(i, _), _| *i != index);
        Ok(removed)
    }

    /// Changes an adapter in place (status, MAC, DNS, `ipv4`…); the index cannot change. The
    /// closure sees the adapter with its current `ipv4` list and whatever list it leaves is
    /// written back to the address table.
    pub fn update_adapter(&self, index: u32, change: impl FnOnce(&mut Adapter)) -> Result<()> {
        let mut host = self.host();
        let function = "FakeIpHelper::update_adapter";
        let current = host
            .adapters
            .get(&index)
            .ok_or_else(|| WinOsError::NotFound {
                function,
                what: format!("interface {index}"),
            })?;
        let mut updated = host.adapter_view(current);
        change(&mut updated);
        if updated.index != index {
            return Err(WinOsError::InvalidArgument {
                function,
                detail: "the interface index cannot change".into(),
            });
        }
        if host
            .adapters
            .values()
            .any(|a| a.index != index && a.alias == updated.alias)
        {
            return Err(WinOsError::AlreadyExists {
                function,
                what: format!("adapter {:?}", updated.alias),
            });
        }
        host.write_ipv4(index, &updated.ipv4);
        host.adapters.insert(index, updated);
        Ok(())
    }

    /// Every call received so far, oldest first.
    pub fn calls(&self) -> Vec<IpHelperCall> {
        self.host().recorder.calls()
    }

    /// Forgets the calls received so far.
    pub fn clear_calls(&self) {
        self.host().recorder.clear();
    }

    /// Makes the next call of kind `op` fail with `error` (queued: several injections fail
    /// several calls in order). The failing call changes nothing.
    pub fn fail_next(&self, op: IpHelperOp, error: WinOsError) {
        self.host().recorder.fail_next(op, error);
    }
}

impl IpHelper for FakeIpHelper {
    fn adapters(&self) -> Result<Vec<Adapter>> {
        let mut host = self.host();
        host.enter(IpHelperCall::Adapters)?;
        Ok(host
            .adapters
            .values()
            .map(|a| host.adapter_view(a))
            .collect())
    }

    fn routes(&self) -> Result<Vec<Route>> {
        let mut host = self.host();
        host.enter(IpHelperCall::Routes)?;
        Ok(host.routes.clone())
    }

    fn create_route(&self, route: &Route) -> Result<()> {
        let function = "CreateIpForwardEntry2";
        let mut host = self.host();
        host.enter(IpHelperCall::CreateRoute(route.clone()))?;
        same_family(function, route.destination.addr(), route.next_hop)?;
        host.has_interface(function, route.interface_index)?;
        let key = route.key();
        if host.routes.iter().any(|r| r.key() == key) {
            return Err(WinOsError::AlreadyExists {
                function,
                what: key.to_string(),
            });
        }
        host.routes.push(Route {
            destination: key.destination,
            protocol: RouteProtocol::Other,
            origin: RouteOrigin::Manual,
            ..route.clone()
        });
        Ok(())
    }

    fn delete_route(&self, key: &RouteKey) -> Result<()> {
        let function = "DeleteIpForwardEntry2";
        let mut host = self.host();
        host.enter(IpHelperCall::DeleteRoute(*key))?;
        let key = RouteKey {
            destination: key.destination.trunc(),
            ..*key
        };
        let before = host.routes.len();
        host.routes.retain(|r| r.key() != key);
        if host.routes.len() == before {
            return Err(WinOsError::NotFound {
                function,
                what: key.to_string(),
            });
        }
        Ok(())
    }

    fn unicast_addresses(&self) -> Result<Vec<UnicastAddress>> {
        let mut host = self.host();
        host.enter(IpHelperCall::UnicastAddresses)?;
        Ok(host.addresses.clone())
    }

    fn create_unicast_address(&self, address: &UnicastAddress) -> Result<()> {
        let function = "CreateUnicastIpAddressEntry";
        let mut host = self.host();
        host.enter(IpHelperCall::CreateUnicastAddress(*address))?;
        host.has_interface(function, address.interface_index)?;
        if host.addresses.iter().any(|a| {
            a.interface_index == address.interface_index
                && a.address.addr() == address.address.addr()
        }) {
            return Err(WinOsError::AlreadyExists {
                function,
                what: address.to_string(),
            });
        }
        host.addresses.push(*address);
        Ok(())
    }

    fn delete_unicast_address(&self, address: &UnicastAddress) -> Result<()> {
        let function = "DeleteUnicastIpAddressEntry";
        let mut host = self.host();
        host.enter(IpHelperCall::DeleteUnicastAddress(*address))?;
        let before = host.addresses.len();
        host.addresses.retain(|a| {
            !(a.interface_index == address.interface_index
                && a.address.addr() == address.address.addr())
        });
        if host.addresses.len() == before {
            return Err(WinOsError::NotFound {
                function,
                what: address.to_string(),
            });
        }
        Ok(())
    }

    fn neighbors(&self, family: IpFamily) -> Result<Vec<Neighbor>> {
        let mut host = self.host();
        host.enter(IpHelperCall::Neighbors(family))?;
        Ok(host
            .neighbors
            .iter()
            .filter(|n| IpFamily::of(n.address) == family)
            .copied()
            .collect())
    }

    fn create_permanent_neighbor(
        &self,
        interface_index: u32,
        address: IpAddr,
        mac: MacAddr,
    ) -> Result<()> {
        let function = "CreateIpNetEntry2";
        let mut host = self.host();
        host.enter(IpHelperCall::CreatePermanentNeighbor {
            interface_index,
            address,
            mac,
        })?;
        host.has_interface(function, interface_index)?;
        let neighbor = Neighbor {
            interface_index,
            address,
            mac,
            state: NeighborState::Permanent,
        };
        if host
            .neighbors
            .iter()
            .any(|n| n.interface_index == interface_index && n.address == address)
        {
            return Err(WinOsError::AlreadyExists {
                function,
                what: neighbor.to_string(),
            });
        }
        host.neighbors.push(neighbor);
        Ok(())
    }

    fn delete_neighbor(&self, interface_index: u32, address: IpAddr) -> Result<()> {
        let function = "DeleteIpNetEntry2";
        let mut host = self.host();
        host.enter(IpHelperCall::DeleteNeighbor {
            interface_index,
            address,
        })?;
        let before = host.neighbors.len();
        host.neighbors
            .retain(|n| !(n.interface_index == interface_index && n.address == address));
        if host.neighbors.len() == before {
            return Err(WinOsError::NotFound {
                function,
                what: format!("neighbor {address} on interface {interface_index}"),
            });
        }
        Ok(())
    }

    fn ip_interface(&self, interface_index: u32, family: IpFamily) -> Result<IpInterface> {
        let mut host = self.host();
        host.enter(IpHelperCall::IpInterface {
            interface_index,
            family,
        })?;
        host.interfaces
            .get(&(interface_index, family))
            .copied()
            .ok_or_else(|| WinOsError::NotFound {
                function: "GetIpInterfaceEntry",
                what: format!("{family:?} interface {interface_index}"),
            })
    }

    fn set_ip_interface(
        &self,
        interface_index: u32,
        family: IpFamily,
        change: IpInterfaceChange,
    ) -> Result<()> {
        let mut host = self.host();
        host.enter(IpHelperCall::SetIpInterface {
            interface_index,
            family,
            change,
        })?;
        let settings = host
            .interfaces
            .get_mut(&(interface_index, family))
            .ok_or_else(|| WinOsError::NotFound {
                function: "SetIpInterfaceEntry",
                what: format!("{family:?} interface {interface_index}"),
            })?;
        *settings = change.apply(*settings);
        Ok(())
    }

    fn set_dns_servers(
        &self,
        interface_index: u32,
        family: IpFamily,
        servers: &[IpAddr],
    ) -> Result<()> {
        let function = "SetInterfaceDnsSettings";
        let mut host = self.host();
        host.enter(IpHelperCall::SetDnsServers {
            interface_index,
            family,
            servers: servers.to_vec(),
        })?;
        check_dns_family(function, family, servers)?;
        let adapter =
            host.adapters
                .get_mut(&interface_index)
                .ok_or_else(|| WinOsError::NotFound {
                    function,
                    what: format!("interface {interface_index}"),
                })?;
        adapter
            .dns_servers
            .retain(|server| IpFamily::of(*server) != family);
        adapter.dns_servers.extend_from_slice(servers);
        Ok(())
    }

    fn rename_adapter(&self, alias: &str, new_alias: &str) -> Result<()> {
        let function = "MSFT_NetAdapter.Rename";
        let mut host = self.host();
        host.enter(IpHelperCall::RenameAdapter {
            alias: alias.to_owned(),
            new_alias: new_alias.to_owned(),
        })?;
        if new_alias.is_empty() {
            return Err(WinOsError::InvalidArgument {
                function,
                detail: "the new name is empty".into(),
            });
        }
        let index = host
            .adapters
            .values()
            .find(|a| a.alias == alias)
            .map(|a| a.index)
            .ok_or_else(|| WinOsError::NotFound {
                function,
                what: format!("adapter {alias:?}"),
            })?;
        if host
            .adapters
            .values()
            .any(|a| a.index != index && a.alias == new_alias)
        {
            return Err(WinOsError::AlreadyExists {
                function,
                what: format!("adapter {new_alias:?}"),
            });
        }
        if let Some(adapter) = host.adapters.get_mut(&index) {
            adapter.alias = new_alias.to_owned();
        }
        Ok(())
    }
}
