//! A peer Node's flows: the route to its Pod CIDR (tunnel or direct), the ARP responder for its
//! gateway (tunnel peers, for the host's route via that gateway), and for direct peers the
//! uplink output and the reply path of connections the peer's host opened.

use model::MacAddr;
use openflow::action::Action;
use openflow::msg::flow_mod::FlowMod;
use openflow::oxm::{Field, Match, PortNo, Subfield};

use super::{arp, flow, ip, ipv4, ipv4_cidr, mac, set_ipv4, set_mac};
use crate::layout::priority::{HIGH, NORMAL};
use crate::layout::regs::set_target_ofport;
use crate::layout::tables::{ARP_RESPONDER, L2_FORWARDING_CALC, L3_FORWARDING};
use crate::layout::{GLOBAL_VIRTUAL_MAC, NodePorts, TableGraph};
use model::{NodeNetwork, PeerNode, PeerRoute};

const ARP_REQUEST: u128 = 1;
const ARP_REPLY: u128 = 2;
/// `ct_state` `+rpl+trk`.
const CT_RPL_TRK: u128 = 0x28;

/// Every flow `peer` owns on `node`.
pub fn peer_flows(node: &NodeNetwork, peer: &PeerNode) -> Vec<FlowMod> {
    render_peer(TableGraph::standard(), node, peer)
}

/// [`peer_flows`] with the ids of `g`.
pub(crate) fn render_peer(g: &TableGraph, node: &NodeNetwork, peer: &PeerNode) -> Vec<FlowMod> {
    match node.route_to(peer) {
        PeerRoute::Tunnel => tunnel_flows(g, node, peer),
        PeerRoute::Direct(peer_mac) => direct_flows(g, node, peer, peer_mac),
        PeerRoute::ViaHost => Vec::new(),
    }
}

fn tunnel_flows(g: &TableGraph, node: &NodeNetwork, peer: &PeerNode) -> Vec<FlowMod> {
    vec![
        flow(
            g,
            ARP_RESPONDER,
            NORMAL,
            ipv4(
                Field::ArpTpa,
                arp().with(Field::ArpOp, ARP_REQUEST),
                peer.gateway_ip,
            ),
            arp_reply(GLOBAL_VIRTUAL_MAC, peer.gateway_ip),
            None,
        ),
        flow(
            g,
            L3_FORWARDING,
            NORMAL,
            ipv4_cidr(Field::Ipv4Dst, ip(), peer.pod_cidr),
            vec![
                set_mac(Field::EthSrc, node.gateway_mac),
                set_mac(Field::EthDst, GLOBAL_VIRTUAL_MAC),
                set_ipv4(Field::TunDst, peer.node_ip),
            ],
            Some(g.next(L3_FORWARDING)),
        ),
    ]
}

fn direct_flows(
    g: &TableGraph,
    node: &NodeNetwork,
    peer: &PeerNode,
    peer_mac: MacAddr,
) -> Vec<FlowMod> {
    let rewrite = vec![
        set_mac(Field::EthSrc, node.node_mac),
        set_mac(Field::EthDst, peer_mac),
    ];
    vec![
        flow(
            g,
            L3_FORWARDING,
            NORMAL,
            ipv4_cidr(Field::Ipv4Dst, ip(), peer.pod_cidr),
            rewrite.clone(),
            Some(g.next(L3_FORWARDING)),
        ),
        // Replies to connections the peer's host opened to a local Pod leave directly too:
        // through the gateway the host would masquerade them to the Node IP.
        flow(
            g,
            L3_FORWARDING,
            HIGH,
            ipv4(
                Field::Ipv4Dst,
                ip().with_masked(Field::CtState, CT_RPL_TRK, CT_RPL_TRK),
                peer.node_ip,
            ),
            rewrite,
            Some(g.next(L3_FORWARDING)),
        ),
        flow(
            g,
            L2_FORWARDING_CALC,
            NORMAL,
            mac(Field::EthDst, Match::new(), peer_mac),
            vec![set_target_ofport(NodePorts::UPLINK)],
            Some(g.next(L2_FORWARDING_CALC)),
        ),
    ]
}

/// Turns an ARP request into the reply "`ip` is at `answer`" and sends it back where it came
/// from.
fn arp_reply(answer: MacAddr, ip: std::net::Ipv4Addr) -> Vec<Action> {
    let mv = |src: Field, dst: Field| Action::Move {
        src: Subfield::whole(src),
        dst: Subfield::whole(dst),
    };
    vec![
        mv(Field::EthSrc, Field::EthDst),
        set_mac(Field::EthSrc, answer),
        Action::set_field(Field::ArpOp, ARP_REPLY),
        mv(Field::ArpSha, Field::ArpTha),
        set_mac(Field::ArpSha, answer),
        mv(Field::ArpSpa, Field::ArpTpa),
        set_ipv4(Field::ArpSpa, ip),
        Action::Output {
            port: PortNo::IN_PORT,
            max_len: 0xffff,
        },
    ]
}
