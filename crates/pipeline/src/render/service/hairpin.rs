//! Hairpin: a Pod reaching itself through one of its Services. After the DNAT the packet's
//! source and destination are the same Pod, which would drop it (a packet from its own
//! address) and which OpenFlow would not send back out of the port it came in on. So, as in
//! Antrea:
//!
//! - `SNATMark` (one flow per local endpoint, held by every Service that has it) marks a new
//!   connection whose source and destination are that endpoint `HAIRPIN` in its zone-65520
//!   entry;
//! - `SNAT` NATs the source of hairpin connections to the gateway IP in zone 65521 (new ones
//!   commit, later ones are NATed by their entry; `snat.rs`, shared with connections from
//!   outside);
//! - `UnSNAT`, before `ConntrackZone`, sends what the Pods send to the gateway IP through zone
//!   65521, which gives the replies their addresses back; zone 65520 then un-DNATs them;
//! - both directions skip the ingress rules (the Pod talks to itself) and the second commit
//!   (`snat.rs`), and leave through `IN_PORT`.

use std::net::Ipv4Addr;

use openflow::action::{Action, Ct, CtZone, Nat};
use openflow::msg::flow_mod::FlowMod;
use openflow::oxm::{Field, Match, PortNo};

use crate::layout::ct_marks::HAIRPIN;
use crate::layout::priority::{HIGH, MISS, NORMAL, POLICY_BYPASS};
use crate::layout::tables::{INGRESS_RULE, OUTPUT, SNAT, SNAT_MARK, UN_SNAT};
use crate::layout::{CT_ZONE, SNAT_CT_ZONE, Stage, TableGraph};
use crate::render::{CT_NEW, CT_TRK, flow, ip, ipv4};
use model::NodeNetwork;

/// The `SNATMark` flow of local endpoint `endpoint`: a new connection from it to itself is
/// hairpin.
pub(super) fn hairpin_mark_flow(g: &TableGraph, endpoint: Ipv4Addr) -> FlowMod {
    let to_itself = ipv4(
        Field::Ipv4Dst,
        ipv4(Field::Ipv4Src, new_connection(), endpoint),
        endpoint,
    );
    let mark = Ct {
        commit: true,
        table: Some(g.id(g.next(SNAT_MARK))),
        zone: CtZone::Imm(CT_ZONE),
        exec: vec![HAIRPIN.set()],
        ..Ct::default()
    };
    flow(
        g,
        SNAT_MARK,
        NORMAL,
        to_itself,
        vec![Action::ct(mark)],
        None,
    )
}

/// The Node's hairpin flows: un-SNAT of replies to the gateway IP, the exceptions in the
/// ingress rules and the output, and the misses of the new tables (the source NAT itself is
/// `snat.rs`'s, shared with connections from outside).
pub(crate) fn hairpin_flows(g: &TableGraph, node: &NodeNetwork) -> Vec<FlowMod> {
    vec![
        flow(
            g,
            UN_SNAT,
            NORMAL,
            ipv4(Field::Ipv4Dst, ip(), node.gateway_ip),
            vec![Action::ct(Ct {
                table: Some(g.id(g.next(UN_SNAT))),
                zone: CtZone::Imm(SNAT_CT_ZONE),
                nat: Some(Nat::default()),
                ..Ct::default()
            })],
            None,
        ),
        flow(
            g,
            UN_SNAT,
            MISS,
            Match::new(),
            vec![],
            Some(g.next(UN_SNAT)),
        ),
        flow(
            g,
            SNAT_MARK,
            MISS,
            Match::new(),
            vec![],
            Some(g.next(SNAT_MARK)),
        ),
        flow(g, SNAT, MISS, Match::new(), vec![], Some(g.next(SNAT))),
        flow(
            g,
            INGRESS_RULE,
            POLICY_BYPASS,
            HAIRPIN.match_on(ip()),
            vec![],
            Some(g.first(Stage::Conntrack)),
        ),
        flow(
            g,
            OUTPUT,
            HIGH,
            HAIRPIN.match_on(ip()),
            vec![Action::output(PortNo::IN_PORT.0)],
            None,
        ),
    ]
}

/// IP packets of a connection conntrack has just seen for the first time.
pub(super) fn new_connection() -> Match {
    ip().with_masked(Field::CtState, CT_NEW | CT_TRK, CT_NEW | CT_TRK)
}
