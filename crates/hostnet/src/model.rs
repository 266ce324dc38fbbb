//! The values [`crate::HostNetwork`] takes and returns: what to look for, snapshots of interface
//! configuration, and the desired state of gateway, routes, SNAT and Pod interfaces.

use std::collections::BTreeSet;
use std::net::Ipv4Addr;

use ipnet::Ipv4Net;
use model::{MacAddr, Protocol, VIRTUAL_SERVICE_IP};

use crate::error::{Error, Result};

/// How the agent finds the Node's transport interface (Antrea's `transportInterface` option,
/// then `transportInterfaceCIDRs`, then the Node's IP).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TransportSelector {
    /// The interface holding this IPv4 address.
    NodeIp(Ipv4Addr),
    /// The interface with this name. If it is an uplink already taken over, the interface that
    /// now holds its configuration (the bridge's LOCAL interface) is the answer.
    InterfaceName(String),
    /// The first interface with an IPv4 address inside one of these networks.
    Cidrs(Vec<Ipv4Net>),
}

impl std::fmt::Display for TransportSelector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TransportSelector::NodeIp(ip) => write!(f, "the interface holding Node IP {ip}"),
            TransportSelector::InterfaceName(name) => write!(f, "the interface named {name:?}"),
            TransportSelector::Cidrs(cidrs) => {
                let list: Vec<String> = cidrs.iter().map(Ipv4Net::to_string).collect();
                write!(f, "an interface with an address in [{}]", list.join(", "))
            }
        }
    }
}

/// A route through an interface, with everything needed to re-create it elsewhere.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostRoute {
    /// Destination network (`0.0.0.0/0` for the default route).
    pub destination: Ipv4Net,
    /// Next hop, `None` for a directly connected destination.
    pub gateway: Option<Ipv4Addr>,
    /// Route metric (Linux priority, Windows metric).
    pub metric: u32,
    /// Routing table (Linux; the main table is 254).
    pub table: u32,
    /// Origin of the route (Linux `proto`: 3 boot, 4 static, 16 dhcp, …), kept when moved.
    pub protocol: u8,
    /// Scope (Linux; 0 universe, 253 link).
    pub scope: u8,
    /// Next hop used without checking that it is on a connected network.
    pub onlink: bool,
    /// Preferred source address.
    pub pref_source: Option<Ipv4Addr>,
}

/// A snapshot of an interface's IPv4 configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NicConfig {
    /// Interface name.
    pub name: String,
    /// OS interface index.
    pub index: u32,
    /// Hardware address.
    pub mac: MacAddr,
    /// MTU.
    pub mtu: u32,
    /// IPv4 addresses with prefix length, in the order the OS lists them.
    pub addresses: Vec<Ipv4Net>,
    /// Routes through this interface, connected routes made by the OS for its addresses excluded.
    pub routes: Vec<HostRoute>,
}

impl NicConfig {
    /// The next hop of the default route through this interface, if there is one.
    pub fn default_gateway(&self) -> Option<Ipv4Addr> {
        self.routes
            .iter()
            .find(|r| r.destination.prefix_len() == 0)
            .and_then(|r| r.gateway)
    }
}

/// The Node's NIC attached to the bridge as its uplink, with its configuration on the bridge's
/// LOCAL interface.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Uplink {
    /// Name of the physical NIC (the OVS uplink port).
    pub nic: String,
    /// The configuration as it now lives on the bridge's LOCAL interface.
    pub bridge: NicConfig,
}

/// Whether an idempotent operation had to change anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The OS was changed to reach the desired state.
    Changed,
    /// The desired state was already there; nothing was written.
    Unchanged,
}

impl Outcome {
    /// The outcome of two steps: `Changed` when either changed something.
    pub fn or(self, other: Outcome) -> Outcome {
        if self == Outcome::Changed {
            self
        } else {
            other
        }
    }
}

/// The desired configuration of the gateway interface (`antrea-gw0`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GatewayConfig {
    /// Interface name.
    pub name: String,
    /// The gateway address: first IP of the Pod CIDR with the Pod CIDR's prefix length.
    pub address: Ipv4Net,
    /// Hardware address to set; `None` keeps the interface's own.
    pub mac: Option<MacAddr>,
    /// MTU.
    pub mtu: u32,
}

/// A route to a peer Node's Pod CIDR.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerRoute {
    /// The peer's Pod CIDR.
    pub destination: Ipv4Net,
    /// Next hop: the peer's gateway IP (encap, `onlink` through the gateway interface) or the
    /// peer Node's IP (noEncap, through the bridge's LOCAL interface).
    pub gateway: Ipv4Addr,
    /// Interface the route leaves through.
    pub interface: String,
    /// Use the next hop even though it is not on a connected network (encap mode).
    pub onlink: bool,
}

