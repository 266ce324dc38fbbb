//! The agent binary's `/metrics` (through `antctl get metrics`) on the fake API server with a
//! real Open vSwitch, each new family read after the event that moves it: the OVS connection
//! gauges at 1 after start and a reconnect counted after ovs-vswitchd restarts and after
//! ovsdb-server drops its clients; the per-table flow gauges and the group gauge equal to what
//! `ovs-ofctl` dumps, after bring-up, a CNI ADD, a Service and a replay; the CNI ADD and DEL
//! histograms counting the requests made through the real plugin, a failed ADD under its CNI
//! error code; the Service sync histogram
//! counting the sync that installs a new Service.
#![cfg(target_os = "linux")]

mod objects;
mod support;

use std::collections::BTreeMap;
use std::process::Command;

use fakeapi::FakeApiServer;
use k8s_openapi::api::core::v1::Service;
use objects::{node, pod, web_slice};
use pipeline::layout::TableGraph;
use serde_json::json;
use support::{Lan, TestNode, serve_in, wait_until};

fn web_service() -> Service {
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"namespace": "default", "name": "web"},
        "spec": {
            "clusterIP": "10.96.0.10", "clusterIPs": ["10.96.0.10"],
            "ports": [{"name": "http", "port": 80, "protocol": "TCP", "targetPort": 8080}],
        },
    }))
    .unwrap()
}

/// The agent's metrics as `antctl get metrics` prints them: each sample line's name with its
/// labels, and its value.
fn scrape(node: &TestNode) -> BTreeMap<String, f64> {
    node.antctl(&["get", "metrics"])
        .lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .filter_map(|line| {
            let (series, value) = line.rsplit_once(' ')?;
            Some((series.to_owned(), value.parse().ok()?))
        })
        .collect()
}

/// The value of `series` (name and labels as encoded), or a panic naming what was scraped.
fn value(metrics: &BTreeMap<String, f64>, series: &str) -> f64 {
    *metrics
        .get(series)
        .unwrap_or_else(|| panic!("no {series} in {metrics:#?}"))
}

/// The value of `series` in a fresh scrape, 0 when absent (a labelled series appears with its
/// first observation).
fn now(node: &TestNode, series: &str) -> f64 {
    scrape(node).get(series).copied().unwrap_or(0.0)
}

/// The flows the switch holds per table, by the table's name in the agent's graph (its id
/// when undeclared), and its groups.
fn switch_counts(node: &TestNode) -> (BTreeMap<String, f64>, f64) {
    let graph = TableGraph::standard();
    let mut tables: BTreeMap<String, f64> = graph
        .tables()
        .map(|(_, table)| (table.name().to_owned(), 0.0))
        .collect();
    let dump = node
        .ovs
        .ofctl(&[
            "-O",
            "OpenFlow15",
            "--no-names",
            "--no-stats",
            "dump-flows",
            "{mgmt:br-int}",
        ])
        .expect("dump-flows");
    for flow in dump.lines().filter(|l| l.contains("actions=")) {
        // Without statistics, table 0 is not printed.
        let id: u8 = flow
            .split([',', ' '])
            .find_map(|field| field.trim().strip_prefix("table="))
            .map_or(0, |id| id.parse().unwrap_or_else(|e| panic!("{e}: {flow}")));
        let name = graph
            .table(id)
            .map_or_else(|| id.to_string(), |table| table.name().to_owned());
        *tables.entry(name).or_default() += 1.0;
    }
    let groups = node
        .ovs
        .ofctl(&["-O", "OpenFlow15", "dump-groups", "{mgmt:br-int}"])
        .expect("dump-groups")
        .lines()
        .filter(|l| l.contains("group_id="))
        .count();
    (tables, groups as f64)
}

/// The flow gauges per table and the group gauge of a scrape.
fn gauge_counts(metrics: &BTreeMap<String, f64>) -> (BTreeMap<String, f64>, f64) {
    let tables = metrics
        .iter()
        .filter_map(|(series, value)| {
            let table = series
                .strip_prefix("antrea_agent_ovs_flows{table=\"")?
                .strip_suffix("\"}")?;
            Some((table.to_owned(), *value))
        })
        .collect();
    (tables, value(metrics, "antrea_agent_ovs_groups"))
}

/// Waits until the gauges equal the switch (an install may be under way when first read);
/// returns the flows the switch holds.
fn wait_gauges_equal_switch(node: &TestNode, when: &str) -> f64 {
    let mut last = None;
    wait_until(
        &format!("the flow and group gauges to equal the switch {when}"),
        || {
            let gauges = gauge_counts(&scrape(node));
            let switch = switch_counts(node);
            let equal = gauges == switch;
            last = Some((gauges, switch));
            equal
        },
    );
    let (_, (tables, _)) = last.unwrap();
    tables.values().sum()
}

/// Asks ovsdb-server of `node` to drop every client connection (they reconnect).
fn drop_ovsdb_clients(node: &TestNode) {
    let ctl = node.ovs.dir().join("ovsdb-server.ctl");
    let status = Command::new("ovs-appctl")
        .arg("-t")
        .arg(&ctl)
        .arg("ovsdb-server/reconnect")
        .status()
        .expect("run ovs-appctl");
    assert!(status.success(), "ovsdb-server/reconnect: {status}");
}

const ADD_OK: &str =
    "antrea_agent_cni_request_duration_seconds_count{command=\"ADD\",result=\"success\"}";
const DEL_OK: &str =
    "antrea_agent_cni_request_duration_seconds_count{command=\"DEL\",result=\"success\"}";
