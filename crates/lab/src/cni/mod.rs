//! The lab's side of the CNI contract: acting as the container runtime, it builds the CNI
//! environment and network configuration for the `antrea` plugin and reads back its result.

pub mod dns;
pub mod env;
pub mod netconf;
pub mod result;

pub use dns::{Dns, parse_dns};
pub use env::{CniCommand, Invocation};
pub use netconf::NetConf;
pub use result::{CniError, PodAddress, parse_result};
