//! The NetworkPolicy controller through the OVS datapath against a real `ovs-vswitchd`: inputs
//! become the `networkpolicy` owner's flows in one bundle per burst; unrelated changes send
//! nothing; a rule change is a small diff; counters and flow costs are readable.
#![cfg(target_os = "linux")]

use std::sync::Arc;
use std::time::Duration;

use agent::cluster::ObjectKey;
use agent::config::Platform;
use agent::controller::{NetworkPolicyController, PolicyInput};
use agent::datapath::Datapath;
use agent::datapath::ovs::{OvsDatapath, OvsOptions};
use agent::flows::Flows;
use agent::ovs::OvsBridge;
use agent::ovs::unixctl::VswitchdControl;
use agent::tasks::{Requeue, RequeueMetrics};
use model::{NodeNetwork, TrafficMode, TunnelType};
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
    let bridge = OvsBridge::connect(
        format!("unix:{}", ovs.db_socket().display())
            .parse()
            .unwrap(),
        "br0",
    )
    .await
    .unwrap();
    let network = NodeNetwork {
        node_ip: "10.10.0.11/24".parse().unwrap(),
        node_mac: "02:00:0a:0a:00:0b".parse().unwrap(),
        pod_cidr: "10.244.1.0/24".parse().unwrap(),
        gateway_ip: "10.244.1.1".parse().unwrap(),
        gateway_mac: "02:00:0a:f4:01:01".parse().unwrap(),
        mode: TrafficMode::Encap(TunnelType::Geneve),
    };
    let options = OvsOptions {
        netdev: true,
        gateway_if: "antrea-gw0".into(),
        snat: false,
        vswitchd: VswitchdControl::new(Platform::Linux, &ovs.dir().to_string_lossy()),
    };
    let host = Arc::new(hostnet::linux::LinuxHost::current().await.unwrap());
    let datapath = Arc::new(OvsDatapath::new(
        network,
        bridge,
        flows.clone(),
        host,
        options,
    ));
    let mut controller = NetworkPolicyController::new("n1");

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
    let changes = controller.install(&*datapath).await.unwrap();
    // Three peers + one applied-to + one port + the conj_id flow + one default drop.
    assert_eq!((changes.rules, changes.changed), (1, 7), "{changes:?}");
    assert!(flows.owners().contains(&Owner::from(NETWORK_POLICY)));
    assert_eq!(dump(&ovs).len(), 7);
    let enforced = datapath.policy_enforcement().await.unwrap();
    assert_eq!(enforced.len(), 1);
    let rule = enforced.values().next().unwrap();
    assert_eq!((rule.entries, rule.entries_expanded), (6, 3));
    assert_eq!(rule.texts.len(), 6, "{:?}", rule.texts);
    assert_eq!(rule.packets, 0);

    // Run it: 100 unrelated changes (a label nobody selects on, on a Pod of neither group)
    // send no flow mod; then one burst with a peer's label change is one small diff.
    let (tx, rx) = tokio::sync::mpsc::channel(256);
    let mods = flows.mods();
    let (_queries, queries_rx) = tokio::sync::mpsc::channel(1);
    let requeue = Requeue::new("networkpolicy", &RequeueMetrics::default());
    let task = tokio::spawn(controller.run(datapath.clone(), rx, queries_rx, requeue));
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
