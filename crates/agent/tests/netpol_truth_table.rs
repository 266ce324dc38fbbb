//! NetworkPolicy truth tables with real packets: the `truthtable` lab on two Nodes running the
//! real agent (Namespaces x and y on n1, z on n2, Geneve between them), its nine Pods added
//! through the real `antrea` plugin, each serving TCP and UDP on ports 80 and 81. For every
//! scenario (policies created, updated and deleted, Pod and Namespace labels changed) the
//! cluster file of both Nodes is rewritten, both agents are seen applying it (and both switches
//! revalidating their datapath flow caches against it), and every source
//! Pod probes every destination on every port at once, judged by `truthtable::judge`: a denied
//! cell that connects even once fails, as does a probe that could not run; only allowed cells
//! that were blocked are probed again (at most [`REPROBES`] more rounds), and the number that
//! needed it is printed. Probes from a namespace that does not exist show that a probe that
//! could not run is never taken for a blocked one.
#![cfg(target_os = "linux")]

mod support;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Instant;

use support::podnet::{add_lab_pods, probe, probe_cells, serve, try_in_netns};
use support::{Lan, TestNode, nodes_yaml, run, wait_until};
use truthtable::model::{list, pods};
use truthtable::{Cluster, Observation, PORTS, Pod, Protocol, Scenario, judge, scenarios};

const N1: (&str, &str, &str) = ("n1", "10.10.0.11", "10.244.1.0/24");
const N2: (&str, &str, &str) = ("n2", "10.10.0.12", "10.244.2.0/24");
/// How many more rounds an allowed cell that was blocked is probed in before it fails.
const REPROBES: usize = 4;
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

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn a_probe_tells_connected_from_blocked_from_could_not_run() {
    let mut lan = Lan::new();
    let here = lan.pod_netns("probes");
    run(&["ip", "-n", &here, "link", "set", "lo", "up"]);
    let runtime = runtime();
    serve(&runtime, &here, &[(Protocol::Tcp, 80), (Protocol::Udp, 80)]);
    let at = |port: u16| SocketAddr::from((std::net::Ipv4Addr::LOCALHOST, port));
    let from = |ns: &str, protocol: Protocol, port: u16| {
        try_in_netns(ns, || runtime.block_on(probe(protocol, at(port))))
    };
    assert_eq!(from(&here, Protocol::Tcp, 80), Ok(Observation::Connected));
    assert_eq!(from(&here, Protocol::Udp, 80), Ok(Observation::Connected));
    let refused = from(&here, Protocol::Tcp, 81).unwrap();
    assert!(
        matches!(&refused, Observation::Blocked(how) if how.contains("refused")),
        "TCP to a closed port: {refused}"
    );
    // An unconnected UDP socket hears no port-unreachable: the echo never comes.
    let silent = from(&here, Protocol::Udp, 81).unwrap();
    assert!(
        matches!(&silent, Observation::Blocked(how) if how.contains("no echo")),
        "UDP to a closed port: {silent}"
    );

    // From a namespace that does not exist every cell could not run, denied cells included,
    // and none is re-probed: the table fails naming the reason, never as "blocked".
    let gone = format!("{}-gone", lan.id);
    let netns: BTreeMap<Pod, String> = pods().into_iter().map(|p| (p, gone.clone())).collect();
    let scenario = &scenarios()[1];
    let verdict = judge(&scenario.expected(), REPROBES, |cells| {
        probe_cells(&runtime, &netns, cells)
    });
    assert_eq!(verdict.rounds, 1);
    assert_eq!(
        verdict.failures.len(),
        pods().len() * pods().len() * PORTS.len()
    );
    assert!(
        verdict
            .failures
            .iter()
            .all(|f| f.contains("could not run in round 1: open /var/run/netns/")),
        "{:#?}",
        verdict.failures
    );
    assert!(
        verdict
            .failures
            .iter()
            .any(|f| f.contains("expected denied, the probe could not run")),
        "scenario {:?} denies a cell",
        scenario.name
    );
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
    let runtime = runtime();
    let served: Vec<_> = PORTS.iter().map(|p| (p.protocol, p.number)).collect();
    for p in pods() {
        serve(&runtime, &netns[&p], &served);
    }
    let setup = started.elapsed();

    let scenarios = scenarios();
    assert!(scenarios.len() >= 25);
    let mut failures = Vec::new();
    let (mut probes, mut rounds, mut reprobed_cells) = (0, 0, 0);
    let mut reprobed = Vec::new();
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
            // The install is in the switch's tables; its datapath flow cache follows them
            // asynchronously, and until it has, traffic seen before may still match a cached
            // flow of the previous policy (a denied cell then connects once).
            n.ovs
                .appctl(&["revalidator/wait"])
                .unwrap_or_else(|e| panic!("{}: revalidator/wait: {e}", n.name));
        }
        let verdict = judge(&scenario.expected(), REPROBES, |cells| {
            probe_cells(&runtime, &netns, cells)
        });
        probes += verdict.probes;
        rounds += verdict.rounds;
        reprobed_cells += verdict.reprobed.len();
        if !verdict.reprobed.is_empty() {
            reprobed.push(format!("{}: {}", scenario.name, verdict.reprobe_summary()));
        }
        if let Err(diff) = verdict.result() {
            failures.push(format!("{}\n{diff}", scenario.name));
        }
    }
    eprintln!(
        "{} scenarios, {probes} probes in {rounds} rounds, in {:?} after a {setup:?} setup; {} \
         allowed cells needed a re-probe{}",
        scenarios.len(),
        started.elapsed() - setup,
        reprobed_cells,
        reprobed
            .iter()
            .map(|r| format!("\n{r}"))
            .collect::<String>()
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
