//! The datapath-neutral input of the pipeline: the Node's own network ([`NodeNetwork`]), the
//! Pods on it ([`LocalPod`]) and the other Nodes ([`PeerNode`]). Nothing here knows OpenFlow;
//! the same model could feed another renderer. Addresses are the workspace's one MAC and CIDR
//! types, [`model::MacAddr`] and [`model::Ipv4Net`].

pub mod node;
pub mod peer;
pub mod pod;

pub use node::{NodeNetwork, NodePorts, TrafficMode, TunnelType};
pub use peer::{PeerNode, PeerRoute};
pub use pod::{LocalPod, PodKey};
