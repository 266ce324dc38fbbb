//! The Node's OS networking behind one trait, [`HostNetwork`].
//!
//! The agent reproduces Antrea's Windows topology on every OS: the Node's NIC becomes the OVS
//! uplink and its IP configuration moves to the bridge's LOCAL interface (`br-int`), the gateway
//! interface holds the first IP of the Pod CIDR, Pods get one interface each, Pod egress is
//! source-NATed by the host. This crate owns the OS side of that: finding the transport
//! interface, moving its configuration, the gateway's addresses, routes to peer Pod CIDRs and
//! the host's routes to Services, SNAT, keeping the kernel off OVS-owned ports, and Pod
//! interfaces.
//!
//! Platform-neutral parts (the trait, its value types, the endpoint naming rule) compile
//! everywhere; the Linux backend ([`linux::LinuxHost`]) uses rtnetlink, `nft` and ethtool. The
//! Windows backend ([`windows::WindowsHost`]) uses HNS (`hcn`) and IP Helper, NetNat and the
//! firewall (`winos`) through their traits, so it compiles and is tested on every platform with
//! the fakes of those crates (cargo feature `fake`, for tests only).

mod error;
mod host_network;
mod model;
pub mod naming;

#[cfg(target_os = "linux")]
pub mod linux;
pub mod windows;

pub use error::{Error, Result};
pub use host_network::HostNetwork;

/// The interface group given to the host end of every Pod interface this crate creates, in the
/// same request that creates it (so even an ADD cut short right after leaves a marked
/// interface): what marks an interface as ours when leftovers are collected. The digits are
/// ASCII "antr".
pub const POD_INTERFACE_GROUP: u32 = 0x616e_7472;
pub use model::{
    GatewayConfig, HostRoute, NicConfig, NodePortRules, Outcome, PeerRoute, PodDns, PodInterface,
    PodInterfaceSpec, PodSnat, RouteChanges, ServiceRoutes, TransportSelector, Uplink,
};
