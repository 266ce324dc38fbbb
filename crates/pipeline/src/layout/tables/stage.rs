//! [`Stage`]: where in a packet's way through the pipeline a table does its job. The stages and
//! their order are Antrea's (it has one more, its root classifier's `Start`, before them).

use std::fmt;

/// A stage of the pipeline, in packet order: every table of a stage comes before every table of
/// a later stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Stage {
    /// Where a packet comes from (its ingress port).
    Classifier,
    /// Whether a Pod's packet carries the Pod's own addresses.
    Validation,
    /// Conntrack state: tracking, dropping invalid connections.
    ConntrackState,
    /// Before the routing decision (Service load balancing, next issue).
    PreRouting,
    /// NetworkPolicy egress rules.
    EgressSecurity,
    /// The next hop and the MAC rewrite; the TTL.
    Routing,
    /// After the routing decision (SNAT in Antrea).
    PostRouting,
    /// The destination MAC's output port.
    Switching,
    /// NetworkPolicy ingress rules.
    IngressSecurity,
    /// Committing new connections.
    Conntrack,
    /// Leaving the bridge.
    Output,
}

impl Stage {
    /// The name shown by `antctl get pipeline` (Antrea's stage, capitalised).
    pub fn name(self) -> &'static str {
        match self {
            Stage::Classifier => "Classifier",
            Stage::Validation => "Validation",
            Stage::ConntrackState => "ConntrackState",
            Stage::PreRouting => "PreRouting",
            Stage::EgressSecurity => "EgressSecurity",
            Stage::Routing => "Routing",
            Stage::PostRouting => "PostRouting",
            Stage::Switching => "Switching",
            Stage::IngressSecurity => "IngressSecurity",
            Stage::Conntrack => "Conntrack",
            Stage::Output => "Output",
        }
    }
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
