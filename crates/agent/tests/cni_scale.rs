//! Pods at scale through the real `antrea` plugin into a running agent on one Node: 20
//! concurrent ADDs, each Pod answering its first ping the moment ADD returns; the agent killed
//! with SIGKILL in the middle of a burst and the runtime's retries and DELs leaving exactly the
//! expected Pods; ADD/DEL cycles that leave the Node as it was; the start-up collection of
//! addresses held by containers that no longer exist; DNS in the ADD result.
#![cfg(target_os = "linux")]

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use model::PodKey;
use pipeline::Owner;
use pipeline::cookie::CATEGORY_MASK;
use pipeline::owners::POD;
use serde_json::{Value, json};
use support::{Lan, TestNode, nodes_yaml, pods_yaml, run, succeeds, wait_until};

const N1: (&str, &str, &str) = ("n1", "10.10.0.11", "10.244.1.0/24");
const GATEWAY: &str = "10.244.1.1";

/// ADD/DEL cycles in CI; `ANTREA_CNI_CYCLES` asks for more (the long mode runs 1,000).
const CI_CYCLES: usize = 200;

/// Exactly one echo request, answered: the Pod network was there when the packet left.
fn first_ping(netns: &str, target: &str) -> bool {
    succeeds(&["ip", "netns", "exec", netns, "ping", "-c1", "-W5", target])
}

fn address(result: &Value) -> String {
    result["ips"][0]["address"]
        .as_str()
        .unwrap_or_else(|| panic!("no address in {result}"))
        .split('/')
        .next()
        .unwrap()
        .to_owned()
}

/// Starts the agent of `node` and waits until its run `n` serves CNI.
fn up(node: &mut TestNode) -> u32 {
    node.start_and_wait_up();
    let run = node.runs();
    wait_until("the CNI server", || node.cni_listening(run));
    run
}

/// What a Node holds for its Pods, read with the operator's tools.
#[derive(Debug, Clone, PartialEq, Eq)]
struct PodState {
    /// host-local address files: address → container ID holding it.
    addresses: BTreeMap<String, String>,
    /// OVS ports with `external_ids:antrea-type=container`.
    ports: BTreeSet<String>,
    /// veths in the Node namespace other than the NIC (the Pods' host ends).
    veths: BTreeSet<String>,
    /// Flows whose cookie says "Pod", counted per owner id (the cookie's low 32 bits).
    pod_flows: BTreeMap<u32, usize>,
}

