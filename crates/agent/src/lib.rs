//! The antrea-rs node agent's library: its configuration ([`config`]), the source of the
//! cluster's Nodes and Pods ([`cluster`], fed by the Kubernetes API through [`kubernetes`] or by a
//! directory in the lab), and the wiring that brings a Node up and keeps it in
//! line with the cluster: [`datapath`] (the one boundary through which the controllers and the
//! CNI server change the datapath, and its Open vSwitch implementation with the Node's
//! bring-up), [`ovs`] (its OVSDB side), [`flows`] (its OpenFlow side), [`controller`] (peer
//! Nodes, NetworkPolicy), [`cniserver`] (CNI ADD/DEL/CHECK/GC), [`supervise`] (the HNS healing loop and the takeover
//! watchdog on Windows), [`tasks`] (the supervisor of the agent's long-running tasks and the
//! requeue of failed datapath updates) and [`agent`] (the process's life); the process around
//! it: [`cli`] (the command line), [`logging`] (console and file), [`heap`] (freed memory given
//! back to the OS after large changes), [`service`] (the agent as a Windows service) and
//! [`node_setup`] (the Windows Node's `install-ovs`, `prepare-node` and `uninstall`).

pub mod agent;
pub mod antctl;
pub mod apiserver;
pub mod cli;
pub mod cluster;
pub mod cniserver;
pub mod config;
pub mod controller;
pub mod datapath;
pub mod error;
pub mod flows;
pub mod heap;
pub mod kubernetes;
pub mod logging;
pub mod node;
pub mod node_setup;
pub mod ovs;
pub mod service;
pub mod supervise;
pub mod tasks;

pub use error::AgentError;
