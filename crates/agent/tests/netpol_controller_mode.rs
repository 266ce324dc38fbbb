//! The NetworkPolicy controller in controller mode through the OVS datapath against a real
//! `ovs-vswitchd`: antrea-controller's deliveries become the same flows standalone
//! computation gives; each burst's view is kept on disk, and a controller restarted from it
//! installs the same flows before any delivery; an update out of order changes no flow and
//! asks for a resync; a corrupt state file is set aside with a log line, and nothing is
//! enforced from it.
#![cfg(target_os = "linux")]

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent::config::Platform;
use agent::controller::{
    NetworkPolicyController, PolicyInput, PolicyQuery, PolicyStateFile, forward_deliveries,
};
use agent::datapath::ovs::{OvsDatapath, OvsOptions};
use agent::flows::Flows;
use agent::ovs::OvsBridge;
use agent::ovs::unixctl::VswitchdControl;
use agent::tasks::{Requeue, RequeueMetrics};
use controller::SpanComputation;
use controlplane::{Delivery, NodeUpdate, NodeView};
use model::{NodeNetwork, TrafficMode, TunnelType};
use ovstest::Ovs;
use serde_json::{Value, json};
use tokio::sync::{Notify, mpsc, oneshot};

/// Generous: waits for events, never a measured duration.
const HANG_GUARD: Duration = Duration::from_secs(30);

fn dump(ovs: &Ovs) -> Vec<String> {
    let out = ovs
        .ofctl(&["-O", "OpenFlow15", "--no-stats", "dump-flows", "{mgmt:br0}"])
        .unwrap();
    let mut flows: Vec<String> = out
        .lines()
        .filter(|l| l.contains("actions="))
        .map(|l| l.trim().to_owned())
        .collect();
    flows.sort();
    flows
}

async fn datapath(ovs: &Ovs) -> Arc<OvsDatapath<hostnet::linux::LinuxHost>> {
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
    Arc::new(OvsDatapath::new(network, bridge, flows, host, options))
}

fn pod(ns: &str, name: &str, node: &str, ip: &str, label: &str) -> Value {
    json!({
        "metadata": {"namespace": ns, "name": name, "labels": {"pod": label}},
        "spec": {"nodeName": node, "containers": [{"name": "c"}]},
        "status": {"phase": "Running", "podIP": ip},
    })
}

/// The cluster of `netpol_controller.rs`: x's `pod=a` Pods (on n1) take port 80 from y's
/// Pods (on n2). Returns the controller's computation, watched by n1, and the objects.
fn cluster() -> (SpanComputation, Vec<PolicyInput>, Vec<NodeUpdate>) {
    let mut c = SpanComputation::default();
    let mut objects = Vec::new();
    let watch = c.watch("n1");
    assert!(watch.is_empty());
    for ns in ["x", "y"] {
        let n = serde_json::from_value(json!({"metadata": {"name": ns, "labels": {"ns": ns}}}))
            .unwrap();
        c.upsert_namespace(&n).unwrap();
        objects.push(PolicyInput::Namespace(Arc::new(n)));
    }
    for (i, p) in ["a", "b", "c"].iter().enumerate() {
        for (ns, node, subnet) in [("x", "n1", 1), ("y", "n2", 2)] {
            let value = pod(ns, p, node, &format!("10.244.{subnet}.{}", 10 + i), p);
            let object = serde_json::from_value(value).unwrap();
            c.upsert_pod(&object).unwrap();
            objects.push(PolicyInput::Pod(Arc::new(object)));
        }
    }
    let policy = serde_json::from_value(json!({
        "metadata": {"namespace": "x", "name": "from-y"},
        "spec": {"podSelector": {"matchLabels": {"pod": "a"}}, "ingress": [{"from": [{"namespaceSelector": {"matchLabels": {"ns": "y"}}}], "ports": [{"port": 80}]}]},
    }))
    .unwrap();
    c.upsert_policy(&policy).unwrap();
    objects.push(PolicyInput::Policy(Arc::new(policy)));
    let mut sent = c.take_updates();
    let updates = sent.remove("n1").unwrap_or_default();
    assert!(sent.is_empty(), "only n1 watches: {sent:?}");
    (c, objects, updates)
}

/// What the state file holds.
fn kept(state: &PolicyStateFile) -> NodeView {
    serde_json::from_slice(&std::fs::read(state.path()).unwrap()).unwrap()
}

