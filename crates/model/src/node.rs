//! The Node's own network: its addresses, the gateway and how traffic reaches other Nodes.

use std::net::Ipv4Addr;

use serde::{Deserialize, Serialize};

use crate::{Ipv4Net, MacAddr};

/// Which tunnel protocol carries Pod traffic between Nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TunnelType {
    Geneve,
    Vxlan,
}

/// How Pod traffic reaches other Nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TrafficMode {
    /// Every peer through the tunnel.
    Encap(TunnelType),
    /// Every peer directly over the uplink (the underlay routes Pod CIDRs or is one L2 segment).
    NoEncap,
    /// Peers whose Node IP is in this Node's subnet directly over the uplink, others through the
    /// tunnel.
    Hybrid(TunnelType),
}

impl TrafficMode {
    /// The tunnel type, if this mode uses the tunnel at all.
    pub fn tunnel(self) -> Option<TunnelType> {
        match self {
            TrafficMode::Encap(t) | TrafficMode::Hybrid(t) => Some(t),
            TrafficMode::NoEncap => None,
        }
    }

    /// Whether Pod traffic from peers can arrive on the uplink.
    pub fn receives_direct(self) -> bool {
        !matches!(self, TrafficMode::Encap(_))
    }
}

/// Everything about this Node a datapath needs.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct NodeNetwork {
    /// The Node (transport) IP with its subnet's prefix length; it sits on the bridge's LOCAL
    /// port. The prefix decides which peers are "same subnet" in hybrid mode.
    pub node_ip: Ipv4Net,
    /// The NIC's MAC, which LOCAL carries too.
    pub node_mac: MacAddr,
    /// This Node's Pod CIDR.
    pub pod_cidr: Ipv4Net,
    /// `antrea-gw0`'s IP: the first address of the Pod CIDR.
    pub gateway_ip: Ipv4Addr,
    pub gateway_mac: MacAddr,
    pub mode: TrafficMode,
}
