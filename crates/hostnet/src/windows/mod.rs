//! The Windows backend of [`HostNetwork`]: [`WindowsHost`], Antrea's Windows Node networking
//! on HNS (the Transparent network `antrea-hnsnetwork` with the Open vSwitch extension, one
//! endpoint per Pod), IP Helper (addresses, routes, interface settings), NetNat (`antrea-nat`
//! for Pod SNAT, `antrea-nat-nodeport` for NodePorts) and the Windows Firewall.
//!
//! It is generic over the four OS interfaces (`hcn::HcnApi`, `winos::IpHelper`,
//! `winos::NetNat`, `winos::Firewall`), so it compiles everywhere and its tests run on Linux
//! and under Wine with the fakes; `FakeWindows` (cargo feature `fake`, off in the shipped
//! binaries) joins the HNS fake and the IP Helper fake into one host for tests. Every OS call
//! blocks, so each operation runs on a blocking thread. docs/hostnet.md and docs/windows.md
//! describe each step.
//!
//! Beside the backend, two parts that need only [`hcn::HcnApi`] and small traits of their own:
//!
//! - [`heal`]: keeps HNS state matching the agent's intent after reboots, HNS restarts and
//!   failed CNI calls (missing network, orphan, duplicate and unattached endpoints).
//! - [`watchdog`]: after the NIC takeover, rolls it back when neither the default gateway nor
//!   the API server can be reached for a whole window.
//!
//! [`TakeoverGuard`] gives both the backend's side: recreating the network by taking the NIC
//! over again, and rolling the takeover back.

mod adapters;
#[cfg(feature = "fake")]
mod fake;
mod gateway;
mod guards;
pub mod heal;
mod node_ports;
mod pod;
mod routes;
mod service_routes;
mod snat;
mod uplink;
pub mod watchdog;

use std::sync::Arc;
use std::time::Duration;

#[cfg(feature = "fake")]
pub use fake::FakeWindows;
pub use guards::TakeoverGuard;
pub use service_routes::SERVICE_ROUTE_METRIC;

/// An error returned by a caller's callback (network recreation, takeover rollback), kept as
/// the caller's own error.
pub type CallbackError = Box<dyn std::error::Error + Send + Sync + 'static>;

use ipnet::Ipv4Net;
use model::MacAddr;

use crate::error::{Error, Result};
use crate::host_network::HostNetwork;
use crate::model::{
    GatewayConfig, NicConfig, NodePortRules, Outcome, PeerRoute, PodInterface, PodInterfaceSpec,
    PodSnat, RouteChanges, ServiceRoutes, TransportSelector, Uplink,
};

/// The HNS network the backend creates on the uplink NIC (Antrea's name).
pub const HNS_NETWORK: &str = "antrea-hnsnetwork";

/// The route metric that marks a peer route as ours: every IPv4 route with protocol `Other`
/// (written through IP Helper) and this metric belongs to the backend, whatever its interface.
/// It plays the role of the Linux backend's route protocol 164.
pub const PEER_ROUTE_METRIC: u32 = 164;

/// What the backend needs to know beyond the OS interfaces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WindowsSettings {
    /// The Node's Pod CIDR: the subnet of the HNS network (endpoints take their IPs from it).
    pub pod_cidr: Ipv4Net,
    /// How long Windows may take to show a vNIC HNS created (the network's, with the Node IP,
    /// and a Pod endpoint's). Antrea waits 6 s for the Node IP.
    pub settle_wait: Duration,
    /// How often the adapter list is read while waiting.
    pub poll_interval: Duration,
    /// The longest a Pod endpoint's deletion may take before it is reported as failed.
    pub delete_wait: Duration,
}

