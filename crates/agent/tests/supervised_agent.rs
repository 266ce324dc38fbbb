//! The supervised agent, run as the real binary in a Node namespace with its own OVS:
//!
//! - a panic in a controller task (injected on SIGUSR1 through the `fault-injection` feature,
//!   which only these tests enable) is not swallowed: the agent stops in order, logs the task
//!   and the panic's message, exits with status 1, and leaves the datapath as it was;
//! - a NetworkPolicy change and a new peer sent to a frozen `ovs-vswitchd` fail once the
//!   OpenFlow connection is declared dead; the failed updates never reached the flow cache, so
//!   the reconnect's replay does not bring them: the controllers' requeue does, once the switch
//!   is back, with no new cluster event, and the metrics count the failures and the retries.
#![cfg(target_os = "linux")]

mod support;

use agent::tasks::PANIC_TASK;
use support::{Lan, TestNode, client_and_server_yaml, nodes_yaml, run, wait_until};

const N1: (&str, &str, &str) = ("n1", "10.10.0.11", "10.244.1.0/24");
const N2: (&str, &str, &str) = ("n2", "10.10.0.12", "10.244.2.0/24");
const CLIENT_IP: &str = "10.244.1.2";

/// Ingress to the server only from the client.
const ALLOW_CLIENT: &str = "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata:\n  name: allow-client\n  namespace: default\nspec:\n  podSelector:\n    matchLabels:\n      app: server\n  policyTypes:\n  - Ingress\n  ingress:\n  - from:\n    - podSelector:\n        matchLabels:\n          app: client\n";

fn up(node: &mut TestNode) {
    let run = node.start_agent();
    wait_until("the CNI server", || node.cni_listening(run));
}

/// `antctl get metrics` in the Node's namespace.
fn metrics(node: &TestNode) -> String {
    node.antctl(&["get", "metrics"])
}

/// The value of the series `series` (name and labels) in `metrics`.
fn value(metrics: &str, series: &str) -> f64 {
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {series} in:\n{metrics}"))
}

/// The process id of the Node's `ovs-vswitchd`.
fn vswitchd_pid(node: &TestNode) -> String {
    std::fs::read_to_string(node.ovs.dir().join("ovs-vswitchd.pid"))
        .expect("ovs-vswitchd pidfile")
        .trim()
        .to_owned()
}

#[test]
fn a_panicking_controller_task_stops_the_agent_with_its_cause() {
    let mut lan = Lan::new();
    let ns1 = lan.node_netns(1);
    let mut n1 = TestNode::new("n1", &ns1, "", &nodes_yaml(&[N1, N2]));
    n1.set_agent_env(PANIC_TASK, "peer controller");
    up(&mut n1);
    let flows = n1.flows();
    let routes = n1.antrea_routes();
    assert!(
        !flows.is_empty() && !routes.is_empty(),
        "{flows:?} {routes:?}"
    );

    run(&["kill", "-USR1", &n1.agent_pid().to_string()]);
    let status = n1.wait_agent_exit();
    let log = n1.log(1);
    println!("{log}");
    assert_eq!(status.code(), Some(1), "{log}");
    let cause = "the peer controller task panicked: fault injected: SIGUSR1 made the peer \
                 controller task panic";
    let logged = log.find(&format!("ERROR {cause}"));
    let stopping = log.find("stopping because the peer controller task failed");
    let stopped = log.find("INFO stopped\n");
    assert!(
        logged.is_some() && logged < stopping && stopping < stopped,
        "the cause, then the stop, in order:\n{log}"
    );
    assert!(
        log.lines().any(|l| l == format!("antrea-agent: {cause}")),
        "the error on stderr:\n{log}"
    );
    // The datapath stays as it was.
    assert_eq!(n1.flows(), flows);
    assert_eq!(n1.antrea_routes(), routes);
}

#[test]
fn failed_datapath_updates_are_retried_until_the_switch_is_back() {
    let mut lan = Lan::new();
    let ns1 = lan.node_netns(1);
    let mut n1 = TestNode::new("n1", &ns1, "", &nodes_yaml(&[N1]));
    n1.write_pods(&client_and_server_yaml(Some((CLIENT_IP, "10.244.1.3"))));
    up(&mut n1);
    let has_policy = |flows: &[String]| flows.iter().any(|f| f.contains(CLIENT_IP));
    let has_peer = |flows: &[String]| flows.iter().any(|f| f.contains("10.244.2.0/24"));
    let flows = n1.flows();
    assert!(!has_policy(&flows) && !has_peer(&flows), "{flows:#?}");

    // The switch freezes; a policy and a peer arrive. An update sent before the connection is
    // declared dead waits for a reply that never comes; one made after it waits for the
    // reconnect, at most the inactivity timeout. Either way it fails before the switch
    // committed it, so the flow cache the reconnect replays does not hold it.
    let vswitchd = vswitchd_pid(&n1);
    run(&["kill", "-STOP", &vswitchd]);
    n1.write_cluster_file("allow.yaml", ALLOW_CLIENT);
    n1.write_nodes(&nodes_yaml(&[N1, N2]));
    wait_until("both updates failed", || {
        let log = n1.log(1);
        log.contains("NetworkPolicy flows not installed (retried in")
            && log.contains("peer reconciliation failed (retried in")
    });
    // A retry may already be waiting for the switch when it comes back: count from the first
    // failure.
    let failed_at = n1.log(1).find("(retried in").expect("a failure was logged");
    run(&["kill", "-CONT", &vswitchd]);

    // Back: the retries bring the flows and the route, with no new cluster event.
    wait_until("the policy's and the peer's flows", || {
        let flows = n1.flows();
        has_policy(&flows) && has_peer(&flows)
    });
    wait_until("the route to the peer", || {
        n1.antrea_routes()
            .iter()
            .any(|r| r.starts_with("10.244.2.0/24"))
    });
    let log = n1.log(1);
    let since = &log[failed_at..];
    println!("{log}");
    assert!(
        since.contains("retrying the failed NetworkPolicy install")
            && since.contains("retrying the failed peer reconciliation"),
        "{since}"
    );
    assert!(
        !since.contains("reconciling peers") && !since.contains("folded into"),
        "no cluster event after the failure:\n{since}"
    );

    // The metrics: each controller failed and retried, and owes nothing once its retry is done.
    let series = |name: &str, controller: &str| {
        format!("antrea_agent_datapath_update_{name}{{controller=\"{controller}\"}}")
    };
    let controllers = ["networkpolicy", "peers"];
    wait_until("no retry pending", || {
        let metrics = metrics(&n1);
        controllers
            .iter()
            .all(|c| value(&metrics, &series("retry_pending", c)) == 0.0)
    });
    let metrics = metrics(&n1);
    for controller in controllers {
        let failures = value(&metrics, &series("failures_total", controller));
        let retries = value(&metrics, &series("retries_total", controller));
        assert!(
            failures >= 1.0 && retries >= 1.0,
            "{controller}: {failures} failures, {retries} retries"
        );
    }
    assert!(n1.stop_agent());
}
