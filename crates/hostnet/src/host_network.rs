//! [`HostNetwork`]: every change the agent makes to the Node's OS networking.
//!
//! Each operation is idempotent (the agent repeats them after restarts and kubelet repeats CNI
//! ADD) and reports whether it changed anything. The Linux backend uses netlink and nftables;
//! the Windows backend maps the same operations onto HNS, NetNat and IP Helper:
//!
//! | operation | Linux | Windows |
//! |---|---|---|
//! | `prepare_bridge` | nothing (OVS creates the `br-int` tap) | the whole uplink takeover: the vNIC that becomes `br-int` must exist before the bridge |
//! | `take_over_uplink` | move MAC/addresses/routes of the NIC to the `br-int` tap | create the Transparent HNS network (moves the config to its vNIC), rename the vNIC `br-int`; after `prepare_bridge` finds it done |
//! | `configure_gateway` | netlink on `antrea-gw0` | `New-NetIPAddress`/`SetIpInterfaceEntry` on `antrea-gw0` |
//! | `reconcile_peer_routes` | routes with antrea's protocol number | IP Helper routes on the gateway/`br-int` |
//! | `reconcile_service_routes` | permanent neighbour + routes via `169.254.0.253` (protocol 165) | the same through IP Helper (metric 50) |
//! | `reconcile_node_ports` | nftables `ip antrea-nodeport`: DNAT to `169.254.0.252` | NetNat `antrea-nat-nodeport` static mappings to `169.254.0.252` |
//! | `ensure_pod_snat` | nftables `ip antrea` masquerade | NetNat `antrea-nat` |
//! | `block_kernel_ingress` | nftables netdev ingress drop | nothing (the vSwitch extension owns the port) |
//! | `add_pod_interface` | veth pair into the Pod netns, the container end's MAC derived from its address | HNS endpoint attached to the HCN namespace |
//! | `configure_pod_interface` | both ends: address, default route, offloads, IPv6 off, up | nothing (HNS configured the endpoint as it made it) |

use std::future::Future;

use model::MacAddr;

use crate::error::Result;
use crate::model::{
    GatewayConfig, NicConfig, NodePortRules, Outcome, PeerRoute, PodInterface, PodInterfaceSpec,
    PodSnat, RouteChanges, ServiceRoutes, TransportSelector, Uplink,
};

/// The Node's OS networking. Implementations operate on the Node's own network stack (on Linux:
/// the network namespace the backend was created for).
pub trait HostNetwork: Send + Sync {
    /// The OVS interface type of a Pod's port: `""` (a system interface, the veth's host end)
    /// unless the backend says otherwise. Windows: `internal`, so OVS attaches the endpoint's
    /// vNIC `vEthernet (<name>)`.
    const POD_PORT_TYPE: &'static str = "";

    /// The interface that holds the transport configuration now. Fails with
    /// [`crate::Error::TransportInterfaceNotFound`], listing every interface, when nothing matches.
    fn find_transport_interface(
        &self,
        selector: &TransportSelector,
    ) -> impl Future<Output = Result<NicConfig>> + Send;

    /// Whatever must exist before the OVS bridge `bridge` is created, called with the transport
    /// interface [`HostNetwork::find_transport_interface`] returned. Linux: nothing (OVS
    /// creates the LOCAL tap). Windows: the uplink takeover itself, because the bridge's LOCAL
    /// port is the HNS network's vNIC renamed `bridge`, which must exist first; the later
    /// [`HostNetwork::take_over_uplink`] then finds it done. On failure nothing it made is left.
    fn prepare_bridge(
        &self,
        nic: &NicConfig,
        bridge: &str,
    ) -> impl Future<Output = Result<Outcome>> + Send;

    /// Moves `nic`'s MAC, addresses and routes to the bridge's LOCAL interface `bridge` (which
    /// must exist); the NIC stays up without addresses. When `nic` is `bridge` itself (found
    /// after a restart), the uplink is recovered from the OS's records and nothing changes. On
    /// failure the NIC's configuration is put back.
    fn take_over_uplink(
        &self,
        nic: &NicConfig,
        bridge: &str,
    ) -> impl Future<Output = Result<(Uplink, Outcome)>> + Send;

    /// The uplink taken over for `bridge`, if any (recovers the NIC after an agent restart).
    fn find_uplink(&self, bridge: &str) -> impl Future<Output = Result<Option<Uplink>>> + Send;

    /// Puts the configuration held by `bridge` back on its uplink NIC (agent uninstall); returns
    /// the NIC's configuration, or `None` when no uplink was taken over. Peer routes are not part
    /// of it: the caller reconciles them to nothing, detaches the NIC from the bridge and
    /// unblocks its kernel ingress first.
    fn restore_uplink(
        &self,
        bridge: &str,
    ) -> impl Future<Output = Result<Option<NicConfig>>> + Send;

