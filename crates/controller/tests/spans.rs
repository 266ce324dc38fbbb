//! Spans, against an oracle that evaluates the selectors itself: after any sequence of Pod,
//! Namespace and NetworkPolicy changes, each Node's view built from the updates it was sent
//! (never out of order) holds exactly the policies applied to a Pod of that Node and the
//! groups they read with all their members, and equals the view a fresh snapshot gives; and a
//! change reaches only the Nodes of its span, counted message by message.

use std::collections::{BTreeMap, BTreeSet};

use controller::span::{NodeUpdate, NodeView, SpanComputation};
use model::policy::PodKey;
use netpol::input::{CompiledPolicy, GroupKey, PodInfo, Scope, namespace_labels};
use proptest::prelude::*;
use serde_json::json;

#[path = "support/random_cluster.rs"]
mod random_cluster;

use random_cluster::{NODES, World, apply, namespace, op, pod, policy};

/// Applies each Node's updates to its view; an update out of order fails the test.
fn receive(views: &mut BTreeMap<String, NodeView>, updates: BTreeMap<String, Vec<NodeUpdate>>) {
    for (node, list) in updates {
        let view = views.entry(node.clone()).or_default();
        for u in &list {
            view.apply(u).unwrap_or_else(|e| panic!("{node}: {e}"));
        }
    }
}

/// Starts watching `node`: its view is its snapshot.
fn watch(c: &mut SpanComputation, views: &mut BTreeMap<String, NodeView>, node: &str) {
    let mut view = NodeView::default();
    for u in c.watch(node) {
        view.apply(&u)
            .unwrap_or_else(|e| panic!("{node} snapshot: {e}"));
    }
    views.insert(node.to_owned(), view);
}

impl World {
    fn labels_of(&self, ns: &str) -> Option<netpol::selector::Labels> {
        self.namespaces
            .get(ns)
            .map(|n| namespace_labels(n).unwrap().1)
    }

    /// The group's members by evaluating its selectors over the world's Pods.
    fn members(&self, group: &GroupKey) -> BTreeSet<(PodKey, std::net::Ipv4Addr)> {
        self.pods
            .values()
            .map(|p| PodInfo::from_k8s(p).unwrap())
            .filter(|p| match &group.scope {
                Scope::Namespace(ns) => **ns == *p.key.namespace,
                Scope::Namespaces(sel) => self
                    .labels_of(&p.key.namespace)
                    .is_some_and(|l| sel.matches(&l)),
            })
            .filter(|p| group.pods.matches(&p.labels))
            .filter_map(|p| Some((p.key.clone(), p.ip?)))
            .collect()
    }

    /// What Node `node` must hold: the policies applied to one of its Pods, and their groups.
    fn expected(&self, node: &str) -> (BTreeSet<String>, BTreeMap<GroupKey, BTreeSet<PodKey>>) {
        let mut policies = BTreeSet::new();
        let mut groups = BTreeMap::new();
        for p in self.policies.values() {
            let compiled = CompiledPolicy::from_k8s(p).unwrap();
            let local = self
                .members(&compiled.applied_to)
                .into_iter()
                .any(|(k, _)| {
                    self.pods[&k].spec.as_ref().unwrap().node_name.as_deref() == Some(node)
                });
            if !local {
                continue;
            }
            policies.insert(compiled.key.to_string());
            for g in compiled.groups() {
                let members = self.members(&g).into_iter().map(|(k, _)| k).collect();
                groups.insert(g, members);
            }
        }
        (policies, groups)
    }

    fn fresh(&self) -> SpanComputation {
        let mut c = SpanComputation::default();
        for p in self.policies.values() {
            c.upsert_policy(p).unwrap();
        }
        for n in self.namespaces.values() {
            c.upsert_namespace(n).unwrap();
        }
        for p in self.pods.values() {
            c.upsert_pod(p).unwrap();
        }
        c
    }
}

