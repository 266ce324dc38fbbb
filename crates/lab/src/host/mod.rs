//! The Linux host operations the lab is built from: running commands (in namespaces), the
//! processes it starts and stops, mounts under the state directory, namespaces and links, a Node's private Open vSwitch, and HTTP
//! to the fake API server.

pub mod command;
pub mod http;
pub mod mount;
pub mod netns;
pub mod ovs;
pub mod process;