const SYNCS: &str = "antrea_agent_proxy_sync_duration_seconds_count";
const OVSDB_UP: &str = "antrea_agent_ovs_connected{connection=\"ovsdb\"}";
const OPENFLOW_UP: &str = "antrea_agent_ovs_connected{connection=\"openflow\"}";
const OVSDB_RECONNECTS: &str = "antrea_agent_ovs_reconnects_total{connection=\"ovsdb\"}";
const OPENFLOW_RECONNECTS: &str = "antrea_agent_ovs_reconnects_total{connection=\"openflow\"}";

#[test]
fn each_new_metric_moves_with_the_event_it_measures() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mut lan = Lan::new();
    let ns1 = lan.node_netns(1);
    let fake = FakeApiServer::new();
    fake.insert(&node("n1", "10.10.0.11", Some("10.244.1.0/24")))
        .unwrap();
    let mut n1 = TestNode::new("n1", &ns1, "", "");
    let kubeconfig = n1.dir.path().join("kubeconfig");
    let _server = serve_in(&runtime, &fake, &ns1, &kubeconfig);
    n1.use_api(&kubeconfig);
    n1.start_and_wait_up();
    wait_until("the CNI server", || n1.cni_listening(1));

    // Up: both connections at 1, never reconnected; the gauges are the switch's flows.
    let up = scrape(&n1);
    assert_eq!(value(&up, OVSDB_UP), 1.0);
    assert_eq!(value(&up, OPENFLOW_UP), 1.0);
    assert_eq!(value(&up, OVSDB_RECONNECTS), 0.0);
    assert_eq!(value(&up, OPENFLOW_RECONNECTS), 0.0);
    let at_start = wait_gauges_equal_switch(&n1, "after bring-up");
    assert!(at_start > 0.0, "bring-up installed no flow");
    assert_eq!(now(&n1, ADD_OK), 0.0);

    // A CNI ADD: counted once as a success; the Pod's flows are in the gauges.
    fake.insert(&pod("p1", "n1")).unwrap();
    let p1 = lan.pod_netns("p1");
    let (ok, result) = n1.cni("ADD", "c-p1", "p1", &p1, &n1.netconf(None));
    assert!(ok, "ADD: {result}");
    assert_eq!(now(&n1, ADD_OK), 1.0);
    let with_pod = wait_gauges_equal_switch(&n1, "after the ADD");
    assert!(with_pod > at_start, "the Pod added no flow");

    // A Service: a sync after it was created installs its group, and is observed.
    let syncs = now(&n1, SYNCS);
    assert!(syncs >= 1.0, "the proxy's first sync was not observed");
    fake.insert(&web_service()).unwrap();
    fake.insert(&web_slice(&[10])).unwrap();
    wait_until("the Service sync to be observed", || {
        now(&n1, SYNCS) > syncs
    });
    wait_until("the Service's group in the gauge", || {
        value(&scrape(&n1), "antrea_agent_ovs_groups") == 1.0
    });
    let with_service = wait_gauges_equal_switch(&n1, "with the Service");

    // ovs-vswitchd restarted: the OpenFlow connection comes back (counted) and the replay
    // restores exactly what the gauges say.
    n1.ovs.restart_vswitchd().expect("restart ovs-vswitchd");
    wait_until("the OpenFlow reconnect to be counted", || {
        let metrics = scrape(&n1);
        value(&metrics, OPENFLOW_RECONNECTS) >= 1.0 && value(&metrics, OPENFLOW_UP) == 1.0
    });
    wait_gauges_equal_switch(&n1, "after the replay");

    // ovsdb-server drops its clients: the agent's OVSDB connection comes back, counted.
    assert_eq!(now(&n1, OVSDB_RECONNECTS), 0.0);
    drop_ovsdb_clients(&n1);
    wait_until("the OVSDB reconnect to be counted", || {
        let metrics = scrape(&n1);
        value(&metrics, OVSDB_RECONNECTS) >= 1.0 && value(&metrics, OVSDB_UP) == 1.0
    });

    // A CNI DEL: counted once as a success; the ADD's count stays.
    let (ok, result) = n1.cni("DEL", "c-p1", "p1", &p1, &n1.netconf(None));
    assert!(ok, "DEL: {result}");
    let after = scrape(&n1);
    assert_eq!(value(&after, DEL_OK), 1.0);
    assert_eq!(value(&after, ADD_OK), 1.0);
    let without_pod = wait_gauges_equal_switch(&n1, "after the DEL");
    assert!(without_pod < with_service, "the DEL left the Pod's flows");

    // An ADD into a namespace that does not exist fails: one series with its error code.
    fake.insert(&pod("p2", "n1")).unwrap();
    let (ok, result) = n1.cni("ADD", "c-p2", "p2", "agt-no-such-netns", &n1.netconf(None));
    assert!(!ok, "ADD into a missing namespace: {result}");
    let failed: Vec<(String, f64)> = scrape(&n1)
        .into_iter()
        .filter(|(series, _)| {
            series.starts_with("antrea_agent_cni_request_duration_seconds_count{command=\"ADD\"")
                && !series.contains("result=\"success\"")
        })
        .collect();
    assert_eq!(failed.len(), 1, "{failed:?}");
    let code = result["code"]
        .as_u64()
        .unwrap_or_else(|| panic!("{result}"));
    assert!(
        failed[0].0.contains(&format!("result=\"{code}\"")),
        "{failed:?} for {result}"
    );
    assert_eq!(failed[0].1, 1.0);
    assert!(n1.stop_agent());
}
