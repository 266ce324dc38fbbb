//! [`HealLoop`]: the HNS reconciler run by the agent, against snapshots of the Pod endpoints
//! it owns.
//!
//! A CNI ADD creates its HNS endpoint before it records the Pod's port, so a snapshot taken
//! while an ADD runs does not name that ADD's endpoint. Two passes handle this race:
//!
//! - the first, *settled* pass runs before the CNI server listens, when no ADD can be in
//!   flight: the snapshot is complete and stale endpoints are deleted at once;
//! - every later pass runs while ADDs may be in flight, so an endpoint the snapshot does not
//!   name is deleted only once it stayed unnamed for the reconciler's grace period, longer than
//!   the slowest ADD (an endpoint younger than that is treated as owned).

use std::future::Future;
use std::time::Duration;

use hostnet::windows::heal::{EndpointIntent, HealReport, HnsReconciler, NetworkRecreator};
use tokio::time::{Instant, MissedTickBehavior};

use super::endpoints::PodEndpoints;

/// The HNS reconciler and the time between two of its passes.
#[derive(Debug)]
pub struct HealLoop<R> {
    reconciler: HnsReconciler<R>,
    period: Duration,
}

impl<R: NetworkRecreator> HealLoop<R> {
    /// A loop of `reconciler` with a pass every `period`.
    pub fn new(reconciler: HnsReconciler<R>, period: Duration) -> Self {
        HealLoop { reconciler, period }
    }

    /// The first pass, when no CNI ADD can be in flight.
    pub async fn settled_pass<E: PodEndpoints>(&mut self, endpoints: &E) {
        if let Some(intent) = snapshot(endpoints).await {
            let report = self.reconciler.reconcile_settled(&intent).await;
            summarize("start", &report);
        }
    }

    /// A pass every period from now on, until `stop` completes; a pass under way is finished
    /// first.
    pub async fn run<E: PodEndpoints>(mut self, endpoints: &E, stop: impl Future<Output = ()>) {
        let mut ticker = tokio::time::interval_at(Instant::now() + self.period, self.period);
        ticker.set_missed_tick_behavior(MissedTickBehavior::Delay);
        let mut stop = std::pin::pin!(stop);
        loop {
            tokio::select! {
                biased;
                () = &mut stop => return,
                _ = ticker.tick() => {}
            }
            if let Some(intent) = snapshot(endpoints).await {
                let report = self.reconciler.reconcile(&intent).await;
                summarize("periodic", &report);
            }
        }
    }
}

/// The endpoints the agent owns now; `None` (logged) when they cannot be read.
async fn snapshot<E: PodEndpoints>(endpoints: &E) -> Option<EndpointIntent> {
    match endpoints.pod_endpoints().await {
        Ok(intent) => Some(intent),
        Err(error) => {
            tracing::warn!(
                "HNS reconciliation pass skipped: the Pods' endpoints cannot be read: {error}"
            );
            None
        }
    }
}

/// One line per pass; the reconciler logs each finding itself.
fn summarize(pass: &str, report: &HealReport) {
    if report.is_clean() {
        tracing::debug!("HNS reconciliation ({pass} pass): HNS matches the Pods");
    } else {
        tracing::info!(
            "HNS reconciliation ({pass} pass): {} stale endpoint(s) removed, {} pending, {} missing, {} unattached, {} failed call(s), network {:?}",
            report.removed.len(),
            report.pending.len(),
            report.missing.len(),
            report.unattached.len(),
            report.errors.len(),
            report.network
        );
    }
}
