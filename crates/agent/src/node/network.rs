//! From [`NodeInfo`] to the pipeline's model and the host's peer routes.

use std::net::Ipv4Addr;

use model::MacAddr;
use model::{NodeNetwork, PeerNode, TrafficMode};

use super::info::NodeInfo;

/// The gateway's MAC: locally administered `02:00` followed by the gateway IP. It is derived,
/// not random, so a restarted agent asks for the same MAC, and it is unique in the cluster
/// because gateway IPs are.
pub fn gateway_mac(gateway_ip: Ipv4Addr) -> MacAddr {
    let [a, b, c, d] = gateway_ip.octets();
    MacAddr([0x02, 0x00, a, b, c, d])
}

/// `peer` as the pipeline sees it.
pub fn peer_node(peer: &NodeInfo) -> PeerNode {
    PeerNode {
        name: peer.name.clone(),
        node_ip: peer.ip,
        pod_cidr: peer.pod_cidr,
        gateway_ip: peer.gateway_ip(),
        mac: peer.mac,
    }
}

/// The host route to `peer`'s Pods: through the tunnel (next hop the peer's gateway, `onlink`
/// via the gateway interface, answered by the pipeline's ARP responder) when the pipeline
/// tunnels to it; otherwise via the peer's Node IP through the bridge's LOCAL interface.
pub fn peer_route(
    node: &NodeNetwork,
    peer: &PeerNode,
    gateway_if: &str,
    bridge: &str,
) -> hostnet::PeerRoute {
    let destination = peer.pod_cidr.trunc();
    let tunnelled = match node.mode {
        TrafficMode::Encap(_) => true,
        TrafficMode::NoEncap => false,
        TrafficMode::Hybrid(_) => !node.node_ip.contains(&peer.node_ip),
    };
    if tunnelled {
        hostnet::PeerRoute {
            destination,
            gateway: peer.gateway_ip,
            interface: gateway_if.to_owned(),
            onlink: true,
        }
    } else {
        hostnet::PeerRoute {
            destination,
            gateway: peer.node_ip,
            interface: bridge.to_owned(),
            onlink: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use model::TunnelType;

    use super::*;

    fn node(mode: TrafficMode) -> NodeNetwork {
        NodeNetwork {
            node_ip: "10.10.0.11/24".parse().unwrap(),
            node_mac: MacAddr([2, 0, 10, 10, 0, 11]),
            pod_cidr: "10.244.1.0/24".parse().unwrap(),
            gateway_ip: Ipv4Addr::new(10, 244, 1, 1),
            gateway_mac: gateway_mac(Ipv4Addr::new(10, 244, 1, 1)),
            mode,
        }
    }

    fn peer(ip: [u8; 4]) -> PeerNode {
        peer_node(&NodeInfo {
            name: "n2".into(),
            ip: ip.into(),
            pod_cidr: "10.244.2.0/24".parse().unwrap(),
            mac: None,
        })
    }

    #[test]
    fn gateway_mac_follows_the_ip() {
        assert_eq!(
            gateway_mac(Ipv4Addr::new(10, 244, 1, 1)).to_string(),
            "02:00:0a:f4:01:01"
        );
    }

    #[test]
    fn routes_per_mode() {
        let encap = peer_route(
            &node(TrafficMode::Encap(TunnelType::Geneve)),
            &peer([10, 10, 0, 12]),
            "antrea-gw0",
            "br-int",
        );
        assert_eq!(
            (encap.gateway, encap.interface.as_str(), encap.onlink),
            (Ipv4Addr::new(10, 244, 2, 1), "antrea-gw0", true)
        );
        assert_eq!(encap.destination.to_string(), "10.244.2.0/24");
        let direct = peer_route(
            &node(TrafficMode::NoEncap),
            &peer([10, 10, 0, 12]),
            "antrea-gw0",
            "br-int",
        );
        assert_eq!(
            (direct.gateway, direct.interface.as_str(), direct.onlink),
            (Ipv4Addr::new(10, 10, 0, 12), "br-int", false)
        );
        let hybrid = node(TrafficMode::Hybrid(TunnelType::Vxlan));
        assert!(!peer_route(&hybrid, &peer([10, 10, 0, 12]), "antrea-gw0", "br-int").onlink);
        assert!(peer_route(&hybrid, &peer([10, 20, 0, 12]), "antrea-gw0", "br-int").onlink);
    }
}
