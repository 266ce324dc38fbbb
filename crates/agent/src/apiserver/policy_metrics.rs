//! [`PolicyRuleMetrics`]: the per-rule NetworkPolicy metrics — flows each rule costs (and would
//! cost without conjunctions), packets and bytes it let through — as a Prometheus collector
//! over the last [`RuleReport`]s, which the `/metrics` handler refreshes from the controller
//! before each scrape. Rules come and go with policies, so the series are the rules of now.

use std::sync::Mutex;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;

use crate::controller::RuleReport;

/// The rules of the last report.
#[derive(Debug, Default)]
pub struct PolicyRuleMetrics {
    rules: Mutex<Vec<RuleReport>>,
}

impl PolicyRuleMetrics {
    /// Replaces the rules the next scrape reports.
    pub fn update(&self, rules: Vec<RuleReport>) {
        *self
            .rules
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = rules;
    }
}

type Value = fn(&RuleReport) -> u64;

/// Name, help, type and value of each family.
const FAMILIES: [(&str, &str, MetricType, Value); 4] = [
    (
        "antrea_agent_networkpolicy_rule_flows",
        "Flows installed for the NetworkPolicy rule (conjunctive matches).",
        MetricType::Gauge,
        |r| r.flow_count as u64,
    ),
    (
        "antrea_agent_networkpolicy_rule_flows_without_conjunction",
        "Flows the NetworkPolicy rule would need expanded pair by pair.",
        MetricType::Gauge,
        |r| r.flow_count_without_conjunction as u64,
    ),
    (
        "antrea_agent_networkpolicy_rule_packets",
        "Packets the NetworkPolicy rule allowed (flow statistics of the rule's flows).",
        MetricType::Counter,
        |r| r.packets,
    ),
    (
        "antrea_agent_networkpolicy_rule_bytes",
        "Bytes the NetworkPolicy rule allowed (flow statistics of the rule's flows).",
        MetricType::Counter,
        |r| r.bytes,
    ),
];

impl Collector for PolicyRuleMetrics {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let rules = self
            .rules
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for (name, help, metric_type, value) in FAMILIES {
            let mut family = encoder.encode_descriptor(name, help, None, metric_type)?;
            for rule in rules.iter() {
                let labels = [
                    ("policy".to_owned(), rule.policy.clone()),
                    ("direction".to_owned(), rule.direction.clone()),
                    ("rule".to_owned(), rule.rule.clone()),
                ];
                let series = family.encode_family(&labels)?;
                match metric_type {
                    MetricType::Counter => ConstCounter::new(value(rule)).encode(series)?,
                    _ => ConstGauge::new(i64::try_from(value(rule)).unwrap_or(i64::MAX))
                        .encode(series)?,
                }
            }
        }
        Ok(())
    }
}
