//! NetworkPolicy end to end with real packets: two Pods on one Node through the real `antrea`
//! plugin, policies dropped into the cluster directory. A deny-all ingress policy cuts the
//! server Pod off, an allow rule for the client's labels lets it in again, removing the policies
//! opens the Pod, and an agent restart with a policy in place keeps the Pod isolated. `antctl`
//! shows the rules applied to the server, the flows behind them and their counters, and the
//! agent API's metrics count the same packets; `antctl get pipeline` shows every declared table
//! with as many flows as `ovs-ofctl` dumps in it.
#![cfg(target_os = "linux")]

mod support;

use std::collections::BTreeMap;

use pipeline::layout::TableGraph;
use support::{
    Lan, TestNode, client_and_server_yaml, no_reply, nodes_yaml, ping_all_answered, wait_until,
};

const N1: (&str, &str, &str) = ("n1", "10.10.0.11", "10.244.1.0/24");
const CLIENT_IP: &str = "10.244.1.2";
const SERVER_IP: &str = "10.244.1.3";

/// A policy selecting the server Pod for ingress, allowing Pods labelled `app: <from>` when
/// given, else nothing.
fn policy_yaml(name: &str, from: Option<&str>) -> String {
    let ingress = match from {
        Some(app) => format!(
            "  ingress:\n  - from:\n    - podSelector:\n        matchLabels:\n          app: {app}\n"
        ),
        None => String::new(),
    };
    format!(
        "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata:\n  name: {name}\n  namespace: default\nspec:\n  podSelector:\n    matchLabels:\n      app: server\n  policyTypes:\n  - Ingress\n{ingress}"
    )
}

/// The number after `name` in an antctl rule line.
fn counter(line: &str, name: &str) -> u64 {
    let mut words = line.split_whitespace();
    words.find(|w| *w == name);
    words
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no {name} in {line}"))
}

/// The flows `ovs-ofctl dump-flows` shows in each table of the Node's bridge (no `table=` before
/// the actions means table 0).
fn flows_per_table(node: &TestNode) -> BTreeMap<u8, usize> {
    let mut counts = BTreeMap::new();
    for flow in node.flows() {
        let head = flow.split("actions=").next().unwrap_or_default();
        let table = head
            .split(", ")
            .find_map(|field| field.strip_prefix("table="))
            .map_or(0, |id| id.parse().unwrap_or_else(|_| panic!("{flow}")));
        *counts.entry(table).or_default() += 1;
    }
    counts
}

/// `antctl get pipeline`, as JSON and as text, against the agent's table graph and the bridge's
/// flows counted by `ovs-ofctl`.
fn check_pipeline(node: &TestNode) {
    let json = node.antctl(&["get", "pipeline", "-o", "json"]);
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    let shown: BTreeMap<u64, &serde_json::Value> = report["tables"]
        .as_array()
        .unwrap_or_else(|| panic!("no tables in {json}"))
        .iter()
        .map(|t| (t["id"].as_u64().unwrap(), t))
        .collect();
    let graph = TableGraph::standard();
    for (id, table) in graph.tables() {
        let entry = shown
            .get(&u64::from(id))
            .unwrap_or_else(|| panic!("table {id} {table} missing from {json}"));
        assert_eq!(entry["name"], table.name(), "{json}");
        assert_eq!(entry["stage"], table.stage().name(), "{json}");
    }
    let counted = flows_per_table(node);
    let reported: BTreeMap<u8, usize> = shown
        .iter()
        .map(|(id, t)| (*id as u8, t["flows"].as_u64().unwrap() as usize))
        .filter(|(_, flows)| *flows > 0)
        .collect();
    assert_eq!(reported, counted, "{json}");
    let text = node.antctl(&["get", "pipeline"]);
    println!("{text}");
    for (id, table) in graph.tables() {
        let row = [
            id.to_string(),
            table.name().to_owned(),
            table.stage().name().to_owned(),
            counted.get(&id).copied().unwrap_or(0).to_string(),
        ];
        assert!(
            text.lines()
                .any(|l| l.split_whitespace().eq(row.iter().map(String::as_str))),
            "no row {row:?} in:\n{text}"
        );
    }
}

/// Replaces the cluster directory file `name` atomically.
fn write_file(node: &TestNode, name: &str, text: &str) {
    let tmp = node.cluster_dir().join(format!(".{name}.tmp"));
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, node.cluster_dir().join(name)).unwrap();
}

fn up(node: &mut TestNode) {
    node.start_and_wait_up();
    let socket = node.cni_socket();
    wait_until("the CNI socket", || socket.exists());
}