impl PodState {
    fn read(node: &TestNode) -> PodState {
        let mut addresses = BTreeMap::new();
        if let Ok(dir) = std::fs::read_dir(node.ipam_dir().join("antrea")) {
            for entry in dir.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                if name.parse::<std::net::IpAddr>().is_ok() {
                    let owner = std::fs::read_to_string(entry.path()).unwrap_or_default();
                    let id = owner.split("\r\n").next().unwrap_or("").to_owned();
                    addresses.insert(name, id);
                }
            }
        }
        let ports = node
            .vsctl(&[
                "--bare",
                "--columns=name",
                "find",
                "Port",
                "external_ids:antrea-type=container",
            ])
            .split_whitespace()
            .map(str::to_owned)
            .collect();
        let veths = node
            .ip_json(&["link", "show", "type", "veth"])
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|l| l["ifname"].as_str())
            .filter(|n| *n != "eth0")
            .map(str::to_owned)
            .collect();
        let mut pod_flows = BTreeMap::new();
        for flow in node.flows() {
            let cookie = flow
                .split(',')
                .find_map(|f| f.trim().strip_prefix("cookie=0x"))
                .and_then(|c| u64::from_str_radix(c, 16).ok())
                .unwrap_or(0);
            if cookie & CATEGORY_MASK == POD.category().cookie_bits() {
                *pod_flows.entry(cookie as u32).or_default() += 1;
            }
        }
        PodState {
            addresses,
            ports,
            veths,
            pod_flows,
        }
    }

    fn counts(&self) -> String {
        format!(
            "{} address files, {} OVS container ports, {} host-side veths, {} Pod flows of {} Pods",
            self.addresses.len(),
            self.ports.len(),
            self.veths.len(),
            self.pod_flows.values().sum::<usize>(),
            self.pod_flows.len()
        )
    }

    /// Asserts the state holds exactly the Pods `(container, pod)` and nothing else.
    fn assert_exactly(&self, pods: &[(String, String)]) {
        let containers: BTreeSet<&str> = pods.iter().map(|(c, _)| c.as_str()).collect();
        let holders: BTreeSet<&str> = self.addresses.values().map(String::as_str).collect();
        assert_eq!(holders, containers, "address holders");
        assert_eq!(self.addresses.len(), pods.len(), "one address per Pod");
        let endpoints: BTreeSet<String> = pods
            .iter()
            .map(|(c, p)| hostnet::naming::endpoint_name(p, c))
            .collect();
        assert_eq!(self.ports, endpoints, "OVS container ports");
        assert_eq!(self.veths, endpoints, "host-side veths");
        let owners: BTreeSet<u32> = pods
            .iter()
            .map(|(_, p)| {
                pipeline::cookie::owner_id(
                    &Owner::new(POD, PodKey::new("default", p.as_str())).to_string(),
                )
            })
            .collect();
        assert_eq!(
            self.pod_flows.keys().copied().collect::<BTreeSet<u32>>(),
            owners,
            "Pods with flows"
        );
    }
}

fn one_node(lan: &mut Lan, pods: &[String]) -> TestNode {
    let ns = lan.node_netns(1);
    let node = TestNode::new("n1", &ns, "", &nodes_yaml(&[N1]));
    let objects: Vec<(&str, &str)> = pods.iter().map(|p| (p.as_str(), "n1")).collect();
    node.write_pods(&pods_yaml(&objects));
    node
}

