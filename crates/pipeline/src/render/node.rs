//! The Node's own flows: host↔uplink pass-through, classification of the gateway, tunnel and
//! uplink, conntrack, gateway forwarding, TTL, output, the policy tables' fixed flows and the
//! table defaults.

use openflow::action::{Action, Ct, CtZone, Nat};
use openflow::msg::flow_mod::{FlowMod, FlowModCommand};
use openflow::oxm::{Field, Match};

use super::policy::policy_table_flows;
use super::service::hairpin::hairpin_flows;
use super::service::host_network::host_network_endpoint_flows;
use super::service::snat::gateway_snat_flows;
use super::service::tables::service_table_flows;
use super::{CT_INV, CT_NEW, CT_TRK};
use super::{arp, flow, in_port, ip, ipv4, ipv4_cidr, mac, output, set_mac};
use crate::layout::priority::{HIGH, LOW, MISS, NORMAL};
use crate::layout::regs::{
    FROM_GATEWAY, FROM_POD, FROM_TUNNEL, FROM_UPLINK, output_to_target, set_target_ofport,
};
use crate::layout::tables::{
    ARP_RESPONDER, CLASSIFIER, CONNTRACK_COMMIT, CONNTRACK_STATE, CONNTRACK_ZONE,
    L2_FORWARDING_CALC, L3_DEC_TTL, L3_FORWARDING, OUTPUT, SPOOF_GUARD,
};
use crate::layout::{CT_ZONE, GLOBAL_VIRTUAL_MAC, NodePorts, Stage, Table, TableGraph};
use model::NodeNetwork;

/// Every flow the Node itself owns.
pub fn node_flows(node: &NodeNetwork) -> Vec<FlowMod> {
    render_node(TableGraph::standard(), node)
}

/// [`node_flows`] with the ids of `g`.
pub(crate) fn render_node(g: &TableGraph, node: &NodeNetwork) -> Vec<FlowMod> {
    let mut flows = Vec::new();
    flows.extend(host_flows(g, node));
    flows.extend(classifier_flows(g, node));
    flows.extend(conntrack_flows(g));
    flows.extend(forwarding_flows(g, node));
    flows.extend(policy_table_flows(g, node));
    flows.extend(service_table_flows(g));
    flows.extend(hairpin_flows(g, node));
    flows.extend(gateway_snat_flows(g, node));
    flows.extend(host_network_endpoint_flows(g, node));
    flows
}

/// The host keeps its connectivity through the bridge: the NIC (uplink) and the host's vNIC
/// (LOCAL, which carries the Node IP and the NIC's MAC) are patched together for the Node IP's
/// traffic and for ARP. This also carries the encapsulated tunnel traffic (to and from the Node
/// IP) and OVS's own ARP for tunnel neighbours.
fn host_flows(g: &TableGraph, node: &NodeNetwork) -> Vec<FlowMod> {
    let uplink = NodePorts::UPLINK;
    vec![
        flow(
            g,
            CLASSIFIER,
            NORMAL,
            ipv4(Field::Ipv4Dst, in_port(ip(), uplink), node.node_ip.addr()),
            vec![output(NodePorts::LOCAL)],
            None,
        ),
        flow(
            g,
            CLASSIFIER,
            NORMAL,
            in_port(arp(), uplink),
            vec![output(NodePorts::LOCAL)],
            None,
        ),
        flow(
            g,
            CLASSIFIER,
            NORMAL,
            in_port(Match::new(), NodePorts::LOCAL),
            vec![output(uplink)],
            None,
        ),
    ]
}

/// A flow mod that leaves the switch's tables as they are but makes Open vSwitch revalidate its
/// datapath's cached flows: the Classifier's miss flow, always among the Node's flows, modified
/// in place into itself (any cookie; a modify keeps the flow's cookie and counters). Every
/// modify gives ovs-vswitchd's tables a new version, and a new version wakes its revalidators
/// at once instead of at their next periodic round (docs/services.md, "Revalidation").
pub fn revalidation_nudge() -> FlowMod {
    let mut nudge = classifier_miss(TableGraph::standard());
    nudge.command = FlowModCommand::ModifyStrict;
    nudge
}

/// The Classifier's default: what no port classification took is dropped.
fn classifier_miss(g: &TableGraph) -> FlowMod {
    flow(g, CLASSIFIER, MISS, Match::new(), vec![], None)
}

