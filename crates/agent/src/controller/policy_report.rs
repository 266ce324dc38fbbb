//! [`PolicyReport`]: what the NetworkPolicy controller enforces, for the agent API and
//! `antctl` — each installed rule with the Pods it applies to, its peers and ports, the flows
//! behind it and its packet and byte counters; for one Pod, whether it is isolated in each
//! direction and the rules that apply to it. The same report feeds the per-rule metrics.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;

use netpol::{Direction, Peers, Ports, RuleId, Snapshot};
use pipeline::cache::FlowKey;
use pipeline::render::{PolicyFlows, RuleCounters};
use serde::{Deserialize, Serialize};

/// The controller's answer for the whole Node or for one Pod.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicyReport {
    /// The Pod asked about (`namespace/name`), with its address and isolation.
    pub pod: Option<PodPolicy>,
    /// The installed rules (those applying to the Pod when one was asked about).
    pub rules: Vec<RuleReport>,
}

/// One Pod's standing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PodPolicy {
    /// `namespace/name`.
    pub name: String,
    /// Its address; `None` while it has none (no rule can apply then).
    pub ip: Option<Ipv4Addr>,
    /// Whether a policy selects it for ingress: only what rules allow comes in.
    pub ingress_isolated: bool,
    /// Whether a policy selects it for egress: only what rules allow goes out.
    pub egress_isolated: bool,
}

/// One installed rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleReport {
    /// The rule's id: `namespace/policy/direction/index`.
    pub rule: String,
    /// The policy: `namespace/name`.
    pub policy: String,
    /// `ingress` or `egress`.
    pub direction: String,
    /// The local Pods' addresses the rule applies to.
    pub applied_to: Vec<Ipv4Addr>,
    /// The peers: `any`, or addresses and CIDRs.
    pub peers: String,
    /// The ports: `any`, or protocol/port entries.
    pub ports: String,
    /// The rule's conjunction id (0 when the rule needs no conjunction).
    pub conj_id: u32,
    /// Flows the rule costs with conjunctive matches.
    pub flow_count: usize,
    /// Flows the same rule would cost expanded pair by pair.
    pub flow_count_without_conjunction: usize,
    /// The flows behind the rule, in `ovs-ofctl` syntax.
    pub flows: Vec<String>,
    /// Packets the rule let through (its counted flows' statistics).
    pub packets: u64,
    /// Bytes the rule let through.
    pub bytes: u64,
}

impl PolicyReport {
    /// The report of `snapshot` as rendered into `rendered`, with `counters` from the switch;
    /// for `pod` (name and address) only the rules that apply to it.
    pub fn new(
        snapshot: &Snapshot,
        rendered: &PolicyFlows,
        counters: &BTreeMap<RuleId, RuleCounters>,
        pod: Option<(String, Option<Ipv4Addr>)>,
    ) -> PolicyReport {
        let applies = |rule_ip: &std::collections::BTreeSet<Ipv4Addr>| match &pod {
            Some((_, Some(ip))) => rule_ip.contains(ip),
            Some((_, None)) => false,
            None => true,
        };
        // Each flow's key and text once, for every rule's lookup of the flows behind it.
        let flow_texts: Vec<(FlowKey, String)> = rendered
            .flows
            .iter()
            .map(|flow| (FlowKey::of(flow), flow.to_string()))
            .collect();
        let rules = snapshot
            .rules
            .values()
            .filter(|rule| applies(&rule.applied_to))
            .map(|rule| {
                let flows = rendered.rules.get(&rule.id);
                let counted = counters.get(&rule.id).copied().unwrap_or_default();
                RuleReport {
                    rule: rule.id.to_string(),
                    policy: rule.id.policy.to_string(),
                    direction: rule.id.direction.to_string(),
                    applied_to: rule.applied_to.iter().copied().collect(),
                    peers: describe_peers(&rule.peers),
                    ports: describe_ports(&rule.ports),
                    conj_id: flows.map_or(0, |f| f.conj_id),
                    flow_count: flows.map_or(0, |f| f.flows),
                    flow_count_without_conjunction: flows.map_or(0, |f| f.without_conjunction),
                    flows: flows
                        .map(|f| flows_behind(&flow_texts, f.conj_id, &f.counted))
                        .unwrap_or_default(),
                    packets: counted.packets,
                    bytes: counted.bytes,
                }
            })
            .collect();
        let pod = pod.map(|(name, ip)| PodPolicy {
            ingress_isolated: ip
                .is_some_and(|ip| snapshot.isolation.of(Direction::Ingress).contains(&ip)),
            egress_isolated: ip
                .is_some_and(|ip| snapshot.isolation.of(Direction::Egress).contains(&ip)),
            name,
            ip,
        });
        PolicyReport { pod, rules }
    }
}

/// The flows carrying a rule (of `flows`, each with its key and text): its counted flows and,
/// for a conjunctive rule, every flow that adds to or acts on its conjunction.
fn flows_behind(flows: &[(FlowKey, String)], conj_id: u32, counted: &[FlowKey]) -> Vec<String> {
    let conjunction = format!("conjunction({conj_id},");
    let conj_match = format!("conj_id={conj_id},");
    flows
        .iter()
        .filter(|(key, text)| {
            counted.contains(key)
                || (conj_id != 0 && (text.contains(&conjunction) || text.contains(&conj_match)))
        })
        .map(|(_, text)| text.clone())
        .collect()
}

fn describe_peers(peers: &Peers) -> String {
    match peers {
        Peers::Any => "any".to_owned(),
        Peers::Set(set) => set
            .ips
            .iter()
            .map(ToString::to_string)
            .chain(set.cidrs.iter().map(ToString::to_string))
            .collect::<Vec<_>>()
            .join(","),
    }
}

fn describe_ports(ports: &Ports) -> String {
    match ports {
        Ports::Any => "any".to_owned(),
        Ports::Set(set) => set
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(","),
    }
}
