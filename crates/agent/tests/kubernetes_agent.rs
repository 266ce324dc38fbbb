//! The agent binary on the Kubernetes API (`--kubeconfig`), served by the fake API server over
//! TCP inside each Node's namespace, with real Open vSwitch and real Pods: noEncap Nodes
//! publish their MAC annotation and route to each other directly; peer Nodes added, updated
//! and deleted in the API become routes and flows; a restart removes the Pod that is gone from
//! the API and keeps the live one; Pods get `NetworkReady` Events; a NetworkPolicy created and
//! deleted in the API isolates a Pod and opens it again; the agent reports itself ready; an API outage (with the
//! watch history compacted meanwhile) changes no flow, no OVSDB row and no route.
#![cfg(target_os = "linux")]

mod objects;
mod support;

use fakeapi::FakeApiServer;
use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::api::networking::v1::NetworkPolicy;
use objects::{node, pod};
use support::{DbMonitor, Lan, TestNode, no_reply, ping, serve_in, wait_until};

fn annotation(fake: &FakeApiServer, node: &str, key: &str) -> Option<String> {
    let stored: Node = fake.get("", node).unwrap()?;
    stored.metadata.annotations?.get(key).cloned()
}

fn reconciles_since(node: &TestNode, run: u32, mark: usize) -> Vec<String> {
    node.log(run)
        .lines()
        .skip(mark)
        .filter(|l| l.contains("reconciling peers"))
        .map(|l| l.split_once("INFO ").map_or(l, |(_, r)| r).to_owned())
        .collect()
}

