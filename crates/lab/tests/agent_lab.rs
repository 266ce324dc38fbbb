//! The lab with the real `antrea-agent` and `antrea` plugin (built by the first test, see
//! `support::build_agent_binaries`): the full connectivity matrix in every traffic mode, a
//! hitless agent restart under traffic, a restart after a change (new round, old round's flows
//! gone), flows replayed after an `ovs-vswitchd` restart, a Node leaving the cluster, and the
//! same connectivity matrix whether the agents read the cluster directory or the fake API server
//! (whose EndpointSlice controller gives the lab's Services their slices), and with the fake API
//! server the Services section of the check (every path through a ClusterIP, NodePort,
//! LoadBalancer and ETP Local Service answered by the right endpoint seeing the right source,
//! Pods resolving Service names through kube-dns over UDP and TCP), with a deleted Service
//! reported as not programmed rather than blocked.
//! Root, Linux; one lab at a time.
#![cfg(target_os = "linux")]

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};

use lab::agent::ClusterObject;
use support::{Lab, build_agent_binaries, output_of, round_of, text, wait_until};

/// Pod IPs the agent's IPAM gives on a fresh 2 × 2 lab (the first address after the gateway).
const N1_P1: &str = "10.244.1.2";

fn up_check_down(test: &str, encap: &str) {
    build_agent_binaries();
    let lab = Lab::new(test);
    lab.run_ok(&["up", "--api", "directory", "--encap", encap]);
    let status = lab.run_ok(&["status"]);
    assert!(
        status.contains("healthy") && !status.contains("NOT healthy"),
        "{status}"
    );
    let report = lab.check_all_green(64);
    let probes = report["probes"].as_array().unwrap();
    for p in probes.iter().filter(|p| p["proto"] == "tcp") {
        assert_eq!(p["answered_by"], p["to"], "{p}");
    }
    // Across Nodes the Pod's own address arrives (no NAT); towards lab-ext the Node IP (SNAT).
    let seen = |from: &str, to: &str| {
        probes
            .iter()
            .find(|p| p["from"] == from && p["to"] == to && p["proto"] == "tcp")
            .unwrap_or_else(|| panic!("no probe {from} -> {to}"))["peer_seen"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert!(seen("lab-n1-p1", "lab-n2-p2").starts_with(&format!("{N1_P1}:")));
    assert!(seen("lab-n1-p1", "lab-ext").starts_with("10.10.0.11:"));
    assert!(seen("lab-n2-p2", "lab-ext").starts_with("10.10.0.12:"));
    // The agent did the wiring: its ports are on br-int, with a tunnel only in encap mode.
    let ports = lab.vsctl("lab-n1", &["list-ports", "br-int"]);
    assert!(
        ports.contains("antrea-gw0") && ports.contains("eth0"),
        "{ports}"
    );
    assert_eq!(ports.contains("antrea-tun0"), encap != "noencap", "{ports}");
    if encap != "noencap" {
        let tunnel = lab.vsctl("lab-n1", &["get", "interface", "antrea-tun0", "type"]);
        assert_eq!(tunnel, encap);
    }
    lab.run_ok(&["down"]);
    lab.assert_gone();
}

#[test]
fn geneve_lab_with_the_agent_connects_everything_and_down_leaves_nothing() {
    up_check_down("agent-geneve", "geneve");
}

#[test]
fn vxlan_lab_with_the_agent_connects_everything_and_down_leaves_nothing() {
    up_check_down("agent-vxlan", "vxlan");
}

#[test]
fn noencap_lab_with_the_agent_connects_everything_and_down_leaves_nothing() {
    up_check_down("agent-noencap", "noencap");
}

/// The (transmitted, received) counts of a finished `ping`'s summary line.
fn ping_summary(out: &std::process::Output) -> (u64, u64) {
    let stdout = text(&out.stdout);
    let line = stdout
        .lines()
        .find(|l| l.contains("packets transmitted"))
        .unwrap_or_else(|| panic!("no ping summary: {stdout}"));
    let numbers: Vec<u64> = line
        .split(',')
        .take(2)
        .map(|part| part.split_whitespace().next().unwrap().parse().unwrap())
        .collect();
    (numbers[0], numbers[1])
}

/// The sequence numbers in `1..=sent` that `ping`'s output shows no reply for.
fn unanswered(out: &std::process::Output, sent: u64) -> Vec<u64> {
    let stdout = text(&out.stdout);
    let answered: std::collections::BTreeSet<u64> = stdout
        .lines()
        .filter_map(|l| l.split("icmp_seq=").nth(1))
        .filter_map(|rest| rest.split_whitespace().next()?.parse().ok())
        .collect();
    (1..=sent).filter(|seq| !answered.contains(seq)).collect()
}

/// Now, as the `[seconds.micros]` stamps `ping -D` prints.
fn unix_seconds() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

#[test]
fn agent_restarts_are_hitless_and_a_changed_restart_replaces_the_round() {
    build_agent_binaries();
    let lab = Lab::new("agent-restart");
    lab.run_ok(&["up", "--api", "directory"]);
    let round = lab.round("lab-n1");
    let flows = lab.flows("lab-n1");
    assert!(flows.iter().all(|f| round_of(f) == round), "{flows:#?}");

    // Traffic across Nodes, towards a Pod of lab-n1: a ping every 10 ms and a TCP stream. The
    // first packet to a new peer may be lost while the tunnel's neighbour resolves (lab-notes
    // G4), so the paths are warmed first; from then on no packet may be lost.
    // The warm-up is a readiness wait: single pings, at most 5, the number it took printed.
    for pod in ["lab-n2-p1", "lab-n2-p2"] {
        let single = || {
            let out = Command::new("ip")
                .args(["netns", "exec", pod, "ping", "-c1", "-W1", N1_P1])
                .output()
                .unwrap();
            ping_summary(&out) == (1, 1)
        };
        let tries = (1..=5)
            .find(|_| single())
            .unwrap_or_else(|| panic!("{pod} cannot reach {N1_P1}"));
        eprintln!("{pod} -> {N1_P1}: ready after {tries} single pings");
    }
    let iperf_server = Command::new("ip")
        .args([
            "netns",
            "exec",
            "lab-n1-p1",
            "iperf3",
            "-s",
            "-1",
            "-p",
            "5299",
        ])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    // TCP sockets on port 5299 in lab-n1-p1 in `state` (as `ss` names it).
    let sockets = |state: &str| {
        let filter = ["state", state, "sport", "=", ":5299"];
        let mut args = vec!["netns", "exec", "lab-n1-p1", "ss", "-Htn"];
        args.extend(filter);
        output_of("ip", &args).lines().count()
    };
    wait_until("iperf3 listening in lab-n1-p1", || sockets("listening") > 0);
    let ping = Command::new("ip")
        .args([
            "netns",
            "exec",
            "lab-n2-p1",
            "ping",
            "-D",
            "-i",
            "0.01",
            "-c",
            "400",
            // Without a deadline ping waits only 2 × the largest round trip so far for the last
            // reply, so on a loaded machine a late last reply counted as lost. With one, ping
            // waits until all 400 are answered or the deadline passes: a reply that never comes
            // still counts as lost.
            "-w",
            "30",
            N1_P1,
        ])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stream = Command::new("ip")
        .args([
            "netns",
            "exec",
            "lab-n2-p2",
            "iperf3",
            "-c",
            N1_P1,
            "-p",
            "5299",
            "-t",
            "5",
            "-b",
            "1M",
            "-J",
        ])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    // The restart starts once the stream flows: iperf3's control and data connections are up.
    wait_until("the iperf3 stream established", || {
        sockets("established") >= 2
    });
    let stopping = unix_seconds();
    lab.run_ok(&["agent", "stop", "--node", "lab-n1"]);
    let starting = unix_seconds();
    lab.run_ok(&["agent", "start", "--node", "lab-n1"]);
    let started = unix_seconds();
    let ping = ping.wait_with_output().unwrap();
    let (sent, received) = ping_summary(&ping);
    assert_eq!(
        (sent, received),
        (400, 400),
        "ping lost packets across the agent restart: no reply to icmp_seq {:?}; the stop began at \
         {stopping:.3}, the start at {starting:.3}, the agent was ready at {started:.3}; \
         replies (ping -D):\n{}",
        unanswered(&ping, sent),
        text(&ping.stdout)
    );
    let stream = stream.wait_with_output().unwrap();
    assert!(stream.status.success(), "{}", text(&stream.stdout));
    let result: serde_json::Value = serde_json::from_slice(&stream.stdout).unwrap();
    for interval in result["intervals"].as_array().unwrap() {
        assert!(
            interval["sum"]["bytes"].as_u64().unwrap() > 0,
            "the TCP stream stalled: {interval}"
        );
    }
    drop(iperf_server);

    // Nothing changed: same round, same flows, and the agent says so.
    assert_eq!(lab.round("lab-n1"), round);
    assert_eq!(lab.flows("lab-n1"), flows);
    let log = lab.agent_log("lab-n1");
    assert!(
        log.contains("up: unchanged (0 OVSDB writes, 0 flow mods, 0 host changes)"),
        "{log}"
    );

    // A change while the agent is down (a Node joins the cluster): the restart installs a new
    // round and nothing of the old round is left.
    lab.run_ok(&["agent", "stop", "--node", "lab-n1"]);
    let joined = lab::agent::NodeObject::new(
        "lab-n9",
        "10.244.9.0/24",
        "10.10.0.19".parse().unwrap(),
        "02:00:0a:0a:00:13",
    );
    lab::agent::write_object(&lab.path("cluster"), &joined.file_name(), &joined).unwrap();
    lab.run_ok(&["agent", "start", "--node", "lab-n1"]);
    assert_eq!(lab.round("lab-n1"), round + 1);
    let changed = lab.flows("lab-n1");
    assert!(
        changed.iter().all(|f| round_of(f) == round + 1),
        "{changed:#?}"
    );
    assert!(
        changed.iter().any(|f| f.contains("10.244.9.0/24")),
        "{changed:#?}"
    );
    lab.check_all_green(64);

    // ovs-vswitchd restarts: the agent puts back exactly the flows it had.
    let restart: serde_json::Value =
        serde_json::from_str(&lab.run_ok(&["ovs-restart", "--node", "lab-n1", "--json"])).unwrap();
    assert_eq!(restart["flows"], changed.len(), "{restart}");
    assert_eq!(lab.flows("lab-n1"), changed);
    // The restart bounces antrea-gw0's tap, which flushes the host's neighbours on it. To answer
    // a Pod's ping to the Node IP the host resolves the Pod again with the Node IP as ARP sender,
    // and the Pod's reply must reach the gateway: the first ping is answered.
    output_of(
        "ip",
        &[
            "netns",
            "exec",
            "lab-n1-p1",
            "ping",
            "-c1",
            "-W2",
            "10.10.0.11",
        ],
    );
    lab.check_all_green(64);

    // ovsdb-server crashes (kill -9) and is started again: once ovs-vswitchd has reconnected
    // no flow or port is lost (ovsdb-restart checks both), the agent rode it out as the same
    // process, and everything connects again.
    let agent_pid = || fs::read_to_string(lab.path("lab-n1/antrea-agent.pid")).unwrap();
    let pid_before = agent_pid();
    let restart: serde_json::Value =
        serde_json::from_str(&lab.run_ok(&["ovsdb-restart", "--node", "lab-n1", "--json"]))
            .unwrap();
    assert_eq!(restart["flows"], changed.len(), "{restart}");
    assert_eq!(lab.flows("lab-n1"), changed);
    assert_eq!(agent_pid(), pid_before);
    let pid: i32 = pid_before.trim().parse().unwrap();
    assert!(
        Path::new(&format!("/proc/{pid}")).exists(),
        "the agent exited when ovsdb-server went away: {}",
        lab.agent_log("lab-n1")
    );
    lab.check_all_green(64);

    lab.run_ok(&["down"]);
    lab.assert_gone();
}

#[test]
fn a_node_removed_from_the_cluster_loses_its_routes_and_flows_and_nothing_else() {
    build_agent_binaries();
    let lab = Lab::new("agent-node-removed");
    lab.run_ok(&["up", "--api", "directory"]);
    let (flows, routes) = (lab.flows("lab-n1"), lab.routes("lab-n1"));
    fs::remove_file(lab.path("cluster/node-lab-n2.yaml")).unwrap();
    // The agent logs a reconciliation once all of it is done: flows, then routes.
    wait_until("lab-n1 removing lab-n2", || {
        let log = lab.agent_log("lab-n1");
        log.contains("peer lab-n2: flows removed") && log.contains("route to 10.244.2.0/24 deleted")
    });
    let (flows_after, routes_after) = (lab.flows("lab-n1"), lab.routes("lab-n1"));

    let expected_routes: Vec<String> = routes
        .iter()
        .filter(|r| !r.starts_with("10.244.2.0/24 "))
        .cloned()
        .collect();
    assert_eq!(routes_after, expected_routes);
    let before: BTreeSet<&String> = flows.iter().collect();
    let after: BTreeSet<&String> = flows_after.iter().collect();
    assert!(
        after.is_subset(&before),
        "flows added: {:#?}",
        after.difference(&before)
    );
    let removed: Vec<&&String> = before.difference(&after).collect();
    assert!(!removed.is_empty());
    for flow in &removed {
        assert!(
            [
                "10.244.2.",
                "10.10.0.12",
                "02:00:0a:0a:00:0c",
                "02:00:0a:f4:02:01"
            ]
            .iter()
            .any(|n2| flow.contains(n2)),
            "a flow not about lab-n2 was removed: {flow}"
        );
    }
    // lab-n1 itself still works: its Pods reach the outside.
    let out = Command::new("ip")
        .args([
            "netns",
            "exec",
            "lab-n1-p1",
            "ping",
            "-c1",
            "-W2",
            "10.10.0.100",
        ])
        .output()
        .unwrap();
    assert_eq!(ping_summary(&out), (1, 1), "{}", text(&out.stdout));
    lab.run_ok(&["down"]);
    lab.assert_gone();
}

/// The paths of the connectivity matrix (the rest go through Services).
const CONNECTIVITY_PATHS: [&str; 5] = [
    "pod-pod-same-node",
    "pod-pod-cross-node",
    "node-pod",
    "pod-node",
    "pod-external",
];

/// Probes of a 2 × 2 lab: 64 in the connectivity matrix, and with the fake API server 25
/// through the Services.
const CONNECTIVITY_PROBES: u64 = 64;
const SERVICE_PROBES: u64 = 25;

/// What a `check --json` report says about each connectivity probe, without what differs
/// between two runs of the same lab (source ports, attempts, timings, retry details).
fn matrix(report: &serde_json::Value) -> BTreeSet<String> {
    report["probes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| CONNECTIVITY_PATHS.contains(&p["path"].as_str().unwrap()))
        .map(|p| {
            let peer_ip = p["peer_seen"]
                .as_str()
                .map(|peer| peer.split(':').next().unwrap().to_owned());
            format!(
                "{} -> {} ({}) {} {} peer-check={} ok={} answered_by={} peer_ip={peer_ip:?}",
                p["from"],
                p["to"],
                p["to_ip"],
                p["path"],
                p["proto"],
                p["peer"],
                p["ok"],
                p["answered_by"]
            )
        })
        .collect()
}

/// GET `path` from the lab's fake API server (over its Unix socket), as JSON.
fn api_get(lab: &Lab, path: &str) -> serde_json::Value {
    let response = lab::host::http::request(&lab.path("api/apiserver.sock"), "GET", path, None)
        .unwrap_or_else(|e| panic!("GET {path}: {e}"));
    assert_eq!(response.status, 200, "GET {path}: {}", response.text());
    serde_json::from_slice(&response.body).unwrap()
}

#[test]
fn the_fake_api_server_gives_the_same_connectivity_matrix_as_the_cluster_directory() {
    build_agent_binaries();
    let directory = {
        let lab = Lab::new("api-directory");
        lab.run_ok(&["up", "--api", "directory"]);
        let report = lab.check_all_green(64);
        assert!(lab.path("cluster/node-lab-n1.yaml").is_file());
        assert!(!lab.path("api").exists());
        lab.run_ok(&["down"]);
        lab.assert_gone();
        matrix(&report)
    };

    let lab = Lab::new("api-fake");
    lab.run_ok(&["up", "--api", "fake"]);
    let status = lab.run_ok(&["status"]);
    assert!(
        status.contains("api fake")
            && status.contains("api/apiserver.pid")
            && !status.contains("NOT healthy"),
        "{status}"
    );
    let report = lab.check_all_green(CONNECTIVITY_PROBES + SERVICE_PROBES);
    assert_eq!(matrix(&report), directory);

    // The agents could only have used the API: there is no cluster directory, and they were
    // started with the kubeconfig of the server at 10.10.0.2.
    assert!(!lab.path("cluster").exists());
    let kubeconfig = fs::read_to_string(lab.path("api/kubeconfig")).unwrap();
    assert!(
        kubeconfig.contains("server: http://10.10.0.2:6443"),
        "{kubeconfig}"
    );
    // Each agent listed and watched the Nodes from its own Node IP, over the LAN, and patched
    // its Node: encap mode carries the transport address and no MAC (the lab created it with one).
    let log = fs::read_to_string(lab.path("api/apiserver.log")).unwrap();
    for (node, node_ip) in [("lab-n1", "10.10.0.11"), ("lab-n2", "10.10.0.12")] {
        let from_node: Vec<&str> = log
            .lines()
            .filter(|l| l.contains(&format!("peer={node_ip}:")))
            .collect();
        for wanted in [
            "path=/api/v1/nodes query=".to_owned(),
            "watch opened".to_owned(),
            format!("method=PATCH path=/api/v1/nodes/{node} "),
        ] {
            assert!(
                from_node.iter().any(|l| l.contains(&wanted)),
                "no `{wanted}` from {node_ip} in the fake API server's log:\n{log}"
            );
        }
        let object = api_get(&lab, &format!("/api/v1/nodes/{node}"));
        let annotations = &object["metadata"]["annotations"];
        assert_eq!(
            annotations["node.antrea.io/transport-addresses"], node_ip,
            "{object:#}"
        );
        assert!(
            annotations.get("node.antrea.io/mac-address").is_none(),
            "{object:#}"
        );
    }
    // The lab created every Pod there, with the address the plugin gave it.
    let pods = api_get(&lab, "/api/v1/namespaces/default/pods");
    let in_api: BTreeMap<String, String> = pods["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["metadata"]["name"].as_str().unwrap().to_owned(),
                p["status"]["podIP"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let probed: BTreeMap<String, String> = report["probes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["to"].as_str().unwrap().contains("-p"))
        .map(|p| {
            (
                p["to"].as_str().unwrap().to_owned(),
                p["to_ip"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(in_api, probed);

    // The lab's ClusterIP Service selects Pod 1 of each Node; the server's EndpointSlice
    // controller made its one slice: their addresses, Ready, on the Pods' named `serve` port.
    let service = api_get(&lab, "/api/v1/namespaces/default/services/lab-web");
    assert_eq!(service["spec"]["clusterIP"], "10.96.0.20", "{service:#}");
    let slices = api_get(
        &lab,
        "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3Dlab-web",
    );
    let items = slices["items"].as_array().unwrap();
    assert_eq!(items.len(), 1, "{slices:#}");
    let slice = &items[0];
    assert_eq!(
        slice["metadata"]["labels"]["endpointslice.kubernetes.io/managed-by"],
        "endpointslice-controller.k8s.io",
        "{slice:#}"
    );
    assert_eq!(
        slice["ports"],
        serde_json::json!([{"name": "http", "port": 8080, "protocol": "TCP"}]),
        "{slice:#}"
    );
    let endpoints: BTreeMap<String, (String, bool)> = slice["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["targetRef"]["name"].as_str().unwrap().to_owned(),
                (
                    e["addresses"][0].as_str().unwrap().to_owned(),
                    e["conditions"]["ready"] == true,
                ),
            )
        })
        .collect();
    let backends: BTreeMap<String, (String, bool)> = ["lab-n1-p1", "lab-n2-p1"]
        .into_iter()
        .map(|pod| (pod.to_owned(), (in_api[pod].clone(), true)))
        .collect();
    assert_eq!(endpoints, backends);

    // The state remembers the mode: a restarted agent reads the API server again (it asks for
    // its Node before it gets ready) and everything still connects.
    let node_gets = || {
        fs::read_to_string(lab.path("api/apiserver.log"))
            .unwrap()
            .lines()
            .filter(|l| {
                l.contains("peer=10.10.0.11:")
                    && l.contains("method=GET path=/api/v1/nodes/lab-n1 query=")
            })
            .count()
    };
    let before = node_gets();
    lab.run_ok(&["agent", "stop", "--node", "lab-n1"]);
    lab.run_ok(&["agent", "start", "--node", "lab-n1"]);
    assert!(node_gets() > before);
    assert!(!lab.path("cluster").exists());
    lab.check_all_green(CONNECTIVITY_PROBES + SERVICE_PROBES);
    lab.run_ok(&["down"]);
    lab.assert_gone();
}

/// The `/etc/netns/lab-*` directories (a lab namespace's own resolv.conf).
fn netns_etc_dirs() -> Vec<String> {
    fs::read_dir("/etc/netns")
        .map(|dir| {
            dir.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("lab-"))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn services_answer_from_the_right_endpoint_on_every_path_and_pods_resolve_them_through_kube_dns() {
    build_agent_binaries();
    let lab = Lab::new("services");
    // Plain `up`: with agent wiring the lab's default is the fake API server, with Services.
    lab.run_ok(&["up"]);
    let status = lab.run_ok(&["status"]);
    assert!(status.contains("api fake"), "{status}");
    let report = lab.check_all_green(CONNECTIVITY_PROBES + SERVICE_PROBES);
    let probes = report["probes"].as_array().unwrap();
    let services: Vec<&serde_json::Value> = probes
        .iter()
        .filter(|p| !CONNECTIVITY_PATHS.contains(&p["path"].as_str().unwrap()))
        .collect();
    let per_path = |path: &str| services.iter().filter(|p| p["path"] == path).count();
    assert_eq!(
        [
            per_path("pod-cluster-ip-same-node"),
            per_path("pod-cluster-ip-cross-node"),
            per_path("pod-cluster-ip-hairpin"),
            per_path("node-cluster-ip"),
            per_path("external-node-port"),
            per_path("external-node-port-local"),
            per_path("external-load-balancer"),
            per_path("pod-dns"),
        ],
        [2, 4, 2, 4, 2, 2, 1, 8]
    );
    // Every Service probe passed, answered by the endpoint its Service must reach.
    for p in &services {
        assert_eq!(p["verdict"], "passed", "{p:#}");
        assert_eq!(p["answered_by"], p["answerer"], "{p:#}");
    }
    let seen = |from: &str, to: &str, proto: &str| {
        let p = services
            .iter()
            .find(|p| p["from"] == from && p["to"] == to && p["proto"] == proto)
            .unwrap_or_else(|| panic!("no probe {from} -> {to} {proto}"));
        (
            p["answered_by"].as_str().unwrap().to_owned(),
            p["peer_seen"]
                .as_str()
                .unwrap()
                .split(':')
                .next()
                .unwrap()
                .to_owned(),
        )
    };
    let pod_ip = |name: &str| {
        probes.iter().find(|p| p["to"] == name).unwrap()["to_ip"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    // Same Node and across Nodes the endpoint sees the client Pod; a Pod reaching itself sees
    // its gateway (hairpin); the Node's own traffic leaves from its gateway (proxyAll).
    assert_eq!(
        seen("lab-n1-p2", "lab-local-n1", "tcp"),
        ("lab-n1-p1".into(), pod_ip("lab-n1-p2"))
    );
    assert_eq!(
        seen("lab-n1-p2", "lab-local-n2", "tcp"),
        ("lab-n2-p1".into(), pod_ip("lab-n1-p2"))
    );
    assert_eq!(
        seen("lab-n2-p1", "lab-local-n2", "tcp"),
        ("lab-n2-p1".into(), "10.244.2.1".into())
    );
    assert_eq!(
        seen("lab-n1", "lab-local-n2", "tcp"),
        ("lab-n2-p1".into(), "10.244.1.1".into())
    );
    // From outside: a NodePort under Cluster is NATed to the gateway of the Node it entered,
    // also when its endpoint is on the other Node; under Local each Node's own endpoint answers
    // and sees the client; the load-balancer IP, routed to lab-n1, reaches lab-n2's endpoint.
    assert_eq!(
        seen("lab-ext", "lab-nodeport@lab-n2", "tcp"),
        ("lab-n1-p1".into(), "10.244.2.1".into())
    );
    assert_eq!(
        seen("lab-ext", "lab-etp-local@lab-n1", "tcp"),
        ("lab-n1-p1".into(), "10.10.0.100".into())
    );
    assert_eq!(
        seen("lab-ext", "lab-etp-local@lab-n2", "tcp"),
        ("lab-n2-p1".into(), "10.10.0.100".into())
    );
    assert_eq!(
        seen("lab-ext", "lab-lb", "tcp"),
        ("lab-n2-p1".into(), "10.244.1.1".into())
    );
    // Each Pod resolved lab-local-n1 over UDP and over TCP and reached lab-n1-p1 at the answer.
    for pod in ["lab-n1-p2", "lab-n2-p1", "lab-n2-p2"] {
        for proto in ["dnsudp", "dnstcp"] {
            assert_eq!(
                seen(pod, "lab-local-n1", proto),
                ("lab-n1-p1".into(), pod_ip(pod))
            );
        }
    }
    // Every frontend the probes needed was seen installed before they ran.
    let programmed = report["programmed"].as_array().unwrap();
    assert!(!programmed.is_empty());
    for f in programmed {
        assert_eq!(f["state"], "installed", "{f:#}");
    }
    // The Pods resolved with the DNS settings of their CNI result, and the DNS answerer (in
    // lab-n2-p2, behind kube-dns) saw each query over its transport from the Pod itself (its
    // own from its gateway: hairpin).
    let resolv_conf = fs::read_to_string("/etc/netns/lab-n1-p2/resolv.conf").unwrap();
    assert!(
        resolv_conf.contains("nameserver 10.96.0.10\n")
            && resolv_conf
                .contains("search default.svc.cluster.local svc.cluster.local cluster.local\n"),
        "{resolv_conf}"
    );
    let dns_log = fs::read_to_string(lab.path("dns/dns.log")).unwrap();
    for (pod, source) in [
        ("lab-n1-p1", pod_ip("lab-n1-p1")),
        ("lab-n1-p2", pod_ip("lab-n1-p2")),
        ("lab-n2-p1", pod_ip("lab-n2-p1")),
        ("lab-n2-p2", "10.244.2.1".to_owned()),
    ] {
        for transport in ["udp", "tcp"] {
            let wanted = format!("query over {transport} from {source}:");
            assert!(
                dns_log.lines().any(|l| l.starts_with(&wanted)
                    && l.contains("lab-local-n1.default.svc.cluster.local type 1 class 1 -> rcode 0, 1 answers")),
                "no {transport} query of {pod} from {source}:\n{dns_log}"
            );
        }
    }
    let text = lab.run_ok(&["check"]);
    assert!(text.contains("\nServices:\n"), "{text}");

    // A Service whose frontends are gone is not programmed, not blocked: its probes do not
    // run, the others pass, and the check fails saying so.
    let deleted = lab::host::http::request(
        &lab.path("api/apiserver.sock"),
        "DELETE",
        "/api/v1/namespaces/default/services/lab-local-n2",
        None,
    )
    .unwrap();
    assert_eq!(deleted.status, 200, "{}", deleted.text());
    wait_until("lab-local-n2's flows gone on both Nodes", || {
        ["lab-n1", "lab-n2"].iter().all(|node| {
            !lab.flows(node)
                .iter()
                .any(|f| f.contains("nw_dst=10.96.1.2,"))
        })
    });
    let out = lab.run(&["check", "--json", "--programmed-timeout", "2"]);
    assert!(!out.status.success());
    let broken: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let not_programmed: BTreeSet<String> = broken["probes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["verdict"] == "not-programmed")
        .map(|p| {
            format!(
                "{} -> {}",
                p["from"].as_str().unwrap(),
                p["to"].as_str().unwrap()
            )
        })
        .collect();
    let expected: BTreeSet<String> = [
        "lab-n1-p1",
        "lab-n1-p2",
        "lab-n2-p1",
        "lab-n2-p2",
        "lab-n1",
        "lab-n2",
    ]
    .iter()
    .map(|from| format!("{from} -> lab-local-n2"))
    .collect();
    assert_eq!(not_programmed, expected);
    let summary = &broken["summary"];
    assert_eq!(
        (
            summary["not_programmed"].as_u64(),
            summary["failed"].as_u64(),
            summary["could_not_run"].as_u64(),
            summary["flaky"].as_u64()
        ),
        (Some(6), Some(0), Some(0), Some(0)),
        "{summary}"
    );
    lab.run_ok(&["down"]);
    lab.assert_gone();
    assert_eq!(netns_etc_dirs(), Vec::<String>::new());
}

/// A NetworkPolicy the lab's kubectl applies: Pod lab-n2-p2 admits only the first Pod of each
/// Node (lab-n1-p1, lab-n2-p1).
const ONLY_FIRST_PODS_TO_N2_P2: &str = "apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: only-first-pods
  namespace: default
spec:
  podSelector:
    matchLabels:
      antrea-lab/pod: lab-n2-p2
  policyTypes: [Ingress]
  ingress:
  - from:
    - podSelector:
        matchLabels:
          antrea-lab/first-on-node: \"true\"
";

/// How many NetworkPolicy installs `node`'s agent has logged.
fn policy_installs(lab: &Lab, node: &str) -> usize {
    lab.agent_log(node)
        .lines()
        .filter(|l| l.contains("NetworkPolicy: ") && l.contains(" flow mods"))
        .count()
}

/// Applies [`ONLY_FIRST_PODS_TO_N2_P2`] with the lab's kubectl, waits until lab-n2's agent has
/// installed a NetworkPolicy change after it, and returns the connectivity matrix of a check
/// without readiness retries (the lab answered every probe just before).
fn matrix_with_the_policy(lab: &Lab) -> BTreeSet<String> {
    lab.check_all_green(CONNECTIVITY_PROBES + SERVICE_PROBES);
    let before = policy_installs(lab, "lab-n2");
    let manifest = lab.scratch().join("policy.yaml");
    fs::write(&manifest, ONLY_FIRST_PODS_TO_N2_P2).unwrap();
    lab.run_ok(&["kubectl", "apply", "-f", manifest.to_str().unwrap()]);
    wait_until("lab-n2's agent installing the policy", || {
        policy_installs(lab, "lab-n2") > before
    });
    // The switch's datapath flow cache follows its tables asynchronously: until it has, a
    // connection like one of the check before may still match a cached flow.
    let control = fs::read_dir(lab.path("lab-n2/run"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.starts_with("ovs-vswitchd.") && name.ends_with(".ctl")
        })
        .expect("lab-n2's ovs-vswitchd control socket");
    output_of(
        "ovs-appctl",
        &["--target", control.to_str().unwrap(), "revalidator/wait"],
    );
    let out = lab.run(&["check", "--json", "--readiness-attempts", "0"]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", text(&out.stdout), text(&out.stderr)));
    let matrix = matrix(&report);
    let tcp_to_p2 = |from: &str| {
        report["probes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["from"] == from && p["to"] == "lab-n2-p2" && p["proto"] == "tcp")
            .unwrap_or_else(|| panic!("no TCP probe {from} -> lab-n2-p2: {report:#}"))["ok"]
            .clone()
    };
    assert_eq!(tcp_to_p2("lab-n1-p1"), true, "{report:#}");
    assert_eq!(tcp_to_p2("lab-n1-p2"), false, "{report:#}");
    assert_eq!(tcp_to_p2("lab-n2-p1"), true, "{report:#}");
    matrix
}

#[test]
fn a_policy_applied_with_kubectl_behaves_the_same_with_antrea_controller() {
    build_agent_binaries();
    let standalone = {
        let lab = Lab::new("policy-standalone");
        lab.run_ok(&["up", "--api", "fake"]);
        let matrix = matrix_with_the_policy(&lab);
        lab.run_ok(&["down"]);
        lab.assert_gone();
        matrix
    };

    let lab = Lab::new("policy-controller");
    lab.run_ok(&["up", "--api", "fake", "--controller"]);
    let status = lab.run_ok(&["status"]);
    assert!(!status.contains("NOT healthy"), "{status}");
    assert_eq!(matrix_with_the_policy(&lab), standalone);

    // The policy came from the controller, to lab-n2 only: the agents watch no
    // NetworkPolicy themselves, and only lab-n2's kept view holds it.
    let api_log = fs::read_to_string(lab.path("api/apiserver.log")).unwrap();
    for node_ip in ["10.10.0.11", "10.10.0.12"] {
        assert!(
            !api_log
                .lines()
                .any(|l| l.contains(&format!("peer={node_ip}:")) && l.contains("networkpolicies")),
            "an agent read NetworkPolicies itself:\n{api_log}"
        );
    }
    let kept = |node: &str| {
        fs::read_to_string(lab.path(&format!("{node}/policy-state.json"))).unwrap_or_default()
    };
    assert!(
        kept("lab-n2").contains("only-first-pods"),
        "{}",
        kept("lab-n2")
    );
    assert!(
        !kept("lab-n1").contains("only-first-pods"),
        "{}",
        kept("lab-n1")
    );
    let controller_log = fs::read_to_string(lab.path("controller/antrea-controller.log")).unwrap();
    assert!(controller_log.contains("lab-ctl leads"), "{controller_log}");

    // An agent restarted while the controller is down comes back enforcing the kept view.
    lab.run_ok(&["agent", "stop", "--node", "lab-n2"]);
    let pid: i32 = fs::read_to_string(lab.path("controller/antrea-controller.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    lab.run_ok(&["agent", "start", "--node", "lab-n2"]);
    let out = lab.run(&["check", "--json", "--readiness-attempts", "0"]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(matrix(&report), standalone);
    lab.run_ok(&["down"]);
    lab.assert_gone();
}
