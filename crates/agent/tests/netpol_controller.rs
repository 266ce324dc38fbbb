//! The NetworkPolicy controller against a real `ovs-vswitchd`: inputs become the
//! `networkpolicy` owner's flows in one bundle per burst; unrelated changes send nothing; a
//! rule change is a small diff; counters and flow costs are readable.
#![cfg(target_os = "linux")]

use std::sync::Arc;
use std::time::Duration;

use agent::cluster::ObjectKey;
use agent::controller::{NetworkPolicyController, PolicyInput};
use agent::flows::Flows;
use ovstest::Ovs;
use pipeline::Owner;
use pipeline::owners::NETWORK_POLICY;
use serde_json::{Value, json};

fn pod(ns: &str, name: &str, node: &str, ip: &str, labels: Value) -> PolicyInput {
    PolicyInput::Pod(Arc::new(
        serde_json::from_value(json!({
            "metadata": {"namespace": ns, "name": name, "labels": labels},
            "spec": {"nodeName": node, "containers": [{"name": "c"}]},
            "status": {"phase": "Running", "podIP": ip},
        }))
        .unwrap(),
    ))
}

fn namespace(name: &str) -> PolicyInput {
    PolicyInput::Namespace(Arc::new(
        serde_json::from_value(json!({"metadata": {"name": name, "labels": {"ns": name}}}))
            .unwrap(),
    ))
}

fn policy(ns: &str, name: &str, spec: Value) -> PolicyInput {
    PolicyInput::Policy(Arc::new(
        serde_json::from_value(json!({"metadata": {"namespace": ns, "name": name}, "spec": spec}))
            .unwrap(),
    ))
}

fn dump(ovs: &Ovs) -> Vec<String> {
    let out = ovs
        .ofctl(&["-O", "OpenFlow15", "--no-stats", "dump-flows", "{mgmt:br0}"])
        .unwrap();
    out.lines()
        .filter(|l| l.contains("actions="))
        .map(|l| l.trim().to_owned())
        .collect()
}

#[tokio::test]
async fn controller_installs_policy_flows_in_bursts() {
    let ovs = Ovs::start().unwrap();
    ovs.add_bridge("br0").unwrap();
    let endpoint = format!("unix:{}", ovs.mgmt_socket("br0").display())
        .parse()
        .unwrap();
    let flows = Arc::new(
        Flows::connect(endpoint, Duration::from_secs(10))
            .await
            .unwrap(),
    );
    let mut controller = NetworkPolicyController::new("n1", flows.clone());

    let mut inputs = vec![namespace("x"), namespace("y")];
    for (i, p) in ["a", "b", "c"].iter().enumerate() {
        inputs.push(pod(
            "x",
            p,
            "n1",
            &format!("10.244.1.{}", 10 + i),
            json!({"pod": p}),
        ));
        inputs.push(pod(
            "y",
            p,
            "n2",
            &format!("10.244.2.{}", 10 + i),
            json!({"pod": p}),
        ));
    }
    inputs.push(policy(
        "x",
        "from-y",
        json!({"podSelector": {"matchLabels": {"pod": "a"}}, "ingress": [{"from": [{"namespaceSelector": {"matchLabels": {"ns": "y"}}}], "ports": [{"port": 80}]}]}),
    ));
    // An invalid policy is refused without stopping the others.
    inputs.push(policy(
        "x",
        "bad",
        json!({"podSelector": {}, "policyTypes": ["Sideways"]}),
    ));
    for input in &inputs {
        controller.apply(input);
    }
    let diff = controller.install().await.unwrap();
    // Three peers + one applied-to + one port + the conj_id flow + one default drop.
    assert_eq!(diff.adds.len(), 7, "{diff:?}");
    assert!(flows.owners().contains(&Owner::from(NETWORK_POLICY)));
    assert_eq!(dump(&ovs).len(), 7);
    let costs = controller.rule_flows();
    assert_eq!(costs.len(), 1);
    let cost = costs.values().next().unwrap();
    assert_eq!((cost.flows, cost.without_conjunction), (6, 3));
    let counters = controller.rule_counters().await.unwrap();
    assert_eq!(counters.values().map(|c| c.packets).sum::<u64>(), 0);

    // Run it: 100 unrelated changes (a label nobody selects on, on a Pod of neither group)
    // send no flow mod; then one burst with a peer's label change is one small diff.
    let (tx, rx) = tokio::sync::mpsc::channel(256);
    let mods = flows.mods();
    let (_queries, queries_rx) = tokio::sync::mpsc::channel(1);
    let task = tokio::spawn(controller.run(rx, queries_rx));
    for i in 0..100 {
        tx.send(pod(
            "x",
            "c",
            "n1",
            "10.244.1.12",
            json!({"pod": "c", "gen": i.to_string()}),
        ))
        .await
        .unwrap();
    }
    tx.send(pod(
        "y",
        "b",
        "n2",
        "10.244.2.11",
        json!({"pod": "b", "gone": "yes"}),
    ))
    .await
    .unwrap();
    tx.send(PolicyInput::PodDeleted(ObjectKey::new("y", "c")))
        .await
        .unwrap();
    drop(tx);
    task.await.unwrap();
    assert_eq!(
        flows.mods() - mods,
        1,
        "y/c's peer flow deleted, nothing else"
    );
    assert_eq!(dump(&ovs).len(), 6);
}
