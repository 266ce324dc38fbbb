//! [`PipelineReport`], the document of `/v1/pipeline`: the bridge's tables as the switch holds
//! them — every table of the agent's table graph with its id, name and stage, and the number of
//! flows the switch holds in it (counted in a flow dump), plus any table holding flows that no
//! feature declares.

use std::collections::BTreeMap;

use openflow::conn::{ConnError, OfConnection};
use openflow::msg::flow_stats::{FlowDescRequest, FlowStats};
use pipeline::layout::TableGraph;
use serde::{Deserialize, Serialize};

/// The bridge's tables, in id order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PipelineReport {
    pub tables: Vec<TableReport>,
}

/// One table of the bridge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableReport {
    /// The OpenFlow table id.
    pub id: u8,
    /// The table's name; `None` for a table no feature declares that holds flows anyway.
    pub name: Option<String>,
    /// The table's stage; `None` with the name.
    pub stage: Option<String>,
    /// The flows the switch holds in the table.
    pub flows: usize,
}

impl PipelineReport {
    /// The tables of `graph` and of `flows` (a dump of the switch), each with its flow count.
    pub fn new(graph: &TableGraph, flows: &[FlowStats]) -> PipelineReport {
        let mut counts: BTreeMap<u8, usize> = BTreeMap::new();
        for flow in flows {
            *counts.entry(flow.table_id).or_default() += 1;
        }
        for (id, _) in graph.tables() {
            counts.entry(id).or_default();
        }
        let tables = counts
            .into_iter()
            .map(|(id, flows)| {
                let table = graph.table(id);
                TableReport {
                    id,
                    name: table.map(|t| t.name().to_owned()),
                    stage: table.map(|t| t.stage().name().to_owned()),
                    flows,
                }
            })
            .collect();
        PipelineReport { tables }
    }

    /// The report of the switch behind `conn`, in the agent's table graph.
    pub async fn read(conn: &OfConnection) -> Result<PipelineReport, ConnError> {
        let flows = conn.dump_flows(&FlowDescRequest::default()).await?;
        Ok(PipelineReport::new(TableGraph::standard(), &flows))
    }
}

#[cfg(test)]
mod tests {
    use openflow::msg::flow_mod::FlowMod;

    use super::*;

    fn stats(text: &str) -> FlowStats {
        FlowStats::of_flow_mod(&text.parse::<FlowMod>().unwrap())
    }

    #[test]
    fn every_declared_table_with_its_flows_and_undeclared_ones_that_hold_flows() {
        let g = TableGraph::standard();
        let arp = g.id(pipeline::layout::tables::ARP_RESPONDER);
        let flows = [
            stats("priority=0 actions=drop"),
            stats("priority=1,ip actions=drop"),
            stats(&format!("table={arp},priority=0 actions=drop")),
            stats("table=200,priority=0 actions=drop"),
        ];
        let report = PipelineReport::new(g, &flows);
        assert_eq!(report.tables.len(), g.tables().count() + 1);
        let line = |t: &TableReport| {
            format!(
                "{} {} {} {}",
                t.id,
                t.name.as_deref().unwrap_or("-"),
                t.stage.as_deref().unwrap_or("-"),
                t.flows
            )
        };
        let lines: Vec<String> = report.tables.iter().map(line).collect();
        assert_eq!(lines[0], "0 Classifier Classifier 2");
        assert_eq!(lines[1], "1 SpoofGuard Validation 0");
        let arp = usize::from(arp);
        assert_eq!(lines[arp], format!("{arp} ARPResponder Output 1"));
        assert_eq!(lines[arp + 1], "200 - - 1");
    }
}
