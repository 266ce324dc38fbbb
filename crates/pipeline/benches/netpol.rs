//! NetworkPolicy at scale: 10,000 Pods in 100 Namespaces (100 of them on this Node), 5,000
//! policies. Prints the time to compute the snapshot from scratch and to render it, the flow
//! count with conjunctions against the flows the same rules would need without them (N×M), and
//! the time of incremental updates (a peer's label, a policy). Run with
//! `cargo bench -p pipeline --bench netpol`.

use std::time::Instant;

use k8s_openapi::api::core::v1::{Namespace, Pod};
use k8s_openapi::api::networking::v1::NetworkPolicy;
use netpol::PolicyEngine;
use pipeline::render::PolicyRenderer;
use serde_json::json;

const NAMESPACES: usize = 100;
const PODS_PER_NAMESPACE: usize = 100;
const POLICIES_PER_NAMESPACE: usize = 50;

fn namespace(n: usize) -> Namespace {
    serde_json::from_value(
        json!({"metadata": {"name": format!("ns{n}"), "labels": {"team": format!("t{}", n % 10)}}}),
    )
    .unwrap()
}

/// Pod `i` of Namespace `n`; the first Pod of every Namespace runs on this Node.
fn pod(n: usize, i: usize, tier: &str) -> Pod {
    let ip = format!("10.{}.{}.{}", 100 + n / 100, n % 100, 10 + i);
    serde_json::from_value(json!({
        "metadata": {"namespace": format!("ns{n}"), "name": format!("p{i}"),
                     "labels": {"app": format!("app{}", i % POLICIES_PER_NAMESPACE), "tier": tier}},
        "spec": {"nodeName": if i == 0 { "n1" } else { "other" }, "containers": [{"name": "c"}]},
        "status": {"phase": "Running", "podIP": ip},
    }))
    .unwrap()
}

fn tier(i: usize) -> &'static str {
    if i.is_multiple_of(2) { "fe" } else { "be" }
}

/// Policy `j` of Namespace `n`: Pods `app<j>` accept front-ends of the Namespaces of team
/// `t<j%10>` on TCP 80 and 8000-8100.
fn policy(n: usize, j: usize, end: u16) -> NetworkPolicy {
    serde_json::from_value(json!({
        "metadata": {"namespace": format!("ns{n}"), "name": format!("np{j}")},
        "spec": {
            "podSelector": {"matchLabels": {"app": format!("app{j}")}},
            "ingress": [{
                "from": [{"namespaceSelector": {"matchLabels": {"team": format!("t{}", j % 10)}},
                          "podSelector": {"matchLabels": {"tier": "fe"}}}],
                "ports": [{"port": 80}, {"port": 8000, "endPort": end}],
            }],
        },
    }))
    .unwrap()
}

fn main() {
    let mut engine = PolicyEngine::new("n1");
    let start = Instant::now();
    for n in 0..NAMESPACES {
        engine.upsert_namespace(&namespace(n)).unwrap();
        for i in 0..PODS_PER_NAMESPACE {
            engine.upsert_pod(&pod(n, i, tier(i))).unwrap();
        }
        for j in 0..POLICIES_PER_NAMESPACE {
            engine.upsert_policy(&policy(n, j, 8100)).unwrap();
        }
    }
    let loaded = start.elapsed();
    let start = Instant::now();
    let report = engine.sync();
    let computed = start.elapsed();
    let mut renderer = PolicyRenderer::new();
    let start = Instant::now();
    let flows = renderer.render(engine.snapshot());
    let rendered = start.elapsed();
    let naive: usize = flows.rules.values().map(|r| r.without_conjunction).sum();
    let per_rule: usize = flows.rules.values().map(|r| r.flows).sum();
    let groups = engine.group_count();
    let snapshot = engine.snapshot();
    println!(
        "Pods: {}, local: {}, policies: {}",
        NAMESPACES * PODS_PER_NAMESPACE,
        NAMESPACES,
        NAMESPACES * POLICIES_PER_NAMESPACE
    );
    println!(
        "groups: {}, rules on this Node: {}, isolated Pods: {}",
        groups,
        snapshot.rules.len(),
        snapshot.isolation.ingress.len()
    );
    println!(
        "load objects: {loaded:?}; compute ({} policies): {computed:?}; render: {rendered:?}",
        report.policies
    );
    println!(
        "flows: {} installed ({per_rule} counted per rule) vs {naive} without conjunctions",
        flows.flows.len()
    );

    // A front-end of a team-t0 Namespace becomes a back-end: it leaves the peers of every
    // rule of team t0, among them the rules of this Node's Pods.
    let start = Instant::now();
    engine.upsert_pod(&pod(10, 2, "be")).unwrap();
    let report = engine.sync();
    let label = start.elapsed();
    let start = Instant::now();
    let after = renderer.render(engine.snapshot());
    let rerendered = start.elapsed();
    println!(
        "peer label change: {} policies recomputed in {label:?}, render {rerendered:?}, flows {} -> {}",
        report.policies,
        flows.flows.len(),
        after.flows.len()
    );
    // A policy of a local Pod changes its port range.
    let start = Instant::now();
    engine.upsert_policy(&policy(7, 0, 8200)).unwrap();
    let report = engine.sync();
    println!(
        "policy change: {} policies recomputed in {:?}",
        report.policies,
        start.elapsed()
    );
}
