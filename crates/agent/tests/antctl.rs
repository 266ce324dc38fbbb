//! antctl's operator commands against a running agent with a real OVS: two Pods on one Node
//! through the real `antrea` plugin. `get podinterface` against the Pods' ports and interfaces
//! (ovs-vsctl, ip); `get ovsflows` against `ovs-ofctl dump-flows`, by table name and by Pod;
//! `trace-packet` from one Pod to the other ending on the other's port, and in a drop once a
//! NetworkPolicy isolates it; `supportbundle` unpacked by `tar`; `get featuregates` against
//! the configuration; `version`. Bad input (unknown Pod or table, a bad address) exits 1 with
//! one line on stderr.
#![cfg(target_os = "linux")]

mod support;

use std::collections::BTreeMap;

use pipeline::layout::TableGraph;
use support::{
    Lan, TestNode, client_and_server_yaml, no_reply, nodes_yaml, ping_all_answered, run, wait_until,
};

const N1: (&str, &str, &str) = ("n1", "10.10.0.11", "10.244.1.0/24");
const CLIENT_IP: &str = "10.244.1.2";
const SERVER_IP: &str = "10.244.1.3";

/// A policy isolating the server Pod for ingress, allowing nothing in.
const DENY_SERVER: &str = "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata:\n  name: deny-server\n  namespace: default\nspec:\n  podSelector:\n    matchLabels:\n      app: server\n  policyTypes:\n  - Ingress\n";

/// The table id of a flow line of `ovs-ofctl dump-flows` (none before the actions: table 0).
fn table_of(flow: &str) -> u8 {
    let head = flow.split("actions=").next().unwrap_or_default();
    head.split(", ")
        .find_map(|field| field.strip_prefix("table="))
        .map_or(0, |id| id.parse().unwrap_or_else(|_| panic!("{flow}")))
}

/// The flows per table as `ovs-ofctl` dumps them.
fn ofctl_flows_per_table(node: &TestNode) -> BTreeMap<u8, usize> {
    let mut counts = BTreeMap::new();
    for flow in node.flows() {
        *counts.entry(table_of(&flow)).or_default() += 1;
    }
    counts
}

