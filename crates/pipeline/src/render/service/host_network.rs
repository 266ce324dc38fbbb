//! Service traffic through the gateway (proxyAll: the Node's own, and traffic from outside to a
//! NodePort, an external or a load-balancer IP) to an endpoint on the host network: a Node's
//! address rather than a Pod's, as the `kubernetes` Service's endpoints are.
//! After the DNAT nothing routes such a packet in OVS, and it must go back out of the port it
//! came in on with a source the host accepts (not its own gateway IP), so, as in Antrea:
//!
//! - `L3Forwarding` (below the Pods' and peers' flows): a selected Service packet from the
//!   gateway goes to the gateway MAC, marked `TO_HOST_NETWORK` (the connection's later
//!   packets, DNATed by `ConntrackZone` before any frontend, by their entry's `HAIRPIN` mark);
//! - `SNATMark` marks its new connection `HAIRPIN` in zone 65520, over the source NAT mark of
//!   traffic from outside under `externalTrafficPolicy: Cluster` (`snat.rs`), whose NAT to
//!   the gateway IP would make the packet a martian to the host;
//! - `SNAT` (over the hairpin NAT to the gateway IP) commits it in zone 65521 with the virtual
//!   Service IP 169.254.0.253 as source, which the host routes back to the gateway;
//! - `UnSNAT` sends what the host sends to 169.254.0.253 through zone 65521, which gives the
//!   reply its addresses back; zone 65520 un-DNATs it, and it goes back to the host;
//! - both directions leave through `IN_PORT` and skip the ingress rules and the second
//!   commit, as every hairpin connection (`hairpin.rs`).

use std::net::IpAddr;

use openflow::action::{Action, Ct, CtZone, Nat, NatKind};
use openflow::msg::flow_mod::FlowMod;
use openflow::oxm::Field;

use super::hairpin::new_connection;
use super::snat::mark_new_connection;
use crate::layout::ct_marks::HAIRPIN;
use crate::layout::priority::{HIGH, HIGHER, LOW, NORMAL};
use crate::layout::regs::{EP_SELECTED, FROM_GATEWAY, TO_HOST_NETWORK};
use crate::layout::tables::{L3_FORWARDING, SNAT, SNAT_MARK, UN_SNAT};
use crate::layout::{SNAT_CT_ZONE, TableGraph};
use crate::render::{flow, ip, ipv4, set_mac};
use model::{NodeNetwork, VIRTUAL_SERVICE_IP};

/// The Node's flows for its Service traffic to host-network endpoints (with the ids of `g`).
pub(crate) fn host_network_endpoint_flows(g: &TableGraph, node: &NodeNetwork) -> Vec<FlowMod> {
    let virtual_ip = IpAddr::V4(VIRTUAL_SERVICE_IP);
    vec![
        flow(
            g,
            L3_FORWARDING,
            LOW,
            EP_SELECTED.match_on(FROM_GATEWAY.match_on(ip())),
            vec![
                set_mac(Field::EthDst, node.gateway_mac),
                TO_HOST_NETWORK.set(),
            ],
            Some(g.next(L3_FORWARDING)),
        ),
        // The connection's later packets: DNATed by `ConntrackZone`, they meet no frontend
        // and are not "selected", but their entry is marked.
        flow(
            g,
            L3_FORWARDING,
            LOW,
            HAIRPIN.match_on(FROM_GATEWAY.match_on(ip())),
            vec![set_mac(Field::EthDst, node.gateway_mac)],
            Some(g.next(L3_FORWARDING)),
        ),
        flow(
            g,
            SNAT_MARK,
            HIGHER,
            TO_HOST_NETWORK.match_on(new_connection()),
            vec![mark_new_connection(g, HAIRPIN)],
            None,
        ),
        flow(
            g,
            SNAT,
            HIGH,
            FROM_GATEWAY.match_on(HAIRPIN.match_on(new_connection())),
            vec![Action::ct(Ct {
                commit: true,
                table: Some(g.id(g.next(SNAT))),
                zone: CtZone::Imm(SNAT_CT_ZONE),
                nat: Some(Nat {
                    kind: Some(NatKind::Src),
                    addrs: Some((virtual_ip, virtual_ip)),
                    ..Nat::default()
                }),
                exec: vec![HAIRPIN.set()],
                ..Ct::default()
            })],
            None,
        ),
        flow(
            g,
            UN_SNAT,
            NORMAL,
            ipv4(Field::Ipv4Dst, ip(), VIRTUAL_SERVICE_IP),
            vec![Action::ct(Ct {
                table: Some(g.id(g.next(UN_SNAT))),
                zone: CtZone::Imm(SNAT_CT_ZONE),
                nat: Some(Nat::default()),
                ..Ct::default()
            })],
            None,
        ),
    ]
}
