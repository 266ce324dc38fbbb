//! What the lab writes for `antrea-agent`: its configuration file per Node and the cluster's
//! Node and Pod objects (for the cluster directory or the fake API server) and the lab's Service.

pub mod cluster;
pub mod config;

pub use cluster::{
    ClusterObject, EndpointSliceObject, NodeObject, PodObject, ServiceObject, write_object,
};
pub use config::{AgentConfig, ControllerMode};
