//! The NetworkPolicy report as text: the Pod's standing, then one block per rule (id,
//! direction, peers, ports, flows with and without conjunctions, counters) with the flows
//! behind it indented under it.

use std::fmt::Write;

use crate::controller::PolicyReport;

/// `report` as `antctl get networkpolicies` prints it.
pub fn policy_table(report: &PolicyReport) -> String {
    let mut out = String::new();
    if let Some(pod) = &report.pod {
        let isolated = |yes: bool| if yes { "isolated" } else { "not isolated" };
        let _ = match pod.ip {
            Some(ip) => writeln!(
                out,
                "Pod {} ({ip}): ingress {}, egress {}",
                pod.name,
                isolated(pod.ingress_isolated),
                isolated(pod.egress_isolated)
            ),
            None => writeln!(out, "Pod {}: no address known; no rule applies", pod.name),
        };
    }
    if report.rules.is_empty() {
        out.push_str("no NetworkPolicy rule applies\n");
        return out;
    }
    for rule in &report.rules {
        let _ = writeln!(
            out,
            "{}  {}  peers {}  ports {}  flows {} (pair by pair {})  packets {}  bytes {}",
            rule.rule,
            rule.direction,
            rule.peers,
            rule.ports,
            rule.flow_count,
            rule.flow_count_without_conjunction,
            rule.packets,
            rule.bytes
        );
        for flow in &rule.flows {
            let _ = writeln!(out, "    {flow}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controller::{PodPolicy, RuleReport};

    #[test]
    fn a_pod_with_one_rule_and_its_flows() {
        let report = PolicyReport {
            pod: Some(PodPolicy {
                name: "x/a".into(),
                ip: Some("10.244.1.10".parse().unwrap()),
                ingress_isolated: true,
                egress_isolated: false,
            }),
            rules: vec![RuleReport {
                rule: "x/p/ingress/0".into(),
                policy: "x/p".into(),
                direction: "ingress".into(),
                applied_to: vec!["10.244.1.10".parse().unwrap()],
                peers: "10.244.1.11".into(),
                ports: "TCP/80".into(),
                conj_id: 7,
                flow_count: 3,
                flow_count_without_conjunction: 1,
                flows: vec!["table=10,priority=200,conj_id=7,ip actions=goto_table:12".into()],
                packets: 4,
                bytes: 296,
            }],
        };
        assert_eq!(
            policy_table(&report),
            "Pod x/a (10.244.1.10): ingress isolated, egress not isolated\n\
             x/p/ingress/0  ingress  peers 10.244.1.11  ports TCP/80  flows 3 (pair by pair 1)  packets 4  bytes 296\n\
             \x20   table=10,priority=200,conj_id=7,ip actions=goto_table:12\n"
        );
        let empty = PolicyReport {
            pod: None,
            rules: vec![],
        };
        assert_eq!(policy_table(&empty), "no NetworkPolicy rule applies\n");
    }
}