#[test]
fn twenty_concurrent_adds_get_twenty_addresses_and_answer_their_first_ping() {
    let mut lan = Lan::new();
    let names: Vec<String> = (0..20).map(|i| format!("s{i}")).collect();
    let netns: Vec<String> = names.iter().map(|p| lan.pod_netns(p)).collect();
    let mut n1 = one_node(&mut lan, &names);
    up(&mut n1);
    let conf = n1.netconf(None);
    // Each runtime thread pings the gateway with one packet as soon as its ADD returns.
    let outcomes: Vec<(bool, Value, bool)> = std::thread::scope(|s| {
        let handles: Vec<_> = names
            .iter()
            .zip(&netns)
            .map(|(pod, ns)| {
                let (n1, conf) = (&n1, &conf);
                s.spawn(move || {
                    let (ok, result) = n1.cni("ADD", &format!("c-{pod}"), pod, ns, conf);
                    let pinged = ok && first_ping(ns, GATEWAY);
                    (ok, result, pinged)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (pod, (ok, result, pinged)) in names.iter().zip(&outcomes) {
        assert!(ok, "ADD {pod}: {result}");
        assert!(
            pinged,
            "{pod}: the first ping right after ADD was not answered"
        );
    }
    let addresses: BTreeSet<String> = outcomes.iter().map(|(_, r, _)| address(r)).collect();
    assert_eq!(addresses.len(), 20, "unique addresses: {addresses:?}");
    println!("20 concurrent ADDs: 20 unique addresses, 20 first pings answered");
    // Every Pod from the Node, one packet each, and Pod to Pod across the burst.
    for addr in &addresses {
        assert!(first_ping(&n1.netns, addr), "Node -> {addr}");
    }
    let last = address(&outcomes[19].1);
    assert!(first_ping(&netns[0], &last), "s0 -> s19 ({last})");
    let pods: Vec<(String, String)> = names
        .iter()
        .map(|p| (format!("c-{p}"), p.clone()))
        .collect();
    let state = PodState::read(&n1);
    println!("{}", state.counts());
    state.assert_exactly(&pods);
    assert!(n1.stop_agent());
}

#[test]
fn an_agent_killed_during_a_burst_of_adds_leaks_nothing_after_retries_and_dels() {
    let mut lan = Lan::new();
    let names: Vec<String> = (0..20).map(|i| format!("k{i}")).collect();
    let netns: Vec<String> = names.iter().map(|p| lan.pod_netns(p)).collect();
    let mut n1 = one_node(&mut lan, &names);
    up(&mut n1);
    let before = PodState::read(&n1);
    println!("before the burst: {}", before.counts());
    before.assert_exactly(&[]);
    let conf = n1.netconf(None);
    // A crash: SIGKILL while the other ADDs are in flight, sent by the thread whose ADD is the
    // third to complete, with no process to spawn and no polling between the two.
    let agent = Pid::from_raw(i32::try_from(n1.agent_pid()).unwrap());
    let done = AtomicUsize::new(0);
    let killed_after = AtomicUsize::new(0);
    let outcomes: Vec<(bool, Value)> = std::thread::scope(|s| {
        let handles: Vec<_> = names
            .iter()
            .zip(&netns)
            .map(|(pod, ns)| {
                let (n1, conf, done, killed_after) = (&n1, &conf, &done, &killed_after);
                s.spawn(move || {
                    let outcome = n1.cni("ADD", &format!("c-{pod}"), pod, ns, conf);
                    if outcome.0 && done.fetch_add(1, Ordering::SeqCst) + 1 == 3 {
                        kill(agent, Signal::SIGKILL).expect("kill the agent");
                        killed_after.store(done.load(Ordering::SeqCst), Ordering::SeqCst);
                    }
                    outcome
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    println!(
        "agent killed after {} completed ADDs",
        killed_after.load(Ordering::SeqCst)
    );
    n1.reap_agent();
    let completed: Vec<usize> = (0..20).filter(|&i| outcomes[i].0).collect();
    let failed: Vec<usize> = (0..20).filter(|&i| !outcomes[i].0).collect();
    println!(
        "{} ADDs completed, {} failed: {:?}",
        completed.len(),
        failed.len(),
        failed
            .iter()
            .map(|&i| outcomes[i].1["code"].clone())
            .collect::<Vec<_>>()
    );
    assert!(!failed.is_empty(), "the kill came after every ADD");
    // Whatever the code (11 when the socket refuses; a call cut by the kill is a transport
    // error), kubelet treats a failed ADD the same: it retries, or DELs and gives up.
    for &i in &failed {
        assert!(
            outcomes[i].1["code"].is_u64(),
            "a CNI error: {}",
            outcomes[i].1
        );
    }
    println!("right after the kill: {}", PodState::read(&n1).counts());

    let run2 = up(&mut n1);
    let restarted = PodState::read(&n1);
    println!("after the restart: {}", restarted.counts());
    assert_eq!(
        restarted.veths, restarted.ports,
        "host-side veths of ADDs cut short (no OVS port) are deleted at start-up"
    );
    println!(
        "{}",
        n1.log(run2)
            .lines()
            .find(|l| l.contains("Pods on the bridge"))
            .unwrap_or("")
    );
    // The runtime retries every other failed ADD and gives up on (DELs) the rest.
    let (retried, given_up): (Vec<usize>, Vec<usize>) = failed
        .iter()
        .partition(|&&i| failed.iter().position(|&f| f == i).unwrap() % 2 == 0);
    for &i in &retried {
        let (ok, r) = n1.cni(
            "ADD",
            &format!("c-{}", names[i]),
            &names[i],
            &netns[i],
            &conf,
        );
        assert!(ok, "retried ADD of {}: {r}", names[i]);
        assert!(
            first_ping(&netns[i], GATEWAY),
            "{} after its retry",
            names[i]
        );
    }
    for &i in &given_up {
        let (ok, r) = n1.cni(
            "DEL",
            &format!("c-{}", names[i]),
            &names[i],
            &netns[i],
            &conf,
        );
        assert!(ok, "DEL of {}: {r}", names[i]);
    }
    let alive: Vec<usize> = completed.iter().chain(&retried).copied().collect();
    let expected: Vec<(String, String)> = alive
        .iter()
        .map(|&i| (format!("c-{}", names[i]), names[i].clone()))
        .collect();
    let after = PodState::read(&n1);
    println!(
        "after {} retries and {} DELs: {} (expected {} Pods)",
        retried.len(),
        given_up.len(),
        after.counts(),
        expected.len()
    );
    after.assert_exactly(&expected);
    for &i in &alive {
        let addr = after
            .addresses
            .iter()
            .find(|(_, c)| **c == format!("c-{}", names[i]))
            .map(|(a, _)| a.clone())
            .unwrap();
        assert!(
            first_ping(&n1.netns, &addr),
            "Node -> {} ({addr})",
            names[i]
        );
    }
    for &i in &given_up {
        let links = run(&["ip", "-n", &netns[i], "-o", "link", "show"]);
        assert!(
            !links.contains("eth0"),
            "{}: Pod end left: {links}",
            names[i]
        );
    }
    assert!(n1.stop_agent());
}

#[test]
fn add_del_cycles_leave_the_node_as_it_was() {
    let cycles: usize = std::env::var("ANTREA_CNI_CYCLES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(CI_CYCLES);
    let mut lan = Lan::new();
    let names = vec!["resident".to_owned(), "cycled".to_owned()];
    let resident_ns = lan.pod_netns("resident");
    let cycled_ns = lan.pod_netns("cycled");
    let mut n1 = one_node(&mut lan, &names);
    up(&mut n1);
    let conf = n1.netconf(None);
    let (ok, resident) = n1.cni("ADD", "c-resident", "resident", &resident_ns, &conf);
    assert!(ok, "{resident}");
    let snapshot = |n: &TestNode| {
        (
            PodState::read(n),
            n.flows(),
            n.vsctl(&["list-ports", "br-int"]),
            run(&["ip", "-n", &n.netns, "-o", "link", "show"])
                .lines()
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_owned())
                .collect::<Vec<_>>(),
            run(&["ip", "-n", &cycled_ns, "-o", "link", "show"]),
        )
    };
    let before = snapshot(&n1);
    let start = Instant::now();
    for i in 0..cycles {
        let container = format!("c-cycled-{i}");
        let (ok, r) = n1.cni("ADD", &container, "cycled", &cycled_ns, &conf);
        assert!(ok, "ADD in cycle {i}: {r}");
        let (ok, r) = n1.cni("DEL", &container, "cycled", &cycled_ns, &conf);
        assert!(ok, "DEL in cycle {i}: {r}");
    }
    println!(
        "{cycles} ADD/DEL cycles in {:?} ({:?} per cycle)",
        start.elapsed(),
        start.elapsed() / cycles as u32
    );
    let after = snapshot(&n1);
    println!(
        "before: {}\nafter:  {}",
        before.0.counts(),
        after.0.counts()
    );
    assert_eq!(after.0, before.0, "address files, ports, veths, Pod flows");
    assert_eq!(after.1, before.1, "flow dump");
    assert_eq!(after.2, before.2, "OVS ports");
    assert_eq!(after.3, before.3, "Node interfaces");
    assert_eq!(after.4, before.4, "the cycled Pod's namespace");
    assert!(
        first_ping(&resident_ns, GATEWAY),
        "the resident Pod still works"
    );
    assert!(n1.stop_agent());
}

#[test]
fn a_restarted_agent_releases_addresses_of_containers_that_no_longer_exist() {
    let mut lan = Lan::new();
    let names: Vec<String> = ["ga", "gb", "gc"].map(String::from).to_vec();
    let netns: Vec<String> = names.iter().map(|p| lan.pod_netns(p)).collect();
    let mut n1 = one_node(&mut lan, &names);
    up(&mut n1);
    let conf = n1.netconf(None);
    let mut results = Vec::new();
    for (pod, ns) in names.iter().zip(&netns) {
        let (ok, r) = n1.cni("ADD", &format!("c-{pod}"), pod, ns, &conf);
        assert!(ok, "{r}");
        results.push(r);
    }
    assert_eq!(
        n1.vsctl(&[
            "get",
            "Bridge",
            "br-int",
            "external_ids:antrea-rs-ipam-stores"
        ]),
        serde_json::to_string(&json!([n1.ipam_dir().join("antrea")]).to_string()).unwrap(),
        "the store is recorded on the bridge"
    );
    assert!(n1.stop_agent());
    // While the agent is down: Pod gc is deleted from the cluster (its sandbox is gone), and an
    // ADD cut short by a crash left an address whose container never got a port.
    n1.write_pods(&pods_yaml(&[("ga", "n1"), ("gb", "n1")]));
    let ghost = n1.ipam_dir().join("antrea/10.244.1.50");
    std::fs::write(&ghost, "c-ghost\r\neth0").unwrap();
    let before = PodState::read(&n1);
    println!("before the restart: {}", before.counts());
    let run2 = up(&mut n1);
    let summary = n1
        .log(run2)
        .lines()
        .find(|l| l.contains("Pods on the bridge"))
        .unwrap_or("")
        .to_owned();
    println!("{summary}");
    assert!(
        summary.contains(
            "Pods on the bridge: 2 kept, 1 removed, 2 address(es) of gone containers released"
        ),
        "{}",
        n1.log(run2)
    );
    let after = PodState::read(&n1);
    println!("after the restart: {}", after.counts());
    after.assert_exactly(&[
        ("c-ga".to_owned(), "ga".to_owned()),
        ("c-gb".to_owned(), "gb".to_owned()),
    ]);
    assert!(!ghost.exists(), "the crashed ADD's address is released");
    for (r, ns) in results.iter().zip(&netns).take(2) {
        assert!(first_ping(ns, GATEWAY), "{ns} kept");
        assert!(first_ping(&n1.netns, &address(r)), "Node -> {}", address(r));
    }
    assert!(n1.stop_agent());
}

#[test]
fn add_results_carry_dns_from_the_conflist_and_from_the_runtime() {
    let mut lan = Lan::new();
    let names = vec!["d1".to_owned(), "d2".to_owned()];
    let d1 = lan.pod_netns("d1");
    let d2 = lan.pod_netns("d2");
    let mut n1 = one_node(&mut lan, &names);
    up(&mut n1);
    let mut conf = n1.netconf(None);
    conf["dns"] = json!({
        "nameservers": ["10.96.0.10"],
        "search": ["svc.cluster.local"],
        "options": ["ndots:5"],
    });
    let (ok, r) = n1.cni("ADD", "c-d1", "d1", &d1, &conf);
    assert!(ok, "{r}");
    assert_eq!(
        r["dns"],
        json!({"nameservers": ["10.96.0.10"], "search": ["svc.cluster.local"], "options": ["ndots:5"]})
    );
    // The runtime's `dns` capability (kubelet's cluster DNS) wins over the conflist.
    conf["runtimeConfig"] = json!({"dns": {
        "servers": ["10.0.0.53"],
        "searches": ["ns1.svc.cluster.local", "svc.cluster.local"],
        "options": ["ndots:2"],
    }});
    let (ok, r) = n1.cni("ADD", "c-d2", "d2", &d2, &conf);
    assert!(ok, "{r}");
    assert_eq!(
        r["dns"],
        json!({
            "nameservers": ["10.0.0.53"],
            "search": ["ns1.svc.cluster.local", "svc.cluster.local"],
            "options": ["ndots:2"],
        })
    );
    assert!(n1.stop_agent());
}
