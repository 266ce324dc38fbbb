//! Per-rule traffic counters from the switch's flow statistics. Established and related
//! packets pass the policy tables before any rule, so a rule's counters are the packets (and
//! bytes) it allowed while their connection was not established yet: a TCP connection's first
//! packet, a UDP flow's packets until the first reply.

use std::collections::{BTreeMap, HashMap};

use netpol::RuleId;
use openflow::msg::flow_stats::FlowStats;

use super::PolicyFlows;
use crate::cache::FlowKey;

/// Traffic a rule allowed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RuleCounters {
    pub packets: u64,
    pub bytes: u64,
}

impl PolicyFlows {
    /// Each rule's counters in `stats` (a dump of the switch's flows). A rule whose counted
    /// flows are missing from the dump counts zero. A direct flow two single-dimension rules
    /// share counts for both.
    pub fn counters(&self, stats: &[FlowStats]) -> BTreeMap<RuleId, RuleCounters> {
        let by_key: HashMap<FlowKey, &FlowStats> = stats
            .iter()
            .map(|s| (FlowKey::new(s.table_id, s.priority, &s.flow_match), s))
            .collect();
        self.rules
            .iter()
            .map(|(id, rule)| {
                let mut total = RuleCounters::default();
                for s in rule.counted.iter().filter_map(|k| by_key.get(k)) {
                    total.packets += s.stats.packet_count.unwrap_or(0);
                    total.bytes += s.stats.byte_count.unwrap_or(0);
                }
                (id.clone(), total)
            })
            .collect()
    }
}
