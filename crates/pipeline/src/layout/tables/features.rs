//! Every feature's tables. A feature declares each of its tables once, as a constant naming it
//! and its stage, and lists them in its entry of [`FEATURES`]; adding a table is one constant and
//! one list entry here, plus the table's own flows. The renderers name these constants; the
//! graph gives their ids.

use super::{Feature, Stage, Table};

// The classifier.

/// By ingress port: host↔uplink pass-through, then tunnel, gateway, uplink (direct peers) and
/// Pods, each marked with its source.
pub const CLASSIFIER: Table = Table::new("Classifier", Stage::Classifier);

// The spoof guard.

/// Pod packets must carry the Pod's MAC and IP (IP and ARP).
pub const SPOOF_GUARD: Table = Table::new("SpoofGuard", Stage::Validation);

// Conntrack.

/// Replies to the gateway IP go through the SNAT zone (65521) first, which gives back the
/// addresses of connections whose source was NATed (hairpin, `docs/services.md`).
pub const UN_SNAT: Table = Table::new("UnSNAT", Stage::ConntrackState);
/// Sends IP packets through conntrack (zone 65520).
pub const CONNTRACK_ZONE: Table = Table::new("ConntrackZone", Stage::ConntrackState);
/// Drops invalid connections.
pub const CONNTRACK_STATE: Table = Table::new("ConntrackState", Stage::ConntrackState);
/// Commits new connections.
pub const CONNTRACK_COMMIT: Table = Table::new("ConntrackCommit", Stage::Conntrack);

// Services (AntreaProxy's tables, `docs/services.md`).

/// Looks a packet up in `SessionAffinity`, then in `ServiceLB` (learned affinity flows cannot
/// continue the pipeline themselves, so both tables are resubmitted to).
pub const PRE_ROUTING_CLASSIFIER: Table = Table::new("PreRoutingClassifier", Stage::PreRouting);
/// The endpoints ClientIP affinity learned per client, frontend and port; its miss marks the
/// packet for selection.
pub const SESSION_AFFINITY: Table = Table::new("SessionAffinity", Stage::PreRouting);
/// Per frontend IP, protocol and port: the Service port's endpoint group (or drop, without
/// endpoints); learns the chosen endpoint for ClientIP affinity.
pub const SERVICE_LB: Table = Table::new("ServiceLB", Stage::PreRouting);
/// Per chosen endpoint: commits the connection with its destination NATed to the endpoint.
pub const ENDPOINT_DNAT: Table = Table::new("EndpointDNAT", Stage::PreRouting);
/// Per local endpoint: marks a new connection from the endpoint to itself (a Pod reaching its
/// own Service) as hairpin, in its conntrack entry.
pub const SNAT_MARK: Table = Table::new("SNATMark", Stage::PostRouting);
/// NATs the source of hairpin connections to the gateway IP (zone 65521).
pub const SNAT: Table = Table::new("SNAT", Stage::PostRouting);

// NetworkPolicy egress.

/// NetworkPolicy egress allow rules of local Pods (conjunctive flows); established and related
/// traffic passes.
pub const EGRESS_RULE: Table = Table::new("EgressRule", Stage::EgressSecurity);
/// Drops what egress-isolated Pods send that no rule allowed.
pub const EGRESS_DEFAULT_RULE: Table = Table::new("EgressDefaultRule", Stage::EgressSecurity);

// L3 forwarding.

/// Chooses the next hop: local Pod, gateway, tunnel or uplink; rewrites the MACs.
pub const L3_FORWARDING: Table = Table::new("L3Forwarding", Stage::Routing);

// TTL.

/// Decrements the TTL of routed packets.
pub const L3_DEC_TTL: Table = Table::new("L3DecTTL", Stage::Routing);

// L2 forwarding.

/// Maps the destination MAC to the output port.
pub const L2_FORWARDING_CALC: Table = Table::new("L2ForwardingCalc", Stage::Switching);

// NetworkPolicy ingress.

/// NetworkPolicy ingress allow rules of local Pods; established and related traffic and the
/// Node's own traffic to its Pods pass.
pub const INGRESS_RULE: Table = Table::new("IngressRule", Stage::IngressSecurity);
/// Drops what ingress-isolated Pods would receive that no rule allowed.
pub const INGRESS_DEFAULT_RULE: Table = Table::new("IngressDefaultRule", Stage::IngressSecurity);

// Output.

/// Outputs to the port chosen by `L2ForwardingCalc`.
pub const OUTPUT: Table = Table::new("Output", Stage::Output);

// ARP. Antrea's ARP pipeline ends in its responder, in the output stage: ARP leaves the bridge
// there. The feature comes after the output feature, so the IP path's `Output` stays the table
// right after `ConntrackCommit`.

/// Answers ARP for peer gateways; forwards other ARP by target IP.
pub const ARP_RESPONDER: Table = Table::new("ARPResponder", Stage::Output);

/// The agent's features, in the order their tables come within a stage.
pub const FEATURES: &[Feature<'static>] = &[
    Feature {
        name: "classifier",
        tables: &[CLASSIFIER],
    },
    Feature {
        name: "spoof guard",
        tables: &[SPOOF_GUARD],
    },
    Feature {
        name: "conntrack",
        tables: &[UN_SNAT, CONNTRACK_ZONE, CONNTRACK_STATE, CONNTRACK_COMMIT],
    },
    Feature {
        name: "Services",
        tables: &[
            PRE_ROUTING_CLASSIFIER,
            SESSION_AFFINITY,
            SERVICE_LB,
            ENDPOINT_DNAT,
            SNAT_MARK,
            SNAT,
        ],
    },
    Feature {
        name: "NetworkPolicy egress",
        tables: &[EGRESS_RULE, EGRESS_DEFAULT_RULE],
    },
    Feature {
        name: "L3 forwarding",
        tables: &[L3_FORWARDING],
    },
    Feature {
        name: "TTL",
        tables: &[L3_DEC_TTL],
    },
    Feature {
        name: "L2 forwarding",
        tables: &[L2_FORWARDING_CALC],
    },
    Feature {
        name: "NetworkPolicy ingress",
        tables: &[INGRESS_RULE, INGRESS_DEFAULT_RULE],
    },
    Feature {
        name: "output",
        tables: &[OUTPUT],
    },
    Feature {
        name: "ARP",
        tables: &[ARP_RESPONDER],
    },
];
