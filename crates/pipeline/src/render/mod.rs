//! The renderer: pure functions from the model to OpenFlow flow mods, one function per owner
//! kind. Flows come out as `add` flow mods with cookie 0; the flow cache stamps each owner's
//! cookie (round, category, owner id) on them. Flows name their tables and goto targets; the
//! agent's [`TableGraph`] gives the ids.

pub mod node;
pub mod peer;
pub mod pod;
pub mod policy;
pub mod service;

pub use node::{node_flows, revalidation_nudge};
pub use peer::peer_flows;
pub use pod::pod_flows;
pub use policy::counters::RuleCounters;
pub use policy::{PolicyFlows, PolicyPatch, PolicyRenderer, PolicyUndo, PolicyUpdate, RuleFlows};
pub use service::{
    ServiceError, ServiceRecord, ServiceRenderer, ServiceUpdate, StaleUdp, service_owner,
};

use std::net::Ipv4Addr;

use model::{Ipv4Net, MacAddr};
use openflow::action::{Action, Instructions};
use openflow::msg::flow_mod::{FlowMod, FlowModCommand};
use openflow::oxm::{Field, Match, PortNo};

use crate::layout::{Table, TableGraph};

const ETH_TYPE_IPV4: u128 = 0x0800;

/// `ct_state` bits.
pub(crate) const CT_NEW: u128 = 0x01;
pub(crate) const CT_EST: u128 = 0x02;
pub(crate) const CT_REL: u128 = 0x04;
pub(crate) const CT_RPL: u128 = 0x08;
pub(crate) const CT_INV: u128 = 0x10;
pub(crate) const CT_TRK: u128 = 0x20;
const ETH_TYPE_ARP: u128 = 0x0806;

/// An `add` of a flow in `table` at `priority`, with the ids of `graph`.
pub(crate) fn flow(
    graph: &TableGraph,
    table: Table,
    priority: u16,
    flow_match: Match,
    apply: Vec<Action>,
    goto: Option<Table>,
) -> FlowMod {
    let mut fm = FlowMod::new(FlowModCommand::Add);
    fm.table_id = graph.id(table);
    fm.priority = priority;
    fm.flow_match = flow_match;
    fm.instructions = Instructions {
        apply,
        goto_table: goto.map(|target| graph.id(target)),
        ..Instructions::default()
    };
    fm
}

/// `ip`.
pub(crate) fn ip() -> Match {
    Match::new().with(Field::EthType, ETH_TYPE_IPV4)
}

/// `arp`.
pub(crate) fn arp() -> Match {
    Match::new().with(Field::EthType, ETH_TYPE_ARP)
}

pub(crate) fn in_port(m: Match, port: u32) -> Match {
    m.with(Field::InPort, u128::from(port))
}

pub(crate) fn ipv4(field: Field, m: Match, ip: Ipv4Addr) -> Match {
    m.with(field, u128::from(u32::from(ip)))
}

pub(crate) fn ipv4_cidr(field: Field, m: Match, cidr: Ipv4Net) -> Match {
    m.with_masked(
        field,
        u128::from(u32::from(cidr.network())),
        u128::from(u32::from(cidr.netmask())),
    )
}

pub(crate) fn mac(field: Field, m: Match, mac: MacAddr) -> Match {
    m.with(field, u128::from(mac.to_u64()))
}

pub(crate) fn set_mac(field: Field, mac: MacAddr) -> Action {
    Action::set_field(field, u128::from(mac.to_u64()))
}

pub(crate) fn set_ipv4(field: Field, ip: Ipv4Addr) -> Action {
    Action::set_field(field, u128::from(u32::from(ip)))
}

pub(crate) fn output(port: u32) -> Action {
    Action::Output {
        port: PortNo(port),
        max_len: 0xffff,
    }
}
