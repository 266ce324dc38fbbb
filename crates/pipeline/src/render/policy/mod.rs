//! NetworkPolicy in the pipeline: the policy tables' fixed flows (part of the Node's flows) and
//! [`PolicyRenderer`], which turns a `netpol` [`Snapshot`] into conjunctive flows.
//!
//! A rule is up to three dimensions — the applied-to Pods, the peers, the ports — and costs one
//! flow per entry of each dimension plus one `conj_id` flow, instead of one flow per combination:
//! each entry's flow carries `conjunction(ID,K/N)` (K its dimension, N the rule's number of
//! dimensions), and OVS completes the conjunction when a packet matches one flow of every
//! dimension. Entries several rules share are one flow with all their conjunction actions.
//!
//! | table | flows |
//! |---|---|
//! | `EgressRule` | bypass `-new+est`/`-new+rel`; clause flows (`nw_src` applied-to, `nw_dst` peers, ports); `conj_id=N` → `L3Forwarding`; miss → `EgressDefaultRule` |
//! | `EgressDefaultRule` | `nw_src=<isolated Pod>` → drop; miss → `L3Forwarding` |
//! | `IngressRule` | bypass `-new+est`/`-new+rel` and the Node's own addresses from the gateway; clause flows (`nw_src` peers, `nw_dst` applied-to, ports); `conj_id=N` → `ConntrackCommit`; miss → `IngressDefaultRule` |
//! | `IngressDefaultRule` | `nw_dst=<isolated Pod>` → drop; miss → `ConntrackCommit` |
//!
//! A rule with a single dimension (any peer, any port) needs no conjunction: its flows go to the
//! next table directly, one priority above the clause flows.

pub mod conj_ids;
pub mod counters;
pub mod ports;

use std::collections::{BTreeMap, BTreeSet};
use std::net::Ipv4Addr;

use ipnet::Ipv4Net;
use netpol::{Direction, Peers, Ports, Rule, RuleId, Snapshot};
use openflow::action::Action;
use openflow::msg::flow_mod::FlowMod;
use openflow::oxm::{Field, Match};

use super::{CT_EST, CT_NEW, CT_REL, CT_TRK, flow, ip, ipv4};
use crate::cache::FlowKey;
use crate::layout::priority::{HIGH, MISS, NORMAL, POLICY_BYPASS};
use crate::layout::regs::FROM_GATEWAY;
use crate::layout::tables::{EGRESS_DEFAULT_RULE, EGRESS_RULE, INGRESS_DEFAULT_RULE, INGRESS_RULE};
use crate::layout::{Stage, Table, TableGraph};
use conj_ids::ConjIds;
use model::NodeNetwork;
use ports::port_matches;

/// The tables of one direction: rules, default drops, and where allowed traffic continues (the
/// first table of the stage after the direction's security stage).
struct Tables {
    rule: Table,
    default: Table,
    next: Table,
}

fn tables(g: &TableGraph, direction: Direction) -> Tables {
    match direction {
        Direction::Egress => Tables {
            rule: EGRESS_RULE,
            default: EGRESS_DEFAULT_RULE,
            next: g.first(Stage::Routing),
        },
        Direction::Ingress => Tables {
            rule: INGRESS_RULE,
            default: INGRESS_DEFAULT_RULE,
            next: g.first(Stage::Conntrack),
        },
    }
}

/// The policy tables' flows that do not depend on any policy: the bypasses and the defaults.
pub fn policy_table_flows(g: &TableGraph, node: &NodeNetwork) -> Vec<FlowMod> {
    let mut flows = Vec::new();
    for direction in [Direction::Egress, Direction::Ingress] {
        let t = tables(g, direction);
        // Packets of connections conntrack already knows: replies and later packets of
        // connections a rule allowed when they started, and traffic related to them.
        for state in [CT_EST, CT_REL] {
            flows.push(flow(
                g,
                t.rule,
                POLICY_BYPASS,
                ip().with_masked(Field::CtState, state | CT_TRK, state | CT_NEW | CT_TRK),
                vec![],
                Some(t.next),
            ));
        }
        flows.push(flow(g, t.rule, MISS, Match::new(), vec![], Some(t.default)));
        flows.push(flow(g, t.default, MISS, Match::new(), vec![], Some(t.next)));
    }
    let ingress = tables(g, Direction::Ingress);
    // The Node's own traffic to its Pods (kubelet probes) is always allowed.
    for host_ip in [node.gateway_ip, node.node_ip.addr()] {
        flows.push(flow(
            g,
            ingress.rule,
            POLICY_BYPASS,
            ipv4(Field::Ipv4Src, FROM_GATEWAY.match_on(ip()), host_ip),
            vec![],
            Some(ingress.next),
        ));
    }
    flows
}