#[test]
fn policies_from_the_cluster_directory_isolate_and_open_a_pod() {
    let mut lan = Lan::new();
    let ns1 = lan.node_netns(1);
    let client = lan.pod_netns("client");
    let server = lan.pod_netns("server");
    let mut n1 = TestNode::new("n1", &ns1, "", &nodes_yaml(&[N1]));
    write_file(&n1, "pods.yaml", &client_and_server_yaml(None));
    up(&mut n1);

    let (ok, result) = n1.cni("ADD", "c-client", "client", &client, &n1.netconf(None));
    assert!(ok, "ADD client failed: {result}");
    assert_eq!(result["ips"][0]["address"], format!("{CLIENT_IP}/24"));
    let (ok, result) = n1.cni("ADD", "c-server", "server", &server, &n1.netconf(None));
    assert!(ok, "ADD server failed: {result}");
    assert_eq!(result["ips"][0]["address"], format!("{SERVER_IP}/24"));
    write_file(
        &n1,
        "pods.yaml",
        &client_and_server_yaml(Some((CLIENT_IP, SERVER_IP))),
    );
    assert!(
        ping_all_answered(&client, SERVER_IP, 3),
        "client -> server, no policy"
    );

    // Deny all ingress to the server: the client's new pings are dropped; the server still
    // reaches the client (the client is not isolated, and replies are established traffic).
    write_file(&n1, "deny.yaml", &policy_yaml("deny-all", None));
    wait_until("the server isolated", || no_reply(&client, SERVER_IP));
    assert!(
        ping_all_answered(&server, CLIENT_IP, 3),
        "server -> client, client not isolated"
    );

    // A second policy allowing the client's labels: policies add up, the client gets in.
    write_file(
        &n1,
        "allow.yaml",
        &policy_yaml("allow-client", Some("client")),
    );
    wait_until("the client allowed in", || {
        ping_all_answered(&client, SERVER_IP, 3)
    });

    // What antctl shows through the agent API in the Node's namespace: the server isolated for
    // ingress, the allow rule with the flows behind it and the ping it let in counted; the
    // same counters in the metrics; the agent ready.
    let shown = n1.antctl(&["get", "networkpolicies", "--pod", "default/server"]);
    println!("{shown}");
    assert!(
        shown.starts_with(&format!(
            "Pod default/server ({SERVER_IP}): ingress isolated, egress not isolated\n"
        )),
        "{shown}"
    );
    let rule = shown
        .lines()
        .find(|l| l.starts_with("default/allow-client/ingress/0  ingress  peers 10.244.1.2  "))
        .unwrap_or_else(|| panic!("no allow rule in:\n{shown}"));
    // The rule counts a connection's packets until it is established: the ping's first.
    assert!(counter(rule, "packets") >= 1, "{rule}");
    assert!(
        shown
            .lines()
            .any(|l| l.starts_with("    ") && l.contains(SERVER_IP)),
        "the flows behind the rules:\n{shown}"
    );
    assert!(
        !n1.antctl(&["get", "networkpolicies", "--pod", "default/client"])
            .contains("allow-client"),
        "the client has no rule applied to it"
    );
    let metrics = n1.antctl(&["get", "metrics"]);
    let series = metrics
        .lines()
        .find(|l| {
            l.starts_with("antrea_agent_networkpolicy_rule_packets_total{")
                && l.contains("rule=\"default/allow-client/ingress/0\"")
        })
        .unwrap_or_else(|| panic!("no packet counter of the rule in:\n{metrics}"));
    let packets: u64 = series.rsplit(' ').next().unwrap().parse().unwrap();
    assert!(packets >= counter(rule, "packets"), "{series}");
    assert!(
        metrics.contains("antrea_agent_networkpolicy_rule_flows{"),
        "{metrics}"
    );
    assert_eq!(n1.antctl(&["get", "readiness"]), "ok\n");
    check_pipeline(&n1);

    // The allow policy goes: isolated again; both go: open.
    std::fs::remove_file(n1.cluster_dir().join("allow.yaml")).unwrap();
    wait_until("the server isolated again", || no_reply(&client, SERVER_IP));
    std::fs::remove_file(n1.cluster_dir().join("deny.yaml")).unwrap();
    wait_until("the server open", || {
        ping_all_answered(&client, SERVER_IP, 3)
    });

    // Restart with the deny policy in place: the first flows the new agent installs hold it, and
    // nothing later changes them (the directory holds no news), so the server stays isolated.
    write_file(&n1, "deny.yaml", &policy_yaml("deny-all", None));
    wait_until("the server isolated before the restart", || {
        no_reply(&client, SERVER_IP)
    });
    assert!(n1.stop_agent());
    up(&mut n1);
    assert!(
        no_reply(&client, SERVER_IP),
        "server isolated after restart"
    );
    assert!(
        ping_all_answered(&server, CLIENT_IP, 3),
        "server -> client after restart"
    );
    assert!(n1.stop_agent());
}
