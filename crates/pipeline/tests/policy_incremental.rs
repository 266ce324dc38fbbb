//! Incremental NetworkPolicy rendering: for random sequences of rule deltas, the flows obtained
//! by applying each update's patch equal a whole render of the resulting snapshot (same keys,
//! same actions in the same order, same conjunction ids); a patch holds exactly the flows that
//! changed; an undone update leaves the renderer as it was; and a peer label change that
//! affects k of n rules renders k rules, one entry each.

use std::collections::{BTreeMap, BTreeSet};
use std::net::Ipv4Addr;

use ipnet::Ipv4Net;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::networking::v1::NetworkPolicy;
use netpol::{
    AddressSet, Direction, Peers, PolicyDelta, PolicyEngine, PolicyKey, PortMatch, Ports, Protocol,
    Rule, RuleEdit, RuleId, RulePart, Snapshot,
};
use pipeline::cache::FlowKey;
use pipeline::render::{PolicyFlows, PolicyRenderer};
use proptest::prelude::*;
use serde_json::{Value, json};

const LOCAL: [&str; 3] = ["10.244.1.10", "10.244.1.11", "10.244.1.12"];
const PEERS: [&str; 4] = ["10.244.2.10", "10.244.2.11", "10.244.1.10", "10.244.2.12"];
/// A /32 equal to a peer IP, a wider net, the same net written from another address.
const CIDRS: [&str; 4] = [
    "10.244.2.10/32",
    "192.168.0.0/16",
    "192.168.7.0/16",
    "10.0.0.0/8",
];
/// Ranges whose blocks coincide (81-90 and 82-83 share 82/0xfffe), a whole protocol.
const PORTS: [(Protocol, u16, u16); 5] = [
    (Protocol::Tcp, 80, 80),
    (Protocol::Tcp, 81, 90),
    (Protocol::Tcp, 82, 83),
    (Protocol::Udp, 0, u16::MAX),
    (Protocol::Sctp, 80, 81),
];

fn rule_id(n: usize) -> RuleId {
    RuleId {
        policy: PolicyKey::new("x", format!("p{}", n % 3)),
        direction: if n.is_multiple_of(2) {
            Direction::Ingress
        } else {
            Direction::Egress
        },
        index: n / 6,
        part: if n % 5 == 4 {
            RulePart::Named([PortMatch::single(Protocol::Tcp, 8080)].into())
        } else {
            RulePart::Numeric
        },
    }
}

fn subset<T: Copy + Ord>(all: &[T], bits: u8) -> BTreeSet<T> {
    all.iter()
        .enumerate()
        .filter(|(i, _)| bits & (1 << i) != 0)
        .map(|(_, x)| *x)
        .collect()
}

fn ips(list: &[&str]) -> Vec<Ipv4Addr> {
    list.iter().map(|a| a.parse().unwrap()).collect()
}

/// A rule of id `id`; peers and ports are `Any` when their selector is `None`. Dimensions may
/// be empty (such a rule has no flows).
fn make_rule(id: usize, applied: u8, peers: Option<(u8, u8)>, ports: Option<u8>) -> Rule {
    let cidrs: Vec<Ipv4Net> = CIDRS.iter().map(|c| c.parse().unwrap()).collect();
    let ports_all: Vec<PortMatch> = PORTS
        .iter()
        .map(|&(protocol, start, end)| PortMatch {
            protocol,
            start,
            end,
        })
        .collect();
    Rule {
        id: rule_id(id),
        applied_to: subset(&ips(&LOCAL), applied),
        peers: match peers {
            None => Peers::Any,
            Some((a, c)) => Peers::Set(AddressSet {
                ips: subset(&ips(&PEERS), a),
                cidrs: subset(&cidrs, c),
            }),
        },
        ports: match ports {
            None => Ports::Any,
            Some(p) => Ports::Set(subset(&ports_all, p)),
        },
    }
}

#[derive(Debug, Clone)]
enum Op {
    Upsert(Rule),
    Remove(usize),
    Isolate(Direction, usize, bool),
}

fn op() -> impl Strategy<Value = Op> {
    let direction = prop_oneof![Just(Direction::Ingress), Just(Direction::Egress)];
    prop_oneof![
        5 => (
            0..10usize,
            prop_oneof![1 => Just(0u8), 8 => 1..8u8],
            proptest::option::weighted(0.7, (0..16u8, 0..16u8)),
            proptest::option::weighted(0.6, prop_oneof![1 => Just(0u8), 8 => 1..32u8]),
        )
            .prop_map(|(id, a, p, ports)| Op::Upsert(make_rule(id, a, p, ports))),
        2 => (0..10usize).prop_map(Op::Remove),
        2 => (direction, 0..3usize, any::<bool>()).prop_map(|(d, i, on)| Op::Isolate(d, i, on)),
    ]
}