/// What a rule costs in flows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleFlows {
    /// The rule's conjunction id (0 for a single-dimension rule, which has none).
    pub conj_id: u32,
    /// Flows carrying the rule: one per entry of each dimension, plus the `conj_id` flow.
    /// Entries shared with other rules count for each of them.
    pub flows: usize,
    /// Flows the rule would need without conjunctions (the product of its dimensions).
    pub without_conjunction: usize,
    /// The flows whose statistics count the rule's traffic: its `conj_id` flow, or the direct
    /// flows of a single-dimension rule.
    pub counted: Vec<FlowKey>,
}

/// The NetworkPolicy owner's flows and what each rule costs.
#[derive(Debug, Clone, Default)]
pub struct PolicyFlows {
    pub flows: Vec<FlowMod>,
    pub rules: BTreeMap<RuleId, RuleFlows>,
}

/// One dimension of a rule: the matches of its entries.
fn addresses(field: Field, ips: &BTreeSet<Ipv4Addr>, cidrs: &BTreeSet<Ipv4Net>) -> Vec<Match> {
    ips.iter()
        .map(|a| ipv4(field, ip(), *a))
        .chain(cidrs.iter().map(|c| {
            ip().with_masked(
                field,
                u128::from(u32::from(c.network())),
                u128::from(u32::from(c.netmask())),
            )
        }))
        .collect()
}

fn dimensions(rule: &Rule) -> Vec<Vec<Match>> {
    let (local_field, peer_field) = match rule.direction() {
        Direction::Ingress => (Field::Ipv4Dst, Field::Ipv4Src),
        Direction::Egress => (Field::Ipv4Src, Field::Ipv4Dst),
    };
    // Clauses in packet-field order: source, destination, ports.
    let peer = match &rule.peers {
        Peers::Set(set) => Some(addresses(peer_field, &set.ips, &set.cidrs)),
        Peers::Any => None,
    };
    let local = addresses(local_field, &rule.applied_to, &BTreeSet::new());
    let mut dims = Vec::new();
    match rule.direction() {
        Direction::Ingress => dims.extend(peer.into_iter().chain([local])),
        Direction::Egress => dims.extend([local].into_iter().chain(peer)),
    }
    if let Ports::Set(set) = &rule.ports {
        let mut matches: Vec<Match> = set.iter().flat_map(port_matches).collect();
        matches.dedup();
        dims.push(matches);
    }
    dims
}

/// A flow's part in a conjunction: (id, clause, number of clauses).
type Clause = (u32, u8, u8);

/// Renders snapshots, keeping each rule's conjunction id from one render to the next.
#[derive(Debug, Default)]
pub struct PolicyRenderer {
    ids: ConjIds,
}

impl PolicyRenderer {
    pub fn new() -> PolicyRenderer {
        PolicyRenderer::default()
    }

    /// Every flow of the NetworkPolicy owner for `snapshot`.
    pub fn render(&mut self, snapshot: &Snapshot) -> PolicyFlows {
        self.render_in(TableGraph::standard(), snapshot)
    }

    /// [`PolicyRenderer::render`] with the ids of `g`.
    pub(crate) fn render_in(&mut self, g: &TableGraph, snapshot: &Snapshot) -> PolicyFlows {
        let (egress, ingress) = (tables(g, Direction::Egress), tables(g, Direction::Ingress));
        let tables = |direction| match direction {
            Direction::Egress => &egress,
            Direction::Ingress => &ingress,
        };
        self.ids.retain(|id| snapshot.rules.contains_key(id));
        let mut conj: BTreeMap<FlowKey, (FlowMod, BTreeSet<Clause>)> = BTreeMap::new();
        let mut plain: BTreeMap<FlowKey, FlowMod> = BTreeMap::new();
        let mut rules = BTreeMap::new();
        let mut add_plain = |fm: FlowMod| {
            plain.entry(FlowKey::of(&fm)).or_insert(fm);
        };
        for (id, rule) in &snapshot.rules {
            let t = tables(rule.direction());
            let dims = dimensions(rule);
            let entries: usize = dims.iter().map(Vec::len).sum();
            let without_conjunction = dims.iter().map(Vec::len).product();
            if dims.iter().any(Vec::is_empty) {
                continue;
            }
            let n = dims.len();
            if n == 1 {
                let mut counted = Vec::new();
                for m in dims.into_iter().flatten() {
                    let fm = flow(g, t.rule, HIGH, m, vec![], Some(t.next));
                    counted.push(FlowKey::of(&fm));
                    add_plain(fm);
                }
                let cost = RuleFlows {
                    conj_id: 0,
                    flows: entries,
                    without_conjunction,
                    counted,
                };
                rules.insert(id.clone(), cost);
                continue;
            }
            let conj_id = self.ids.id(id);
            let decision = flow(
                g,
                t.rule,
                NORMAL,
                ip().with(Field::ConjId, u128::from(conj_id)),
                vec![],
                Some(t.next),
            );
            let counted = vec![FlowKey::of(&decision)];
            add_plain(decision);
            for (k, dim) in dims.into_iter().enumerate() {
                for m in dim {
                    let fm = flow(g, t.rule, NORMAL, m, vec![], None);
                    let entry = conj
                        .entry(FlowKey::of(&fm))
                        .or_insert((fm, BTreeSet::new()));
                    entry.1.insert((conj_id, k as u8 + 1, n as u8));
                }
            }
            rules.insert(
                id.clone(),
                RuleFlows {
                    conj_id,
                    flows: entries + 1,
                    without_conjunction,
                    counted,
                },
            );
        }
        for direction in [Direction::Egress, Direction::Ingress] {
            let t = tables(direction);
            let field = match direction {
                Direction::Ingress => Field::Ipv4Dst,
                Direction::Egress => Field::Ipv4Src,
            };
            for pod in snapshot.isolation.of(direction) {
                add_plain(flow(
                    g,
                    t.default,
                    NORMAL,
                    ipv4(field, ip(), *pod),
                    vec![],
                    None,
                ));
            }
        }
        let mut flows: Vec<FlowMod> = plain.into_values().collect();
        flows.extend(conj.into_values().map(|(mut fm, actions)| {
            fm.instructions.apply = actions
                .into_iter()
                .map(|(id, clause, n_clauses)| Action::Conjunction {
                    id,
                    clause,
                    n_clauses,
                })
                .collect();
            fm
        }));
        PolicyFlows { flows, rules }
    }
}

