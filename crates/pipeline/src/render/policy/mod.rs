//! NetworkPolicy in the pipeline: the policy tables' fixed flows (part of the Node's flows) and
//! [`PolicyRenderer`], which turns a `netpol` [`Snapshot`] into conjunctive flows once, and
//! then each [`PolicyDelta`] into a [`PolicyPatch`] of the flows it changes.
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
//!
//! Incremental: the renderer keeps, per rule, the flows its entries contribute to and, per
//! shared clause flow, the conjunction actions of the rules using it ([`rendered`]). A delta
//! renders only the entries the changed rules gained or lost ([`entries`]), and the patch holds
//! exactly the flows whose content changed: new ones, gone ones, and shared clause flows whose
//! set of conjunction actions changed. Conjunction ids stay with their rule ([`conj_ids`]);
//! actions are always in (id, clause) order, so a patched flow equals its whole-render self.

pub mod conj_ids;
pub mod counters;
mod entries;
pub mod ports;
mod rendered;

use std::collections::BTreeMap;

use netpol::{Direction, PolicyDelta, RuleId, Snapshot};
use openflow::msg::flow_mod::FlowMod;
use openflow::oxm::{Field, Match};

use super::{CT_EST, CT_NEW, CT_REL, CT_TRK, flow, ip, ipv4};
use crate::cache::FlowKey;
use crate::layout::priority::{MISS, POLICY_BYPASS};
use crate::layout::regs::FROM_GATEWAY;
use crate::layout::tables::{EGRESS_DEFAULT_RULE, EGRESS_RULE, INGRESS_DEFAULT_RULE, INGRESS_RULE};
use crate::layout::{Stage, Table, TableGraph};
use model::NodeNetwork;
use rendered::{Journal, Rendered};

/// The tables of one direction: rules, default drops, and where allowed traffic continues (the
/// first table of the stage after the direction's security stage).
#[derive(Debug, Clone)]
struct Tables<'g> {
    /// The graph the tables' ids come from.
    graph: &'g TableGraph,
    rule: Table,
    default: Table,
    next: Table,
}

fn tables(g: &TableGraph, direction: Direction) -> Tables<'_> {
    match direction {
        Direction::Egress => Tables {
            graph: g,
            rule: EGRESS_RULE,
            default: EGRESS_DEFAULT_RULE,
            next: g.first(Stage::Routing),
        },
        Direction::Ingress => Tables {
            graph: g,
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

/// What a NetworkPolicy change does to the owner's flows: the flows that are new or whose
/// content changed (a shared clause flow whose conjunction actions changed), and the keys of
/// the flows no longer needed. Flows the change leaves alone are in neither.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PolicyPatch {
    pub upsert: Vec<FlowMod>,
    pub remove: Vec<FlowKey>,
}

impl PolicyPatch {
    pub fn is_empty(&self) -> bool {
        self.upsert.is_empty() && self.remove.is_empty()
    }

    /// Flows upserted and removed.
    pub fn len(&self) -> usize {
        self.upsert.len() + self.remove.len()
    }
}

/// What [`PolicyRenderer::update`] did.
#[derive(Debug)]
pub struct PolicyUpdate {
    /// The flows to change in the switch.
    pub patch: PolicyPatch,
    /// Rules whose flows were rendered (new, changed; not the rules the delta leaves alone).
    pub rules_rendered: usize,
    /// Entries (addresses, port ranges) rendered: those the changed rules gained or lost, all
    /// of a rule that is new or changes shape.
    pub entries_rendered: usize,
    /// What takes the renderer back to before the update, should the switch refuse the patch.
    pub undo: PolicyUndo,
}

/// The state an update replaced; see [`PolicyRenderer::undo`].
#[derive(Debug)]
pub struct PolicyUndo(Journal);

/// Renders NetworkPolicy: a whole snapshot ([`PolicyRenderer::render`]) or a delta
/// ([`PolicyRenderer::update`]), keeping each rule's conjunction id and the flows of the last
/// result between calls.
#[derive(Debug, Clone, Default)]
pub struct PolicyRenderer {
    rendered: Rendered,
    rules_rendered: u64,
}

impl PolicyRenderer {
    pub fn new() -> PolicyRenderer {
        PolicyRenderer::default()
    }

    /// Every flow of the NetworkPolicy owner for `snapshot`, which becomes the state the next
    /// [`PolicyRenderer::update`] changes. Rules of the snapshot keep their ids.
    pub fn render(&mut self, snapshot: &Snapshot) -> PolicyFlows {
        self.render_in(TableGraph::standard(), snapshot)
    }

    /// [`PolicyRenderer::render`] with the ids of `g`, which later updates keep.
    pub(crate) fn render_in(&mut self, g: &'static TableGraph, snapshot: &Snapshot) -> PolicyFlows {
        self.rendered.set_graph(g);
        let mut journal = Journal::default();
        self.rendered.reset(snapshot, &mut journal);
        self.rules_rendered += journal.rules_rendered as u64;
        self.rendered.flows()
    }

    /// Applies `delta` to the state and returns the flows that changed. Rules the delta does
    /// not name are not rendered; a changed rule renders only the entries it gained or lost.
    /// Applying a delta the state already reflects changes nothing.
    pub fn update(&mut self, delta: &PolicyDelta) -> PolicyUpdate {
        let mut journal = Journal::recording();
        self.rendered.apply(delta, &mut journal);
        let patch = self.rendered.patch(&journal);
        self.rules_rendered += journal.rules_rendered as u64;
        PolicyUpdate {
            patch,
            rules_rendered: journal.rules_rendered,
            entries_rendered: journal.entries_rendered,
            undo: PolicyUndo(journal),
        }
    }

    /// Takes back the update `undo` came from (the switch refused its patch); it must be the
    /// last update.
    pub fn undo(&mut self, undo: PolicyUndo) {
        self.rendered.undo(undo.0);
    }

    /// The owner's flows and each rule's cost, as they stand.
    pub fn flows(&self) -> PolicyFlows {
        self.rendered.flows()
    }

    /// Rules with flows.
    pub fn rules(&self) -> usize {
        self.rendered.rule_count()
    }

    /// Rules rendered so far, by whole renders and updates (for tests and metrics).
    pub fn rules_rendered(&self) -> u64 {
        self.rules_rendered
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::net::Ipv4Addr;

    use netpol::{
        AddressSet, Isolation, Peers, PolicyKey, PortMatch, Ports, Protocol, Rule, RulePart,
    };

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
