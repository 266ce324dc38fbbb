//! The Node's own network: its addresses, the gateway, the fixed bridge ports and how traffic
//! reaches other Nodes.

use std::net::Ipv4Addr;

use model::{Ipv4Net, MacAddr};

/// Which tunnel protocol the tunnel port speaks. The flows are the same for both; only the
/// port's `type` differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TunnelType {
    Geneve,
    Vxlan,
}

impl TunnelType {
    /// The OVS interface type (`geneve`, `vxlan`).
    pub fn ovs_type(self) -> &'static str {
        match self {
            TunnelType::Geneve => "geneve",
            TunnelType::Vxlan => "vxlan",
        }
    }
}

/// How Pod traffic reaches other Nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
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

/// The OpenFlow port numbers of the Node's fixed ports. The agent requests them with
/// `ofport_request`; Pods get numbers below [`NodePorts::TUNNEL`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct NodePorts {
    /// `antrea-tun0`.
    pub tunnel: u32,
    /// `antrea-gw0`.
    pub gateway: u32,
    /// The physical NIC.
    pub uplink: u32,
}

impl NodePorts {
    pub const TUNNEL: u32 = 32768;
    pub const GATEWAY: u32 = 32769;
    pub const UPLINK: u32 = 32770;
    /// The bridge's own port (`br-int`), which carries the Node IP and the NIC's MAC.
    pub const LOCAL: u32 = 0xffff_fffe;
}

impl Default for NodePorts {
    fn default() -> NodePorts {
        NodePorts {
            tunnel: NodePorts::TUNNEL,
            gateway: NodePorts::GATEWAY,
            uplink: NodePorts::UPLINK,
        }
    }
}

/// Everything about this Node the pipeline needs.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
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
    pub ports: NodePorts,
    pub mode: TrafficMode,
}
