//! The Linux host operations the lab is built from: running commands (in namespaces), the
//! processes it starts and stops, namespaces and links, and a Node's private Open vSwitch.

pub mod command;
pub mod netns;
pub mod ovs;
pub mod process;
