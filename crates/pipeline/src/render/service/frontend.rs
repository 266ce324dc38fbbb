//! `ServiceLB` flows: one per frontend IP, protocol and port. A packet still to be load-balanced
//! (`reg4[16..18]` = to select) is marked selected (or to learn, under ClientIP affinity) and
//! handed to the Service port's endpoint group; without usable endpoints it goes to the agent,
//! which refuses the connection (a TCP reset or an ICMP port unreachable, as kube-proxy's REJECT). Under
//! affinity a second flow per frontend learns the endpoint the group chose (`affinity.rs`).

use std::net::Ipv4Addr;

use openflow::action::Action;
use openflow::msg::flow_mod::FlowMod;
use openflow::oxm::{Field, Match};

use super::affinity::learn_flow;
use super::l4;
use crate::layout::TableGraph;
use crate::layout::packet_in::PacketInOperation;
use crate::layout::priority::NORMAL;
use crate::layout::regs::{EP_SELECTED, EP_TO_LEARN, EP_TO_SELECT};
use crate::layout::tables::SERVICE_LB;
use crate::render::{flow, ipv4};
use model::{Protocol, SessionAffinity};

/// What one frontend's traffic does.
pub(super) enum Dispatch {
    /// To the endpoint group `group`.
    Group(u32),
    /// No usable endpoint: to the agent, to be refused.
    NoEndpoints,
}

/// `proto,reg4=STATE/0x70000,nw_dst=IP,tp_dst=PORT`.
pub(super) fn frontend_match(
    state: crate::layout::regs::RegMark,
    ip: Ipv4Addr,
    protocol: Protocol,
    port: u16,
) -> Match {
    let (base, dst_port) = l4(protocol);
    ipv4(Field::Ipv4Dst, state.match_on(base), ip).with(dst_port, u128::from(port))
}

/// The flows of frontend `ip` `protocol`/`port`.
pub(super) fn frontend_flows(
    g: &TableGraph,
    ip: Ipv4Addr,
    protocol: Protocol,
    port: u16,
    dispatch: &Dispatch,
    affinity: SessionAffinity,
) -> Vec<FlowMod> {
    let matched = frontend_match(EP_TO_SELECT, ip, protocol, port);
    let Dispatch::Group(group) = *dispatch else {
        return vec![flow(
            g,
            SERVICE_LB,
            NORMAL,
            matched,
            vec![PacketInOperation::ServiceReject.controller_action()],
            None,
        )];
    };
    match affinity {
        SessionAffinity::None => vec![flow(
            g,
            SERVICE_LB,
            NORMAL,
            matched,
            vec![EP_SELECTED.set(), Action::Group(group)],
            None,
        )],
        SessionAffinity::ClientIp { timeout_seconds } => vec![
            flow(
                g,
                SERVICE_LB,
                NORMAL,
                matched,
                vec![EP_TO_LEARN.set(), Action::Group(group)],
                None,
            ),
            learn_flow(g, ip, protocol, port, timeout_seconds),
        ],
    }
}
