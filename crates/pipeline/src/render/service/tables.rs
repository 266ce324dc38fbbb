//! The Service tables' fixed flows, which the Node installs with its own (the tables sit on
//! every IP packet's way, so their misses must be there before any Service): the two lookups of
//! `PreRoutingClassifier`, the misses that let non-Service traffic through, and the hand-over
//! of an endpoint that affinity chose. (`ConntrackCommit` later commits a Service connection
//! again: the packet carries the connection `EndpointDNAT` committed, so nothing changes;
//! `tests/service_packets.rs` passes with and without an exception flow for it.)

use openflow::action::Action;
use openflow::msg::flow_mod::FlowMod;
use openflow::oxm::Match;

use crate::layout::TableGraph;
use crate::layout::priority::{MISS, NORMAL};
use crate::layout::regs::{EP_SELECTED, EP_TO_SELECT};
use crate::layout::tables::{ENDPOINT_DNAT, PRE_ROUTING_CLASSIFIER, SERVICE_LB, SESSION_AFFINITY};
use crate::render::{flow, ip};

/// The fixed flows of the Service tables (with the ids of `g`).
pub(crate) fn service_table_flows(g: &TableGraph) -> Vec<FlowMod> {
    vec![
        // Learned affinity flows cannot name a next table, so SessionAffinity is looked up as
        // a subroutine and ServiceLB continues the pipeline.
        flow(
            g,
            PRE_ROUTING_CLASSIFIER,
            NORMAL,
            ip(),
            vec![
                Action::resubmit_table(g.id(SESSION_AFFINITY)),
                Action::resubmit_table(g.id(SERVICE_LB)),
            ],
            None,
        ),
        flow(
            g,
            SESSION_AFFINITY,
            MISS,
            Match::new(),
            vec![EP_TO_SELECT.set()],
            None,
        ),
        // An endpoint chosen by an affinity flow goes straight to its DNAT.
        flow(
            g,
            SERVICE_LB,
            NORMAL,
            EP_SELECTED.match_on(ip()),
            vec![],
            Some(ENDPOINT_DNAT),
        ),
        flow(
            g,
            SERVICE_LB,
            MISS,
            Match::new(),
            vec![],
            Some(g.next(SERVICE_LB)),
        ),
        flow(
            g,
            ENDPOINT_DNAT,
            MISS,
            Match::new(),
            vec![],
            Some(g.next(ENDPOINT_DNAT)),
        ),
    ]
}