/// The delta of `ops` from `snapshot` (as the engine would say it: a rule it has is changed).
fn delta_of(snapshot: &Snapshot, ops: &[Op]) -> PolicyDelta {
    let mut delta = PolicyDelta::default();
    for op in ops {
        match op {
            Op::Upsert(rule) => {
                let there = delta.added.contains_key(&rule.id)
                    || delta.changed.contains_key(&rule.id)
                    || (snapshot.rules.contains_key(&rule.id) && !delta.removed.contains(&rule.id));
                if there {
                    // Rules of index 0 say an edit from the version before when the shape
                    // stays (as the engine does), the others their new content.
                    let mut now = delta
                        .added
                        .get(&rule.id)
                        .or(delta.changed.get(&rule.id))
                        .or(snapshot.rules.get(&rule.id))
                        .cloned();
                    if let (Some(now), Some(edit)) = (&mut now, delta.edited.get(&rule.id)) {
                        edit.apply(now);
                    }
                    match now.and_then(|now| RuleEdit::between(&now, rule)) {
                        Some(edit) if rule.id.index == 0 => {
                            if !edit.is_empty() {
                                delta.edit_rule(rule.id.clone(), edit);
                            }
                        }
                        _ => delta.change_rule(rule.clone()),
                    }
                } else {
                    delta.add_rule(rule.clone());
                }
            }
            Op::Remove(id) => delta.remove_rule(rule_id(*id)),
            Op::Isolate(direction, i, true) => delta.isolate(*direction, ips(&LOCAL)[*i]),
            Op::Isolate(direction, i, false) => delta.release(*direction, ips(&LOCAL)[*i]),
        }
    }
    delta
}

/// Flows by key, with their text (actions included).
fn by_key(flows: &PolicyFlows) -> BTreeMap<FlowKey, String> {
    flows
        .flows
        .iter()
        .map(|f| (FlowKey::of(f), f.to_string()))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]
    #[test]
    fn patches_equal_a_whole_render(
        steps in proptest::collection::vec(
            (proptest::collection::vec(op(), 1..5), prop_oneof![6 => Just(false), 1 => Just(true)]),
            1..25,
        )
    ) {
        let mut renderer = PolicyRenderer::new();
        let mut snapshot = Snapshot::default();
        // What a switch fed the patches holds.
        let mut switch: BTreeMap<FlowKey, String> = BTreeMap::new();
        let mut ids: BTreeMap<RuleId, u32> = BTreeMap::new();
        for (ops, refused) in &steps {
            let delta = delta_of(&snapshot, ops);
            let update = renderer.update(&delta);
            if *refused {
                // The switch refused the patch: the renderer goes back, nothing else moves.
                renderer.undo(update.undo);
                prop_assert_eq!(by_key(&renderer.flows()), switch.clone(), "after an undo");
                continue;
            }
            for key in &update.patch.remove {
                prop_assert!(switch.remove(key).is_some(), "removes a flow it never had: {:?}", key);
            }
            for flow in &update.patch.upsert {
                let text = flow.to_string();
                let old = switch.insert(FlowKey::of(flow), text.clone());
                prop_assert!(old.as_ref() != Some(&text), "upserts an unchanged flow: {}", text);
            }
            delta.apply_to(&mut snapshot);
            let whole = renderer.clone().render(&snapshot);
            prop_assert_eq!(&switch, &by_key(&whole), "patched vs whole render");
            let held = renderer.flows();
            prop_assert_eq!(&held.rules, &whole.rules);
            prop_assert_eq!(by_key(&held), switch.clone());
            // A rule keeps its conjunction id while it exists.
            ids.retain(|id, _| snapshot.rules.contains_key(id));
            for (id, cost) in &held.rules {
                if cost.conj_id != 0 {
                    let kept = *ids.entry(id.clone()).or_insert(cost.conj_id);
                    prop_assert_eq!(kept, cost.conj_id, "conjunction id of {} moved", id);
                }
            }
            // The same delta again changes nothing.
            prop_assert!(renderer.update(&delta).patch.is_empty());
        }
    }
}

