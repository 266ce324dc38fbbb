//! A Pod on this Node, attached to the bridge by its own port.

use std::net::Ipv4Addr;

use model::MacAddr;

/// A Pod's identity: `namespace/name` (the same type NetworkPolicy uses).
pub use netpol::PodKey;

/// A local Pod: its interface's address and the OpenFlow port of its host side.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LocalPod {
    pub key: PodKey,
    pub ip: Ipv4Addr,
    pub mac: MacAddr,
    pub ofport: u32,
}
