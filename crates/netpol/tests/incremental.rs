//! Incrementality, model-based: after every step of any sequence of Pod, Namespace and
//! NetworkPolicy changes, the engine's snapshot equals the snapshot of a fresh engine fed the
//! final objects, the syncs' deltas applied in turn give it too (one by one, and composed), and
//! each rule edit a delta carries takes the rule's previous content to its new one; and a change
//! recomputes only the policies, and patches only the rules, whose groups it touches.

mod support;

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Namespace, Pod};
use k8s_openapi::api::networking::v1::NetworkPolicy;
use netpol::{PodKey, PolicyDelta, PolicyEngine, RuleEdit, Snapshot};
use proptest::prelude::*;
use serde_json::{Value, json};
use support::*;

#[derive(Debug, Clone)]
enum Op {
    SetPod {
        ns: usize,
        name: usize,
        node: bool,
        ip: Option<u8>,
        label: usize,
        role: Option<bool>,
        http: Option<u16>,
    },
    RemovePod {
        ns: usize,
        name: usize,
    },
    SetNamespace {
        ns: usize,
        label: usize,
    },
    RemoveNamespace {
        ns: usize,
    },
    SetPolicy {
        ns: usize,
        name: usize,
        spec: Value,
    },
    RemovePolicy {
        ns: usize,
        name: usize,
    },
}

const NS: [&str; 3] = ["x", "y", "z"];
const LABELS: [&str; 3] = ["a", "b", "c"];

fn selector() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!({})),
        (0..3usize).prop_map(|l| json!({"matchLabels": {"pod": LABELS[l]}})),
        Just(json!({"matchExpressions": [{"key": "role", "operator": "Exists"}]})),
        Just(json!({"matchExpressions": [{"key": "role", "operator": "NotIn", "values": ["x"]}]})),
    ]
}

fn ns_selector() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!({})),
        (0..3usize).prop_map(|l| json!({"matchLabels": {"team": LABELS[l]}})),
    ]
}

fn peer() -> impl Strategy<Value = Value> {
    prop_oneof![
        selector().prop_map(|p| json!({"podSelector": p})),
        ns_selector().prop_map(|n| json!({"namespaceSelector": n})),
        (selector(), ns_selector())
            .prop_map(|(p, n)| json!({"podSelector": p, "namespaceSelector": n})),
        Just(json!({"ipBlock": {"cidr": "10.0.0.0/24", "except": ["10.0.0.8/29"]}})),
    ]
}

fn port() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!({"port": 80})),
        Just(json!({"port": "http"})),
        Just(json!({"protocol": "UDP"})),
        Just(json!({"port": 80, "endPort": 81})),
    ]
}

fn rule(peer_key: &'static str) -> impl Strategy<Value = Value> {
    (
        proptest::option::of(proptest::collection::vec(peer(), 0..3)),
        proptest::option::of(proptest::collection::vec(port(), 0..3)),
    )
        .prop_map(move |(peers, ports)| {
            let mut r = serde_json::Map::new();
            if let Some(p) = peers {
                r.insert(peer_key.into(), Value::Array(p));
            }
            if let Some(p) = ports {
                r.insert("ports".into(), Value::Array(p));
            }
            Value::Object(r)
        })
}

fn spec() -> impl Strategy<Value = Value> {
    (
        selector(),
        proptest::option::of(proptest::sample::select(vec![
            json!(["Ingress"]),
            json!(["Egress"]),
            json!(["Ingress", "Egress"]),
        ])),
        proptest::option::of(proptest::collection::vec(rule("from"), 0..3)),
        proptest::option::of(proptest::collection::vec(rule("to"), 0..3)),
    )
        .prop_map(|(sel, types, ingress, egress)| {
            let mut s = serde_json::Map::new();
            s.insert("podSelector".into(), sel);
            if let Some(t) = types {
                s.insert("policyTypes".into(), t);
            }
            if let Some(i) = ingress {
                s.insert("ingress".into(), Value::Array(i));
            }
            if let Some(e) = egress {
                s.insert("egress".into(), Value::Array(e));
            }
            Value::Object(s)
        })
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..3usize, 0..4usize, any::<bool>(), proptest::option::of(0..12u8), 0..3usize, proptest::option::of(any::<bool>()), proptest::option::of(80..82u16))
            .prop_map(|(ns, name, node, ip, label, role, http)| Op::SetPod { ns, name, node, ip, label, role, http }),
        1 => (0..3usize, 0..4usize).prop_map(|(ns, name)| Op::RemovePod { ns, name }),
        2 => (0..3usize, 0..3usize).prop_map(|(ns, label)| Op::SetNamespace { ns, label }),
        1 => (0..3usize).prop_map(|ns| Op::RemoveNamespace { ns }),
        3 => (0..3usize, 0..3usize, spec()).prop_map(|(ns, name, spec)| Op::SetPolicy { ns, name, spec }),
        1 => (0..3usize, 0..3usize).prop_map(|(ns, name)| Op::RemovePolicy { ns, name }),
    ]
}