/// The Node's own traffic to Services (proxyAll): what the host routes into the datapath.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceRoutes {
    /// The gateway interface (`antrea-gw0`) the traffic leaves through.
    pub interface: String,
    /// The destinations sent to the datapath: the Service CIDR (and any other range of
    /// frontends). Empty: the host routes no Service traffic, and the neighbour entry goes too.
    pub destinations: Vec<Ipv4Net>,
}

impl ServiceRoutes {
    /// The destinations, host bits cleared and each once; a destination holding the virtual
    /// Service IP (the routes' own next hop) is refused.
    pub(crate) fn checked_destinations(&self) -> Result<BTreeSet<Ipv4Net>> {
        let wanted: BTreeSet<Ipv4Net> = self.destinations.iter().map(Ipv4Net::trunc).collect();
        match wanted.iter().find(|d| d.contains(&VIRTUAL_SERVICE_IP)) {
            Some(bad) => Err(Error::Invalid {
                what: "Service route destination",
                value: bad.to_string(),
                reason: "holds 169.254.0.253, the Service routes' next hop",
            }),
            None => Ok(wanted),
        }
    }
}

/// The host's half of NodePort (proxyAll): NodePort traffic to the Node's addresses, from
/// outside and from the Node itself, is DNATed to the virtual NodePort IP (169.254.0.252,
/// `model::VIRTUAL_NODE_PORT_IP`) with its port kept, and so routed to the datapath (the
/// Service routes carry 169.254.0.252/32), where the NodePort frontends load-balance it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodePortRules {
    /// Every NodePort, each (protocol, port) once. Empty: no NodePort rule is left.
    pub ports: BTreeSet<(Protocol, u16)>,
    /// The addresses NodePorts are served on (`antreaProxy.nodePortAddresses`); empty: every
    /// address of the Node.
    pub addresses: Vec<Ipv4Net>,
}

/// What a route reconciliation (peer or Service routes) did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RouteChanges {
    /// Destinations that had no route of ours.
    pub added: Vec<Ipv4Net>,
    /// Destinations whose route of ours had another next hop, interface or flag.
    pub replaced: Vec<Ipv4Net>,
    /// Destinations whose route of ours is no longer wanted.
    pub deleted: Vec<Ipv4Net>,
}

impl RouteChanges {
    /// Whether nothing was changed.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.replaced.is_empty() && self.deleted.is_empty()
    }

    /// One line for a Service route reconciliation on `interface` that changed something.
    pub(crate) fn log_service_routes(&self, interface: &str) {
        if !self.is_empty() {
            tracing::info!(
                "Service routes via {VIRTUAL_SERVICE_IP} on {interface}: {} added, {} replaced, {} deleted",
                self.added.len(),
                self.replaced.len(),
                self.deleted.len()
            );
        }
    }
}

/// Source NAT for Pod egress: Pods of `pod_cidr` leaving through `egress_interface` towards
/// anything outside `cluster_cidrs` get the Node's address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodSnat {
    /// This Node's Pod CIDR.
    pub pod_cidr: Ipv4Net,
    /// The cluster's Pod CIDRs (never translated).
    pub cluster_cidrs: Vec<Ipv4Net>,
    /// The interface holding the Node IP (`br-int`).
    pub egress_interface: String,
}

/// The desired interface of one Pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodInterfaceSpec {
    /// The Pod's network namespace: a path (`/var/run/netns/X`, `/proc/PID/ns/net`) on Linux,
    /// the HCN namespace GUID on Windows.
    pub netns: String,
    /// Interface name inside the Pod (`CNI_IFNAME`, usually `eth0`).
    pub ifname: String,
    /// Host-side name ([`crate::naming::endpoint_name`]); also the OVS port name.
    pub host_ifname: String,
    /// The Pod's address with the Pod CIDR's prefix length.
    pub address: Ipv4Net,
    /// The default gateway (the local gateway interface's address).
    pub gateway: Ipv4Addr,
    /// MTU of both ends.
    pub mtu: u32,
    /// The Pod's DNS settings from the CNI request. Windows puts them on the HNS endpoint; on
    /// Linux the container runtime writes the Pod's `resolv.conf` and this is unused.
    pub dns: Option<PodDns>,
}

/// DNS settings of a Pod, as the CNI request gives them (conflist `dns`, overridden by the
/// runtime's `dns` capability).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PodDns {
    /// Name server addresses.
    pub nameservers: Vec<String>,
    /// Search domains.
    pub search: Vec<String>,
    /// The local domain name.
    pub domain: String,
}

/// The result of creating a Pod interface.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodInterface {
    /// Host-side name (veth host end / HNS endpoint), the OVS port name.
    pub host_ifname: String,
    /// Hardware address of the host-side interface.
    pub host_mac: MacAddr,
    /// Hardware address of the Pod's interface.
    pub container_mac: MacAddr,
}
