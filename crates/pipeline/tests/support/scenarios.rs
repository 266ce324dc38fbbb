//! The truth-table scenarios (`truthtable` crate) fed in order to one NetworkPolicy engine, as
//! Node n1 sees them: each scenario's Namespaces and Pods upserted, its policies created or
//! updated, the previous scenario's other policies deleted.

use std::collections::BTreeMap;

use netpol::{PolicyEngine, PolicyKey, Snapshot};
use openflow::msg::flow_mod::FlowMod;
use pipeline::render::PolicyRenderer;
use truthtable::model::{ip, pods};
use truthtable::{Cluster, NAMESPACES, Scenario, scenarios};

/// An engine that takes the scenarios one after the other.
pub struct ScenarioRun {
    engine: PolicyEngine,
    installed: BTreeMap<PolicyKey, serde_json::Value>,
}

impl ScenarioRun {
    /// An engine of Node n1 with nothing applied yet.
    pub fn new() -> ScenarioRun {
        ScenarioRun {
            engine: PolicyEngine::new("n1"),
            installed: BTreeMap::new(),
        }
    }

    /// Moves the engine to `scenario`; its snapshot.
    pub fn apply(&mut self, scenario: &Scenario) -> &Snapshot {
        upsert_cluster(&mut self.engine, &scenario.cluster());
        let wanted: BTreeMap<PolicyKey, serde_json::Value> = scenario
            .policies
            .iter()
            .map(|p| (PolicyKey::new(p.namespace, p.name), p.object()))
            .collect();
        for key in self.installed.keys().filter(|k| !wanted.contains_key(*k)) {
            self.engine.remove_policy(key);
        }
        for object in wanted.values() {
            self.engine
                .upsert_policy(&serde_json::from_value(object.clone()).unwrap())
                .unwrap();
        }
        self.installed = wanted;
        self.engine.snapshot()
    }
}

/// Feeds the engine the lab's Namespaces and Pods as `cluster` labels them.
fn upsert_cluster(engine: &mut PolicyEngine, cluster: &Cluster) {
    for ns in NAMESPACES {
        engine
            .upsert_namespace(&serde_json::from_value(cluster.namespace_object(ns)).unwrap())
            .unwrap();
    }
    for p in pods() {
        engine
            .upsert_pod(&serde_json::from_value(cluster.pod_object(p, Some(ip(p)))).unwrap())
            .unwrap();
    }
}

/// Every scenario's name and the NetworkPolicy flows one renderer renders for it, in order (the
/// conjunction ids depend on the order, as in the agent).
pub fn policy_flows() -> Vec<(&'static str, Vec<FlowMod>)> {
    let mut run = ScenarioRun::new();
    let mut renderer = PolicyRenderer::new();
    scenarios()
        .iter()
        .map(|scenario| (scenario.name, renderer.render(run.apply(scenario)).flows))
        .collect()
}