/// The objects the operations leave, to feed a fresh engine.
#[derive(Default)]
struct World {
    pods: BTreeMap<(usize, usize), Pod>,
    namespaces: BTreeMap<usize, Namespace>,
    policies: BTreeMap<(usize, usize), NetworkPolicy>,
}

fn apply(engine: &mut PolicyEngine, world: &mut World, op: &Op) {
    match op {
        Op::SetPod {
            ns,
            name,
            node,
            ip,
            label,
            role,
            http,
        } => {
            let mut labels = json!({"pod": LABELS[*label]});
            if let Some(r) = role {
                labels["role"] = json!(if *r { "x" } else { "y" });
            }
            let ports: Vec<(&str, &str, u16)> = http.iter().map(|p| ("http", "TCP", *p)).collect();
            let ip_text = ip.map(|i| format!("10.0.0.{i}")).unwrap_or_default();
            let mut p = pod(
                NS[*ns],
                &format!("p{name}"),
                if *node { "n1" } else { "n2" },
                &ip_text,
                labels,
                &ports,
            );
            if ip.is_none() {
                p.status.as_mut().unwrap().pod_ip = None;
                p.status.as_mut().unwrap().pod_ips = None;
            }
            engine.upsert_pod(&p).unwrap();
            world.pods.insert((*ns, *name), p);
        }
        Op::RemovePod { ns, name } => {
            engine.remove_pod(&PodKey::new(NS[*ns], format!("p{name}")));
            world.pods.remove(&(*ns, *name));
        }
        Op::SetNamespace { ns, label } => {
            let n = namespace(NS[*ns], json!({"team": LABELS[*label]}));
            engine.upsert_namespace(&n).unwrap();
            world.namespaces.insert(*ns, n);
        }
        Op::RemoveNamespace { ns } => {
            engine.remove_namespace(NS[*ns]);
            world.namespaces.remove(ns);
        }
        Op::SetPolicy { ns, name, spec } => {
            let p = policy(NS[*ns], &format!("np{name}"), spec.clone());
            engine.upsert_policy(&p).unwrap();
            world.policies.insert((*ns, *name), p);
        }
        Op::RemovePolicy { ns, name } => {
            engine.remove_policy(&PodKey::new(NS[*ns], format!("np{name}")));
            world.policies.remove(&(*ns, *name));
        }
    }
}

/// A fresh engine fed `world` in another order than the operations: policies first.
fn from_scratch(world: &World) -> PolicyEngine {
    let mut engine = PolicyEngine::new("n1");
    for p in world.policies.values() {
        engine.upsert_policy(p).unwrap();
    }
    for p in world.pods.values().rev() {
        engine.upsert_pod(p).unwrap();
    }
    for n in world.namespaces.values() {
        engine.upsert_namespace(n).unwrap();
    }
    engine
}

/// Each edit of `delta` is of a rule `before` holds, and exact: it adds only entries the rule
/// lacks and removes only entries it has, and is not empty.
fn check_edits(before: &Snapshot, delta: &PolicyDelta) -> Result<(), TestCaseError> {
    for (id, edit) in &delta.edited {
        let old = before
            .rules
            .get(id)
            .ok_or_else(|| TestCaseError::fail(format!("an edit of {id}, which was not there")))?;
        let mut new = old.clone();
        edit.apply(&mut new);
        let exact = RuleEdit::between(old, &new);
        prop_assert_eq!(exact.as_ref(), Some(edit), "edit of {}", id);
        prop_assert!(!edit.is_empty(), "empty edit of {}", id);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]
    #[test]
    fn incremental_equals_recompute(ops in proptest::collection::vec((op(), any::<u8>()), 1..40)) {
        let mut engine = PolicyEngine::new("n1");
        let mut world = World::default();
        // What a datapath fed each sync's delta holds.
        let mut applied = Snapshot::default();
        // What one fed the composition of the deltas since `older` holds.
        let mut older = Snapshot::default();
        let mut pending = PolicyDelta::default();
        for (op, check) in &ops {
            apply(&mut engine, &mut world, op);
            // Sometimes the snapshot is read between syncs: its changes stay in the next delta.
            if check % 4 == 0 {
                engine.snapshot();
            }
            let delta = engine.sync().delta;
            check_edits(&applied, &delta)?;
            delta.apply_to(&mut applied);
            let want = from_scratch(&world).snapshot().clone();
            prop_assert_eq!(&applied, &want, "deltas applied, after {:?}", op);
            prop_assert_eq!(engine.snapshot(), &want, "after {:?}", op);
            pending.then(delta);
            if check % 3 == 0 {
                check_edits(&older, &pending)?;
                pending.apply_to(&mut older);
                prop_assert_eq!(&older, &want, "composed deltas, after {:?}", op);
                pending = PolicyDelta::default();
            }
        }
        check_edits(&older, &pending)?;
        pending.apply_to(&mut older);
        prop_assert_eq!(older, applied);
    }
}

