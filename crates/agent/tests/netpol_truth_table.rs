//! NetworkPolicy truth tables with real packets: the `truthtable` lab on two Nodes running the
//! real agent (Namespaces x and y on n1, z on n2, Geneve between them), its nine Pods added
//! through the real `antrea` plugin, each serving TCP and UDP on ports 80 and 81. For every
//! scenario (policies created, updated and deleted, Pod and Namespace labels changed) the
//! cluster file of both Nodes is rewritten, both agents are seen applying it, and every source
//! Pod probes every destination on every port at once; the observed table must equal what the
//! scenario says Kubernetes allows (a few re-probes cover a change still being installed; the
//! last mismatch is printed).
#![cfg(target_os = "linux")]

mod support;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Instant;

use support::podnet::{add_lab_pods, in_netns, probe, serve};
use support::{Lan, TestNode, nodes_yaml, wait_until};
use truthtable::model::{ip, list, pods};
use truthtable::{Cluster, PORTS, Pod, Port, Reachability, Scenario, scenarios};

const N1: (&str, &str, &str) = ("n1", "10.10.0.11", "10.244.1.0/24");
const N2: (&str, &str, &str) = ("n2", "10.10.0.12", "10.244.2.0/24");
/// How many times a scenario's table is probed before its mismatch counts.
const TRIES: usize = 5;
/// The cluster directory file holding the lab's Namespaces, Pods and policies.
const LAB_FILE: &str = "lab.yaml";

/// The lab's objects: Namespaces and Pods as `cluster` labels them (Pods with their addresses
/// once added), and `scenario`'s policies.
fn lab_file(cluster: &Cluster, with_ips: bool, scenario: Option<&Scenario>) -> String {
    let mut items = cluster.objects(with_ips);
    if let Some(scenario) = scenario {
        items.extend(scenario.policies.iter().map(|p| p.object()));
    }
    serde_json::to_string_pretty(&list(items)).unwrap()
}

/// Every source probes every destination on every port, all at once.
fn probe_all(runtime: &tokio::runtime::Runtime, netns: &BTreeMap<Pod, String>) -> Reachability {
    let observed: BTreeMap<(Pod, Pod, Port), bool> = std::thread::scope(|scope| {
        let sources: Vec<_> = pods()
            .into_iter()
            .map(|s| {
                let ns = &netns[&s];
                scope.spawn(move || {
                    in_netns(ns, || {
                        let probes = pods().into_iter().flat_map(|d| {
                            PORTS.into_iter().map(move |port| async move {
                                let to = SocketAddr::from((ip(d), port.number));
                                ((s, d, port), probe(port.protocol, to).await)
                            })
                        });
                        runtime.block_on(futures_util::future::join_all(probes))
                    })
                })
            })
            .collect();
        sources
            .into_iter()
            .flat_map(|h| h.join().expect("probe thread"))
            .collect()
    });
    Reachability::from_fn(|s, d, port| observed.get(&(s, d, port)).copied())
}

#[test]
fn every_scenario_with_real_packets_on_two_nodes() {
    let started = Instant::now();
    let mut lan = Lan::new();
    let ns1 = lan.node_netns(1);
    let ns2 = lan.node_netns(2);
    let both = nodes_yaml(&[N1, N2]);
    let encap = "trafficEncapMode: encap\n";
    let mut nodes = [
        TestNode::new("n1", &ns1, encap, &both),
        TestNode::new("n2", &ns2, encap, &both),
    ];
    // The Pods exist before their sandboxes; their addresses come with ADD.
    let lab = Cluster::new(&[]);
    for n in &mut nodes {
        n.write_cluster_file(LAB_FILE, &lab_file(&lab, false, None));
        n.start_and_wait_up();
        let socket = n.cni_socket();
        wait_until("the CNI socket", || socket.exists());
    }
    let mut netns = BTreeMap::new();
    for n in &nodes {
        netns.extend(add_lab_pods(&mut lan, n));
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let served: Vec<_> = PORTS.iter().map(|p| (p.protocol, p.number)).collect();
    for p in pods() {
        serve(&runtime, &netns[&p], &served);
    }
    let setup = started.elapsed();

    let scenarios = scenarios();
    assert!(scenarios.len() >= 25);
    let mut failures = Vec::new();
    let mut probes = 0;
    for scenario in &scenarios {
        let marks: Vec<usize> = nodes.iter().map(|n| n.policy_installs().len()).collect();
        let text = lab_file(&scenario.cluster(), true, Some(scenario));
        for n in &nodes {
            n.write_cluster_file(LAB_FILE, &text);
        }
        for (n, mark) in nodes.iter().zip(marks) {
            wait_until(&format!("{} applying {:?}", n.name, scenario.name), || {
                n.policy_installs().len() > mark
            });
        }
        let expected = scenario.expected();
        let mut last = Err(String::new());
        for _ in 0..TRIES {
            probes += 1;
            last = expected.check(&probe_all(&runtime, &netns));
            if last.is_ok() {
                break;
            }
        }
        if let Err(diff) = last {
            failures.push(format!("{}\n{diff}", scenario.name));
        }
    }
    eprintln!(
        "{} scenarios, {probes} rounds of {} probes, in {:?} after a {setup:?} setup",
        scenarios.len(),
        pods().len() * pods().len() * PORTS.len(),
        started.elapsed() - setup
    );
    assert!(
        failures.is_empty(),
        "{} scenarios mismatch:\n{}",
        failures.len(),
        failures.join("\n")
    );
    drop(runtime);
    for n in &mut nodes {
        assert!(n.stop_agent());
    }
}