impl WindowsSettings {
    /// Antrea's waits: 6 s for a vNIC (polled every second), 5 s for an endpoint deletion.
    pub fn new(pod_cidr: Ipv4Net) -> WindowsSettings {
        WindowsSettings {
            pod_cidr,
            settle_wait: Duration::from_secs(6),
            poll_interval: Duration::from_secs(1),
            delete_wait: Duration::from_secs(5),
        }
    }
}

/// The Windows host networking backend. Cheap to clone handles to the OS interfaces are kept
/// behind `Arc`s, so tests can hold the same fakes.
pub struct WindowsHost<H, I, N, F> {
    backend: Arc<Backend<H, I, N, F>>,
}

impl<H, I, N, F> std::fmt::Debug for WindowsHost<H, I, N, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WindowsHost")
            .field("settings", &self.backend.settings)
            .finish_non_exhaustive()
    }
}

/// The OS interfaces and settings; every method blocks.
struct Backend<H, I, N, F> {
    hcn: Arc<H>,
    ip: Arc<I>,
    nat: Arc<N>,
    firewall: Arc<F>,
    settings: WindowsSettings,
}

impl<H, I, N, F> WindowsHost<H, I, N, F>
where
    H: hcn::HcnApi + 'static,
    I: winos::IpHelper + 'static,
    N: winos::NetNat + 'static,
    F: winos::Firewall + 'static,
{
    /// A backend over these OS interfaces.
    pub fn new(
        hcn: Arc<H>,
        ip: Arc<I>,
        nat: Arc<N>,
        firewall: Arc<F>,
        settings: WindowsSettings,
    ) -> Self {
        WindowsHost {
            backend: Arc::new(Backend {
                hcn,
                ip,
                nat,
                firewall,
                settings,
            }),
        }
    }

    /// The HNS interface the backend calls (the self-healing reconciler needs it alone).
    pub fn hns(&self) -> Arc<H> {
        self.backend.hcn.clone()
    }

    /// Runs `op` on a blocking thread.
    async fn blocking<T: Send + 'static>(
        &self,
        op: impl FnOnce(&Backend<H, I, N, F>) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let backend = self.backend.clone();
        tokio::task::spawn_blocking(move || op(&backend))
            .await
            .map_err(|e| Error::os("Windows host call", std::io::Error::other(e)))?
    }
}

/// `Changed` when anything was written.
fn outcome(changed: bool) -> Outcome {
    if changed {
        Outcome::Changed
    } else {
        Outcome::Unchanged
    }
}

/// Maps an HNS error to [`Error::Hns`] for `op`.
fn hns(op: impl Into<String>) -> impl FnOnce(hcn::HcnError) -> Error {
    let op = op.into();
    move |source| Error::Hns { op, source }
}

/// Maps a Windows OS error to [`Error::WinOs`] for `op`.
fn os(op: impl Into<String>) -> impl FnOnce(winos::WinOsError) -> Error {
    let op = op.into();
    move |source| Error::WinOs { op, source }
}

