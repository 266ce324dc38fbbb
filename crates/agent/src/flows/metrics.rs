//! [`DesiredFlowMetrics`]: how many flows per table, and groups, the agent keeps installed in
//! the bridge (its desired-flow cache, which every confirmed install updates and every
//! reconnect replays), counted from the cache when the metrics are scraped, so installs pay
//! nothing for them.
//!
//! | name | kind | meaning |
//! |---|---|---|
//! | `antrea_agent_ovs_flows{table}` | gauge | flows the agent installed in the table |
//! | `antrea_agent_ovs_groups` | gauge | groups the agent installed |
//!
//! `table` is the table's name in the agent's table graph (`docs/pipeline.md`), or its
//! OpenFlow id for a table no feature declares. Every table of the graph has a series, at 0
//! when it holds no flow.

use std::collections::BTreeMap;

use pipeline::cache::SharedCache;
use pipeline::layout::TableGraph;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::Registry;

/// The series' label: the table.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct TableLabel {
    table: String,
}

/// The collector of the desired flows per table and the groups.
#[derive(Debug)]
pub struct DesiredFlowMetrics {
    cache: SharedCache,
}

impl DesiredFlowMetrics {
    /// Registers the metrics of `cache` in `registry`.
    pub fn register(registry: &mut Registry, cache: SharedCache) {
        registry.register_collector(Box::new(DesiredFlowMetrics { cache }));
    }
}

/// A count as a gauge's value.
fn gauge(count: usize) -> ConstGauge {
    ConstGauge::new(i64::try_from(count).unwrap_or(i64::MAX))
}

impl Collector for DesiredFlowMetrics {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let (counts, groups) = {
            let cache = self
                .cache
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            (cache.flows_per_table(), cache.group_count())
        };
        let graph = TableGraph::standard();
        let tables: BTreeMap<u8, TableLabel> = graph
            .tables()
            .map(|(id, _)| id)
            .chain(counts.keys().copied())
            .map(|id| {
                let table = graph
                    .table(id)
                    .map_or_else(|| id.to_string(), |table| table.name().to_owned());
                (id, TableLabel { table })
            })
            .collect();
        let mut flows = encoder.encode_descriptor(
            "antrea_agent_ovs_flows",
            "Flows the agent installed in the bridge's table",
            None,
            MetricType::Gauge,
        )?;
        for (id, label) in &tables {
            gauge(counts.get(id).copied().unwrap_or(0)).encode(flows.encode_family(label)?)?;
        }
        gauge(groups).encode(encoder.encode_descriptor(
            "antrea_agent_ovs_groups",
            "Groups the agent installed in the bridge",
            None,
            MetricType::Gauge,
        )?)
    }
}