#[cfg(test)]
mod tests {
    use netpol::{AddressSet, Isolation, PolicyKey, PortMatch, Protocol, RulePart};

    use super::*;
    use crate::layout::tables::named_text::named_text;

    fn addr(s: &str) -> Ipv4Addr {
        s.parse().unwrap()
    }

    fn rule(
        name: &str,
        direction: Direction,
        applied: &[&str],
        peers: Option<&[&str]>,
        ports: Option<&[PortMatch]>,
    ) -> Rule {
        Rule {
            id: RuleId {
                policy: PolicyKey::new("x", name),
                direction,
                index: 0,
                part: RulePart::Numeric,
            },
            applied_to: applied.iter().map(|a| addr(a)).collect(),
            peers: match peers {
                None => Peers::Any,
                Some(list) => Peers::Set(AddressSet {
                    ips: list
                        .iter()
                        .filter(|p| !p.contains('/'))
                        .map(|a| addr(a))
                        .collect(),
                    cidrs: list
                        .iter()
                        .filter(|p| p.contains('/'))
                        .map(|c| c.parse().unwrap())
                        .collect(),
                }),
            },
            ports: match ports {
                None => Ports::Any,
                Some(list) => Ports::Set(list.iter().copied().collect()),
            },
        }
    }

    fn snapshot(rules: Vec<Rule>, ingress: &[&str], egress: &[&str]) -> Snapshot {
        Snapshot {
            rules: rules.into_iter().map(|r| (r.id.clone(), r)).collect(),
            isolation: Isolation {
                ingress: ingress.iter().map(|a| addr(a)).collect(),
                egress: egress.iter().map(|a| addr(a)).collect(),
            },
        }
    }

    /// The flows by table name, in table order, then by text.
    fn texts(flows: &PolicyFlows) -> Vec<String> {
        let g = TableGraph::standard();
        let mut sorted: Vec<(u8, String)> = flows
            .flows
            .iter()
            .map(|f| (f.table_id, named_text(g, f)))
            .collect();
        sorted.sort();
        sorted.into_iter().map(|(_, text)| text).collect()
    }

    #[test]
    fn exact_flows_of_an_ingress_rule() {
        let range = PortMatch {
            protocol: Protocol::Tcp,
            start: 80,
            end: 81,
        };
        let snap = snapshot(
            vec![rule(
                "p",
                Direction::Ingress,
                &["10.244.1.10"],
                Some(&["10.244.2.10", "192.168.0.0/16"]),
                Some(&[range]),
            )],
            &["10.244.1.10"],
            &[],
        );
        let flows = PolicyRenderer::new().render(&snap);
        assert_eq!(
            texts(&flows),
            [
                "table=IngressRule,priority=200,conj_id=1,ip actions=goto_table:ConntrackCommit",
                "table=IngressRule,priority=200,ip,nw_dst=10.244.1.10 actions=conjunction(1,2/3)",
                "table=IngressRule,priority=200,ip,nw_src=10.244.2.10 actions=conjunction(1,1/3)",
                "table=IngressRule,priority=200,ip,nw_src=192.168.0.0/16 actions=conjunction(1,1/3)",
                "table=IngressRule,priority=200,tcp,tp_dst=0x50/0xfffe actions=conjunction(1,3/3)",
                "table=IngressDefaultRule,priority=200,ip,nw_dst=10.244.1.10 actions=drop",
            ]
        );
        let cost = flows.rules.values().next().unwrap();
        assert_eq!(
            (cost.conj_id, cost.flows, cost.without_conjunction),
            (1, 5, 2)
        );
    }

