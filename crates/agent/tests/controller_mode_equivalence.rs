//! Controller mode computes what standalone mode computes: over random sequences of Pod,
//! Namespace and NetworkPolicy changes on three Nodes, antrea-controller's
//! [`SpanComputation`] gives each Node its updates; a given-mode engine per Node, fed only
//! those through the agent's [`PolicyView`] (now and then a whole snapshot instead, and one
//! Node joining halfway from its snapshot), holds after every step exactly the [`Snapshot`] of
//! a standalone engine for that Node fed every object, and the deltas its syncs report, applied
//! in turn, give that snapshot too.

use std::collections::BTreeMap;

use agent::controller::PolicyView;
use controller::SpanComputation;
use controlplane::{Delivery, NodeView};
use k8s_openapi::api::core::v1::{Namespace, Pod};
use k8s_openapi::api::networking::v1::NetworkPolicy;
use model::policy::PodKey;
use netpol::input::CompiledPolicy;
use netpol::{PolicyEngine, Snapshot};
use proptest::prelude::*;
use serde_json::{Value, json};

const NODES: [&str; 3] = ["n1", "n2", "n3"];
const NS: [&str; 3] = ["x", "y", "z"];
const LABELS: [&str; 3] = ["a", "b", "c"];

fn namespace(name: &str, team: &str) -> Namespace {
    serde_json::from_value(json!({"metadata": {"name": name, "labels": {"team": team}}})).unwrap()
}

fn pod(ns: &str, name: &str, node: &str, ip: Option<u8>, label: &str, http: Option<u16>) -> Pod {
    let ports: Vec<Value> = http
        .iter()
        .map(|p| json!({"name": "http", "protocol": "TCP", "containerPort": p}))
        .collect();
    let status = match ip {
        Some(i) => json!({"phase": "Running", "podIP": format!("10.0.0.{i}")}),
        None => json!({"phase": "Pending"}),
    };
    serde_json::from_value(json!({
        "metadata": {"namespace": ns, "name": name, "labels": {"pod": label}},
        "spec": {"nodeName": node, "containers": [{"name": "c", "ports": ports}]},
        "status": status,
    }))
    .unwrap()
}

fn policy(ns: &str, name: &str, spec: Value) -> NetworkPolicy {
    serde_json::from_value(json!({"metadata": {"namespace": ns, "name": name}, "spec": spec}))
        .unwrap()
}

#[derive(Debug, Clone)]
enum Op {
    SetPod {
        ns: usize,
        name: usize,
        node: usize,
        ip: Option<u8>,
        label: usize,
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

fn selector() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!({})),
        (0..3usize).prop_map(|l| json!({"matchLabels": {"pod": LABELS[l]}})),
    ]
}

fn peer() -> impl Strategy<Value = Value> {
    prop_oneof![
        selector().prop_map(|p| json!({"podSelector": p})),
        (0..3usize)
            .prop_map(|l| json!({"namespaceSelector": {"matchLabels": {"team": LABELS[l]}}})),
        selector().prop_map(|p| json!({"podSelector": p, "namespaceSelector": {}})),
        Just(json!({"ipBlock": {"cidr": "10.0.0.0/29", "except": ["10.0.0.4/30"]}})),
    ]
}

/// Ports of a rule: none (any), a number, or the named port `http` (resolved on the applied-to
/// Pods for ingress, on the peers for egress).
fn ports() -> impl Strategy<Value = Option<Value>> {
    prop_oneof![
        Just(None),
        Just(Some(json!([{"port": 80}]))),
        Just(Some(json!([{"port": "http"}]))),
        Just(Some(json!([{"port": "http"}, {"port": 81}]))),
    ]
}

fn rule(key: &'static str) -> impl Strategy<Value = Value> {
    (
        proptest::option::of(proptest::collection::vec(peer(), 0..3)),
        ports(),
    )
        .prop_map(move |(peers, ports)| {
            let mut rule = serde_json::Map::new();
            if let Some(peers) = peers {
                rule.insert(key.to_owned(), Value::Array(peers));
            }
            if let Some(ports) = ports {
                rule.insert("ports".to_owned(), ports);
            }
            Value::Object(rule)
        })
}

fn spec() -> impl Strategy<Value = Value> {
    (
        selector(),
        proptest::collection::vec(rule("from"), 0..3),
        proptest::collection::vec(rule("to"), 0..2),
        prop_oneof![
            Just(json!(["Ingress"])),
            Just(json!(["Egress"])),
            Just(json!(["Ingress", "Egress"]))
        ],
    )
        .prop_map(|(sel, ingress, egress, types)| {
            json!({"podSelector": sel, "policyTypes": types, "ingress": ingress, "egress": egress})
        })
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        5 => (0..3usize, 0..4usize, 0..3usize, proptest::option::of(0..12u8), 0..3usize, proptest::option::of(80..82u16))
            .prop_map(|(ns, name, node, ip, label, http)| Op::SetPod { ns, name, node, ip, label, http }),
        1 => (0..3usize, 0..4usize).prop_map(|(ns, name)| Op::RemovePod { ns, name }),
        2 => (0..3usize, 0..3usize).prop_map(|(ns, label)| Op::SetNamespace { ns, label }),
        1 => (0..3usize).prop_map(|ns| Op::RemoveNamespace { ns }),
        3 => (0..3usize, 0..3usize, spec()).prop_map(|(ns, name, spec)| Op::SetPolicy { ns, name, spec }),
        1 => (0..3usize, 0..3usize).prop_map(|(ns, name)| Op::RemovePolicy { ns, name }),
    ]
}

