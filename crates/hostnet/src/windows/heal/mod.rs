//! Self-healing HNS state: [`HnsReconciler`] compares HNS with the agent's intent and repairs
//! what it can, one pass per [`HnsReconciler::reconcile`] call (the agent runs one at start and
//! then periodically).
//!
//! One pass:
//!
//! 1. Looks the agent's network up by name. When it is missing (HNS networks do not survive a
//!    reboot) it reports [`NetworkState::Missing`], calls the caller's [`NetworkRecreator`]
//!    (which re-runs the NIC takeover), reports every intended endpoint missing, and ends.
//! 2. Lists the network's endpoints. One named by the [`EndpointIntent`] is *owned*. Any other
//!    is *stale*: a [`Stale::Duplicate`] when it holds the IP of an owned endpoint that
//!    exists, else a [`Stale::Orphan`]; whether it is attached to a namespace does not matter.
//! 3. Deletes a stale endpoint only when an earlier pass, at least the grace period ago,
//!    already saw it stale; a pass never deletes an endpoint it sees for the first time. A CNI
//!    ADD creates its endpoint before the interface store records it, so an endpoint of an ADD
//!    in flight looks stale for as long as that ADD runs: the grace period must be longer than
//!    the slowest ADD. The exception is a *settled* pass
//!    ([`HnsReconciler::reconcile_settled`]), made when no CNI call can be in flight (the
//!    agent's CNI server is not listening yet): its intent is complete, so it deletes every
//!    stale endpoint at once.
//! 4. Reports owned endpoints never attached to a namespace once they stayed so for the grace
//!    period, and intended endpoints absent from HNS. Both belong to the Pod's CNI calls, so
//!    they are not changed.
//!
//! Every finding is logged with the endpoint's name, ID, IPs and namespace, counted in
//! [`HealMetrics`], and returned in a [`HealReport`]. A failed HNS call is reported and the
//! pass goes on with the next endpoint.

mod endpoints;
mod intent;
mod metrics;
mod report;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use hcn::HcnApi;
use tokio::time::Instant;

use endpoints::{EndpointPass, Sightings, report_error};
pub use intent::EndpointIntent;
pub use metrics::HealMetrics;
pub use report::{
    HealAction, HealError, HealReport, NetworkState, SeenEndpoint, Stale, StaleEndpoint,
};

/// Recreates the agent's HNS network when a pass finds it missing: the caller re-runs the NIC
/// takeover (network, extension, `br-int`), which this module does not know how to do.
pub trait NetworkRecreator: Send + Sync {
    /// The caller's error.
    type Error: std::error::Error + Send + Sync + 'static;

    /// Creates the network again. Called at most once per pass.
    fn recreate_network(&self) -> impl Future<Output = Result<(), Self::Error>> + Send;
}

/// Settings of the reconciler.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HealConfig {
    /// The agent's HNS network (`antrea-hnsnetwork`).
    pub network_name: String,
    /// How long an endpoint must have been stale (or owned and unattached) before it is
    /// deleted (reported); longer than the slowest CNI ADD.
    pub grace: Duration,
}

impl HealConfig {
    /// A two-minute grace period, kubelet's default runtime request timeout, which bounds the
    /// Pod sandbox creation that contains the CNI ADD.
    pub fn new(network_name: impl Into<String>) -> Self {
        HealConfig {
            network_name: network_name.into(),
            grace: Duration::from_secs(120),
        }
    }
}

/// Compares HNS with the agent's intent and repairs it; see the module documentation.
pub struct HnsReconciler<R> {
    hns: Arc<dyn HcnApi>,
    recreator: R,
    config: HealConfig,
    metrics: HealMetrics,
    sightings: Sightings,
}

impl<R> std::fmt::Debug for HnsReconciler<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HnsReconciler")
            .field("config", &self.config)
            .field("sightings", &self.sightings)
            .finish_non_exhaustive()
    }
}

impl<R: NetworkRecreator> HnsReconciler<R> {
    /// A reconciler of `hns` that has not seen anything yet.
    pub fn new(
        hns: Arc<dyn HcnApi>,
        recreator: R,
        config: HealConfig,
        metrics: HealMetrics,
    ) -> Self {
        HnsReconciler {
            hns,
            recreator,
            config,
            metrics,
            sightings: Sightings::default(),
        }
    }

    /// One pass against `intent`. HNS calls run on tokio's blocking threads.
    pub async fn reconcile(&mut self, intent: &EndpointIntent) -> HealReport {
        self.pass(intent, false).await
    }

    /// One pass against `intent` when no CNI call can be in flight, so that `intent` names
    /// every endpoint a Pod owns (the agent's CNI server is not listening yet): stale
    /// endpoints are deleted, and owned ones never attached are reported, without waiting for
    /// the grace period.
    pub async fn reconcile_settled(&mut self, intent: &EndpointIntent) -> HealReport {
        self.pass(intent, true).await
    }

    async fn pass(&mut self, intent: &EndpointIntent, settled: bool) -> HealReport {
        let now = Instant::now();
        let hns = Arc::clone(&self.hns);
        let config = self.config.clone();
        let owned_intent = intent.clone();
        let mut sightings = std::mem::take(&mut self.sightings);
        let pass = tokio::task::spawn_blocking(move || {
            let report = blocking_pass(
                hns.as_ref(),
                &config,
                &owned_intent,
                now,
                settled,
                &mut sightings,
            );
            (sightings, report)
        });
        let mut report = match pass.await {
            Ok((sightings, report)) => {
                self.sightings = sightings;
                report
            }
            Err(join) => {
                std::panic::resume_unwind(join.try_into_panic().unwrap_or_else(|e| Box::new(e)))
            }
        };
        if let NetworkState::Missing { recreate } = &mut report.network {
            let network = &self.config.network_name;
            tracing::warn!(
                network,
                "HNS network is missing (lost at reboot or HNS reset); recreating it"
            );
            *recreate = match self.recreator.recreate_network().await {
                Ok(()) => {
                    tracing::info!(network, "HNS network recreated");
                    Ok(())
                }
                Err(error) => {
                    tracing::error!(network, %error, "recreating the HNS network failed; retrying next pass");
                    Err(Box::new(error))
                }
            };
        }
        self.metrics.record(&report);
        report
    }
}

/// The blocking part of a pass: find the network, then heal its endpoints.
fn blocking_pass(
    hns: &dyn HcnApi,
    config: &HealConfig,
    intent: &EndpointIntent,
    now: Instant,
    settled: bool,
    sightings: &mut Sightings,
) -> HealReport {
    match hns.find_network_by_name(&config.network_name) {
        Ok(Some(network)) => {
            let mut report = HealReport::new(NetworkState::Present { id: network.id });
            let pass = EndpointPass {
                hns,
                network: network.id,
                intent,
                grace: config.grace,
                settled,
                now,
            };
            pass.run(sightings, &mut report);
            report
        }
        Ok(None) => {
            // Every endpoint went with the network; nothing seen before is there any more.
            *sightings = Sightings::default();
            // The recreate result is filled in by the async part, which runs the callback.
            let mut report = HealReport::new(NetworkState::Missing { recreate: Ok(()) });
            report.missing = intent
                .iter()
                .map(|(name, ip)| (name.to_owned(), ip))
                .collect();
            report
        }
        Err(source) => {
            let mut report = HealReport::new(NetworkState::Unknown);
            report_error(
                &mut report,
                HealAction::FindNetwork,
                config.network_name.clone(),
                source,
            );
            report
        }
    }
}
