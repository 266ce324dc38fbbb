//! The Linux backend: rtnetlink for links, addresses, routes and neighbours, `nft` for SNAT and
//! for keeping the kernel off OVS-owned ports, the ethtool ioctl for checksum offload.
//!
//! [`LinuxHost`] works on one network namespace, fixed when it is created (normally the agent's
//! own, [`LinuxHost::current`]). Its netlink socket belongs to that namespace; everything else
//! that depends on the namespace of the calling thread runs on a short-lived thread that enters
//! it ([`Netns::run`]). Pod namespaces are entered the same way, with their own netlink socket.

mod ethtool;
mod firewall;
mod gateway;
mod netlink;
mod netns;
mod nfnetlink;
mod nft;
mod node_ports;
mod pod;
mod routes;
mod service_routes;
mod sysctl;
mod uplink;
mod virtual_source_snat;
mod writes;

use tokio::task::JoinHandle;

pub use netns::Netns;
pub use routes::ROUTE_PROTOCOL;
pub use service_routes::SERVICE_ROUTE_PROTOCOL;
pub use uplink::UPLINK_ALIAS_PREFIX;

use model::MacAddr;

use crate::error::{Error, Result};
use crate::host_network::HostNetwork;
use crate::model::{
    GatewayConfig, NicConfig, NodePortRules, Outcome, PeerRoute, PodInterface, PodInterfaceSpec,
    PodSnat, RouteChanges, ServiceRoutes, TransportSelector, Uplink,
};
use netlink::Kernel;
use writes::Writes;

/// The Node's networking on Linux, in one network namespace.
#[derive(Debug)]
pub struct LinuxHost {
    netns: Netns,
    kernel: Kernel,
    connection: JoinHandle<()>,
}

impl Drop for LinuxHost {
    fn drop(&mut self) {
        self.connection.abort();
    }
}

impl LinuxHost {
    /// A backend for the calling thread's network namespace. Must run inside a tokio runtime,
    /// which then carries the netlink connection.
    pub async fn current() -> Result<LinuxHost> {
        LinuxHost::new(Netns::current()?).await
    }

    /// A backend for `netns`.
    pub async fn new(netns: Netns) -> Result<LinuxHost> {
        let runtime = tokio::runtime::Handle::current();
        // The socket is created inside the namespace; the connection task runs on our runtime.
        let (kernel, connection) = netns
            .run(move || {
                let _entered = runtime.enter();
                let (connection, handle, _) = rtnetlink::new_connection()
                    .map_err(|e| Error::os("open a netlink socket", e))?;
                Ok((Kernel::from_handle(handle, Writes::default()), connection))
            })
            .await?;
        let connection = tokio::spawn(connection);
        Ok(LinuxHost {
            netns,
            kernel,
            connection,
        })
    }

    /// The namespace this backend works on.
    pub fn netns(&self) -> &Netns {
        &self.netns
    }

    /// How many changes this backend has made to the OS (netlink writes, nft transactions,
    /// ethtool and sysctl writes). An operation that finds the desired state leaves it unchanged.
    pub fn writes(&self) -> u64 {
        self.kernel.writes().total()
    }
}

/// Rejects names the kernel would refuse or that cannot appear unquoted in an nft script
/// (chain names are derived from interface names).
fn validate_ifname(name: &str) -> Result<()> {
    let bad = |reason| {
        Err(Error::Invalid {
            what: "interface name",
            value: name.to_owned(),
            reason,
        })
    };
    if name.is_empty() || name.len() > crate::naming::MAX_INTERFACE_NAME_LEN {
        return bad("must have 1 to 15 bytes");
    }
    if name == "."
        || name == ".."
        || !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
    {
        return bad("may only hold ASCII letters, digits, '-', '_' and '.'");
    }
    Ok(())
}

impl HostNetwork for LinuxHost {
    async fn find_transport_interface(&self, selector: &TransportSelector) -> Result<NicConfig> {
        self.find_transport(selector).await
    }

    /// Nothing: OVS creates the bridge's LOCAL tap itself.
    async fn prepare_bridge(&self, _nic: &NicConfig, _bridge: &str) -> Result<Outcome> {
        Ok(Outcome::Unchanged)
    }

    async fn take_over_uplink(&self, nic: &NicConfig, bridge: &str) -> Result<(Uplink, Outcome)> {
        self.take_over(nic, bridge).await
    }

    async fn find_uplink(&self, bridge: &str) -> Result<Option<Uplink>> {
        self.uplink_of(bridge).await
    }

    async fn restore_uplink(&self, bridge: &str) -> Result<Option<NicConfig>> {
        self.restore(bridge).await
    }

    async fn configure_gateway(&self, gateway: &GatewayConfig) -> Result<(MacAddr, Outcome)> {
        self.gateway(gateway).await
    }

    async fn reconcile_peer_routes(&self, desired: &[PeerRoute]) -> Result<RouteChanges> {
        self.peer_routes(desired).await
    }

    async fn reconcile_service_routes(&self, routes: &ServiceRoutes) -> Result<RouteChanges> {
        self.service_routes(routes).await
    }

    async fn reconcile_node_ports(&self, rules: &NodePortRules) -> Result<Outcome> {
        self.node_ports(rules).await
    }

    async fn ensure_pod_snat(&self, snat: &PodSnat) -> Result<Outcome> {
        self.snat(snat).await
    }

    async fn remove_pod_snat(&self) -> Result<Outcome> {
        self.no_snat().await
    }

    async fn block_kernel_ingress(&self, interface: &str) -> Result<Outcome> {
        self.block_ingress(interface).await
    }

    async fn unblock_kernel_ingress(&self, interface: &str) -> Result<Outcome> {
        self.unblock_ingress(interface).await
    }

    async fn add_pod_interface(&self, spec: &PodInterfaceSpec) -> Result<(PodInterface, Outcome)> {
        self.add_pod(spec).await
    }

    async fn configure_pod_interface(&self, spec: &PodInterfaceSpec) -> Result<Outcome> {
        self.configure_pod(spec).await
    }

    async fn delete_pod_interface(&self, host_ifname: &str) -> Result<Outcome> {
        self.delete_pod(host_ifname).await
    }

    async fn pod_interfaces(&self) -> Result<Vec<String>> {
        self.pods().await
    }

    async fn check_pod_interface(
        &self,
        spec: &PodInterfaceSpec,
        created: &PodInterface,
    ) -> Result<()> {
        self.check_pod(spec, created).await
    }
}
