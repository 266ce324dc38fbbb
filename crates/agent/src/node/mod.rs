//! What the agent needs to know about a Node of the cluster ([`NodeInfo`]: Node IP, Pod CIDR,
//! NIC MAC) and how that turns into the inputs of the pipeline and of the host network (this
//! Node's [`model::NodeNetwork`], peers, routes).

mod info;
mod network;

pub use info::{MAC_ANNOTATION, NodeInfo, NodeInfoError};
pub use network::{gateway_mac, peer_node, peer_route};
