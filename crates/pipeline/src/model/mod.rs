//! The datapath-neutral input of the pipeline: the Node's own network ([`NodeNetwork`]), the
//! Pods on it ([`LocalPod`]) and the other Nodes ([`PeerNode`]). Nothing here knows OpenFlow;
//! the same model could feed another renderer.

pub mod addr;
pub mod node;
pub mod peer;
pub mod pod;

pub use addr::{Ipv4Cidr, MacAddr};
pub use node::{NodeNetwork, NodePorts, TrafficMode, TunnelType};
pub use peer::{PeerNode, PeerRoute};
pub use pod::{LocalPod, PodKey};
