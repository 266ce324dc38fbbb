//! [`PolicyReport`]: what the NetworkPolicy controller enforces, for the agent API and
//! `antctl` — each installed rule with the Pods it applies to, its peers and ports, the flows
//! behind it and its packet and byte counters; for one Pod, whether it is isolated in each
//! direction and the rules that apply to it. The same report feeds the per-rule metrics.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;

use netpol::{Direction, Peers, Ports, RuleId, Snapshot};
use serde::{Deserialize, Serialize};

use crate::datapath::RuleEnforcement;

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
    /// The report of `snapshot` as the datapath enforces it (`enforcement`, with its
    /// counters); for `pod` (name and address) only the rules that apply to it.
    pub fn new(
        snapshot: &Snapshot,
        enforcement: &BTreeMap<RuleId, RuleEnforcement>,
        pod: Option<(String, Option<Ipv4Addr>)>,
    ) -> PolicyReport {
        let applies = |rule_ip: &std::collections::BTreeSet<Ipv4Addr>| match &pod {
            Some((_, Some(ip))) => rule_ip.contains(ip),
            Some((_, None)) => false,
            None => true,
        };
        let rules = snapshot
            .rules
            .values()
            .filter(|rule| applies(&rule.applied_to))
            .map(|rule| {
                let enforced = enforcement.get(&rule.id).cloned().unwrap_or_default();
                RuleReport {
                    rule: rule.id.to_string(),
                    policy: rule.id.policy.to_string(),
                    direction: rule.id.direction.to_string(),
                    applied_to: rule.applied_to.iter().copied().collect(),
                    peers: describe_peers(&rule.peers),
                    ports: describe_ports(&rule.ports),
                    conj_id: enforced.conj_id,
                    flow_count: enforced.entries,
                    flow_count_without_conjunction: enforced.entries_expanded,
                    flows: enforced.texts,
                    packets: enforced.packets,
                    bytes: enforced.bytes,
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