    /// Gives the gateway interface its address (other IPv4 addresses removed), MAC, MTU and
    /// brings it up. Returns the interface's MAC as the OS reports it (on Windows the OVSDB
    /// `mac` column has no effect on the adapter, so the agent records this one).
    fn configure_gateway(
        &self,
        gateway: &GatewayConfig,
    ) -> impl Future<Output = Result<(MacAddr, Outcome)>> + Send;

    /// Makes the set of antrea-owned peer routes equal `desired`: adds missing ones, replaces
    /// changed ones, deletes the rest of ours, never touches routes owned by others.
    fn reconcile_peer_routes(
        &self,
        desired: &[PeerRoute],
    ) -> impl Future<Output = Result<RouteChanges>> + Send;

    /// Makes the host send its own traffic to `routes.destinations` into the datapath through
    /// `routes.interface`: a permanent neighbour entry [`model::VIRTUAL_SERVICE_IP`] →
    /// [`model::GLOBAL_VIRTUAL_MAC`], a host route to that address on the interface, and one
    /// route per destination via it. Routes of ours no longer wanted are deleted; with no
    /// destination the neighbour entry and the host route go too. Only the backend's own
    /// Service routes are touched (peer routes and everyone else's stay); a destination that
    /// already has a route of someone else is [`crate::Error::RouteConflict`]. The changes
    /// name the destinations, not the host route.
    fn reconcile_service_routes(
        &self,
        routes: &ServiceRoutes,
    ) -> impl Future<Output = Result<RouteChanges>> + Send;

    /// Makes the host hand exactly `rules`' NodePorts to the datapath (see [`NodePortRules`]):
    /// rules for ports no longer listed go, an empty list leaves nothing. A repeat writes
    /// nothing.
    fn reconcile_node_ports(
        &self,
        rules: &NodePortRules,
    ) -> impl Future<Output = Result<Outcome>> + Send;

    /// Installs (or updates) the Pod egress SNAT rule.
    fn ensure_pod_snat(&self, snat: &PodSnat) -> impl Future<Output = Result<Outcome>> + Send;

    /// Removes the Pod egress SNAT rule.
    fn remove_pod_snat(&self) -> impl Future<Output = Result<Outcome>> + Send;

    /// Keeps the OS's own stack from receiving frames on an interface OVS owns (needed where the
    /// datapath reads ports without taking packets from the kernel).
    fn block_kernel_ingress(&self, interface: &str)
    -> impl Future<Output = Result<Outcome>> + Send;

    /// Undoes [`HostNetwork::block_kernel_ingress`].
    fn unblock_kernel_ingress(
        &self,
        interface: &str,
    ) -> impl Future<Output = Result<Outcome>> + Send;

    /// The first half of [`HostNetwork::create_pod_interface`]: makes the Pod's interface exist,
    /// with the hardware addresses it returns, far enough for a switch port to be made on its
    /// host side; [`HostNetwork::configure_pod_interface`], which may run while that port is
    /// made, does the rest. What an earlier call for the same `spec` left (an ADD cut short
    /// after this half) is kept as it is, so a switch port already made on it stays valid;
    /// anything else of the name is replaced.
    fn add_pod_interface(
        &self,
        spec: &PodInterfaceSpec,
    ) -> impl Future<Output = Result<(PodInterface, Outcome)>> + Send;

    /// The second half of [`HostNetwork::create_pod_interface`]: gives the interface
    /// [`HostNetwork::add_pod_interface`] made the configuration `spec` asks for, changing only
    /// what differs.
    fn configure_pod_interface(
        &self,
        spec: &PodInterfaceSpec,
    ) -> impl Future<Output = Result<Outcome>> + Send;

    /// Creates the Pod's interface ([`HostNetwork::add_pod_interface`], then
    /// [`HostNetwork::configure_pod_interface`]), or returns the existing one unchanged when it
    /// already matches `spec` (repeated CNI ADD). On failure the caller deletes what was made
    /// ([`HostNetwork::delete_pod_interface`]).
    fn create_pod_interface(
        &self,
        spec: &PodInterfaceSpec,
    ) -> impl Future<Output = Result<(PodInterface, Outcome)>> + Send {
        async move {
            let (created, added) = self.add_pod_interface(spec).await?;
            let configured = self.configure_pod_interface(spec).await?;
            Ok((created, added.or(configured)))
        }
    }

    /// Deletes the Pod's interface; succeeds when it is already gone, also when the Pod's
    /// network namespace no longer exists.
    fn delete_pod_interface(
        &self,
        host_ifname: &str,
    ) -> impl Future<Output = Result<Outcome>> + Send;

    /// The host-side names of every Pod interface [`HostNetwork::create_pod_interface`] made
    /// that still exists (each is a veth in [`crate::POD_INTERFACE_GROUP`]); interfaces made by
    /// anything else are never listed.
    fn pod_interfaces(&self) -> impl Future<Output = Result<Vec<String>>> + Send;

    /// Verifies that the Pod's interface exists exactly as `spec` and `created` say (CNI CHECK).
    fn check_pod_interface(
        &self,
        spec: &PodInterfaceSpec,
        created: &PodInterface,
    ) -> impl Future<Output = Result<()>> + Send;
}
