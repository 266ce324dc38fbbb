//! [`DesiredFlowMetrics`]: how many flows per table, and groups, the agent keeps installed in
//! the bridge (its desired-flow cache, which every confirmed install updates and every
//! reconnect replays).
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
use std::sync::Mutex;

use pipeline::cache::DesiredCache;
use pipeline::layout::TableGraph;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

/// The series' label: the table.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct TableLabel {
    table: String,
}

/// The desired flows per table and the groups, as of the last install.
#[derive(Debug, Default)]
pub struct DesiredFlowMetrics {
    flows: Family<TableLabel, Gauge>,
    groups: Gauge,
    /// The tables with a series, by id; held while the gauges are read from a cache and set,
    /// so that the last update to run is the one that stays.
    tables: Mutex<BTreeMap<u8, TableLabel>>,
}

impl DesiredFlowMetrics {
    /// New metrics, registered in `registry`; their series appear with the first update.
    pub fn register(registry: &mut Registry) -> DesiredFlowMetrics {
        let metrics = DesiredFlowMetrics::default();
        registry.register(
            "antrea_agent_ovs_flows",
            "Flows the agent installed in the bridge's table",
            metrics.flows.clone(),
        );
        registry.register(
            "antrea_agent_ovs_groups",
            "Groups the agent installed in the bridge",
            metrics.groups.clone(),
        );
        metrics
    }

    /// Sets the gauges to what `cache` holds.
    pub(super) fn update(&self, cache: &DesiredCache) {
        let mut tables = self
            .tables
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let counts = cache.flows_per_table();
        let graph = TableGraph::standard();
        for id in graph
            .tables()
            .map(|(id, _)| id)
            .chain(counts.keys().copied())
        {
            tables.entry(id).or_insert_with(|| TableLabel {
                table: graph
                    .table(id)
                    .map_or_else(|| id.to_string(), |table| table.name().to_owned()),
            });
        }
        for (id, label) in tables.iter() {
            let count = counts.get(id).copied().unwrap_or(0);
            self.flows
                .get_or_create(label)
                .set(i64::try_from(count).unwrap_or(i64::MAX));
        }
        self.groups
            .set(i64::try_from(cache.group_count()).unwrap_or(i64::MAX));
    }
}
