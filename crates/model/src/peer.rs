//! Another Node of the cluster, and how this Node reaches its Pods.

use std::net::Ipv4Addr;

use serde::{Deserialize, Serialize};

use crate::{Ipv4Net, MacAddr};

use crate::node::{NodeNetwork, TrafficMode};

/// A peer Node.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PeerNode {
    /// The Node's name.
    pub name: String,
    /// Its transport IP (tunnel destination, or next hop in noEncap).
    pub node_ip: Ipv4Addr,
    pub pod_cidr: Ipv4Net,
    /// Its gateway IP: the first address of its Pod CIDR.
    pub gateway_ip: Ipv4Addr,
    /// Its NIC's MAC, needed to send to it directly over the uplink. Without it a direct peer is
    /// reached through this Node's host routes.
    pub mac: Option<MacAddr>,
}

/// How this Node sends Pod traffic to a peer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PeerRoute {
    /// Through the tunnel, with the peer's Node IP as tunnel destination.
    Tunnel,
    /// Out of the uplink, addressed to the peer's NIC MAC.
    Direct(MacAddr),
    /// To the gateway: the host routes it (direct peer whose MAC is unknown).
    ViaHost,
}

impl NodeNetwork {
    /// The route this Node uses to reach `peer`'s Pods.
    pub fn route_to(&self, peer: &PeerNode) -> PeerRoute {
        let direct = match self.mode {
            TrafficMode::Encap(_) => false,
            TrafficMode::NoEncap => true,
            TrafficMode::Hybrid(_) => self.node_ip.contains(&peer.node_ip),
        };
        match (direct, peer.mac) {
            (false, _) => PeerRoute::Tunnel,
            (true, Some(mac)) => PeerRoute::Direct(mac),
            (true, None) => PeerRoute::ViaHost,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::node::TunnelType;

    fn node(mode: TrafficMode) -> NodeNetwork {
        NodeNetwork {
            node_ip: "10.10.0.11/24".parse().unwrap(),
            node_mac: "02:00:0a:0a:00:0b".parse().unwrap(),
            pod_cidr: "10.244.1.0/24".parse().unwrap(),
            gateway_ip: Ipv4Addr::new(10, 244, 1, 1),
            gateway_mac: "02:00:0a:f4:01:01".parse().unwrap(),
            mode,
        }
    }

    fn peer(ip: [u8; 4], mac: Option<MacAddr>) -> PeerNode {
        PeerNode {
            name: "n2".into(),
            node_ip: Ipv4Addr::from(ip),
            pod_cidr: "10.244.2.0/24".parse().unwrap(),
            gateway_ip: Ipv4Addr::new(10, 244, 2, 1),
            mac,
        }
    }

    #[test]
    fn routes_per_mode() {
        let mac: MacAddr = "02:00:0a:0a:00:0c".parse().unwrap();
        let near = peer([10, 10, 0, 12], Some(mac));
        let far = peer([10, 20, 0, 12], Some(mac));
        let encap = node(TrafficMode::Encap(TunnelType::Geneve));
        assert_eq!(encap.route_to(&near), PeerRoute::Tunnel);
        let no_encap = node(TrafficMode::NoEncap);
        assert_eq!(no_encap.route_to(&near), PeerRoute::Direct(mac));
        assert_eq!(no_encap.route_to(&far), PeerRoute::Direct(mac));
        assert_eq!(
            no_encap.route_to(&peer([10, 10, 0, 12], None)),
            PeerRoute::ViaHost
        );
        let hybrid = node(TrafficMode::Hybrid(TunnelType::Vxlan));
        assert_eq!(hybrid.route_to(&near), PeerRoute::Direct(mac));
        assert_eq!(hybrid.route_to(&far), PeerRoute::Tunnel);
    }
}
