//! `EndpointDNAT` flows: one per endpoint (protocol, IP, port), whichever Service chose it. The
//! flow commits the connection in the Pod zone with its destination NATed to the endpoint,
//! then continues at the next table with the NATed packet. Replies are un-NATed by `ConntrackZone`'s `ct(nat)`. Two Services with one
//! endpoint render the same flow, held by both.

use std::net::IpAddr;

use openflow::action::{Action, Ct, CtZone, Nat, NatKind};
use openflow::msg::flow_mod::FlowMod;
use openflow::oxm::Field;

use super::l4;
use crate::layout::priority::NORMAL;
use crate::layout::regs::{ENDPOINT_IP_REG, ENDPOINT_PORT_MASK, ENDPOINT_REG, EP_SELECTED};
use crate::layout::tables::ENDPOINT_DNAT;
use crate::layout::{CT_ZONE, TableGraph};
use crate::render::{flow, ipv4};
use model::{Endpoint, Protocol};

/// The DNAT flow of `endpoint` for `protocol`.
pub(super) fn dnat_flow(g: &TableGraph, protocol: Protocol, endpoint: &Endpoint) -> FlowMod {
    let (base, _) = l4(protocol);
    let selected_port = EP_SELECTED.value | u32::from(endpoint.port);
    let matched = ipv4(Field::Reg(ENDPOINT_IP_REG), base, endpoint.ip).with_masked(
        Field::Reg(ENDPOINT_REG),
        u128::from(selected_port),
        u128::from(EP_SELECTED.mask | ENDPOINT_PORT_MASK),
    );
    let ip = IpAddr::V4(endpoint.ip);
    let ct = Ct {
        commit: true,
        table: Some(g.id(g.next(ENDPOINT_DNAT))),
        zone: CtZone::Imm(CT_ZONE),
        nat: Some(Nat {
            kind: Some(NatKind::Dst),
            addrs: Some((ip, ip)),
            ports: Some((endpoint.port, endpoint.port)),
            ..Nat::default()
        }),
        ..Ct::default()
    };
    flow(
        g,
        ENDPOINT_DNAT,
        NORMAL,
        matched,
        vec![Action::ct(ct)],
        None,
    )
}