#[test]
fn agents_follow_the_api_server_and_ride_out_its_outage() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mut lan = Lan::new();
    let ns1 = lan.node_netns(1);
    let ns2 = lan.node_netns(2);
    let live = lan.pod_netns("live");
    let gone = lan.pod_netns("gone");
    let fake = FakeApiServer::new();
    fake.insert(&node("n1", "10.10.0.11", Some("10.244.1.0/24")))
        .unwrap();
    fake.insert(&node("n2", "10.10.0.12", Some("10.244.2.0/24")))
        .unwrap();
    fake.insert(&pod("live", "n1")).unwrap();
    fake.insert(&pod("gone", "n1")).unwrap();
    let mut n1 = TestNode::new("n1", &ns1, "trafficEncapMode: noEncap\n", "");
    let mut n2 = TestNode::new("n2", &ns2, "trafficEncapMode: noEncap\n", "");
    let kubeconfig1 = n1.dir.path().join("kubeconfig");
    let kubeconfig2 = n2.dir.path().join("kubeconfig");
    let _server1 = serve_in(&runtime, &fake, &ns1, &kubeconfig1);
    let _server2 = serve_in(&runtime, &fake, &ns2, &kubeconfig2);
    n1.use_api(&kubeconfig1);
    n2.use_api(&kubeconfig2);

    // Up on the API: each Node publishes its NIC's MAC with a merge patch.
    n1.start_and_wait_up();
    n2.start_and_wait_up();
    wait_until("both MAC annotations", || {
        annotation(&fake, "n1", "node.antrea.io/mac-address").is_some()
            && annotation(&fake, "n2", "node.antrea.io/mac-address").is_some()
    });
    assert_eq!(
        annotation(&fake, "n1", "node.antrea.io/mac-address").as_deref(),
        Some("02:00:0a:0a:00:0b")
    );
    assert!(
        fake.requests()
            .iter()
            .any(|r| r.method == http::Method::PATCH
                && r.path == "/api/v1/nodes/n2"
                && r.content_type == "application/merge-patch+json")
    );
    // The peer's annotation reaches the other Node: direct flows to its MAC, a route via it.
    wait_until("n1's direct flow to n2's MAC", || {
        n1.flows().iter().any(|f| {
            f.contains("nw_dst=10.244.2.0/24") && f.contains("set_field:02:00:0a:0a:00:0c->eth_dst")
        })
    });
    assert_eq!(
        n1.antrea_routes(),
        ["10.244.2.0/24 via 10.10.0.12 dev br-int"]
    );
    assert!(ping(&n1, "10.244.2.1"), "n1 -> n2's gateway");

    // Pods: ADD wires them and posts NetworkReady on each.
    let socket = n1.cni_socket();
    wait_until("the CNI socket", || socket.exists());
    for (name, netns) in [("live", &live), ("gone", &gone)] {
        let (ok, result) = n1.cni("ADD", &format!("c-{name}"), name, netns, &n1.netconf(None));
        assert!(ok, "ADD {name}: {result}");
    }
    wait_until("two NetworkReady Events", || {
        fake.requests()
            .iter()
            .filter(|r| {
                r.method == http::Method::POST
                    && r.path == "/apis/events.k8s.io/v1/namespaces/default/events"
                    && String::from_utf8_lossy(&r.body).contains("\"NetworkReady\"")
            })
            .count()
            == 2
    });

    // NetworkPolicy from the API (the shared reflectors feed the controller, every Pod of the
    // cluster included): once the kubelet has reported the live Pod's address, a deny-all
    // ingress policy in its Namespace cuts n2 off from it, and deleting the policy lets n2 in
    // again. The agent is ready (its reflectors are synced).
    let mut live_pod: Pod = fake.get("default", "live").unwrap().unwrap();
    live_pod.status = Some(
        serde_json::from_value(serde_json::json!({"phase": "Running", "podIP": "10.244.1.2"}))
            .unwrap(),
    );
    fake.insert(&live_pod).unwrap();
    assert!(ping(&n2, "10.244.1.2"), "n2 -> live, no policy");
    let deny: NetworkPolicy = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "deny", "namespace": "default"},
        "spec": {"podSelector": {}, "policyTypes": ["Ingress"]},
    }))
    .unwrap();
    fake.insert(&deny).unwrap();
    wait_until("the live Pod isolated", || {
        no_reply(&n2.netns, "10.244.1.2")
    });
    fake.delete::<NetworkPolicy>("default", "deny").unwrap();
    wait_until("the live Pod open again", || ping(&n2, "10.244.1.2"));
    let readiness = n1.antctl(&["get", "readiness"]);
    assert_eq!(readiness, "ok\n");

    // A Pod deleted while the agent is down loses its port at the restart; the other is kept.
    assert!(n1.stop_agent());
    fake.delete::<Pod>("default", "gone").unwrap();
    n1.start_and_wait_up();
    let run = n1.runs();
    wait_until("the Pod reconciliation", || {
        n1.log(run).contains("Pods on the bridge")
    });
    assert!(
        n1.log(run)
            .contains("Pods on the bridge: 1 kept, 1 removed"),
        "{}",
        n1.log(run)
    );
    let ports = n1.vsctl(&["list-ports", "br-int"]);
    assert!(
        ports.contains(&hostnet::naming::endpoint_name("live", "c-live")),
        "{ports}"
    );
    assert!(
        !ports.contains(&hostnet::naming::endpoint_name("gone", "c-gone")),
        "{ports}"
    );
    assert!(
        !n1.flows().iter().any(|f| f.contains("10.244.1.3")),
        "the gone Pod's flows"
    );
    wait_until("the CNI socket", || socket.exists());

    // Outage: the agent keeps forwarding. Meanwhile n2 gets a label (a change the datapath does
    // not care about) and the history is compacted, so on return the agent re-lists: n2 is
    // reconciled and nothing changes: `peers unchanged` (no flow sent: the controller sends only
    // differences), the same flow dump, no OVSDB row, no route.
    let flows = n1.flows();
    let db = DbMonitor::start(&n1.ovs, n1.dir.path());
    let routes = n1.antrea_routes();
    let mark = n1.log(run).lines().count();
    fake.set_available(false);
    wait_until("the watches to break", || fake.active_watches() == 0);
    assert!(ping(&n1, "10.244.2.1"), "forwarding during the outage");
    let mut n2_labelled: Node = fake.get("", "n2").unwrap().unwrap();
    n2_labelled
        .metadata
        .labels
        .get_or_insert_with(Default::default)
        .insert("rack".into(), "r2".into());
    fake.insert(&n2_labelled).unwrap();
    fake.compact();
    fake.set_available(true);
    wait_until("n1 to reconcile the re-listed n2", || {
        n1.log(run)
            .lines()
            .skip(mark)
            .skip_while(|l| !l.contains("NodeUpdated n2: reconciling peers"))
            .any(|l| l.contains("peers unchanged"))
    });
    assert_eq!(n1.flows(), flows, "flows changed");
    assert_eq!(db.changes(), Vec::<String>::new(), "OVSDB rows changed");
    assert_eq!(n1.antrea_routes(), routes);
    // A Node added after the return is acted on.
    fake.insert(&node("n3", "10.10.0.13", Some("10.244.3.0/24")))
        .unwrap();
    wait_until("a route to n3", || {
        n1.antrea_routes()
            .iter()
            .any(|r| r.starts_with("10.244.3.0/24"))
    });
    assert_eq!(
        reconciles_since(&n1, run, mark),
        [
            "NodeUpdated n2: reconciling peers",
            "NodeAdded n3: reconciling peers"
        ]
    );
    let mut with_n3 = routes.clone();
    with_n3.push("10.244.3.0/24 via 10.10.0.13 dev br-int".into());
    assert_eq!(n1.antrea_routes(), with_n3);

    // Peer updated (a new InternalIP), then deleted: its route and flows follow.
    fake.insert(&node("n3", "10.10.0.23", Some("10.244.3.0/24")))
        .unwrap();
    wait_until("n3's route via its new IP", || {
        n1.antrea_routes()
            .contains(&"10.244.3.0/24 via 10.10.0.23 dev br-int".to_owned())
    });
    fake.delete::<Node>("", "n3").unwrap();
    wait_until("n3's route to go", || {
        !n1.antrea_routes()
            .iter()
            .any(|r| r.starts_with("10.244.3.0/24"))
    });
    wait_until("n3's flows to go", || {
        !n1.flows().iter().any(|f| f.contains("10.244.3."))
    });
    fake.delete::<Node>("", "n2").unwrap();
    wait_until("n2's route to go", || n1.antrea_routes().is_empty());
    assert!(n1.stop_agent());
    assert!(n2.stop_agent());
}
