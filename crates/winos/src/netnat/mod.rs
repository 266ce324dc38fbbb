//! The host NAT (`MSFT_NetNat`, what `New-NetNat` creates) that masquerades Pod traffic leaving
//! the Node in noEncap/hybrid setups, and its static mappings (`MSFT_NetNatStaticMapping`, what
//! `Add-NetNatStaticMapping` creates) that hand NodePort connections to the datapath: [`NetNat`]
//! is what the agent calls, `FakeNetNat` (feature `fake`) a stateful stand-in for tests and
//! `WmiNetNat` (Windows only) talks to WMI `root\StandardCimv2`.

#[cfg(feature = "fake")]
mod fake;
#[cfg(windows)]
mod native;

use std::net::Ipv4Addr;

use ipnet::IpNet;

#[cfg(feature = "fake")]
pub use fake::{FakeNetNat, NetNatCall};
#[cfg(windows)]
pub use native::WmiNetNat;

use crate::{Ensured, Result};

/// The NAT name the agent owns.
pub const ANTREA_NAT: &str = "antrea-nat";

/// The NAT the agent owns for NodePort (proxyAll): its static mappings carry the NodePorts.
pub const ANTREA_NODE_PORT_NAT: &str = "antrea-nat-nodeport";

/// One NetNat instance as far as the agent uses it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NatInstance {
    /// The instance name (`Name`).
    pub name: String,
    /// The internal prefix whose traffic is translated (`InternalIPInterfaceAddressPrefix`).
    pub internal_prefix: IpNet,
}

/// The transport protocol of a static mapping: NetNat maps TCP and UDP only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum NatProtocol {
    /// TCP (`Protocol` 6).
    Tcp,
    /// UDP (`Protocol` 17).
    Udp,
}

impl NatProtocol {
    /// The IP protocol number `MSFT_NetNatStaticMapping.Protocol` holds.
    pub fn number(self) -> u8 {
        match self {
            NatProtocol::Tcp => 6,
            NatProtocol::Udp => 17,
        }
    }

    /// The protocol whose number is `number`; `None` for one NetNat does not map.
    pub fn from_number(number: u8) -> Option<NatProtocol> {
        match number {
            6 => Some(NatProtocol::Tcp),
            17 => Some(NatProtocol::Udp),
            _ => None,
        }
    }
}

impl std::fmt::Display for NatProtocol {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            NatProtocol::Tcp => "TCP",
            NatProtocol::Udp => "UDP",
        })
    }
}

/// A static mapping of a NAT instance: connections of `protocol` to
/// `external_address:external_port` (`0.0.0.0`: to any address of the host) are translated to
/// `internal_address:internal_port`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StaticMapping {
    /// The instance the mapping belongs to (`NatName`).
    pub nat: String,
    /// `Protocol`.
    pub protocol: NatProtocol,
    /// `ExternalIPAddress`.
    pub external_address: Ipv4Addr,
    /// `ExternalPort`.
    pub external_port: u16,
    /// `InternalIPAddress`.
    pub internal_address: Ipv4Addr,
    /// `InternalPort`.
    pub internal_port: u16,
}

impl std::fmt::Display for StaticMapping {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {}:{} -> {}:{} (NetNat {:?})",
            self.protocol,
            self.external_address,
            self.external_port,
            self.internal_address,
            self.internal_port,
            self.nat
        )
    }
}

/// A static mapping as Windows lists it: the mapping and the id Windows gave it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StaticMappingInstance {
    /// `StaticMappingID`, unique within the instance.
    pub id: u32,
    /// What it maps.
    pub mapping: StaticMapping,
}

/// The NetNat calls the agent makes. All calls block.
pub trait NetNat: Send + Sync + std::fmt::Debug {
    /// The instance called `name`, if there is one.
    fn get(&self, name: &str) -> Result<Option<NatInstance>>;

    /// Creates an instance; `AlreadyExists` when one is called `nat.name`.
    fn create(&self, nat: &NatInstance) -> Result<()>;

    /// Deletes the instance called `name`, and with it its static mappings; `NotFound` when
    /// there is none.
    fn delete(&self, name: &str) -> Result<()>;

    /// The static mappings of the instance called `nat`; none when there is no such instance.
    fn static_mappings(&self, nat: &str) -> Result<Vec<StaticMappingInstance>>;

    /// Adds `mapping` to the instance called `mapping.nat`: `NotFound` when there is none,
    /// `AlreadyExists` when a mapping of any instance has the same protocol, external address
    /// and external port.
    fn add_static_mapping(&self, mapping: &StaticMapping) -> Result<()>;

    /// Removes the static mapping `id` of the instance called `nat`; `NotFound` when it has no
    /// mapping with that id.
    fn remove_static_mapping(&self, nat: &str, id: u32) -> Result<()>;

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
