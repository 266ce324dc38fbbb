//! The files the lab writes for `antrea-agent`: its configuration file per Node and the shared
//! cluster directory of Node and Pod objects.

pub mod cluster;
pub mod config;

pub use cluster::{NodeObject, PodObject, write_object};
pub use config::AgentConfig;
