//! [`RequeueMetrics`]: Prometheus counters and a gauge of the controllers' failed datapath
//! updates and their retries, one series per controller.
//!
//! | name | kind | meaning |
//! |---|---|---|
//! | `antrea_agent_datapath_update_failures_total{controller}` | counter | datapath updates (`set_peers`, `set_policy`) that failed |
//! | `antrea_agent_datapath_update_retries_total{controller}` | counter | updates made again by the requeue, with no new input |
//! | `antrea_agent_datapath_update_retry_pending{controller}` | gauge | 1 while the controller's last update failed and is not yet redone, else 0 |
//!
//! `controller` is `peers`, `networkpolicy` or `proxy` (the Service proxy).

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

/// The series' label: the controller whose updates they count.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct ControllerLabel {
    controller: &'static str,
}

/// The requeue metrics of every controller. Clones share the same values; the default is
/// registered nowhere.
#[derive(Debug, Clone, Default)]
pub struct RequeueMetrics {
    failures: Family<ControllerLabel, Counter>,
    retries: Family<ControllerLabel, Counter>,
    pending: Family<ControllerLabel, Gauge>,
}

/// One controller's series.
#[derive(Debug, Clone)]
pub(super) struct ControllerSeries {
    pub(super) failures: Counter,
    pub(super) retries: Counter,
    pub(super) pending: Gauge,
}

impl RequeueMetrics {
    /// New metrics, registered in `registry` (counters get the `_total` suffix when encoded).
    pub fn register(registry: &mut Registry) -> RequeueMetrics {
        let metrics = RequeueMetrics::default();
        registry.register(
            "antrea_agent_datapath_update_failures",
            "Datapath updates of the controller (peers, NetworkPolicy, Service proxy) that failed",
            metrics.failures.clone(),
        );
        registry.register(
            "antrea_agent_datapath_update_retries",
            "Datapath updates the controller made again after a failure, with no new input",
            metrics.retries.clone(),
        );
        registry.register(
            "antrea_agent_datapath_update_retry_pending",
            "1 while the controller's last datapath update failed and awaits its retry",
            metrics.pending.clone(),
        );
        metrics
    }

    /// The series of `controller`, created at zero.
    pub(super) fn of(&self, controller: &'static str) -> ControllerSeries {
        let label = ControllerLabel { controller };
        ControllerSeries {
            failures: self.failures.get_or_create(&label).clone(),
            retries: self.retries.get_or_create(&label).clone(),
            pending: self.pending.get_or_create(&label).clone(),
        }
    }
}
