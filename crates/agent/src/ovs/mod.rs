//! The agent's side of Open vSwitch: in the OVS database, the bridge and its ports as the agent
//! wants them ([`BridgeWant`], [`PortWant`]), brought about with the fewest writes, each write
//! counted so a restart can show that it changed nothing; and ovs-vswitchd's control socket
//! ([`unixctl`]).

mod bridge;
mod containers;
pub mod unixctl;
mod want;

pub use bridge::OvsBridge;
pub use containers::{ContainerPort, container_id};
pub use want::{BridgeWant, PortWant, antrea_type};