fn held(view: &NodeView) -> (BTreeSet<String>, BTreeMap<GroupKey, BTreeSet<PodKey>>) {
    (
        view.policies.keys().map(|k| k.to_string()).collect(),
        view.groups
            .iter()
            .map(|(g, m)| (g.clone(), m.keys().cloned().collect()))
            .collect(),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn every_node_holds_exactly_its_span(ops in proptest::collection::vec(op(), 1..40)) {
        let mut c = SpanComputation::default();
        let mut world = World::default();
        let mut views = BTreeMap::new();
        // n3 is watched only from the middle of the sequence on, from its snapshot then.
        watch(&mut c, &mut views, "n1");
        watch(&mut c, &mut views, "n2");
        for (i, op) in ops.iter().enumerate() {
            if i == ops.len() / 2 {
                watch(&mut c, &mut views, "n3");
            }
            apply(&mut c, &mut world, op);
            receive(&mut views, c.take_updates());
            for node in NODES.into_iter().filter(|n| views.contains_key(*n)) {
                let view = views[node].clone();
                prop_assert_eq!(held(&view), world.expected(node), "{} after {:?}", node, op);
            }
        }
        let fresh = world.fresh();
        for node in NODES {
            let mut from_snapshot = NodeView::default();
            for u in fresh.snapshot(node) {
                from_snapshot.apply(&u).unwrap();
            }
            let mut own_snapshot = NodeView::default();
            for u in c.snapshot(node) {
                own_snapshot.apply(&u).unwrap();
            }
            let view = views.get(node).cloned().unwrap_or_default();
            prop_assert_eq!(&view, &from_snapshot, "{}", node);
            prop_assert_eq!(&view, &own_snapshot, "{}", node);
        }
    }
}

/// Updates per Node, by kind.
fn counts(updates: &BTreeMap<String, Vec<NodeUpdate>>) -> BTreeMap<&str, usize> {
    updates.iter().map(|(n, l)| (n.as_str(), l.len())).collect()
}

#[test]
fn a_policy_whose_pods_run_on_one_node_reaches_only_that_node() {
    let mut c = SpanComputation::default();
    for node in NODES {
        assert!(c.watch(node).is_empty());
    }
    for (ns, team) in [("x", "a"), ("y", "b")] {
        c.upsert_namespace(&namespace(ns, team)).unwrap();
    }
    c.upsert_pod(&pod("x", "web", "n1", Some(1), "a", Some(80)))
        .unwrap();
    c.upsert_pod(&pod("y", "db", "n2", Some(2), "b", None))
        .unwrap();
    c.upsert_pod(&pod("y", "cache", "n3", Some(3), "c", None))
        .unwrap();
    assert!(
        c.take_updates().is_empty(),
        "no policy yet: nothing to send"
    );

    // Applied to x's `pod=a` Pods (only on n1), from y's Pods (on n2 and n3).
    let spec = json!({
        "podSelector": {"matchLabels": {"pod": "a"}},
        "ingress": [{"from": [{"namespaceSelector": {"matchLabels": {"team": "b"}}}]}],
    });
    c.upsert_policy(&policy("x", "allow-y", spec)).unwrap();
    let sent = c.take_updates();
    // n1: the applied-to group, the peer group, then the policy.
    assert_eq!(counts(&sent), BTreeMap::from([("n1", 3)]));
    assert!(matches!(sent["n1"][2], NodeUpdate::PolicyUpserted(_)));
    let key = CompiledPolicy::from_k8s(&policy("x", "allow-y", json!({})))
        .unwrap()
        .key;
    assert_eq!(c.policy_span(&key), vec!["n1"]);

    // A label change on n3's Pod that keeps it in the peer group's members: its group is in
    // n1's span only, so only n1 hears of it — and nothing changed for it, so nothing at all.
    c.upsert_pod(&pod("y", "cache", "n3", Some(3), "d", None))
        .unwrap();
    assert!(c.take_updates().is_empty());

    // A new peer member (a Pod of y on n3): one member update, to n1 alone.
    c.upsert_pod(&pod("y", "new", "n3", Some(4), "c", None))
        .unwrap();
    let sent = c.take_updates();
    assert_eq!(counts(&sent), BTreeMap::from([("n1", 1)]));
    assert!(
        matches!(&sent["n1"][0], NodeUpdate::MemberUpserted { member, .. } if member.pod == PodKey::new("y", "new"))
    );

    // Namespace y's label no longer matches: its three Pods leave the peer group, at n1 only.
    c.upsert_namespace(&namespace("y", "c")).unwrap();
    let sent = c.take_updates();
    assert_eq!(counts(&sent), BTreeMap::from([("n1", 3)]));
    assert!(
        sent["n1"]
            .iter()
            .all(|u| matches!(u, NodeUpdate::MemberRemoved { .. }))
    );

    // The applied-to Pod moves to n2: the policy and its groups leave n1 and reach n2.
    c.upsert_pod(&pod("x", "web", "n2", Some(1), "a", Some(80)))
        .unwrap();
    let sent = c.take_updates();
    assert_eq!(counts(&sent), BTreeMap::from([("n1", 4), ("n2", 3)]));
    assert!(matches!(sent["n1"][1], NodeUpdate::PolicyRemoved(_)));
    assert!(matches!(sent["n1"][2], NodeUpdate::GroupRemoved { .. }));
    assert_eq!(c.policy_span(&key), vec!["n2"]);

    // The policy goes: its Node loses it, then its two groups.
    c.remove_policy(&key);
    let sent = c.take_updates();
    assert_eq!(counts(&sent), BTreeMap::from([("n2", 3)]));
    assert!(c.snapshot("n2").is_empty());
}

#[test]
fn a_group_shared_by_two_policies_stays_while_one_of_them_reads_it() {
    let mut c = SpanComputation::default();
    c.watch("n1");
    c.upsert_pod(&pod("x", "a", "n1", Some(1), "a", None))
        .unwrap();
    c.upsert_pod(&pod("x", "b", "n1", Some(2), "b", None))
        .unwrap();
    let from_b = json!({"ingress": [{"from": [{"podSelector": {"matchLabels": {"pod": "b"}}}]}]});
    c.upsert_policy(&policy("x", "one", from_b.clone()))
        .unwrap();
    c.upsert_policy(&policy("x", "two", from_b)).unwrap();
    let sent = c.take_updates();
    // Groups `all of x` and `pod=b of x` once, then the two policies.
    assert_eq!(counts(&sent), BTreeMap::from([("n1", 4)]));

    // `one` changes to read `pod=a`: the new group first, then the policy; `pod=b` stays, as
    // `two` reads it.
    let from_a = json!({"ingress": [{"from": [{"podSelector": {"matchLabels": {"pod": "a"}}}]}]});
    c.upsert_policy(&policy("x", "one", from_a)).unwrap();
    let sent = c.take_updates();
    assert_eq!(counts(&sent), BTreeMap::from([("n1", 2)]));
    assert!(matches!(sent["n1"][0], NodeUpdate::GroupAdded { .. }));
    assert!(matches!(sent["n1"][1], NodeUpdate::PolicyUpserted(_)));
}

#[test]
fn a_pod_relabelled_from_one_policy_to_another_keeps_their_shared_group_at_its_node() {
    let mut c = SpanComputation::default();
    c.watch("n1");
    c.upsert_pod(&pod("x", "w", "n1", Some(1), "a", None))
        .unwrap();
    c.upsert_pod(&pod("x", "client", "n2", Some(2), "c", None))
        .unwrap();
    let from_c = json!([{"from": [{"podSelector": {"matchLabels": {"pod": "c"}}}]}]);
    for (name, label) in [("for-a", "a"), ("for-b", "b")] {
        let spec = json!({"podSelector": {"matchLabels": {"pod": label}}, "ingress": from_c});
        c.upsert_policy(&policy("x", name, spec)).unwrap();
    }
    c.take_updates();

    // w leaves `for-a`'s Pods and joins `for-b`'s, on the same Node: n1 hears w leave
    // `pod=a`, gets `for-b`'s applied-to group and `for-b`, loses `for-a` and its applied-to
    // group; the `pod=c` group both read stays (no removal and new copy).
    c.upsert_pod(&pod("x", "w", "n1", Some(1), "b", None))
        .unwrap();
    let sent = c.take_updates();
    let kinds: Vec<&str> = sent["n1"]
        .iter()
        .map(|u| match u {
            NodeUpdate::GroupAdded { .. } => "group+",
            NodeUpdate::GroupRemoved { .. } => "group-",
            NodeUpdate::MemberUpserted { .. } => "member+",
            NodeUpdate::MemberRemoved { .. } => "member-",
            NodeUpdate::PolicyUpserted(_) => "policy+",
            NodeUpdate::PolicyRemoved(_) => "policy-",
        })
        .collect();
    assert_eq!(
        kinds,
        ["member-", "group+", "policy+", "policy-", "group-"],
        "{sent:?}"
    );
    assert_eq!(counts(&sent), BTreeMap::from([("n1", 5)]));
}

#[test]
fn a_node_nobody_watches_is_sent_nothing_and_gets_its_snapshot_when_it_comes() {
    let mut c = SpanComputation::default();
    c.watch("n1");
    c.upsert_pod(&pod("x", "a", "n1", Some(1), "a", None))
        .unwrap();
    c.upsert_pod(&pod("x", "b", "n2", Some(2), "a", None))
        .unwrap();
    c.upsert_policy(&policy("x", "all", json!({"ingress": [{}]})))
        .unwrap();
    let sent = c.take_updates();
    assert_eq!(
        counts(&sent),
        BTreeMap::from([("n1", 2)]),
        "n2 is not watched"
    );
    let mut view = NodeView::default();
    for u in c.watch("n2") {
        view.apply(&u).unwrap();
    }
    assert_eq!(view.policies.len(), 1);
    c.upsert_pod(&pod("x", "c", "n3", Some(3), "a", None))
        .unwrap();
    let sent = c.take_updates();
    assert_eq!(counts(&sent), BTreeMap::from([("n1", 1), ("n2", 1)]));
    c.unwatch("n1");
    c.remove_pod(&PodKey::new("x", "c"));
    assert_eq!(counts(&c.take_updates()), BTreeMap::from([("n2", 1)]));
}
