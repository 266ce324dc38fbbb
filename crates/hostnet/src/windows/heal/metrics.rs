//! [`HealMetrics`]: Prometheus counters and gauges of the HNS reconciler.

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use super::report::{HealAction, HealReport, NetworkState, Stale};

/// The reconciler's metrics. Clones share the same values.
///
/// | name | kind | meaning |
/// |---|---|---|
/// | `antrea_hns_orphan_endpoints_removed_total` | counter | orphan endpoints deleted |
/// | `antrea_hns_duplicate_endpoints_removed_total` | counter | endpoints deleted for holding an owned endpoint's IP |
/// | `antrea_hns_network_recreated_total` | counter | times the missing network was recreated successfully |
/// | `antrea_hns_heal_errors_total` | counter | failed HNS calls and failed recreations |
/// | `antrea_hns_stale_endpoints_pending` | gauge | stale endpoints waiting out the grace period |
/// | `antrea_hns_unattached_endpoints` | gauge | owned endpoints never attached after the grace period |
/// | `antrea_hns_missing_endpoints` | gauge | intended endpoints absent from HNS |
///
/// Gauges hold the last pass's values; a pass that could not look the network up or list its
/// endpoints leaves them.
#[derive(Debug, Clone, Default)]
pub struct HealMetrics {
    orphans_removed: Counter,
    duplicates_removed: Counter,
    network_recreated: Counter,
    errors: Counter,
    pending: Gauge,
    unattached: Gauge,
    missing: Gauge,
}

impl HealMetrics {
    /// New metrics, registered in `registry` (counters get the `_total` suffix when encoded).
    pub fn register(registry: &mut Registry) -> Self {
        let metrics = HealMetrics::default();
        let counters = [
            (
                "antrea_hns_orphan_endpoints_removed",
                "HNS endpoints on the agent's network that no Pod owned, deleted",
                &metrics.orphans_removed,
            ),
            (
                "antrea_hns_duplicate_endpoints_removed",
                "HNS endpoints holding the IP of a Pod's endpoint, deleted",
                &metrics.duplicates_removed,
            ),
            (
                "antrea_hns_network_recreated",
                "Times the agent's missing HNS network was recreated",
                &metrics.network_recreated,
            ),
            (
                "antrea_hns_heal_errors",
                "Failed HNS calls and network recreations during HNS reconciliation",
                &metrics.errors,
            ),
        ];
        for (name, help, counter) in counters {
            registry.register(name, help, counter.clone());
        }
        let gauges = [
            (
                "antrea_hns_stale_endpoints_pending",
                "Stale HNS endpoints waiting out the grace period before deletion",
                &metrics.pending,
            ),
            (
                "antrea_hns_unattached_endpoints",
                "Pod HNS endpoints not attached to a namespace after the grace period",
                &metrics.unattached,
            ),
            (
                "antrea_hns_missing_endpoints",
                "Pod endpoints the agent expects that HNS does not have",
                &metrics.missing,
            ),
        ];
        for (name, help, gauge) in gauges {
            registry.register(name, help, gauge.clone());
        }
        metrics
    }

    /// Counts what `report` did and sets the gauges to what it found.
    pub(super) fn record(&self, report: &HealReport) {
        for stale in &report.removed {
            match stale.why {
                Stale::Orphan => self.orphans_removed.inc(),
                Stale::Duplicate { .. } => self.duplicates_removed.inc(),
            };
        }
        self.errors.inc_by(report.errors.len() as u64);
        match &report.network {
            NetworkState::Missing { recreate: Ok(()) } => self.network_recreated.inc(),
            NetworkState::Missing { recreate: Err(_) } => self.errors.inc(),
            NetworkState::Present { .. } | NetworkState::Unknown => 0,
        };
        // The gauges describe HNS as a pass saw it: a pass that could not see the endpoints
        // leaves them.
        let blind = report.errors.iter().any(|e| {
            matches!(
                e.action,
                HealAction::FindNetwork | HealAction::ListEndpoints
            )
        });
        if blind {
            return;
        }
        self.pending.set(gauge_value(report.pending.len()));
        self.unattached.set(gauge_value(report.unattached.len()));
        self.missing.set(gauge_value(report.missing.len()));
    }
}

fn gauge_value(count: usize) -> i64 {
    i64::try_from(count).unwrap_or(i64::MAX)
}
