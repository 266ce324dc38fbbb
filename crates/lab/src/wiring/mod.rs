//! Building the lab's pieces: what every wiring shares (the LAN, the Node's NIC and OVS, the
//! external host, the `serve` answerers), the `normal` wiring (a plain NORMAL br-int over a flat
//! Pod subnet) and the `agent` wiring (agent configuration, the cluster the agents read (a
//! directory or the fake API server), agent processes, Pods through the CNI plugin) and, with
//! the fake API server, the lab's Services and cluster DNS.

pub mod agent;
pub mod apiserver;
pub mod cluster;
pub mod common;
pub mod controller;
pub mod normal;
pub mod services;
