//! The pipeline's tables, in packet order (`goto_table` only goes forward), with their OpenFlow
//! table ids. Names follow Antrea's
//! where the table does the same job, so operators who know Antrea's dumps can read ours.

use std::fmt;

/// A table of the pipeline. The discriminant is the OpenFlow table id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Table {
    /// By ingress port: host↔uplink pass-through, then tunnel, gateway, uplink (direct peers)
    /// and Pods, each marked with its source.
    Classifier = 0,
    /// Pod packets must carry the Pod's MAC and IP (IP and ARP).
    SpoofGuard = 1,
    /// Answers ARP for peer gateways; forwards other ARP by target IP.
    ArpResponder = 2,
    /// Sends IP packets through conntrack (zone 65520).
    ConntrackZone = 3,
    /// Drops invalid connections.
    ConntrackState = 4,
    /// NetworkPolicy egress allow rules of local Pods (conjunctive flows); established and
    /// related traffic passes.
    EgressRule = 5,
    /// Drops what egress-isolated Pods send that no rule allowed.
    EgressDefaultRule = 6,
    /// Chooses the next hop: local Pod, gateway, tunnel or uplink; rewrites the MACs.
    L3Forwarding = 7,
    /// Decrements the TTL of routed packets.
    L3DecTtl = 8,
    /// Maps the destination MAC to the output port.
    L2ForwardingCalc = 9,
    /// NetworkPolicy ingress allow rules of local Pods; established and related traffic and
    /// the Node's own traffic to its Pods pass.
    IngressRule = 10,
    /// Drops what ingress-isolated Pods would receive that no rule allowed.
    IngressDefaultRule = 11,
    /// Commits new connections.
    ConntrackCommit = 12,
    /// Outputs to the port chosen by `L2ForwardingCalc`.
    Output = 13,
}

impl Table {
    /// Every table, in id order.
    pub const ALL: [Table; 14] = [
        Table::Classifier,
        Table::SpoofGuard,
        Table::ArpResponder,
        Table::ConntrackZone,
        Table::ConntrackState,
        Table::EgressRule,
        Table::EgressDefaultRule,
        Table::L3Forwarding,
        Table::L3DecTtl,
        Table::L2ForwardingCalc,
        Table::IngressRule,
        Table::IngressDefaultRule,
        Table::ConntrackCommit,
        Table::Output,
    ];

    /// The OpenFlow table id.
    pub fn id(self) -> u8 {
        self as u8
    }

    /// The table with OpenFlow id `id`.
    pub fn from_id(id: u8) -> Option<Table> {
        Table::ALL.get(usize::from(id)).copied()
    }

    /// The name shown in dumps and docs (Antrea's spelling where the job is the same).
    pub fn name(self) -> &'static str {
        match self {
            Table::Classifier => "Classifier",
            Table::SpoofGuard => "SpoofGuard",
            Table::ArpResponder => "ARPResponder",
            Table::ConntrackZone => "ConntrackZone",
            Table::ConntrackState => "ConntrackState",
            Table::EgressRule => "EgressRule",
            Table::EgressDefaultRule => "EgressDefaultRule",
            Table::L3Forwarding => "L3Forwarding",
            Table::L3DecTtl => "L3DecTTL",
            Table::L2ForwardingCalc => "L2ForwardingCalc",
            Table::IngressRule => "IngressRule",
            Table::IngressDefaultRule => "IngressDefaultRule",
            Table::ConntrackCommit => "ConntrackCommit",
            Table::Output => "Output",
        }
    }
}

impl fmt::Display for Table {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_dense_and_round_trip() {
        for (i, t) in Table::ALL.iter().enumerate() {
            assert_eq!(usize::from(t.id()), i);
            assert_eq!(Table::from_id(t.id()), Some(*t));
        }
        assert_eq!(Table::from_id(14), None);
        assert_eq!(Table::L3DecTtl.to_string(), "L3DecTTL");
    }
}
