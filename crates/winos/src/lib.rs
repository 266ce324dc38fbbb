//! The native Windows OS calls the agent makes, each behind a trait with a stateful fake:
//!
//! - [`IpHelper`]: adapters, routes, unicast addresses, neighbors, interface forwarding/MTU and
//!   adapter renames (`iphlpapi.dll`; the rename through WMI `MSFT_NetAdapter`).
//! - [`NetNat`]: the host NAT instance `antrea-nat` (WMI `root\StandardCimv2` `MSFT_NetNat`).
//! - [`Firewall`]: allow rules for the Pod CIDR (firewall COM API `INetFwPolicy2`).
//! - `features` (Windows only): the optional features' install state (WMI
//!   `Win32_OptionalFeature`), for `prepare-node`.
//!
//! No PowerShell runs. The value types ([`model`]) and traits compile everywhere; the native
//! implementations (`NativeIpHelper`, `WmiNetNat`, `ComFirewall`) exist on Windows only.
//! Functions an older Windows or Wine lacks are resolved at run time, so a missing one yields
//! [`WinOsError::Unsupported`] instead of stopping the executable from loading. The fakes
//! (`FakeIpHelper`, `FakeNetNat`, `FakeFirewall`, behind the cargo feature `fake`, off in the
//! shipped binaries) answer like Windows (same typed errors for duplicates and missing objects),
//! log calls and take injected failures; this crate's and other crates' tests use them.
//! `docs/winos.md` says which call is verified how.

mod ensure;
mod error;
#[cfg(windows)]
pub mod features;
pub mod firewall;
pub mod iphelper;
pub mod model;
#[cfg(windows)]
mod native;
pub mod netnat;
#[cfg(feature = "fake")]
mod recorder;

pub use ensure::Ensured;
pub use error::{
    ERROR_FILE_NOT_FOUND, ERROR_NOT_FOUND, ERROR_OBJECT_ALREADY_EXISTS, Result, WinOsError,
};
#[cfg(windows)]
pub use firewall::ComFirewall;
#[cfg(feature = "fake")]
pub use firewall::FakeFirewall;
pub use firewall::{Firewall, FirewallRule};
#[cfg(feature = "fake")]
pub use iphelper::FakeIpHelper;
pub use iphelper::IpHelper;
#[cfg(windows)]
pub use iphelper::NativeIpHelper;
#[cfg(windows)]
pub use native::under_wine;
#[cfg(feature = "fake")]
pub use netnat::FakeNetNat;
#[cfg(windows)]
pub use netnat::WmiNetNat;
pub use netnat::{NatInstance, NetNat};
