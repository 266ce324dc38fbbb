//! Source NAT of Service connections to the gateway IP, in zone 65521: hairpin connections (a
//! Pod reaching itself, `hairpin.rs` marks them) and connections from outside under
//! `externalTrafficPolicy: Cluster` (a NodePort, an external or load-balancer IP through the
//! gateway), as kube-proxy masquerades them, so that an endpoint on another Node answers
//! through this one. The Node's own Service connections, which already have the gateway IP as
//! source, are committed there too, so that the two never share a port.
//!
//! - `SNATMark`: a new connection whose frontend flow set `NEEDS_SNAT` gets `SERVICE_SNAT` in
//!   its zone-65520 entry;
//! - `SNAT`: a marked new connection commits in zone 65521 with the gateway IP as source, its
//!   later packets are NATed by that entry;
//! - `ConntrackCommit` leaves marked packets alone (the connection is committed already; a
//!   commit of the source-NATed packet in zone 65520 would add a second entry);
//! - the replies, sent to the gateway IP, are un-SNATed by `UnSNAT` and un-DNATed by
//!   `ConntrackZone`; one from another Node (through the tunnel) is sent to the gateway by the
//!   `L3Forwarding` flow of `SERVICE_SNAT` replies (a local endpoint's goes there as all Pod
//!   traffic to a non-Pod does).

use std::net::IpAddr;

use openflow::action::{Action, Ct, CtZone, Nat, NatKind};
use openflow::msg::flow_mod::FlowMod;
use openflow::oxm::Field;

use super::hairpin::new_connection;
use crate::layout::ct_marks::{CtMark, HAIRPIN, SERVICE_SNAT};
use crate::layout::priority::{HIGH, NORMAL};
use crate::layout::regs::{EP_SELECTED, FROM_GATEWAY, NEEDS_SNAT};
use crate::layout::tables::{CONNTRACK_COMMIT, L3_FORWARDING, SNAT, SNAT_MARK};
use crate::layout::{CT_ZONE, SNAT_CT_ZONE, Stage, TableGraph};
use crate::render::{CT_NEW, CT_RPL, CT_TRK, flow, ip, ipv4, set_mac};
use model::NodeNetwork;

/// The Node's source-NAT flows (with the ids of `g`).
pub(crate) fn gateway_snat_flows(g: &TableGraph, node: &NodeNetwork) -> Vec<FlowMod> {
    let mut flows = vec![
        flow(
            g,
            SNAT_MARK,
            HIGH,
            NEEDS_SNAT.match_on(new_connection()),
            vec![mark_new_connection(g, SERVICE_SNAT)],
            None,
        ),
        // The Node's own Service connections (from the gateway, the gateway IP as source) are
        // committed in zone 65521 too, NATed to their own address: a source NAT to the gateway
        // IP then sees their ports and takes another on a clash, so no reply of theirs is
        // taken for that of a source-NATed connection, nor the other way round.
        flow(
            g,
            SNAT_MARK,
            NORMAL,
            EP_SELECTED.match_on(FROM_GATEWAY.match_on(ipv4(
                Field::Ipv4Src,
                new_connection(),
                node.gateway_ip,
            ))),
            vec![mark_new_connection(g, SERVICE_SNAT)],
            None,
        ),
        flow(
            g,
            L3_FORWARDING,
            HIGH,
            SERVICE_SNAT.match_on(ip().with_masked(
                Field::CtState,
                CT_RPL | CT_TRK,
                CT_RPL | CT_TRK,
            )),
            vec![set_mac(Field::EthDst, node.gateway_mac)],
            Some(g.first(Stage::Switching)),
        ),
    ];
    for mark in [HAIRPIN, SERVICE_SNAT] {
        flows.extend(snat_flows(g, node, mark));
    }
    flows
}

/// `SNATMark`'s action for a new connection: commits it in zone 65520 marked `mark`, for
/// `SNAT` to NAT it.
pub(super) fn mark_new_connection(g: &TableGraph, mark: CtMark) -> Action {
    Action::ct(Ct {
        commit: true,
        table: Some(g.id(g.next(SNAT_MARK))),
        zone: CtZone::Imm(CT_ZONE),
        exec: vec![mark.set()],
        ..Ct::default()
    })
}

/// `SNAT` and `ConntrackCommit` for connections marked `mark`.
fn snat_flows(g: &TableGraph, node: &NodeNetwork, mark: CtMark) -> Vec<FlowMod> {
    let gateway = IpAddr::V4(node.gateway_ip);
    let snat_zone = |commit: bool, nat: Nat| Ct {
        commit,
        table: Some(g.id(g.next(SNAT))),
        zone: CtZone::Imm(SNAT_CT_ZONE),
        nat: Some(nat),
        exec: if commit { vec![mark.set()] } else { vec![] },
        ..Ct::default()
    };
    let to_gateway_source = Nat {
        kind: Some(NatKind::Src),
        addrs: Some((gateway, gateway)),
        ..Nat::default()
    };
    let later_request = ip().with_masked(Field::CtState, CT_TRK, CT_NEW | CT_RPL | CT_TRK);
    vec![
        flow(
            g,
            SNAT,
            NORMAL,
            mark.match_on(new_connection()),
            vec![Action::ct(snat_zone(true, to_gateway_source))],
            None,
        ),
        flow(
            g,
            SNAT,
            NORMAL,
            mark.match_on(later_request),
            vec![Action::ct(snat_zone(false, Nat::default()))],
            None,
        ),
        flow(
            g,
            CONNTRACK_COMMIT,
            HIGH,
            mark.match_on(ip()),
            vec![],
            Some(g.next(CONNTRACK_COMMIT)),
        ),
    ]
}