/// Classification of the Node's own ports and the table defaults of the early tables.
fn classifier_flows(g: &TableGraph, node: &NodeNetwork) -> Vec<FlowMod> {
    let ports = NodePorts::default();
    let mut flows = vec![
        flow(
            g,
            CLASSIFIER,
            NORMAL,
            in_port(ip(), ports.gateway),
            vec![FROM_GATEWAY.set()],
            Some(g.first(Stage::ConntrackState)),
        ),
        flow(
            g,
            CLASSIFIER,
            NORMAL,
            in_port(arp(), ports.gateway),
            vec![],
            Some(ARP_RESPONDER),
        ),
        classifier_miss(g),
        flow(g, SPOOF_GUARD, MISS, Match::new(), vec![], None),
        flow(
            g,
            ARP_RESPONDER,
            LOW,
            ipv4(Field::ArpTpa, arp(), node.gateway_ip),
            vec![output(ports.gateway)],
            None,
        ),
        // The host's kernel resolves a Pod on the gateway with the source address of the packet
        // it is sending, so a reply from the Node IP (e.g. an ICMP echo reply) makes it ask with
        // the Node IP as sender: the Pod's ARP reply then targets the Node IP, not the gateway IP.
        flow(
            g,
            ARP_RESPONDER,
            LOW,
            ipv4(Field::ArpTpa, arp(), node.node_ip.addr()),
            vec![output(ports.gateway)],
            None,
        ),
        flow(g, ARP_RESPONDER, MISS, Match::new(), vec![], None),
    ];
    if node.mode.tunnel().is_some() {
        flows.push(flow(
            g,
            CLASSIFIER,
            NORMAL,
            in_port(ip(), ports.tunnel),
            vec![FROM_TUNNEL.set()],
            Some(g.first(Stage::ConntrackState)),
        ));
    }
    if node.mode.receives_direct() {
        // Pod traffic from direct peers. It never matches the Node-IP pass-through; the higher
        // priority only states which of the uplink's flows is the exception.
        flows.push(flow(
            g,
            CLASSIFIER,
            HIGH,
            ipv4_cidr(Field::Ipv4Dst, in_port(ip(), ports.uplink), node.pod_cidr),
            vec![FROM_UPLINK.set()],
            Some(g.first(Stage::ConntrackState)),
        ));
    }
    flows
}

/// Conntrack in zone 65520: track (un-NATing replies of Service connections and NATing their
/// later packets), drop invalid, commit new connections just before output.
fn conntrack_flows(g: &TableGraph) -> Vec<FlowMod> {
    let ct = |commit: bool, table: Option<Table>| {
        Action::ct(Ct {
            commit,
            table: table.map(|t| g.id(t)),
            zone: CtZone::Imm(CT_ZONE),
            nat: (!commit).then(Nat::default),
            ..Ct::default()
        })
    };
    let ct_state = |value: u128, mask: u128| ip().with_masked(Field::CtState, value, mask);
    vec![
        flow(
            g,
            CONNTRACK_ZONE,
            NORMAL,
            ip(),
            vec![ct(false, Some(g.next(CONNTRACK_ZONE)))],
            None,
        ),
        flow(
            g,
            CONNTRACK_STATE,
            NORMAL,
            ct_state(CT_INV | CT_TRK, CT_INV | CT_TRK),
            vec![],
            None,
        ),
        flow(
            g,
            CONNTRACK_STATE,
            MISS,
            Match::new(),
            vec![],
            Some(g.next(CONNTRACK_STATE)),
        ),
        flow(
            g,
            CONNTRACK_COMMIT,
            NORMAL,
            ct_state(CT_NEW | CT_TRK, CT_NEW | CT_TRK),
            vec![ct(true, None)],
            Some(g.next(CONNTRACK_COMMIT)),
        ),
        flow(
            g,
            CONNTRACK_COMMIT,
            MISS,
            Match::new(),
            vec![],
            Some(g.next(CONNTRACK_COMMIT)),
        ),
    ]
}

/// Forwarding to the gateway (its own IP, and Pod traffic to anything that is not a Pod), TTL,
/// the output port of the gateway and tunnel MACs, and the final output.
fn forwarding_flows(g: &TableGraph, node: &NodeNetwork) -> Vec<FlowMod> {
    let ports = NodePorts::default();
    let to_gateway = vec![set_mac(Field::EthDst, node.gateway_mac)];
    let mut flows = vec![
        flow(
            g,
            L3_FORWARDING,
            HIGH,
            ipv4(Field::Ipv4Dst, ip(), node.gateway_ip),
            to_gateway.clone(),
            Some(g.first(Stage::Switching)),
        ),
        flow(
            g,
            L3_FORWARDING,
            LOW,
            FROM_POD.match_on(ip()),
            to_gateway,
            Some(g.first(Stage::Switching)),
        ),
        flow(g, L3_FORWARDING, MISS, Match::new(), vec![], None),
        flow(
            g,
            L3_DEC_TTL,
            HIGH,
            FROM_GATEWAY.match_on(ip()),
            vec![],
            Some(g.next(L3_DEC_TTL)),
        ),
        flow(
            g,
            L3_DEC_TTL,
            NORMAL,
            ip(),
            vec![Action::DecTtl],
            Some(g.next(L3_DEC_TTL)),
        ),
        flow(
            g,
            L2_FORWARDING_CALC,
            NORMAL,
            mac(Field::EthDst, Match::new(), node.gateway_mac),
            vec![set_target_ofport(ports.gateway)],
            Some(g.next(L2_FORWARDING_CALC)),
        ),
        flow(g, L2_FORWARDING_CALC, MISS, Match::new(), vec![], None),
        flow(
            g,
            OUTPUT,
            MISS,
            Match::new(),
            vec![output_to_target()],
            None,
        ),
    ];
    if node.mode.tunnel().is_some() {
        flows.push(flow(
            g,
            L2_FORWARDING_CALC,
            NORMAL,
            mac(Field::EthDst, Match::new(), GLOBAL_VIRTUAL_MAC),
            vec![set_target_ofport(ports.tunnel)],
            Some(g.next(L2_FORWARDING_CALC)),
        ));
    }
    flows
}
