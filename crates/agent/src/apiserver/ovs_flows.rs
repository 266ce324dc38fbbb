//! [`FlowsReport`], the document of `/v1/ovsflows`: the bridge's flows as the switch holds them
//! now (a flow-stats dump through the agent's own OpenFlow connection), each with the name the
//! agent's table graph gives its table, optionally only one table's (by name) and only those
//! of one Pod (matching its OpenFlow port, its address or its MAC).

use openflow::conn::{ConnError, OfConnection};
use openflow::msg::flow_stats::{FlowDescRequest, FlowStats};
use pipeline::layout::TableGraph;
use serde::{Deserialize, Serialize};

use super::pod_interfaces::PodInterfaceReport;

/// The flows shown, in the switch's order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlowsReport {
    pub flows: Vec<FlowReport>,
}

/// One flow.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlowReport {
    /// The OpenFlow table id.
    pub table_id: u8,
    /// The table's name; `None` for a table no feature declares.
    pub table: Option<String>,
    /// The flow in `ovs-ofctl dump-flows` syntax, with its counters.
    pub flow: String,
}

impl FlowReport {
    /// The table's name and id, `Name(id)`, or `table id` for an undeclared table.
    pub fn table_label(&self) -> String {
        match &self.table {
            Some(name) => format!("{name}({})", self.table_id),
            None => format!("table {}", self.table_id),
        }
    }
}

/// Which flows to show.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FlowFilter<'a> {
    /// Only this table's (its id in the graph).
    pub table: Option<u8>,
    /// Only flows of this Pod.
    pub pod: Option<&'a PodInterfaceReport>,
}

/// The id of the table named `name` in `graph`, or the error listing every name.
pub fn table_id(graph: &TableGraph, name: &str) -> Result<u8, String> {
    graph
        .tables()
        .find(|(_, table)| table.name() == name)
        .map(|(id, _)| id)
        .ok_or_else(|| {
            let names: Vec<&str> = graph.tables().map(|(_, t)| t.name()).collect();
            format!("no table {name}; the tables are {}", names.join(", "))
        })
}

impl FlowsReport {
    /// The flows of `dump` that `filter` keeps, named after `graph`'s tables.
    pub fn new(graph: &TableGraph, dump: &[FlowStats], filter: &FlowFilter<'_>) -> FlowsReport {
        let flows = dump
            .iter()
            .filter(|flow| filter.table.is_none_or(|id| flow.table_id == id))
            .map(|flow| FlowReport {
                table_id: flow.table_id,
                table: graph.table(flow.table_id).map(|t| t.name().to_owned()),
                flow: flow.to_string().trim().to_owned(),
            })
            .filter(|flow| filter.pod.is_none_or(|pod| mentions_pod(&flow.flow, pod)))
            .collect();
        FlowsReport { flows }
    }

    /// The flows of the switch behind `conn` that `filter` keeps.
    pub async fn read(
        conn: &OfConnection,
        filter: &FlowFilter<'_>,
    ) -> Result<FlowsReport, ConnError> {
        let request = FlowDescRequest {
            table_id: filter.table.unwrap_or(FlowDescRequest::default().table_id),
            ..FlowDescRequest::default()
        };
        let dump = conn.dump_flows(&request).await?;
        Ok(FlowsReport::new(TableGraph::standard(), &dump, filter))
    }
}

/// Whether `flow` (ovs-ofctl text) matches or sets `pod`'s OpenFlow port (`in_port=N`,
/// `output:N`), address or MAC (as a whole field value, e.g. `nw_dst=10.244.1.3`,
/// `set_field:02:..->eth_dst`).
pub fn mentions_pod(flow: &str, pod: &PodInterfaceReport) -> bool {
    let ofport = pod.ofport.map(|p| p.to_string());
    let ips: Vec<String> = pod.ips.iter().map(ToString::to_string).collect();
    let mac = pod.mac.map(|mac| mac.to_string());
    flow.split([',', ' ', '(', ')']).any(|token| {
        let Some((key, value)) = token.split_once(['=', ':']) else {
            return false;
        };
        let value = value.split("->").next().unwrap_or(value);
        let value = value.split('/').next().unwrap_or(value);
        let is_port = matches!(key, "in_port" | "output") && ofport.as_deref() == Some(value);
        is_port
            || ips.iter().any(|ip| ip == value)
            || mac.as_deref() == Some(value.to_ascii_lowercase().as_str())
    })
}

#[cfg(test)]
mod tests {
    use openflow::msg::flow_mod::FlowMod;

    use super::*;

    fn stats(text: &str) -> FlowStats {
        FlowStats::of_flow_mod(&text.parse::<FlowMod>().unwrap())
    }

    fn pod() -> PodInterfaceReport {
        PodInterfaceReport::example()
    }

    #[test]
    fn a_pods_flows_name_its_port_address_or_mac() {
        let pod = pod();
        for flow in [
            "table=0, priority=190,in_port=3 actions=goto_table:1",
            "table=1, priority=200,ip,in_port=3,dl_src=02:00:0a:f4:01:03,nw_src=10.244.1.3 actions=goto_table:2",
            "table=70, priority=200,ip,nw_dst=10.244.1.3 actions=set_field:02:00:0a:f4:01:03->eth_dst,goto_table:80",
            "table=80, priority=200,dl_dst=02:00:0A:F4:01:03 actions=output:3",
        ] {
            assert!(mentions_pod(flow, &pod), "{flow}");
        }
        for flow in [
            "table=0, priority=190,in_port=33 actions=goto_table:1",
            "table=70, priority=200,ip,nw_dst=10.244.1.30 actions=goto_table:80",
            "table=0, priority=0 actions=drop",
            "table=80, priority=200,reg1=0x3 actions=output:4",
        ] {
            assert!(!mentions_pod(flow, &pod), "{flow}");
        }
    }

    #[test]
    fn flows_are_named_after_their_table_and_filtered() {
        let g = TableGraph::standard();
        let spoof = table_id(g, "SpoofGuard").unwrap();
        let dump = [
            stats("priority=190,in_port=3 actions=drop"),
            stats("priority=190,in_port=4 actions=drop"),
            stats(&format!(
                "table={spoof},priority=200,ip,nw_src=10.244.1.3 actions=drop"
            )),
            stats("table=200,priority=0 actions=drop"),
        ];
        let all = FlowsReport::new(g, &dump, &FlowFilter::default());
        let names: Vec<Option<&str>> = all.flows.iter().map(|f| f.table.as_deref()).collect();
        assert_eq!(
            names,
            [
                Some("Classifier"),
                Some("Classifier"),
                Some("SpoofGuard"),
                None
            ]
        );
        let pod = pod();
        let of_pod = FlowsReport::new(
            g,
            &dump,
            &FlowFilter {
                table: None,
                pod: Some(&pod),
            },
        );
        assert_eq!(of_pod.flows.len(), 2, "{of_pod:?}");
        let in_spoof = FlowsReport::new(
            g,
            &dump,
            &FlowFilter {
                table: Some(spoof),
                pod: Some(&pod),
            },
        );
        assert_eq!(in_spoof.flows.len(), 1, "{in_spoof:?}");
        let error = table_id(g, "Nope").unwrap_err();
        assert!(error.starts_with("no table Nope; the tables are Classifier, SpoofGuard, "));
    }
}
