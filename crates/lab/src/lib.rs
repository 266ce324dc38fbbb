//! `antrea-lab`: an emulated multi-Node cluster on one Linux machine. Each Node is a network
//! namespace with a veth NIC on a shared LAN bridge and its own `ovsdb-server` and
//! `ovs-vswitchd` (userspace datapath); Pods are namespaces wired either by `antrea-agent`
//! through the `antrea` CNI plugin (the lab acts as the runtime) or, as a baseline, by a plain
//! OVS NORMAL bridge. With `--runtime containerd` the Pods of agent wiring are made by one
//! containerd per Node through CRI, and containerd runs the plugin. With the fake API server the
//! lab is a cluster with Services (ClusterIP, NodePort, LoadBalancer, ETP Local) and a cluster
//! DNS. `check` probes the connectivity matrix and the Services; `down` removes everything.
//!
//! The planning, state, CNI, agent-file, probe-matrix and report modules are pure and build on
//! every platform; the parts that touch the host are Linux only.

pub mod agent;
pub mod check;
pub mod cni;
pub mod dns;
pub mod error;
pub mod iperf;
pub mod layout;
pub mod plan;
pub mod serve;
pub mod services;
pub mod state;

#[cfg(target_os = "linux")]
pub mod cli;
#[cfg(target_os = "linux")]
pub mod host;
#[cfg(target_os = "linux")]
pub mod lifecycle;
#[cfg(target_os = "linux")]
pub mod runtime;
#[cfg(target_os = "linux")]
pub mod wiring;
