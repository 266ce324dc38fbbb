//! The agent binary's Service proxy on the fake API server with a real Open vSwitch
//! (`ovs-ofctl dump-groups`/`dump-flows` as the oracle): a Service and its EndpointSlice
//! created in the API become the ServiceLB flow and a select group with a bucket per endpoint;
//! one endpoint fewer in the slice is one bucket fewer; a restarted agent has them in its
//! first round (its proxy controller sends nothing for the unchanged Service); deleting the
//! Service removes its flows and its group.
#![cfg(target_os = "linux")]

mod objects;
mod support;

use fakeapi::FakeApiServer;
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::discovery::v1::EndpointSlice;
use objects::node;
use serde_json::json;
use support::{Lan, TestNode, serve_in, wait_until};

fn web_service() -> Service {
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"namespace": "default", "name": "web"},
        "spec": {
            "clusterIP": "10.96.0.10", "clusterIPs": ["10.96.0.10"],
            "ports": [{"name": "http", "port": 80, "protocol": "TCP", "targetPort": "web"}],
        },
    }))
    .unwrap()
}

/// The slice of `web` with endpoints `10.244.1.<last>` on port 8080.
fn web_slice(lasts: &[u8]) -> EndpointSlice {
    let endpoints: Vec<_> = lasts
        .iter()
        .map(|last| json!({"addresses": [format!("10.244.1.{last}")], "nodeName": "n1"}))
        .collect();
    serde_json::from_value(json!({
        "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {
            "namespace": "default", "name": "web-abcde",
            "labels": {"kubernetes.io/service-name": "web"},
        },
        "addressType": "IPv4",
        "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}],
        "endpoints": endpoints,
    }))
    .unwrap()
}

/// The select groups of the bridge, one line each.
fn select_groups(node: &TestNode) -> Vec<String> {
    node.ovs
        .ofctl(&["-O", "OpenFlow15", "dump-groups", "{mgmt:br-int}"])
        .expect("dump-groups")
        .lines()
        .filter(|l| l.contains("type=select"))
        .map(|l| l.trim().to_owned())
        .collect()
}

fn buckets(group: &str) -> usize {
    group.matches("bucket=").count()
}

/// The frontend flows of the cluster IP (ServiceLB, by its match).
fn frontend_flows(node: &TestNode) -> Vec<String> {
    node.flows()
        .into_iter()
        .filter(|f| f.contains("nw_dst=10.96.0.10") && f.contains("tp_dst=80"))
        .collect()
}

/// The proxy controller's update lines for `default/web` in run `run`.
fn web_updates(node: &TestNode, run: u32) -> Vec<String> {
    node.log(run)
        .lines()
        .filter(|l| l.contains("Service default/web"))
        .map(str::to_owned)
        .collect()
}

#[test]
fn services_in_the_api_become_groups_and_flows_in_ovs_and_survive_a_restart() {
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
    assert!(select_groups(&n1).is_empty());

    // Created: one frontend flow into a group with a bucket per endpoint.
    fake.insert(&web_service()).unwrap();
    fake.insert(&web_slice(&[10, 11, 12])).unwrap();
    wait_until("the Service's group with 3 buckets", || {
        select_groups(&n1).iter().any(|g| buckets(g) == 3)
    });
    let frontends = frontend_flows(&n1);
    assert_eq!(frontends.len(), 1, "{frontends:?}");
    let groups = select_groups(&n1);
    assert_eq!(groups.len(), 1, "{groups:?}");
    let group_id = groups[0]
        .split(',')
        .next()
        .and_then(|g| g.strip_prefix("group_id="))
        .unwrap()
        .to_owned();
    assert!(
        frontends[0].contains(&format!("group:{group_id}")),
        "{frontends:?} into {groups:?}"
    );
    for last in [10, 11, 12] {
        let dnat = format!("nat(dst=10.244.1.{last}:8080)");
        assert!(n1.flows().iter().any(|f| f.contains(&dnat)), "{dnat}");
    }
    wait_until("the update line", || {
        web_updates(&n1, 1)
            .iter()
            .any(|l| l.contains("3 endpoints") && l.contains("flow mods"))
    });

    // One endpoint fewer: the same group, one bucket fewer, .12's DNAT flow gone.
    fake.insert(&web_slice(&[10, 11])).unwrap();
    wait_until("the group with 2 buckets", || {
        select_groups(&n1).iter().any(|g| buckets(g) == 2)
    });
    assert_eq!(select_groups(&n1).len(), 1);
    assert!(
        !n1.flows()
            .iter()
            .any(|f| f.contains("nat(dst=10.244.1.12:8080)"))
    );

    // Restart: the first round already holds the Service, so right after bring-up the group
    // and the frontend are there and the controller sends nothing for it.
    let groups = select_groups(&n1);
    let frontends = frontend_flows(&n1);
    assert!(n1.stop_agent());
    n1.start_and_wait_up();
    assert_eq!(select_groups(&n1), groups, "groups right after bring-up");
    assert_eq!(
        frontend_flows(&n1),
        frontends,
        "frontends right after bring-up"
    );
    wait_until("the CNI server", || n1.cni_listening(2));
    // A later change shows the controller runs; before it, it sent nothing for `web`.
    fake.insert(&web_slice(&[10, 11, 13])).unwrap();
    wait_until("the restarted agent's update", || {
        n1.flows()
            .iter()
            .any(|f| f.contains("nat(dst=10.244.1.13:8080)"))
    });
    let updates = web_updates(&n1, 2);
    assert_eq!(
        updates.len(),
        1,
        "only the later change is sent: {updates:?}"
    );
    assert!(updates[0].contains("3 endpoints"), "{updates:?}");

    // Deleted: its flows and its group go.
    fake.delete::<Service>("default", "web").unwrap();
    wait_until("the Service's group to go", || {
        select_groups(&n1).is_empty()
    });
    assert!(frontend_flows(&n1).is_empty());
    assert!(!n1.flows().iter().any(|f| f.contains("nat(dst=10.244.1.")));
    wait_until("the removal line", || {
        web_updates(&n1, 2).iter().any(|l| l.contains("removed"))
    });
    assert!(n1.stop_agent());
}
