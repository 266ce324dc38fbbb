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
use netpol::{PolicyEngine, Snapshot};
use proptest::prelude::*;

#[path = "../../controller/tests/support/random_cluster.rs"]
mod random_cluster;

use random_cluster::{World, apply, op};

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
