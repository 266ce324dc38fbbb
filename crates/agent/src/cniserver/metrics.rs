//! [`CniMetrics`]: how long the CNI server takes to answer ADD and DEL, by outcome.
//!
//! | name | kind | meaning |
//! |---|---|---|
//! | `antrea_agent_cni_request_duration_seconds{command,result}` | histogram | time from receiving a CNI ADD or DEL to its answer |
//!
//! `command` is `ADD` or `DEL`; `result` is `success`, or the CNI error code of the answer
//! (`7` for a bad request, `11` to try again later, …). Buckets go from 1 ms to 16 s, doubling.

use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::{Registry, Unit};

/// The series' labels: the command and how it ended.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct RequestLabels {
    command: &'static str,
    result: String,
}

/// The CNI request durations. Clones share the same values; the default is registered nowhere.
#[derive(Debug, Clone)]
pub struct CniMetrics {
    durations: Family<RequestLabels, Histogram>,
}

/// 1 ms, 2 ms, … 16.384 s.
fn new_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.001, 2.0, 15))
}

impl Default for CniMetrics {
    fn default() -> CniMetrics {
        CniMetrics {
            durations: Family::new_with_constructor(new_histogram),
        }
    }
}

impl CniMetrics {
    /// New metrics, registered in `registry`.
    pub fn register(registry: &mut Registry) -> CniMetrics {
        let metrics = CniMetrics::default();
        registry.register_with_unit(
            "antrea_agent_cni_request_duration",
            "Time the CNI server took to answer a CNI ADD or DEL, by command and result",
            Unit::Seconds,
            metrics.durations.clone(),
        );
        metrics
    }

    /// Records that `command` took `elapsed` and was answered with the CNI error `code`
    /// (`None`: it succeeded).
    pub(super) fn observe(&self, command: &'static str, code: Option<i32>, elapsed: Duration) {
        let result = code.map_or_else(|| "success".to_owned(), |code| code.to_string());
        self.durations
            .get_or_create(&RequestLabels { command, result })
            .observe(elapsed.as_secs_f64());
    }
}
