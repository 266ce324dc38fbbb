//! [`ServiceSyncMetrics`]: how long each wake-up of the Service proxy takes to translate what
//! changed in the stores and install it.
//!
//! | name | kind | meaning |
//! |---|---|---|
//! | `antrea_agent_proxy_sync_duration_seconds` | histogram | one [`super::ProxyController::sync`]: translation and datapath updates |
//!
//! Buckets go from 1 ms to 16 s, doubling. Failed syncs are observed too; their failures and
//! retries are `antrea_agent_datapath_update_*{controller="proxy"}`.

use std::time::Duration;

use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::{Registry, Unit};

/// The sync durations. Clones share the same values; the default is registered nowhere.
#[derive(Debug, Clone)]
pub struct ServiceSyncMetrics {
    durations: Histogram,
}

impl Default for ServiceSyncMetrics {
    fn default() -> ServiceSyncMetrics {
        ServiceSyncMetrics {
            durations: Histogram::new(exponential_buckets(0.001, 2.0, 15)),
        }
    }
}

impl ServiceSyncMetrics {
    /// New metrics, registered in `registry`.
    pub fn register(registry: &mut Registry) -> ServiceSyncMetrics {
        let metrics = ServiceSyncMetrics::default();
        registry.register_with_unit(
            "antrea_agent_proxy_sync_duration",
            "Time one Service sync took: translating the stores and installing what changed",
            Unit::Seconds,
            metrics.durations.clone(),
        );
        metrics
    }

    /// Records one sync that took `elapsed`.
    pub(super) fn observe(&self, elapsed: Duration) {
        self.durations.observe(elapsed.as_secs_f64());
    }
}
