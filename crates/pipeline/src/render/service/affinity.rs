//! ClientIP session affinity by `learn`: once a frontend's group chose an endpoint for a new
//! connection marked "to learn", a `ServiceLB` flow adds to `SessionAffinity` a flow for this
//! client IP, frontend IP, protocol and port that loads the same endpoint (and "selected") into
//! the registers; it expires after the affinity timeout without new connections. The learning
//! flow carries `delete_learned`, so removing it (affinity switched off, the Service gone)
//! removes what it learned. There is one learning flow per frontend and endpoint (matching the
//! endpoint the bucket loaded), whose learned flows carry a cookie of their own
//! ([`learned_cookie`]): Open vSwitch deletes the flows learned with a cookie once no
//! `delete_learned` learning flow with that cookie is left, so an endpoint leaving the Service
//! takes its learning flow and with it every client learned to it, and their next connection
//! is balanced again instead of sent to an endpoint that is gone. A connection that is
//! source-NATed (from outside under `externalTrafficPolicy: Cluster`, local traffic
//! short-circuited under `Local`) learns the source NAT mark too, so the client's later
//! connections are NATed as its first.

use std::net::SocketAddrV4;

use openflow::action::{Action, Learn, LearnSpec};
use openflow::msg::flow_mod::FlowMod;
use openflow::oxm::{Field, Subfield};

use super::frontend::Frontend;
use super::l4;
use crate::cookie::owner_id;
use crate::layout::TableGraph;
use crate::layout::priority::{LOW, NORMAL};
use crate::layout::regs::{
    ENDPOINT_IP_REG, ENDPOINT_PORT_MASK, ENDPOINT_REG, EP_SELECTED, EP_TO_LEARN,
};
use crate::layout::tables::{ENDPOINT_DNAT, SERVICE_LB, SESSION_AFFINITY};
use crate::owners::SERVICE;
use crate::render::flow;

/// OpenFlow timeouts are 16-bit: a longer affinity (Kubernetes allows a day) expires after
/// this many seconds.
const MAX_TIMEOUT: u16 = u16::MAX;

/// The cookie of the flows that `frontend`'s learning flow for `endpoint` learns: no round
/// (learned flows are the switch's soft state, which no round replaces or deletes), the
/// Services' category, and a stable 32-bit id of the frontend (with its source and whether it is
/// reached from the gateway) and the endpoint. Two pairs whose ids collide keep each other's
/// learned flows until one of them goes or the flows idle out.
pub(super) fn learned_cookie(frontend: &Frontend, endpoint: SocketAddrV4) -> u64 {
    SERVICE.category().cookie_bits() | u64::from(owner_id(&format!("{frontend:?}>{endpoint}")))
}

/// The `ServiceLB` flow that learns `endpoint` when the group chose it for a connection to
/// `frontend`, and sends the packet on to its DNAT.
pub(super) fn learn_flow(
    g: &TableGraph,
    frontend: Frontend,
    endpoint: SocketAddrV4,
    timeout_seconds: u32,
    snat: bool,
) -> FlowMod {
    let (_, dst_port) = l4(frontend.protocol);
    let whole = Subfield::whole;
    let learn = Learn {
        table: g.id(SESSION_AFFINITY),
        cookie: learned_cookie(&frontend, endpoint),
        idle_timeout: u16::try_from(timeout_seconds).unwrap_or(MAX_TIMEOUT),
        priority: NORMAL,
        flags: openflow::action::learn::LEARN_DELETE_LEARNED,
        specs: vec![
            LearnSpec::MatchImm {
                dst: whole(Field::EthType),
                value: 0x0800,
            },
            LearnSpec::MatchImm {
                dst: whole(Field::IpProto),
                value: u128::from(frontend.protocol.number()),
            },
            LearnSpec::MatchField {
                dst: whole(dst_port),
                src: whole(dst_port),
            },
            LearnSpec::MatchField {
                dst: whole(Field::Ipv4Dst),
                src: whole(Field::Ipv4Dst),
            },
            LearnSpec::MatchField {
                dst: whole(Field::Ipv4Src),
                src: whole(Field::Ipv4Src),
            },
            LearnSpec::LoadField {
                src: whole(Field::Reg(ENDPOINT_IP_REG)),
                dst: whole(Field::Reg(ENDPOINT_IP_REG)),
            },
            LearnSpec::LoadField {
                src: Subfield::bits(Field::Reg(ENDPOINT_REG), 0, 15),
                dst: Subfield::bits(Field::Reg(ENDPOINT_REG), 0, 15),
            },
            LearnSpec::LoadImm {
                value: u128::from(EP_SELECTED.value >> 16),
                dst: Subfield::bits(Field::Reg(ENDPOINT_REG), 16, 18),
            },
        ]
        .into_iter()
        .chain(snat.then(|| LearnSpec::LoadImm {
            value: 1,
            dst: Subfield::bits(Field::Reg(ENDPOINT_REG), 19, 19),
        }))
        .collect(),
        ..Learn::default()
    };
    let mut matched = frontend.matching(EP_TO_LEARN);
    let (state, state_mask) = matched
        .get(Field::Reg(ENDPOINT_REG))
        .map_or((0, 0), |e| (e.value, e.mask));
    matched.set_masked(
        Field::Reg(ENDPOINT_REG),
        state | u128::from(endpoint.port()),
        state_mask | u128::from(ENDPOINT_PORT_MASK),
    );
    matched.set(
        Field::Reg(ENDPOINT_IP_REG),
        u128::from(u32::from(*endpoint.ip())),
    );
    flow(
        g,
        SERVICE_LB,
        frontend.priority(LOW),
        matched,
        vec![Action::learn(learn), EP_SELECTED.set()],
        Some(ENDPOINT_DNAT),
    )
}
