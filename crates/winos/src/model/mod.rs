//! Plain, platform-neutral value types for what the IP Helper API reads and writes: adapters,
//! routes, unicast addresses, neighbors and per-interface IP settings. Native code converts the
//! Windows rows to and from these; fakes store them directly. MAC addresses are the workspace's
//! [`model::MacAddr`] (IP Helper's rows carry six bytes; Windows prints them with
//! [`model::MacAddr::windows`]).

mod adapter;
mod address;
mod family;
mod interface;
mod neighbor;
mod route;

pub use adapter::{Adapter, InterfaceType, Luid, OperStatus};
pub use address::UnicastAddress;
pub use family::IpFamily;
#[cfg(any(windows, feature = "fake"))]
pub(crate) use family::{check_dns_family, same_family};
pub use interface::{IpInterface, IpInterfaceChange};
pub use neighbor::{Neighbor, NeighborState};
pub use route::{Route, RouteKey, RouteOrigin, RouteProtocol};
