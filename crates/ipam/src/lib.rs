//! IP address management compatible with the reference `host-local` CNI plugin: the same IPAM
//! configuration ([`IpamConfig`]: `ranges` as a list of range sets, legacy `subnet`/`rangeStart`/
//! `rangeEnd`/`gateway`, `routes`, `dataDir`), the same on-disk store (`<dataDir>/<network>/<ip>`
//! files holding `<container id>\r\n<ifname>`, `last_reserved_ip.<range set index>`, a `lock`
//! file taken with an exclusive advisory lock) and the same round-robin allocation order, so
//! this library and the `host-local` binary can share one data directory.
//!
//! The agent runs it in-process through [`Ipam`].

mod address_bits;
mod allocator;
mod config;
mod error;
mod range;
mod store;

pub use allocator::{Allocation, Ipam};
pub use config::{DEFAULT_DATA_DIR, IpamConfig};
pub use error::IpamError;
pub use range::{Range, RangeSet};
pub use store::{Locked, Owner, Store};
