//! A neighbor (ARP / NDP) cache entry (`MIB_IPNET_ROW2`).

use std::net::IpAddr;

use model::MacAddr;

/// The state of a neighbor entry (`NL_NEIGHBOR_STATE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NeighborState {
    /// `NlnsReachable` (4): learned and confirmed.
    Reachable,
    /// `NlnsPermanent` (6): configured; never expires. What the agent writes.
    Permanent,
    /// Any other state code (unreachable, incomplete, probe, delay, stale).
    Other(u32),
}

impl NeighborState {
    /// The state for an `NL_NEIGHBOR_STATE` code.
    pub fn from_code(code: u32) -> Self {
        match code {
            4 => NeighborState::Reachable,
            6 => NeighborState::Permanent,
            other => NeighborState::Other(other),
        }
    }
}

/// One neighbor cache entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Neighbor {
    /// The interface index the entry belongs to.
    pub interface_index: u32,
    /// The neighbor's IP address.
    pub address: IpAddr,
    /// The neighbor's link-layer address.
    pub mac: MacAddr,
    /// The entry's state.
    pub state: NeighborState,
}

impl std::fmt::Display for Neighbor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "neighbor {} ({}) on interface {}",
            self.address, self.mac, self.interface_index
        )
    }
}