/// Runs antctl expecting bad input: exit status 1 and one line on stderr containing `needle`;
/// returns that line.
fn refused(node: &TestNode, args: &[&str], needle: &str) -> String {
    let out = node.antctl_output(args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
    assert_eq!(
        stderr.lines().count(),
        1,
        "{args:?}: one line, got:\n{stderr}"
    );
    assert!(
        stderr.contains(needle),
        "{args:?}: no {needle:?} in {stderr}"
    );
    assert!(out.stdout.is_empty(), "{args:?} printed to stdout");
    stderr
}

fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[test]
fn antctl_shows_pods_flows_traces_bundles_gates_and_versions() {
    let mut lan = Lan::new();
    let ns1 = lan.node_netns(1);
    let client = lan.pod_netns("client");
    let server = lan.pod_netns("server");
    let mut n1 = TestNode::new(
        "n1",
        &ns1,
        "featureGates:\n  Egress: false\n  FlowExporter: true\n",
        &nodes_yaml(&[N1]),
    );
    n1.write_cluster_file(
        "pods.yaml",
        &client_and_server_yaml(Some((CLIENT_IP, SERVER_IP))),
    );
    let log_file = n1.dir.path().join("logs/antrea-agent.log");
    n1.add_agent_args(&["--log-file", log_file.to_str().unwrap()]);
    n1.start_and_wait_up();
    let socket = n1.cni_socket();
    wait_until("the CNI socket", || socket.exists());
    for (pod, netns, ip) in [
        ("client", &client, CLIENT_IP),
        ("server", &server, SERVER_IP),
    ] {
        let (ok, result) = n1.cni("ADD", &format!("c-{pod}"), pod, netns, &n1.netconf(None));
        assert!(ok, "ADD {pod} failed: {result}");
        assert_eq!(result["ips"][0]["address"], format!("{ip}/24"));
    }
    assert!(ping_all_answered(&client, SERVER_IP, 3), "client -> server");

    // get podinterface: each Pod's records against its port (ovs-vsctl) and its interface (ip).
    let interfaces = json(&n1.antctl(&["get", "podinterface", "-o", "json"]));
    let interfaces = interfaces.as_array().expect("a list");
    assert_eq!(interfaces.len(), 2, "{interfaces:?}");
    let mut ofports = BTreeMap::new();
    for (i, (pod, netns, ip)) in [
        ("client", &client, CLIENT_IP),
        ("server", &server, SERVER_IP),
    ]
    .into_iter()
    .enumerate()
    {
        let shown = &interfaces[i];
        assert_eq!(shown["namespace"], "default");
        assert_eq!(shown["name"], pod);
        assert_eq!(shown["container_id"], format!("c-{pod}"));
        assert_eq!(shown["ips"], serde_json::json!([ip]));
        let port = shown["interface"].as_str().unwrap();
        let ofport = shown["ofport"].as_u64().unwrap();
        assert_eq!(
            n1.vsctl(&["get", "Interface", port, "ofport"]),
            ofport.to_string()
        );
        let link = run(&["ip", "-n", netns, "-j", "link", "show", "eth0"]);
        assert_eq!(shown["mac"], json(&link)[0]["address"], "{link}");
        ofports.insert(
            pod,
            (
                ofport,
                port.to_owned(),
                shown["mac"].as_str().unwrap().to_owned(),
            ),
        );
    }
    let table = n1.antctl(&["get", "podinterfaces"]);
    println!("{table}");
    let (server_ofport, server_port, server_mac) = ofports["server"].clone();
    assert!(
        table.lines().any(|l| l.split_whitespace().eq([
            "default/server",
            "c-server",
            &server_port,
            &server_ofport.to_string(),
            SERVER_IP,
            &server_mac
        ])),
        "{table}"
    );

    // get ovsflows: every flow the switch holds, named after its table; one table by name;
    // the server's flows.
    let graph = TableGraph::standard();
    let flows = json(&n1.antctl(&["get", "ovsflows", "-o", "json"]));
    let flows = flows["flows"].as_array().expect("flows");
    let mut shown_per_table = BTreeMap::new();
    for flow in flows {
        let id = flow["table_id"].as_u64().unwrap() as u8;
        let text = flow["flow"].as_str().unwrap();
        assert_eq!(table_of(text), id, "{text}");
        assert_eq!(
            flow["table"].as_str(),
            graph.table(id).map(|t| t.name()),
            "{flow}"
        );
        *shown_per_table.entry(id).or_insert(0usize) += 1;
    }
    assert_eq!(shown_per_table, ofctl_flows_per_table(&n1));
    let spoof_guard = graph
        .tables()
        .find(|(_, t)| t.name() == "SpoofGuard")
        .map(|(id, _)| id)
        .unwrap();
    let text = n1.antctl(&["get", "ovsflows", "--table", "SpoofGuard"]);
    let ofctl_spoof_guard = ofctl_flows_per_table(&n1)[&spoof_guard];
    assert_eq!(text.lines().count(), ofctl_spoof_guard, "{text}");
    let label = format!("SpoofGuard({spoof_guard})  ");
    assert!(text.lines().all(|l| l.starts_with(&label)), "{text}");
    let of_server = n1.antctl(&["get", "ovsflows", "--pod", "default/server"]);
    println!("{of_server}");
    let in_port = format!("in_port={server_ofport}");
    let to_server = format!("nw_dst={SERVER_IP}");
    assert!(
        of_server.lines().any(|l| l.contains(&in_port)),
        "{of_server}"
    );
    assert!(
        of_server.lines().any(|l| l.contains(&to_server)),
        "{of_server}"
    );
    let client_ofport = ofports["client"].0;
    assert!(
        !of_server.contains(&format!("in_port={client_ofport},")),
        "a client flow among the server's:\n{of_server}"
    );
    let both = n1.antctl(&[
        "get",
        "ovsflows",
        "--pod",
        "default/server",
        "--table",
        "SpoofGuard",
    ]);
    assert!(
        !both.is_empty()
            && both
                .lines()
                .all(|l| l.starts_with(&label) && l.contains(&in_port)),
        "{both}"
    );
    let names = refused(
        &n1,
        &["get", "ovsflows", "--table", "NoSuchTable"],
        "no table NoSuchTable",
    );
    assert!(
        names.contains("Classifier") && names.contains("SpoofGuard"),
        "{names}"
    );
    refused(
        &n1,
        &["get", "ovsflows", "--pod", "default/ghost"],
        "no Pod default/ghost",
    );
    refused(
        &n1,
        &["get", "ovsflows", "--pod", "ghost"],
        "expected namespace/name",
    );

    // trace-packet: client -> server ends on the server's port.
    let trace = n1.antctl(&[
        "trace-packet",
        "--pod",
        "default/client",
        "--destination",
        SERVER_IP,
    ]);
    println!("{trace}");
    assert!(
        trace.lines().any(|l| l.starts_with("Classifier(0): ")),
        "{trace}"
    );
    let verdict = trace.lines().last().unwrap();
    assert_eq!(
        verdict,
        format!("Verdict: output to port {server_ofport} ({server_port})"),
        "{trace}"
    );
    let traced = json(&n1.antctl(&[
        "trace-packet",
        "--pod",
        "default/client",
        "--destination",
        &format!("{SERVER_IP}:80"),
        "--protocol",
        "tcp",
        "-o",
        "json",
    ]));
    assert_eq!(traced["verdict"]["kind"], "output", "{traced}");
    assert_eq!(traced["verdict"]["ports"][0][0], server_ofport, "{traced}");
    assert!(
        traced["flow"].as_str().unwrap().contains(",tcp_dst=80,"),
        "{traced}"
    );
    refused(
        &n1,
        &[
            "trace-packet",
            "--pod",
            "default/client",
            "--destination",
            "10.244.1",
        ],
        "expected an IPv4 address",
    );
    refused(
        &n1,
        &[
            "trace-packet",
            "--pod",
            "default/ghost",
            "--destination",
            SERVER_IP,
        ],
        "no Pod default/ghost",
    );

    // Once a policy isolates the server, the same packet is dropped.
    n1.write_cluster_file("deny.yaml", DENY_SERVER);
    wait_until("the server isolated", || no_reply(&client, SERVER_IP));
    let trace = n1.antctl(&[
        "trace-packet",
        "--pod",
        "default/client",
        "--destination",
        SERVER_IP,
    ]);
    println!("{trace}");
    assert_eq!(trace.lines().last(), Some("Verdict: drop"), "{trace}");

    // supportbundle: every member there and not empty; the flows are the switch's.
    let bundle = n1.dir.path().join("bundle.tar.gz");
    let saved = n1.antctl(&["supportbundle", "--output", bundle.to_str().unwrap()]);
    assert!(saved.starts_with("support bundle saved to "), "{saved}");
    let unpacked = n1.dir.path().join("bundle");
    std::fs::create_dir(&unpacked).unwrap();
    run(&[
        "tar",
        "-xzf",
        bundle.to_str().unwrap(),
        "-C",
        unpacked.to_str().unwrap(),
    ]);
    let members = [
        "README.txt",
        "agent.log",
        "antrea-agent.conf",
        "featuregates.json",
        "podinterfaces.json",
        "ovsdb.json",
        "flows.txt",
        "groups.txt",
    ];
    let mut listed: Vec<String> = run(&["tar", "-tzf", bundle.to_str().unwrap()])
        .lines()
        .map(str::to_owned)
        .collect();
    listed.sort();
    let mut expected: Vec<String> = members.iter().map(|m| (*m).to_owned()).collect();
    expected.sort();
    assert_eq!(listed, expected);
    let read = |name: &str| std::fs::read_to_string(unpacked.join(name)).unwrap();
    for member in members {
        assert!(!read(member).trim().is_empty(), "{member} is empty");
    }
    assert!(read("README.txt").contains("HNS"), "{}", read("README.txt"));
    assert!(read("agent.log").contains("Node n1 up"));
    assert_eq!(
        read("antrea-agent.conf"),
        std::fs::read_to_string(n1.config_path()).unwrap()
    );
    let ovsdb = json(&read("ovsdb.json"));
    assert!(
        ovsdb["Port"]
            .as_array()
            .unwrap()
            .iter()
            .any(|row| row["name"] == server_port.as_str()),
        "no port {server_port} in the OVSDB dump"
    );
    let flow_lines = read("flows.txt").lines().skip(1).count();
    assert_eq!(flow_lines, n1.flows().len());

    // get featuregates: what the configuration sets over Antrea's defaults.
    let gates = json(&n1.antctl(&["get", "featuregates", "-o", "json"]));
    let gate = |name: &str| {
        gates
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["name"] == name)
            .unwrap_or_else(|| panic!("no gate {name} in {gates}"))
            .clone()
    };
    assert_eq!(
        gate("Egress"),
        serde_json::json!({"name": "Egress", "enabled": false, "default": true, "configured": true})
    );
    assert_eq!(
        gate("FlowExporter"),
        serde_json::json!({"name": "FlowExporter", "enabled": true, "default": false, "configured": true})
    );
    assert_eq!(
        gate("Traceflow"),
        serde_json::json!({"name": "Traceflow", "enabled": true, "default": true, "configured": false})
    );
    let text = n1.antctl(&["get", "featuregates"]);
    assert!(
        text.lines().any(|l| l.split_whitespace().eq([
            "Egress",
            "Disabled",
            "Enabled",
            "configured"
        ])),
        "{text}"
    );

    // version: antctl's, then the agent's.
    let version = n1.antctl(&["version"]);
    let lines: Vec<&str> = version.lines().collect();
    assert_eq!(lines.len(), 2, "{version}");
    let this = env!("CARGO_PKG_VERSION");
    assert!(
        lines[0].starts_with(&format!("antctl: {this} (")),
        "{version}"
    );
    assert!(
        lines[1].starts_with(&format!("agent: {this} (")),
        "{version}"
    );
    assert!(n1.stop_agent());
}