#[test]
fn a_whole_render_equals_the_first_render_of_a_fresh_renderer() {
    let rules = [
        make_rule(0, 0b011, Some((0b0011, 0b0010)), Some(0b00011)),
        make_rule(1, 0b100, None, None),
        make_rule(2, 0b001, Some((0b0100, 0)), None),
    ];
    let mut delta = PolicyDelta::default();
    for rule in &rules {
        delta.add_rule(rule.clone());
    }
    delta.isolate(Direction::Ingress, ips(&LOCAL)[0]);
    let mut snapshot = Snapshot::default();
    delta.apply_to(&mut snapshot);
    let mut incremental = PolicyRenderer::new();
    let update = incremental.update(&delta);
    let mut fresh = PolicyRenderer::new();
    let whole = fresh.render(&snapshot);
    assert_eq!(by_key(&incremental.flows()), by_key(&whole));
    assert_eq!(update.patch.upsert.len(), whole.flows.len());
    assert!(update.patch.remove.is_empty());
    assert_eq!((update.rules_rendered, fresh.rules_rendered()), (3, 3));
}

fn pod(name: &str, node: &str, ip: &str, labels: Value) -> Pod {
    serde_json::from_value(json!({
        "metadata": {"namespace": "default", "name": name, "labels": labels},
        "spec": {"nodeName": node, "containers": [{"name": "c"}]},
        "status": {"phase": "Running", "podIP": ip},
    }))
    .unwrap()
}

/// Policy `np<i>`: Pods `app: a<i>` accept Pods with `peer` labels on TCP 80.
fn policy(i: usize, peer: Value) -> NetworkPolicy {
    serde_json::from_value(json!({
        "metadata": {"namespace": "default", "name": format!("np{i}")},
        "spec": {
            "podSelector": {"matchLabels": {"app": format!("a{i}")}},
            "ingress": [{"from": [{"podSelector": {"matchLabels": peer}}], "ports": [{"port": 80}]}],
        },
    }))
    .unwrap()
}

#[test]
fn a_label_change_renders_only_the_rules_it_affects() {
    // n = 6 rules, one per local Pod; k = 2 of them accept `role: db` peers, the others
    // `role: web` peers. Ten web clients and ten db clients on another Node.
    let mut engine = PolicyEngine::new("n1");
    for i in 0..6 {
        let app = json!({"app": format!("a{i}")});
        engine
            .upsert_pod(&pod(
                &format!("s{i}"),
                "n1",
                &format!("10.244.1.{}", 10 + i),
                app,
            ))
            .unwrap();
        let role = if i < 2 { "db" } else { "web" };
        engine
            .upsert_policy(&policy(i, json!({"role": role})))
            .unwrap();
    }
    for c in 0..20 {
        let role = if c < 10 { "db" } else { "web" };
        engine
            .upsert_pod(&pod(
                &format!("c{c}"),
                "n2",
                &format!("10.244.2.{}", 10 + c),
                json!({"role": role}),
            ))
            .unwrap();
    }
    let mut renderer = PolicyRenderer::new();
    let first = renderer.update(&engine.sync().delta);
    assert_eq!(first.rules_rendered, 6);
    assert_eq!(renderer.rules(), 6);
    let rendered_before = renderer.rules_rendered();

    // A db client loses its role: it leaves the peers of the k = 2 db rules.
    engine
        .upsert_pod(&pod("c0", "n2", "10.244.2.10", json!({})))
        .unwrap();
    let sync = engine.sync();
    assert_eq!(sync.delta.rules(), 2);
    // The engine patched those two rules (no policy recomputed) and says what each lost.
    assert_eq!((sync.policies, sync.rules), (0, 2));
    assert_eq!(sync.delta.edited.len(), 2);
    let update = renderer.update(&sync.delta);
    assert_eq!(update.rules_rendered, 2, "k of n rules rendered");
    assert_eq!(renderer.rules_rendered() - rendered_before, 2);
    // One peer entry lost per rule, not each rule's eleven entries again.
    assert_eq!(update.entries_rendered, 2);
    // The client's clause flow served both db rules: it goes, and nothing else changes.
    let removed: Vec<String> = update
        .patch
        .remove
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(update.patch.len(), 1, "{removed:?}");
    assert!(update.patch.upsert.is_empty());
    assert_eq!(
        by_key(&renderer.flows()),
        by_key(&renderer.clone().render(engine.snapshot()))
    );
}
