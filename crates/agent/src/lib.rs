//! The antrea-rs node agent's library: its configuration ([`config`]) and the source of the
//! cluster's Nodes and Pods ([`cluster`]).

pub mod cluster;
pub mod config;