#[test]
fn changes_recompute_only_affected_policies() {
    let mut e = lab();
    e.upsert_policy(&policy("x", "from-y", json!({"podSelector": {}, "ingress": [{"from": [{"namespaceSelector": {"matchLabels": {"ns": "y"}}}]}]}))).unwrap();
    e.upsert_policy(&policy("x", "from-b", json!({"podSelector": {"matchLabels": {"pod": "a"}}, "ingress": [{"from": [{"podSelector": {"matchLabels": {"pod": "b"}}}]}]}))).unwrap();
    e.upsert_policy(&policy(
        "y",
        "deny",
        json!({"podSelector": {"matchLabels": {"pod": "c"}}, "policyTypes": ["Egress"]}),
    ))
    .unwrap();
    e.sync();
    let (base, patched) = (e.recomputed(), e.rules_patched());
    // A label change of a z Pod touches only the cluster-wide group of `from-y`, and z/a is in
    // neither its old nor its new state a member: nothing is recomputed or patched.
    e.upsert_pod(&lab_pod("z", "a", json!({"pod": "a", "extra": "1"})))
        .unwrap();
    let report = e.sync();
    assert_eq!((report.policies, report.rules), (0, 0));
    // y/b's IP changes: only the rule of `from-y` (y's Pods as peers) is patched.
    e.upsert_pod(&pod(
        "y",
        "b",
        "n1",
        "10.244.2.99",
        json!({"pod": "b"}),
        &[],
    ))
    .unwrap();
    let report = e.sync();
    assert_eq!(
        (report.policies, report.rules, report.changed()),
        (0, 1, true)
    );
    assert!(e.snapshot().allows(
        "10.244.2.99".parse().unwrap(),
        ip("x", "a"),
        netpol::Protocol::Tcp,
        80
    ));
    // x/c becomes a b: `from-b`'s rule gains a peer; `from-y` applies to x/c before and after,
    // with the same address and ports, so it is not touched.
    e.upsert_pod(&lab_pod("x", "c", json!({"pod": "b"})))
        .unwrap();
    let report = e.sync();
    assert_eq!((report.policies, report.rules), (0, 1));
    // Namespace y loses its label: the rule of `from-y` is patched (y's Pods leave its peers).
    e.upsert_namespace(&namespace("y", json!({"ns": "w"})))
        .unwrap();
    let report = e.sync();
    assert_eq!((report.policies, report.rules), (0, 1));
    assert!(
        !e.snapshot()
            .allows(ip("y", "a"), ip("x", "a"), netpol::Protocol::Tcp, 80)
    );
    assert_eq!((e.recomputed(), e.rules_patched()), (base, patched + 3));
    // y/c, the only local Pod `deny` applies to, leaves its applied-to Pods: `deny` stops
    // applying here and is recomputed whole.
    e.upsert_pod(&lab_pod("y", "c", json!({"pod": "a"})))
        .unwrap();
    let report = e.sync();
    assert_eq!((report.policies, report.rules), (1, 0));
    assert!(e.snapshot().isolation.egress.is_empty());
    // Equal selectors share a group: two policies with `{}` in x share the applied-to group.
    let groups = e.group_count();
    e.upsert_policy(&policy(
        "x",
        "again",
        json!({"podSelector": {}, "policyTypes": ["Ingress"]}),
    ))
    .unwrap();
    assert_eq!(e.group_count(), groups);
}