/// Every object of the cluster.
#[derive(Default)]
struct World {
    pods: BTreeMap<PodKey, Pod>,
    namespaces: BTreeMap<String, Namespace>,
    policies: BTreeMap<(String, String), NetworkPolicy>,
}

impl World {
    /// A standalone engine for `node` fed every object.
    fn standalone(&self, node: &str) -> PolicyEngine {
        let mut engine = PolicyEngine::new(node);
        for n in self.namespaces.values() {
            engine.upsert_namespace(n).unwrap();
        }
        for p in self.pods.values() {
            engine.upsert_pod(p).unwrap();
        }
        for p in self.policies.values() {
            engine.upsert_policy(p).unwrap();
        }
        engine
    }
}

fn apply(c: &mut SpanComputation, world: &mut World, op: &Op) {
    match op {
        Op::SetPod {
            ns,
            name,
            node,
            ip,
            label,
            http,
        } => {
            let p = pod(
                NS[*ns],
                &format!("p{name}"),
                NODES[*node],
                *ip,
                LABELS[*label],
                *http,
            );
            c.upsert_pod(&p).unwrap();
            world
                .pods
                .insert(PodKey::new(NS[*ns], format!("p{name}")), p);
        }
        Op::RemovePod { ns, name } => {
            let key = PodKey::new(NS[*ns], format!("p{name}"));
            c.remove_pod(&key);
            world.pods.remove(&key);
        }
        Op::SetNamespace { ns, label } => {
            let n = namespace(NS[*ns], LABELS[*label]);
            c.upsert_namespace(&n).unwrap();
            world.namespaces.insert(NS[*ns].to_owned(), n);
        }
        Op::RemoveNamespace { ns } => {
            c.set_namespace(NS[*ns], None);
            world.namespaces.remove(NS[*ns]);
        }
        Op::SetPolicy { ns, name, spec } => {
            let p = policy(NS[*ns], &format!("np{name}"), spec.clone());
            c.upsert_policy(&p).unwrap();
            world
                .policies
                .insert((NS[*ns].to_owned(), format!("np{name}")), p);
        }
        Op::RemovePolicy { ns, name } => {
            let p = policy(NS[*ns], &format!("np{name}"), json!({}));
            c.remove_policy(&CompiledPolicy::from_k8s(&p).unwrap().key);
            world
                .policies
                .remove(&(NS[*ns].to_owned(), format!("np{name}")));
        }
    }
}

/// One Node in controller mode: its engine, the view it received, and what a datapath fed
/// every sync's delta holds.
struct Agent {
    engine: PolicyEngine,
    view: PolicyView,
    datapath: Snapshot,
}

impl Agent {
    fn new(node: &str) -> Agent {
        Agent {
            engine: PolicyEngine::given(node),
            view: PolicyView::new(),
            datapath: Snapshot::default(),
        }
    }

    fn receive(&mut self, delivery: &Delivery) {
        self.view
            .receive(&mut self.engine, delivery)
            .unwrap_or_else(|e| panic!("{}: {e}", self.engine.node()));
        self.engine.sync().delta.apply_to(&mut self.datapath);
    }
}

/// The view `updates` build from nothing.
fn view_of(updates: Vec<controlplane::NodeUpdate>) -> NodeView {
    let mut view = NodeView::default();
    for update in updates {
        view.apply(&update).unwrap();
    }
    view
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    #[test]
    fn a_node_fed_its_span_enforces_what_it_would_compute_alone(
        ops in proptest::collection::vec((op(), 0..8u8), 1..40)
    ) {
        let mut c = SpanComputation::default();
        let mut world = World::default();
        let mut agents: BTreeMap<&str, Agent> = BTreeMap::new();
        for node in ["n1", "n2"] {
            let mut agent = Agent::new(node);
            agent.receive(&Delivery::Snapshot(view_of(c.watch(node))));
            agents.insert(node, agent);
        }
        for (i, (op, resync)) in ops.iter().enumerate() {
            if i == ops.len() / 2 {
                // n3 comes halfway, from its snapshot.
                let mut agent = Agent::new("n3");
                agent.receive(&Delivery::Snapshot(view_of(c.watch("n3"))));
                agents.insert("n3", agent);
            }
            apply(&mut c, &mut world, op);
            let mut sent = c.take_updates();
            for (node, agent) in &mut agents {
                let updates = sent.remove(*node).unwrap_or_default();
                if *resync == 0 {
                    // A resynchronisation: the whole view instead of the updates.
                    agent.receive(&Delivery::Snapshot(view_of(c.snapshot(node))));
                } else {
                    agent.receive(&Delivery::Updates(updates));
                }
            }
            prop_assert!(sent.is_empty(), "updates for a Node not watching: {:?}", sent);
            for (node, agent) in &mut agents {
                let want = world.standalone(node).snapshot().clone();
                prop_assert_eq!(agent.engine.snapshot(), &want, "{} after {:?}", node, op);
                prop_assert_eq!(&agent.datapath, &want, "{}'s deltas after {:?}", node, op);
            }
        }
    }
}
