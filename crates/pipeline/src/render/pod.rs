//! A local Pod's flows: classification, spoof guard (IP and ARP), ARP delivery, L3 forwarding
//! with MAC rewrite, and its output port.

use openflow::msg::flow_mod::FlowMod;
use openflow::oxm::{Field, Match};

use super::{arp, flow, in_port, ip, ipv4, mac, output, set_mac};
use crate::layout::Table;
use crate::layout::priority::{LOW, NORMAL};
use crate::layout::regs::{FROM_POD, set_target_ofport};
use model::{LocalPod, NodeNetwork};

/// Every flow `pod` owns, its interface being on OpenFlow port `port`.
pub fn pod_flows(node: &NodeNetwork, pod: &LocalPod, port: u32) -> Vec<FlowMod> {
    vec![
        flow(
            Table::Classifier,
            LOW,
            in_port(Match::new(), port),
            vec![FROM_POD.set()],
            Some(Table::SpoofGuard),
        ),
        flow(
            Table::SpoofGuard,
            NORMAL,
            ipv4(
                Field::Ipv4Src,
                mac(Field::EthSrc, in_port(ip(), port), pod.mac),
                pod.ip,
            ),
            vec![],
            Some(Table::ConntrackZone),
        ),
        flow(
            Table::SpoofGuard,
            NORMAL,
            mac(
                Field::ArpSha,
                ipv4(Field::ArpSpa, in_port(arp(), port), pod.ip),
                pod.mac,
            ),
            vec![],
            Some(Table::ArpResponder),
        ),
        flow(
            Table::ArpResponder,
            LOW,
            ipv4(Field::ArpTpa, arp(), pod.ip),
            vec![output(port)],
            None,
        ),
        flow(
            Table::L3Forwarding,
            NORMAL,
            ipv4(Field::Ipv4Dst, ip(), pod.ip),
            vec![
                set_mac(Field::EthSrc, node.gateway_mac),
                set_mac(Field::EthDst, pod.mac),
            ],
            Some(Table::L3DecTtl),
        ),
        flow(
            Table::L2ForwardingCalc,
            NORMAL,
            mac(Field::EthDst, Match::new(), pod.mac),
            vec![set_target_ofport(port)],
            Some(Table::IngressRule),
        ),
    ]
}
