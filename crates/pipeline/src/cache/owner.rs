//! [`FlowOwner`]: who wants a flow. Each owner's flows are replaced as a whole.

use std::fmt;

use crate::cookie::{Category, Round, cookie, owner_id};
use model::PodKey;

/// The owner of a set of desired flows.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FlowOwner {
    /// The Node's own flows.
    Node,
    /// A local Pod's flows.
    Pod(PodKey),
    /// A peer Node's flows, by Node name.
    Peer(String),
    /// The NetworkPolicy rules and default drops of the Node's Pods (one owner: rules share
    /// flows, and one update of all of them is one atomic bundle).
    NetworkPolicy,
}

impl FlowOwner {
    /// The cookie category of this owner's flows.
    pub fn category(&self) -> Category {
        match self {
            FlowOwner::Node => Category::Node,
            FlowOwner::Pod(_) => Category::Pod,
            FlowOwner::Peer(_) => Category::Peer,
            FlowOwner::NetworkPolicy => Category::NetworkPolicy,
        }
    }

    /// The cookie of this owner's flows in `round`.
    pub fn cookie(&self, round: Round) -> u64 {
        cookie(round, self.category(), owner_id(&self.to_string()))
    }
}

impl fmt::Display for FlowOwner {
    /// `node`, `pod:NAMESPACE/NAME`, `peer:NODE`, `networkpolicy`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FlowOwner::Node => f.write_str("node"),
            FlowOwner::Pod(key) => write!(f, "pod:{key}"),
            FlowOwner::Peer(name) => write!(f, "peer:{name}"),
            FlowOwner::NetworkPolicy => f.write_str("networkpolicy"),
        }
    }
}