/// Waits until `check` holds.
async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + HANG_GUARD;
    while !check() {
        assert!(tokio::time::Instant::now() < deadline, "timed out: {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn view_of(updates: &[NodeUpdate]) -> NodeView {
    let mut view = NodeView::default();
    for update in updates {
        view.apply(update).unwrap();
    }
    view
}

#[tokio::test]
async fn deliveries_become_flows_and_a_restart_enforces_the_kept_view_before_any() {
    let dir = tempfile::tempdir().unwrap();
    let state = PolicyStateFile::new(dir.path().join("state").join("policy-state.json"));
    let (mut computation, objects, updates) = cluster();
    let mut view = view_of(&updates);

    // Standalone computation from the same objects, on its own switch: the flows to match.
    let alone_ovs = Ovs::start().unwrap();
    let alone = datapath(&alone_ovs).await;
    let mut local = NetworkPolicyController::new("n1");
    for input in &objects {
        local.apply(input);
    }
    local.install(&*alone).await.unwrap();
    let wanted = dump(&alone_ovs);
    assert_eq!(wanted.len(), 7, "{wanted:#?}");

    let ovs = Ovs::start().unwrap();
    let dp = datapath(&ovs).await;
    let resync = Arc::new(Notify::new());
    let given = NetworkPolicyController::given("n1", state.clone(), resync.clone());
    assert!(!given.has_view(), "nothing kept, nothing received");
    let (deliveries_tx, deliveries) = mpsc::channel(8);
    let (inputs_tx, inputs) = mpsc::channel(8);
    let (queries_tx, queries) = mpsc::channel(1);
    tokio::spawn(forward_deliveries(deliveries, inputs_tx));
    let requeue = Requeue::new("networkpolicy", &RequeueMetrics::default());
    let task = tokio::spawn(given.run(dp.clone(), inputs, queries, requeue));

    // The controller's first updates: the flows of standalone computation, and the view kept.
    deliveries_tx
        .send(Delivery::Updates(updates))
        .await
        .unwrap();
    eventually("the first view's flows", || dump(&ovs) == wanted).await;
    eventually("the first view kept", || {
        state.path().exists() && kept(&state) == view
    })
    .await;

    // A peer goes: one update, the same flows as standalone computation after it.
    let gone = agent::cluster::ObjectKey::new("y", "c");
    computation.remove_pod(&model::policy::PodKey::new("y", "c"));
    let updates = computation.take_updates().remove("n1").unwrap();
    assert_eq!(updates.len(), 1, "{updates:?}");
    for u in &updates {
        view.apply(u).unwrap();
    }
    local.apply(&PolicyInput::PodDeleted(gone));
    local.install(&*alone).await.unwrap();
    let wanted = dump(&alone_ovs);
    assert_eq!(wanted.len(), 6);
    deliveries_tx
        .send(Delivery::Updates(updates))
        .await
        .unwrap();
    eventually("the peer's flow removed", || dump(&ovs) == wanted).await;
    eventually("the new view kept", || kept(&state) == view).await;

    // An update out of order (a group a policy reads removed): a resync is asked for, and
    // nothing changes.
    let read = view.groups.keys().next().unwrap().clone();
    let resynced = resync.notified();
    deliveries_tx
        .send(Delivery::Updates(vec![NodeUpdate::GroupRemoved {
            group: read,
        }]))
        .await
        .unwrap();
    tokio::time::timeout(HANG_GUARD, resynced)
        .await
        .expect("a resync asked for");
    // The report path answers in controller mode, with the last good view's rule.
    let (reply, answer) = oneshot::channel();
    queries_tx
        .send(PolicyQuery { pod: None, reply })
        .await
        .unwrap();
    let report = answer.await.unwrap().unwrap();
    assert_eq!(report.rules.len(), 1, "{report:?}");
    assert_eq!(dump(&ovs), wanted);
    assert_eq!(kept(&state), view);

    // The controller's end goes away: the controller keeps running with the last view.
    drop(deliveries_tx);
    drop(queries_tx);
    tokio::time::timeout(HANG_GUARD, task)
        .await
        .expect("the controller ends with its inputs")
        .unwrap();
    assert_eq!(dump(&ovs), wanted, "the flows stay");

    // A restart (on a fresh switch): the kept view's flows, before any delivery.
    let restarted_ovs = Ovs::start().unwrap();
    let restarted = datapath(&restarted_ovs).await;
    let mut again = NetworkPolicyController::given("n1", state.clone(), Arc::new(Notify::new()));
    assert!(again.has_view());
    again.install(&*restarted).await.unwrap();
    assert_eq!(dump(&restarted_ovs), wanted);
}

/// Log lines written while a closure runs.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_corrupt_state_file_is_set_aside_with_a_log_line_and_nothing_enforced() {
    let dir = tempfile::tempdir().unwrap();
    let state = PolicyStateFile::new(dir.path().join("policy-state.json"));
    // A view whose policy reads a group it lacks: it decodes as JSON, not as a view.
    let (_, _, updates) = cluster();
    let mut text = serde_json::to_value(view_of(&updates)).unwrap();
    text["groups"] = json!([]);
    std::fs::write(state.path(), text.to_string()).unwrap();
    let logs = Captured::default();
    let writer = logs.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    let mut given = tracing::subscriber::with_default(subscriber, || {
        NetworkPolicyController::given("n1", state.clone(), Arc::new(Notify::new()))
    });
    assert!(!given.has_view());
    assert!(given.snapshot().rules.is_empty());
    assert!(!state.path().exists());
    assert_eq!(
        std::fs::read_to_string(state.corrupt_path()).unwrap(),
        text.to_string()
    );
    let logs = String::from_utf8(logs.0.lock().unwrap().clone()).unwrap();
    assert!(
        logs.contains("is corrupt")
            && logs.contains(&state.corrupt_path().display().to_string())
            && logs.contains("a group the policy reads is missing"),
        "{logs}"
    );
}