#[test]
fn sync_reports_what_changed() {
    let mut e = lab();
    e.sync();
    let from_b = json!({"podSelector": {"matchLabels": {"pod": "a"}}, "ingress": [{"from": [{"podSelector": {"matchLabels": {"pod": "b"}}}]}]});
    // A new policy: its rule is added, and x/a becomes isolated for ingress.
    e.upsert_policy(&policy("x", "from-b", from_b.clone()))
        .unwrap();
    let delta = e.sync().delta;
    let ids: Vec<String> = delta.added.keys().map(ToString::to_string).collect();
    assert_eq!(ids, ["x/from-b/ingress/0"]);
    assert!(delta.changed.is_empty() && delta.removed.is_empty());
    assert_eq!(delta.isolated.ingress, [ip("x", "a")].into());
    assert!(delta.isolated.egress.is_empty() && delta.released.ingress.is_empty());
    // x/c becomes a b: the rule is edited (a peer more), nothing else changes.
    e.upsert_pod(&lab_pod("x", "c", json!({"pod": "b"})))
        .unwrap();
    let delta = e.sync().delta;
    assert_eq!(delta.rules(), 1);
    let edit = delta.edited.values().next().unwrap();
    assert_eq!(edit.peer_ips.added, [ip("x", "c")].into());
    assert!(delta.isolated.ingress.is_empty() && delta.released.ingress.is_empty());
    // A change between syncs seen through `snapshot()` still reaches the next sync's delta.
    e.remove_policy(&PodKey::new("x", "from-b"));
    assert!(e.snapshot().rules.is_empty());
    let delta = e.sync().delta;
    let ids: Vec<String> = delta.removed.iter().map(ToString::to_string).collect();
    assert_eq!(ids, ["x/from-b/ingress/0"]);
    assert_eq!(delta.released.ingress, [ip("x", "a")].into());
    assert!(e.sync().delta.is_empty());
}

#[test]
fn a_label_change_patches_exactly_the_k_rules_that_read_the_group() {
    const N: usize = 7;
    const K: usize = 3;
    let mut e = PolicyEngine::new("n1");
    e.upsert_namespace(&namespace("x", json!({"ns": "x"})))
        .unwrap();
    e.upsert_namespace(&namespace("w", json!({"ns": "w"})))
        .unwrap();
    e.upsert_pod(&pod("x", "a", "n1", "10.0.1.1", json!({"pod": "a"}), &[]))
        .unwrap();
    // Policy i of x admits, on x/a, the Pods of tier fe (the first K) or db (the others);
    // the policies of w use the fe group too but apply to no Pod of this Node.
    for i in 0..N {
        let tier = if i < K { "fe" } else { "db" };
        let spec = json!({"podSelector": {"matchLabels": {"pod": "a"}},
                          "ingress": [{"from": [{"podSelector": {"matchLabels": {"tier": tier}}}],
                                       "ports": [{"port": 80}]}]});
        e.upsert_policy(&policy("x", &format!("np{i}"), spec.clone()))
            .unwrap();
        e.upsert_policy(&policy("w", &format!("np{i}"), spec))
            .unwrap();
    }
    let peer = |tier: &str| pod("x", "p", "n2", "10.0.2.1", json!({"tier": tier}), &[]);
    e.upsert_pod(&peer("fe")).unwrap();
    // Another front-end and a db stay peers throughout.
    e.upsert_pod(&pod("x", "q", "n2", "10.0.2.2", json!({"tier": "fe"}), &[]))
        .unwrap();
    e.upsert_pod(&pod("x", "r", "n2", "10.0.2.3", json!({"tier": "db"}), &[]))
        .unwrap();
    e.sync();
    let (recomputed, patched) = (e.recomputed(), e.rules_patched());
    // x/p leaves tier fe: the K rules of x that read the fe group lose it as a peer.
    e.upsert_pod(&peer("be")).unwrap();
    let report = e.sync();
    assert_eq!(
        (report.policies, report.rules),
        (0, K),
        "k of n rules patched"
    );
    assert_eq!(
        (e.recomputed(), e.rules_patched()),
        (recomputed, patched + K as u64)
    );
    let delta = report.delta;
    assert!(delta.added.is_empty() && delta.removed.is_empty() && delta.changed.is_empty());
    let gone: std::net::Ipv4Addr = "10.0.2.1".parse().unwrap();
    for (id, edit) in &delta.edited {
        assert!(&*id.policy.name < "np3", "{id}");
        assert_eq!(edit.peer_ips.removed, [gone].into(), "{id}");
        assert_eq!(edit.len(), 1, "{id}");
    }
    assert_eq!(delta.edited.len(), K);
    // Back: the same K rules, the peer coming back.
    e.upsert_pod(&peer("fe")).unwrap();
    let report = e.sync();
    assert_eq!((report.policies, report.rules), (0, K));
    assert!(
        report
            .delta
            .edited
            .values()
            .all(|edit| edit.peer_ips.added == [gone].into())
    );
}
