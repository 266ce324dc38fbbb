//! A local Pod's flows: classification, spoof guard (IP and ARP), ARP delivery, L3 forwarding
//! with MAC rewrite, and its output port.

use openflow::msg::flow_mod::FlowMod;
use openflow::oxm::{Field, Match};

use super::{arp, flow, in_port, ip, ipv4, mac, output, set_mac};
use crate::layout::TableGraph;
use crate::layout::priority::{LOW, NORMAL};
use crate::layout::regs::{FROM_POD, set_target_ofport};
use crate::layout::tables::{
    ARP_RESPONDER, CLASSIFIER, L2_FORWARDING_CALC, L3_FORWARDING, SPOOF_GUARD,
};
use model::{LocalPod, NodeNetwork};

/// Every flow `pod` owns, its interface being on OpenFlow port `port`.
pub fn pod_flows(node: &NodeNetwork, pod: &LocalPod, port: u32) -> Vec<FlowMod> {
    render_pod(TableGraph::standard(), node, pod, port)
}

/// [`pod_flows`] with the ids of `g`.
pub(crate) fn render_pod(
    g: &TableGraph,
    node: &NodeNetwork,
    pod: &LocalPod,
    port: u32,
) -> Vec<FlowMod> {
    vec![
        flow(
            g,
            CLASSIFIER,
            LOW,
            in_port(Match::new(), port),
            vec![FROM_POD.set()],
            Some(g.next(CLASSIFIER)),
        ),
        flow(
            g,
            SPOOF_GUARD,
            NORMAL,
            ipv4(
                Field::Ipv4Src,
                mac(Field::EthSrc, in_port(ip(), port), pod.mac),
                pod.ip,
            ),
            vec![],
            Some(g.next(SPOOF_GUARD)),
        ),
        flow(
            g,
            SPOOF_GUARD,
            NORMAL,
            mac(
                Field::ArpSha,
                ipv4(Field::ArpSpa, in_port(arp(), port), pod.ip),
                pod.mac,
            ),
            vec![],
            Some(ARP_RESPONDER),
        ),
        flow(
            g,
            ARP_RESPONDER,
            LOW,
            ipv4(Field::ArpTpa, arp(), pod.ip),
            vec![output(port)],
            None,
        ),
        flow(
            g,
            L3_FORWARDING,
            NORMAL,
            ipv4(Field::Ipv4Dst, ip(), pod.ip),
            vec![
                set_mac(Field::EthSrc, node.gateway_mac),
                set_mac(Field::EthDst, pod.mac),
            ],
            Some(g.next(L3_FORWARDING)),
        ),
        flow(
            g,
            L2_FORWARDING_CALC,
            NORMAL,
            mac(Field::EthDst, Match::new(), pod.mac),
            vec![set_target_ofport(port)],
            Some(g.next(L2_FORWARDING_CALC)),
        ),
    ]
}
