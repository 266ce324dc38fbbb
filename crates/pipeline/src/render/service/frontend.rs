//! `ServiceLB` flows: one per frontend IP, protocol and port. A packet still to be load-balanced
//! (`reg4[16..18]` = to select) is marked selected (or to learn, under ClientIP affinity) and
//! handed to the Service port's endpoint group; without usable endpoints it goes to the agent,
//! which refuses the connection (a TCP reset or an ICMP port unreachable, as kube-proxy's REJECT). Under
//! affinity a flow per frontend and endpoint learns the endpoint the group chose (`affinity.rs`).
//! Traffic from outside has frontends of its own (`Frontend::from_gateway`, the NodePort
//! frontends), with the external traffic policy's endpoints and, under `Cluster`, the source NAT
//! mark (`snat.rs`). Under `Local`, local traffic to those frontends (the Node's own, its Pods'
//! through the host) has frontends of its own, per local source (`Frontend::source`),
//! short-circuited to every usable endpoint with the source NAT mark, as kube-proxy
//! short-circuits local traffic to its cluster chain.

use std::net::{Ipv4Addr, SocketAddrV4};

use ipnet::Ipv4Net;
use openflow::action::Action;
use openflow::msg::flow_mod::FlowMod;
use openflow::oxm::{Field, Match};

use super::affinity::learn_flow;
use super::l4;
use crate::layout::TableGraph;
use crate::layout::packet_in::PacketInOperation;
use crate::layout::priority::{HIGH, HIGHER, NORMAL};
use crate::layout::regs::{
    EP_SELECTED, EP_TO_LEARN, EP_TO_SELECT, FROM_GATEWAY, NEEDS_SNAT, RegMark,
};
use crate::layout::tables::SERVICE_LB;
use crate::render::{flow, ipv4, ipv4_cidr};
use model::{Protocol, SessionAffinity};

/// What one frontend's traffic does.
pub(super) enum Dispatch {
    /// To the endpoint group `group` of `endpoints`; `snat`: the source is NATed to the gateway
    /// IP (traffic from outside under `externalTrafficPolicy: Cluster`, local traffic
    /// short-circuited under `Local`).
    Group {
        group: u32,
        snat: bool,
        endpoints: Vec<SocketAddrV4>,
    },
    /// No usable endpoint: to the agent, to be refused; through the refusals' meter when
    /// `metered`.
    NoEndpoints { metered: bool },
    /// Traffic from outside under `externalTrafficPolicy: Local` on a Node without a local
    /// endpoint: dropped, as kube-proxy drops it (the load balancer's health check steers
    /// clients to Nodes that have one).
    Drop,
}

impl Dispatch {
    /// The same dispatch with the source NAT `snat` (a group's; the others have none).
    pub(super) fn with_snat(&self, snat: bool) -> Dispatch {
        match self {
            Dispatch::Group {
                group, endpoints, ..
            } => Dispatch::Group {
                group: *group,
                snat,
                endpoints: endpoints.clone(),
            },
            Dispatch::NoEndpoints { metered } => Dispatch::NoEndpoints { metered: *metered },
            Dispatch::Drop => Dispatch::Drop,
        }
    }
}

/// Where one frontend is reached: an address, a protocol and a port, whether only traffic
/// from the gateway counts (an external or load-balancer IP reached from outside, whose Pod
/// traffic has its own, internal, frontend), and whether only the traffic of one local source
/// counts (the Node's own or its Pods', see `ServiceRenderer::set_local_sources`).
#[derive(Debug, Clone, Copy)]
pub(super) struct Frontend {
    pub ip: Ipv4Addr,
    pub protocol: Protocol,
    pub port: u16,
    pub from_gateway: bool,
    pub source: Option<Ipv4Net>,
}

impl Frontend {
    /// The frontend's match in endpoint state `state`.
    pub(super) fn matching(&self, state: RegMark) -> Match {
        let (base, dst_port) = l4(self.protocol);
        let base = if self.from_gateway {
            FROM_GATEWAY.match_on(base)
        } else {
            base
        };
        let base = match self.source {
            Some(source) => ipv4_cidr(Field::Ipv4Src, base, source),
            None => base,
        };
        ipv4(Field::Ipv4Dst, state.match_on(base), self.ip).with(dst_port, u128::from(self.port))
    }

    /// The priority of its flows: local sources' traffic wins over everyone's, and traffic from
    /// the gateway over the same address's internal frontend.
    pub(super) fn priority(&self, normal: u16) -> u16 {
        match (self.source, self.from_gateway) {
            (Some(_), _) => HIGHER,
            (None, true) => HIGH,
            (None, false) => normal,
        }
    }
}

/// The flows of `frontend`.
pub(super) fn frontend_flows(
    g: &TableGraph,
    frontend: Frontend,
    dispatch: &Dispatch,
    affinity: SessionAffinity,
) -> Vec<FlowMod> {
    let matched = frontend.matching(EP_TO_SELECT);
    let priority = frontend.priority(NORMAL);
    let (group, snat, endpoints) = match *dispatch {
        Dispatch::Group {
            group,
            snat,
            ref endpoints,
        } => (group, snat, endpoints),
        Dispatch::NoEndpoints { metered } => {
            return vec![flow(
                g,
                SERVICE_LB,
                priority,
                matched,
                PacketInOperation::ServiceReject.actions(metered),
                None,
            )];
        }
        Dispatch::Drop => return vec![flow(g, SERVICE_LB, priority, matched, vec![], None)],
    };
    let snat_mark = snat.then(|| NEEDS_SNAT.set());
    match affinity {
        SessionAffinity::None => vec![flow(
            g,
            SERVICE_LB,
            priority,
            matched,
            [EP_SELECTED.set()]
                .into_iter()
                .chain(snat_mark)
                .chain([Action::Group(group)])
                .collect(),
            None,
        )],
        SessionAffinity::ClientIp { timeout_seconds } => std::iter::once(flow(
            g,
            SERVICE_LB,
            priority,
            matched,
            [EP_TO_LEARN.set()]
                .into_iter()
                .chain(snat_mark)
                .chain([Action::Group(group)])
                .collect(),
            None,
        ))
        .chain(
            endpoints
                .iter()
                .map(|endpoint| learn_flow(g, frontend, *endpoint, timeout_seconds, snat)),
        )
        .collect(),
    }
}
