//! Plain, platform-neutral value types for what the IP Helper API reads and writes: adapters,
//! routes, unicast addresses, neighbors and per-interface IP settings. Native code converts the
//! Windows rows to and from these; fakes store them directly.

mod adapter;
mod address;
mod family;
mod interface;
mod mac;
mod neighbor;
mod route;

pub use adapter::{Adapter, InterfaceType, Luid, OperStatus};
pub use address::UnicastAddress;
pub use family::IpFamily;
#[cfg(any(windows, feature = "fake"))]
pub(crate) use family::{check_dns_family, same_family};
pub use interface::{IpInterface, IpInterfaceChange};
pub use mac::{MacAddr, MacParseError};
pub use neighbor::{Neighbor, NeighborState};
pub use route::{Route, RouteKey, RouteOrigin, RouteProtocol};