    #[test]
    fn egress_rule_dimensions_and_single_dimension_rules() {
        let snap = snapshot(
            vec![
                rule(
                    "out",
                    Direction::Egress,
                    &["10.244.1.10"],
                    Some(&["10.244.2.10"]),
                    None,
                ),
                rule("any", Direction::Egress, &["10.244.1.11"], None, None),
            ],
            &[],
            &["10.244.1.10", "10.244.1.11"],
        );
        let flows = PolicyRenderer::new().render(&snap);
        assert_eq!(
            texts(&flows),
            [
                "table=EgressRule,priority=200,conj_id=1,ip actions=goto_table:L3Forwarding",
                "table=EgressRule,priority=200,ip,nw_dst=10.244.2.10 actions=conjunction(1,2/2)",
                "table=EgressRule,priority=200,ip,nw_src=10.244.1.10 actions=conjunction(1,1/2)",
                "table=EgressRule,priority=210,ip,nw_src=10.244.1.11 actions=goto_table:L3Forwarding",
                "table=EgressDefaultRule,priority=200,ip,nw_src=10.244.1.10 actions=drop",
                "table=EgressDefaultRule,priority=200,ip,nw_src=10.244.1.11 actions=drop",
            ]
        );
    }

    #[test]
    fn conjunctions_cost_n_plus_m_not_n_times_m() {
        let peers: Vec<String> = (0..100)
            .map(|i| format!("10.244.{}.{}", 2 + i / 200, 10 + i % 200))
            .collect();
        let applied: Vec<String> = (0..10).map(|i| format!("10.244.1.{}", 10 + i)).collect();
        let peers: Vec<&str> = peers.iter().map(String::as_str).collect();
        let applied: Vec<&str> = applied.iter().map(String::as_str).collect();
        let port = [PortMatch::single(Protocol::Tcp, 80)];
        let snap = snapshot(
            vec![rule(
                "big",
                Direction::Ingress,
                &applied,
                Some(&peers),
                Some(&port),
            )],
            &[],
            &[],
        );
        let flows = PolicyRenderer::new().render(&snap);
        let cost = flows.rules.values().next().unwrap();
        assert_eq!(cost.flows, 100 + 10 + 1 + 1);
        assert_eq!(cost.without_conjunction, 100 * 10);
        assert_eq!(flows.flows.len(), 112);
    }

    #[test]
    fn shared_entries_are_one_flow_and_ids_are_stable() {
        let a = rule(
            "a",
            Direction::Ingress,
            &["10.244.1.10"],
            Some(&["10.244.2.10"]),
            None,
        );
        let b = rule(
            "b",
            Direction::Ingress,
            &["10.244.1.10"],
            Some(&["10.244.2.11"]),
            None,
        );
        let mut renderer = PolicyRenderer::new();
        let first = renderer.render(&snapshot(vec![b.clone()], &[], &[]));
        let b_id = first.rules[&b.id].conj_id;
        let both = renderer.render(&snapshot(vec![a.clone(), b.clone()], &[], &[]));
        assert_eq!(both.rules[&b.id].conj_id, b_id);
        let a_id = both.rules[&a.id].conj_id;
        assert_ne!(a_id, b_id);
        let shared = both
            .flows
            .iter()
            .find(|f| f.to_string().contains("nw_dst=10.244.1.10"))
            .unwrap();
        assert_eq!(
            named_text(TableGraph::standard(), shared),
            format!(
                "table=IngressRule,priority=200,ip,nw_dst=10.244.1.10 actions=conjunction({b_id},2/2),conjunction({a_id},2/2)"
            )
        );
        assert_eq!(both.flows.len(), 2 + 2 + 1);
    }

    #[test]
    fn rules_with_an_empty_dimension_have_no_flows() {
        let mut r = rule("p", Direction::Ingress, &["10.244.1.10"], Some(&[]), None);
        r.ports = Ports::Set(BTreeSet::new());
        let flows = PolicyRenderer::new().render(&snapshot(vec![r], &["10.244.1.10"], &[]));
        assert_eq!(
            texts(&flows),
            ["table=IngressDefaultRule,priority=200,ip,nw_dst=10.244.1.10 actions=drop"]
        );
        assert!(flows.rules.is_empty());
    }
}
