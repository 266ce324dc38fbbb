//! [`Supervise`]: what each host backend supervises once its Node is up (nothing on Linux;
//! on Windows [`windows_supervision`]), and the facts it is built from ([`SupervisionPlan`]).

use std::future::Future;
use std::net::Ipv4Addr;
use std::sync::Arc;
use std::time::Duration;

use hostnet::HostNetwork;
use hostnet::windows::heal::{HealConfig, HealMetrics, HnsReconciler};
use hostnet::windows::watchdog::Reachability;
use hostnet::windows::{HNS_NETWORK, TakeoverGuard, WindowsHost};
use prometheus_client::registry::Registry;
use tokio_util::sync::CancellationToken;

use super::endpoints::PodEndpoints;
use super::heal::HealLoop;
use super::takeover::SharedTakeover;
use super::watch::TakeoverWatch;
use super::{Supervision, Supervisor};
use crate::config::{AgentConfig, TakeoverWatchdogConfig};

/// The NIC takeover bring-up made in this run (not one it found in place).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Takeover {
    /// The NIC's default gateway before the takeover, if it had a default route.
    pub default_gateway: Option<Ipv4Addr>,
}

/// What supervision is built from: bring-up's outcome and the configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SupervisionPlan {
    /// The bridge (`br-int`).
    pub bridge: String,
    /// The NIC that is the bridge's uplink.
    pub uplink: String,
    /// The takeover made in this run, if any.
    pub takeover: Option<Takeover>,
    /// The API server as `host:port`; `None` with a cluster directory.
    pub api_server: Option<String>,
    /// Time between two HNS reconciliation passes.
    pub hns_reconcile_interval: Duration,
    /// The takeover watchdog's settings.
    pub watchdog: TakeoverWatchdogConfig,
}

impl SupervisionPlan {
    /// The plan for a Node up with `uplink` on the configured bridge.
    pub fn new(
        config: &AgentConfig,
        uplink: impl Into<String>,
        takeover: Option<Takeover>,
        api_server: Option<String>,
    ) -> Self {
        SupervisionPlan {
            bridge: config.ovs_bridge.clone(),
            uplink: uplink.into(),
            takeover,
            api_server,
            hns_reconcile_interval: config.hns_reconcile_interval,
            watchdog: config.takeover_watchdog,
        }
    }
}

/// A host backend's part in supervision.
pub trait Supervise: HostNetwork + Sized {
    /// Registers this host's metrics in `registry`, runs what must run before the CNI server
    /// listens, and starts the rest until `stop` is cancelled (see [`Supervision::start`]).
    fn supervise<E: PodEndpoints + 'static>(
        &self,
        plan: &SupervisionPlan,
        registry: &mut Registry,
        endpoints: Arc<E>,
        stop: CancellationToken,
    ) -> impl Future<Output = Supervisor> + Send;
}

#[cfg(target_os = "linux")]
impl Supervise for hostnet::linux::LinuxHost {
    /// Linux keeps no HNS state and its takeover needs no watchdog: nothing to supervise.
    async fn supervise<E: PodEndpoints + 'static>(
        &self,
        _plan: &SupervisionPlan,
        _registry: &mut Registry,
        _endpoints: Arc<E>,
        _stop: CancellationToken,
    ) -> Supervisor {
        Supervisor::idle()
    }
}

#[cfg(windows)]
impl<H, I, N, F> Supervise for WindowsHost<H, I, N, F>
where
    H: hcn::HcnApi + 'static,
    I: winos::IpHelper + 'static,
    N: winos::NetNat + 'static,
    F: winos::Firewall + 'static,
{
    /// The gateway answers ICMP echo; the API server must accept a TCP connection.
    fn supervise<E: PodEndpoints + 'static>(
        &self,
        plan: &SupervisionPlan,
        registry: &mut Registry,
        endpoints: Arc<E>,
        stop: CancellationToken,
    ) -> impl Future<Output = Supervisor> + Send {
        use hostnet::windows::watchdog::{IcmpEchoProbe, TcpAnswer, TcpProbe};
        let supervision =
            windows_supervision(self, plan, registry, IcmpEchoProbe::new, |address| {
                TcpProbe::new(address, TcpAnswer::Accepted)
            });
        supervision.start(endpoints, stop)
    }
}

/// What a Windows host supervises, with gateway probes `G` and API server probes `A`.
pub type WindowsSupervision<H, I, N, F, G, A> =
    Supervision<SharedTakeover<TakeoverGuard<H, I, N, F>>, Option<G>, Option<A>>;

/// What a Windows host supervises: the HNS healing loop always, the watchdog after a takeover
/// made in this run, probing the saved default gateway with `gateway_probe` and the API
/// server (when there is one) with `api_probe`. Both share one [`TakeoverGuard`]; the
/// reconciler's metrics go to `registry`.
pub fn windows_supervision<H, I, N, F, G, A>(
    host: &WindowsHost<H, I, N, F>,
    plan: &SupervisionPlan,
    registry: &mut Registry,
    gateway_probe: impl FnOnce(Ipv4Addr) -> G,
    api_probe: impl FnOnce(&str) -> A,
) -> WindowsSupervision<H, I, N, F, G, A>
where
    H: hcn::HcnApi + 'static,
    I: winos::IpHelper + 'static,
    N: winos::NetNat + 'static,
    F: winos::Firewall + 'static,
    G: Reachability,
    A: Reachability,
{
    let guard = SharedTakeover::new(TakeoverGuard::new(host, &plan.uplink, &plan.bridge));
    let config = HealConfig::new(HNS_NETWORK);
    let reconciler = HnsReconciler::new(
        host.hns(),
        guard.clone(),
        config,
        HealMetrics::register(registry),
    );
    let heal = HealLoop::new(reconciler, plan.hns_reconcile_interval);
    let watch = match &plan.takeover {
        None => None,
        Some(_) if plan.watchdog.duration.is_zero() => {
            tracing::info!("takeover watchdog off (takeoverWatchdog.duration is 0)");
            None
        }
        Some(Takeover {
            default_gateway: None,
        }) if plan.api_server.is_none() => {
            tracing::warn!(
                "no takeover watchdog: {} had no default gateway and there is no API server to probe",
                plan.uplink
            );
            None
        }
        Some(takeover) => Some(TakeoverWatch::new(
            &plan.uplink,
            takeover.default_gateway.map(gateway_probe),
            plan.api_server.as_deref().map(api_probe),
            guard,
            plan.watchdog,
        )),
    };
    Supervision {
        heal: Some(heal),
        watch,
    }
}