impl<H, I, N, F> HostNetwork for WindowsHost<H, I, N, F>
where
    H: hcn::HcnApi + 'static,
    I: winos::IpHelper + 'static,
    N: winos::NetNat + 'static,
    F: winos::Firewall + 'static,
{
    /// OVS attaches a Pod's port to the endpoint's vNIC `vEthernet (<name>)` as an internal port.
    const POD_PORT_TYPE: &'static str = "internal";

    async fn find_transport_interface(&self, selector: &TransportSelector) -> Result<NicConfig> {
        let selector = selector.clone();
        self.blocking(move |b| b.find_transport(&selector)).await
    }

    /// The uplink takeover: the HNS network's vNIC becomes the bridge's LOCAL interface.
    async fn prepare_bridge(&self, nic: &NicConfig, bridge: &str) -> Result<Outcome> {
        Ok(self.take_over_uplink(nic, bridge).await?.1)
    }

    async fn take_over_uplink(&self, nic: &NicConfig, bridge: &str) -> Result<(Uplink, Outcome)> {
        let (nic, bridge) = (nic.clone(), bridge.to_owned());
        self.blocking(move |b| b.take_over(&nic, &bridge)).await
    }

    async fn find_uplink(&self, bridge: &str) -> Result<Option<Uplink>> {
        let bridge = bridge.to_owned();
        self.blocking(move |b| Ok(b.uplink_of(&bridge)?.map(|(uplink, _)| uplink)))
            .await
    }

    async fn restore_uplink(&self, bridge: &str) -> Result<Option<NicConfig>> {
        let bridge = bridge.to_owned();
        self.blocking(move |b| b.restore(&bridge)).await
    }

    async fn configure_gateway(&self, gateway: &GatewayConfig) -> Result<(MacAddr, Outcome)> {
        let gateway = gateway.clone();
        self.blocking(move |b| b.gateway(&gateway)).await
    }

    async fn reconcile_peer_routes(&self, desired: &[PeerRoute]) -> Result<RouteChanges> {
        let desired = desired.to_vec();
        self.blocking(move |b| b.peer_routes(&desired)).await
    }

    async fn reconcile_service_routes(&self, routes: &ServiceRoutes) -> Result<RouteChanges> {
        let routes = routes.clone();
        self.blocking(move |b| b.service_routes(&routes)).await
    }

    /// NetNat `antrea-nat-nodeport` static mappings to 169.254.0.252 (see `node_ports.rs`).
    async fn reconcile_node_ports(&self, rules: &NodePortRules) -> Result<Outcome> {
        let rules = rules.clone();
        self.blocking(move |b| b.node_ports(&rules)).await
    }

    async fn ensure_pod_snat(&self, snat: &PodSnat) -> Result<Outcome> {
        let pod_cidr = snat.pod_cidr;
        self.blocking(move |b| b.snat(pod_cidr)).await
    }

    async fn remove_pod_snat(&self) -> Result<Outcome> {
        self.blocking(|b| b.no_snat()).await
    }

    /// Nothing to do: once a port is on the vSwitch the OVS extension owns its packets.
    async fn block_kernel_ingress(&self, _interface: &str) -> Result<Outcome> {
        Ok(Outcome::Unchanged)
    }

    /// Nothing to undo; see [`WindowsHost::block_kernel_ingress`].
    async fn unblock_kernel_ingress(&self, _interface: &str) -> Result<Outcome> {
        Ok(Outcome::Unchanged)
    }

    /// The whole endpoint: HNS configures it as it makes it.
    async fn add_pod_interface(&self, spec: &PodInterfaceSpec) -> Result<(PodInterface, Outcome)> {
        let spec = spec.clone();
        self.blocking(move |b| b.create_pod(&spec)).await
    }

    /// Nothing left to do: [`WindowsHost::add_pod_interface`] made the endpoint configured.
    async fn configure_pod_interface(&self, _spec: &PodInterfaceSpec) -> Result<Outcome> {
        Ok(Outcome::Unchanged)
    }

    /// Detaches and deletes the endpoint, within [`WindowsSettings::delete_wait`].
    async fn delete_pod_interface(&self, host_ifname: &str) -> Result<Outcome> {
        let name = host_ifname.to_owned();
        let waited = self.backend.settings.delete_wait;
        let op = format!("deleting HNS endpoint {name:?}");
        match tokio::time::timeout(waited, self.blocking(move |b| b.delete_pod(&name))).await {
            Ok(result) => result,
            Err(_) => Err(Error::Timeout { op, waited }),
        }
    }

    async fn pod_interfaces(&self) -> Result<Vec<String>> {
        self.blocking(|b| b.pods()).await
    }

    async fn check_pod_interface(
        &self,
        spec: &PodInterfaceSpec,
        created: &PodInterface,
    ) -> Result<()> {
        let (spec, created) = (spec.clone(), created.clone());
        self.blocking(move |b| b.check_pod(&spec, &created)).await
    }
}
