//! The Service tables' fixed flows, which the Node installs with its own (the tables sit on
//! every IP packet's way, so their misses must be there before any Service): the two lookups of
//! `PreRoutingClassifier`, the misses that let non-Service traffic through, the hand-over of
//! an endpoint that affinity chose, and the `ConntrackCommit` exception for connections
//! `EndpointDNAT` already committed.

use openflow::action::Action;
use openflow::msg::flow_mod::FlowMod;
use openflow::oxm::{Field, Match};

use crate::layout::TableGraph;
use crate::layout::priority::{HIGH, MISS, NORMAL};
use crate::layout::regs::{EP_SELECTED, EP_TO_SELECT, SERVICE_CT_MARK};
use crate::layout::tables::{
    CONNTRACK_COMMIT, ENDPOINT_DNAT, PRE_ROUTING_CLASSIFIER, SERVICE_LB, SESSION_AFFINITY,
};
use crate::render::{CT_NEW, CT_TRK, flow, ip};

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
        // EndpointDNAT committed the connection with its NAT: a second commit of the NATed
        // packet would track it as another connection.
        flow(
            g,
            CONNTRACK_COMMIT,
            HIGH,
            ip().with_masked(Field::CtState, CT_NEW | CT_TRK, CT_NEW | CT_TRK)
                .with_masked(
                    Field::CtMark,
                    u128::from(SERVICE_CT_MARK),
                    u128::from(SERVICE_CT_MARK),
                ),
            vec![],
            Some(g.next(CONNTRACK_COMMIT)),
        ),
    ]
}
