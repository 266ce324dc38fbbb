//! The agent's Kubernetes layer against the in-process fake API server (`fakeapi`, the real
//! HTTP API as a `tower::Service` under a real `kube::Client`): waiting for this Node's Pod
//! CIDR and giving up with the reason, the annotation patch, the cluster source (every Node,
//! this Node's Pods) with an outage and a compaction that re-list without events, the shared
//! reflectors, the NetworkPolicy feed from them, and Pod Events.

use std::time::Duration;

use agent::apiserver::{ApiAuth, Verdict};
use agent::cluster::ClusterEvent;
use agent::cniserver::AddOutcome;
use agent::config::{AgentConfig, Platform};
use agent::controller::PolicyInput;
use agent::kubernetes::node::{publish_annotations, wait_for_node, wanted_annotations};
use agent::kubernetes::{
    Keep, Kinds, KubernetesError, KubernetesSession, KubernetesSource, NodeWait, PolicyFeed,
    SharedReflectors, TRANSPORT_ADDRESSES_ANNOTATION,
};
use agent::node::MAC_ANNOTATION;
use fakeapi::FakeApiServer;
use k8s_openapi::api::core::v1::{Namespace, Node, Pod, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::api::networking::v1::NetworkPolicy;
use kube::{Api, Client};
use model::MacAddr;
use objects::{node, pod};
use serde_json::json;
use tokio::sync::mpsc;

mod objects;

/// Hang guard for waits (not a timing threshold).
const HANG_GUARD: Duration = Duration::from_secs(60);

fn client(fake: &FakeApiServer) -> Client {
    Client::new(fake.service(), "default")
}

fn config(yaml: &str) -> AgentConfig {
    AgentConfig::parse(yaml, Platform::Linux).unwrap().config
}

/// Polls `check` (async-friendly) until true or the hang guard fires.
async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + HANG_GUARD;
    while !check() {
        assert!(tokio::time::Instant::now() < deadline, "timed out: {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn next_event(events: &mut mpsc::Receiver<ClusterEvent>) -> String {
    tokio::time::timeout(HANG_GUARD, events.recv())
        .await
        .expect("an event before the hang guard")
        .expect("the source is running")
        .to_string()
}

#[tokio::test]
async fn the_node_wait_returns_once_the_pod_cidr_is_set() {
    let fake = FakeApiServer::new();
    fake.insert(&node("n1", "10.10.0.11", None)).unwrap();
    let api = Api::<Node>::all(client(&fake));
    let wait = NodeWait {
        timeout: HANG_GUARD,
        interval: Duration::from_millis(20),
    };
    let waiting = tokio::spawn(async move { wait_for_node(&api, "n1", wait).await });
    // Once the agent has seen the Node without a CIDR, the CIDR is assigned.
    eventually("a GET of Node n1", || {
        fake.requests()
            .iter()
            .any(|r| r.method == http::Method::GET && r.path == "/api/v1/nodes/n1")
    })
    .await;
    assert!(!waiting.is_finished());
    fake.insert(&node("n1", "10.10.0.11", Some("10.244.1.0/24")))
        .unwrap();
    let info = waiting.await.unwrap().unwrap();
    assert_eq!(info.pod_cidr.to_string(), "10.244.1.0/24");
    assert_eq!(info.ip.to_string(), "10.10.0.11");
}

#[tokio::test]
async fn the_node_wait_gives_up_with_the_last_reason() {
    let fake = FakeApiServer::new();
    let api = Api::<Node>::all(client(&fake));
    let wait = NodeWait {
        timeout: Duration::from_millis(200),
        interval: Duration::from_millis(50),
    };
    let error = wait_for_node(&api, "n1", wait).await.unwrap_err();
    assert!(
        matches!(&error, KubernetesError::NodeNotReady { reason, .. } if reason == "no such Node object"),
        "{error}"
    );
    fake.insert(&node("n1", "10.10.0.11", None)).unwrap();
    let error = wait_for_node(&api, "n1", wait).await.unwrap_err();
    assert!(
        error.to_string().contains("spec.podCIDR is not set"),
        "{error}"
    );
    fake.set_available(false);
    let error = wait_for_node(&api, "n1", wait).await.unwrap_err();
    assert!(error.to_string().contains("API server"), "{error}");
}

#[tokio::test]
async fn annotations_are_patched_once_and_removed_when_they_no_longer_apply() {
    let fake = FakeApiServer::new();
    fake.insert(&node("n1", "10.10.0.11", Some("10.244.1.0/24")))
        .unwrap();
    let api = Api::<Node>::all(client(&fake));
    let mac = MacAddr([2, 0, 0x0a, 0x0a, 0, 0x0b]);
    let ip = "10.10.0.11".parse().unwrap();
    let no_encap = wanted_annotations(
        &config("trafficEncapMode: noEncap\ntransportInterface: eth0\n"),
        mac,
        ip,
    );
    assert!(publish_annotations(&api, "n1", &no_encap).await.unwrap());
    let stored: Node = fake.get("", "n1").unwrap().unwrap();
    let annotations = stored.metadata.annotations.unwrap_or_default();
    assert_eq!(
        annotations.get(MAC_ANNOTATION).map(String::as_str),
        Some("02:00:0a:0a:00:0b")
    );
    assert_eq!(
        annotations
            .get(TRANSPORT_ADDRESSES_ANNOTATION)
            .map(String::as_str),
        Some("10.10.0.11")
    );
    let patches = || {
        fake.requests()
            .into_iter()
            .filter(|r| r.method == http::Method::PATCH)
            .collect::<Vec<_>>()
    };
    assert_eq!(patches().len(), 1);
    assert_eq!(patches()[0].content_type, "application/merge-patch+json");
    assert_eq!(patches()[0].path, "/api/v1/nodes/n1");
    // Again: nothing to send.
    assert!(!publish_annotations(&api, "n1", &no_encap).await.unwrap());
    assert_eq!(patches().len(), 1);
    // Encap without a transport interface: both go.
    let encap = wanted_annotations(&config("trafficEncapMode: encap\n"), mac, ip);
    assert!(publish_annotations(&api, "n1", &encap).await.unwrap());
    let stored: Node = fake.get("", "n1").unwrap().unwrap();
    let annotations = stored.metadata.annotations.unwrap_or_default();
    assert!(!annotations.contains_key(MAC_ANNOTATION), "{annotations:?}");
    assert!(!annotations.contains_key(TRANSPORT_ADDRESSES_ANNOTATION));
    // A Node that is gone is an error naming it.
    fake.delete::<Node>("", "n1").unwrap();
    let error = publish_annotations(&api, "n1", &no_encap)
        .await
        .unwrap_err();
    assert!(error.to_string().contains("n1"), "{error}");
}

/// A source for Node n1 over a fake holding n1, n2 and a Pod on each, listed and running.
async fn running_source(
    fake: &FakeApiServer,
) -> (agent::cluster::Store, mpsc::Receiver<ClusterEvent>) {
    fake.insert(&node("n1", "10.10.0.11", Some("10.244.1.0/24")))
        .unwrap();
    fake.insert(&node("n2", "10.10.0.12", Some("10.244.2.0/24")))
        .unwrap();
    fake.insert(&pod("p1", "n1")).unwrap();
    fake.insert(&pod("p2", "n2")).unwrap();
    let mut source = KubernetesSource::new(client(fake), "n1");
    let store = source.store();
    source.wait_synced(HANG_GUARD).await.unwrap();
    let (tx, rx) = mpsc::channel(64);
    tokio::spawn(source.run(tx));
    eventually("the Node and Pod watches", || fake.active_watches() == 2).await;
    (store, rx)
}

#[tokio::test]
async fn the_source_lists_every_node_and_this_nodes_pods_then_follows_them() {
    let fake = FakeApiServer::new();
    let (store, mut events) = running_source(&fake).await;
    assert!(store.is_synced());
    let nodes: Vec<String> = store
        .nodes()
        .iter()
        .map(|n| n.metadata.name.clone().unwrap())
        .collect();
    assert_eq!(nodes, ["n1", "n2"]);
    let pods: Vec<String> = store
        .pods()
        .iter()
        .map(|p| p.metadata.name.clone().unwrap())
        .collect();
    assert_eq!(pods, ["p1"], "only the Pods of this Node");
    // The Pod watch asks the server for this Node's Pods only.
    assert!(
        fake.requests()
            .iter()
            .any(|r| r.path == "/api/v1/pods" && r.has_param("fieldSelector", "spec.nodeName=n1"))
    );

    fake.insert(&node("n3", "10.10.0.13", Some("10.244.3.0/24")))
        .unwrap();
    assert_eq!(next_event(&mut events).await, "NodeAdded n3");
    fake.insert(&node("n3", "10.10.0.23", Some("10.244.3.0/24")))
        .unwrap();
    assert_eq!(next_event(&mut events).await, "NodeUpdated n3");
    fake.delete::<Node>("", "n2").unwrap();
    assert_eq!(next_event(&mut events).await, "NodeDeleted n2");
    fake.insert(&pod("p3", "n2")).unwrap();
    fake.insert(&pod("p4", "n1")).unwrap();
    assert_eq!(next_event(&mut events).await, "PodAdded default/p4");
    fake.delete::<Pod>("default", "p1").unwrap();
    assert_eq!(next_event(&mut events).await, "PodDeleted default/p1");
}

#[tokio::test]
async fn an_outage_and_a_compaction_resync_with_only_the_real_changes() {
    let fake = FakeApiServer::new();
    let (store, mut events) = running_source(&fake).await;
    // Outage: the store keeps its view.
    fake.set_available(false);
    eventually("the watches to break", || fake.active_watches() == 0).await;
    assert_eq!(store.nodes().len(), 2);
    assert_eq!(store.pods().len(), 1);
    // Meanwhile one Node changes, another comes and goes, and the history is lost: the
    // watchers must re-list, and the re-list amounts to the one real change.
    fake.insert(&node("n2", "10.10.0.22", Some("10.244.2.0/24")))
        .unwrap();
    fake.insert(&node("n9", "10.10.0.19", Some("10.244.9.0/24")))
        .unwrap();
    fake.delete::<Node>("", "n9").unwrap();
    fake.compact();
    let lists = || {
        fake.requests()
            .iter()
            .filter(|r| r.method == http::Method::GET && !r.has_param("watch", "true"))
            .count()
    };
    let lists_before = lists();
    fake.set_available(true);
    assert_eq!(next_event(&mut events).await, "NodeUpdated n2");
    // Nothing else: the next event is the change made after the return.
    fake.insert(&node("n3", "10.10.0.13", Some("10.244.3.0/24")))
        .unwrap();
    assert_eq!(next_event(&mut events).await, "NodeAdded n3");
    assert!(lists() > lists_before, "the watchers re-listed");

    // A change made during an outage arrives after it.
    fake.set_available(false);
    eventually("the watches to break", || fake.active_watches() == 0).await;
    fake.set_available(true);
    fake.delete::<Node>("", "n2").unwrap();
    assert_eq!(next_event(&mut events).await, "NodeDeleted n2");
}

#[tokio::test]
async fn shared_reflectors_sync_every_kind_and_keep_what_controllers_use() {
    let fake = FakeApiServer::new();
    for ns in ["default", "kube-system"] {
        let namespace: Namespace =
            serde_json::from_value(json!({"metadata": {"name": ns}})).unwrap();
        fake.insert(&namespace).unwrap();
    }
    fake.insert(&pod("p1", "n1")).unwrap();
    fake.insert(&pod("p2", "n2")).unwrap();
    let service: Service = serde_json::from_value(json!({
        "metadata": {
            "name": "web", "namespace": "default",
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{\"big\":1}"},
            "managedFields": [{"manager": "kubectl", "operation": "Apply"}],
        },
        "spec": {"ports": [{"port": 80}]},
    }))
    .unwrap();
    fake.insert(&service).unwrap();
    let policy: NetworkPolicy = serde_json::from_value(json!({
        "metadata": {"name": "deny", "namespace": "default"},
        "spec": {"podSelector": {}},
    }))
    .unwrap();
    fake.insert(&policy).unwrap();
    let slice: EndpointSlice = serde_json::from_value(json!({
        "metadata": {"name": "web-1", "namespace": "default"},
        "addressType": "IPv4", "endpoints": [],
    }))
    .unwrap();
    fake.insert(&slice).unwrap();

    let reflectors = SharedReflectors::start(
        &client(&fake),
        Keep::WhatControllersUse,
        Kinds::PolicyAndServices,
    );
    tokio::time::timeout(HANG_GUARD, reflectors.wait_synced())
        .await
        .unwrap();
    assert!(reflectors.all_synced());
    let policy = reflectors.policy.as_ref().expect("the policy kinds");
    assert_eq!(policy.namespaces.store().len(), 2);
    assert_eq!(policy.pods.store().len(), 2, "Pods of every Node");
    assert_eq!(policy.network_policies.store().len(), 1);
    assert_eq!(reflectors.endpoint_slices.store().len(), 1);
    let stored = reflectors.services.store().state();
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].metadata.managed_fields, None);
    assert_eq!(stored[0].metadata.annotations, None);
    // Changes keep flowing in.
    fake.delete::<Pod>("default", "p2").unwrap();
    eventually("the Pod deletion", || policy.pods.store().len() == 1).await;

    let everything =
        SharedReflectors::start(&client(&fake), Keep::Everything, Kinds::PolicyAndServices);
    tokio::time::timeout(HANG_GUARD, everything.wait_synced())
        .await
        .unwrap();
    let stored = everything.services.store().state();
    assert!(stored[0].metadata.managed_fields.is_some());
}

#[tokio::test]
async fn add_outcomes_become_pod_events() {
    let fake = FakeApiServer::new();
    let mut p1 = pod("p1", "n1");
    p1 = fake.insert(&p1).unwrap();
    let session = KubernetesSession::with_client(client(&fake), "n1");
    let mut writer = agent::cluster::StoreWriter::new();
    writer.apply_pod(p1.clone());
    let (services, adds) = session.start_services(writer.store(), Kinds::PolicyAndServices);
    adds.send(AddOutcome {
        pod: model::PodKey::new("default", "p1"),
        error: None,
    })
    .unwrap();
    adds.send(AddOutcome {
        pod: model::PodKey::new("default", "p1"),
        error: Some("OVS port did not get an OpenFlow port".into()),
    })
    .unwrap();
    let posted = || -> Vec<serde_json::Value> {
        fake.requests()
            .iter()
            .filter(|r| {
                r.method == http::Method::POST
                    && r.path == "/apis/events.k8s.io/v1/namespaces/default/events"
            })
            .map(|r| serde_json::from_slice(&r.body).unwrap())
            .collect()
    };
    eventually("two Events", || posted().len() == 2).await;
    let events = posted();
    let reasons: Vec<&str> = events
        .iter()
        .map(|e| e["reason"].as_str().unwrap())
        .collect();
    assert_eq!(reasons, ["NetworkReady", "NetworkNotReady"]);
    assert_eq!(events[0]["type"], "Normal");
    assert_eq!(events[1]["type"], "Warning");
    assert!(
        events[1]["note"]
            .as_str()
            .unwrap()
            .contains("OpenFlow port")
    );
    assert_eq!(events[0]["regarding"]["uid"], json!(p1.metadata.uid));
    assert_eq!(events[0]["reportingInstance"], "n1");
    drop(services);
}

/// `(API group, resource, verb)` of a request, as RBAC sees it.
fn rbac_request(r: &fakeapi::RecordedRequest) -> (String, String, String) {
    let (group, rest) = if let Some(rest) = r.path.strip_prefix("/api/v1/") {
        (String::new(), rest)
    } else {
        let rest = r.path.strip_prefix("/apis/").expect("an API path");
        let mut parts = rest.splitn(3, '/');
        let group = parts.next().unwrap().to_owned();
        let _version = parts.next();
        (group, parts.next().unwrap_or_default())
    };
    let segments: Vec<&str> = rest.split('/').collect();
    let (resource, name) = if segments[0] == "namespaces" && segments.len() >= 3 {
        (segments[2], segments.get(3))
    } else {
        (segments[0], segments.get(1))
    };
    let verb = match (r.method.as_str(), name.is_some()) {
        ("GET", _) if r.has_param("watch", "true") || r.has_param("watch", "1") => "watch",
        ("GET", false) => "list",
        ("GET", true) => "get",
        ("POST", _) => "create",
        ("PATCH", _) => "patch",
        ("PUT", _) => "update",
        ("DELETE", _) => "delete",
        (other, _) => panic!("unexpected method {other}"),
    };
    (group, resource.to_owned(), verb.to_owned())
}

#[tokio::test]
async fn the_cluster_role_grants_exactly_the_calls_the_agent_makes() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../build/yamls/antrea-agent-rbac.yml"
    ))
    .unwrap();
    let documents: Vec<serde_json::Value> = serde_saphyr::from_multiple(&text).unwrap();
    let role = documents
        .iter()
        .find(|d| d["kind"] == "ClusterRole")
        .expect("a ClusterRole");
    let mut granted = std::collections::BTreeSet::new();
    for rule in role["rules"].as_array().unwrap() {
        for group in rule["apiGroups"].as_array().unwrap() {
            for resource in rule["resources"].as_array().unwrap() {
                for verb in rule["verbs"].as_array().unwrap() {
                    granted.insert((
                        group.as_str().unwrap().to_owned(),
                        resource.as_str().unwrap().to_owned(),
                        verb.as_str().unwrap().to_owned(),
                    ));
                }
            }
        }
    }
    let binding = documents
        .iter()
        .find(|d| d["kind"] == "ClusterRoleBinding")
        .unwrap();
    assert_eq!(binding["roleRef"]["name"], role["metadata"]["name"]);
    assert_eq!(binding["subjects"][0]["name"], "antrea-agent");

    // Everything the agent does with the API: the Node wait, the source, the annotations, the
    // reflectors, a repeated Event (created, then patched as a series) and the reviews of its
    // API's callers.
    let fake = FakeApiServer::new();
    fake.insert(&node("n1", "10.10.0.11", Some("10.244.1.0/24")))
        .unwrap();
    fake.insert(&pod("p1", "n1")).unwrap();
    let session = KubernetesSession::with_client(client(&fake), "n1");
    session.wait_for_node(NodeWait::default()).await.unwrap();
    let source = session.listed_source(HANG_GUARD).await.unwrap();
    let store = source.store();
    let (tx, _rx) = mpsc::channel(64);
    tokio::spawn(source.run(tx));
    eventually("the Node watch", || fake.active_watches_of::<Node>() == 1).await;
    let api = Api::<Node>::all(client(&fake));
    let wanted = wanted_annotations(
        &config("trafficEncapMode: hybrid\n"),
        MacAddr([2, 0, 0, 0, 0, 1]),
        "10.10.0.11".parse().unwrap(),
    );
    publish_annotations(&api, "n1", &wanted).await.unwrap();
    let (services, adds) = session.start_services(store, Kinds::PolicyAndServices);
    tokio::time::timeout(HANG_GUARD, services.reflectors.wait_synced())
        .await
        .unwrap();
    for _ in 0..2 {
        adds.send(AddOutcome {
            pod: model::PodKey::new("default", "p1"),
            error: Some("no address left".into()),
        })
        .unwrap();
    }
    eventually("the Event's create and patch", || {
        fake.requests()
            .iter()
            .any(|r| r.path.contains("/events") && r.method == http::Method::PATCH)
    })
    .await;
    // The agent API reviewing a caller's token: a TokenReview, then a SubjectAccessReview
    // (no binding lets this ServiceAccount read /metrics).
    let auth = ApiAuth::with_api_server("loopback");
    auth.use_client(client(&fake));
    let token = fake.issue_service_account_token("monitoring", "prometheus");
    let mut headers = http::HeaderMap::new();
    headers.insert(
        http::header::AUTHORIZATION,
        format!("Bearer {token}").parse().unwrap(),
    );
    assert!(matches!(
        auth.check(&headers, "/metrics").await,
        Verdict::Forbidden(_)
    ));

    let used: std::collections::BTreeSet<_> = fake.requests().iter().map(rbac_request).collect();
    let not_granted: Vec<_> = used.difference(&granted).collect();
    assert!(not_granted.is_empty(), "not granted: {not_granted:?}");
    let unused: Vec<_> = granted.difference(&used).collect();
    assert!(unused.is_empty(), "granted but never used: {unused:?}");
}

/// A policy input in one line, for comparisons.
fn describe(input: &PolicyInput) -> String {
    let key = |meta: &kube::api::ObjectMeta| {
        format!(
            "{}/{}",
            meta.namespace.as_deref().unwrap_or_default(),
            meta.name.as_deref().unwrap_or_default()
        )
    };
    match input {
        PolicyInput::Namespace(ns) => format!(
            "Namespace {}",
            ns.metadata.name.as_deref().unwrap_or_default()
        ),
        PolicyInput::NamespaceDeleted(name) => format!("NamespaceDeleted {name}"),
        PolicyInput::Pod(pod) => format!("Pod {}", key(&pod.metadata)),
        PolicyInput::PodDeleted(k) => format!("PodDeleted {k}"),
        PolicyInput::Policy(policy) => format!("Policy {}", key(&policy.metadata)),
        PolicyInput::PolicyDeleted(k) => format!("PolicyDeleted {k}"),
        PolicyInput::Delivery(delivery) => format!("Delivery {delivery:?}"),
    }
}

/// The next `n` inputs the feed sends.
async fn next_inputs(inputs: &mut mpsc::Receiver<PolicyInput>, n: usize) -> Vec<String> {
    let mut got = Vec::new();
    while got.len() < n {
        let input = tokio::time::timeout(HANG_GUARD, inputs.recv())
            .await
            .unwrap_or_else(|_| panic!("only {got:?} before the hang guard"))
            .expect("the feed is running");
        got.push(describe(&input));
    }
    got
}

#[tokio::test]
async fn the_policy_feed_passes_on_every_change_once_and_deletions_missed_in_an_outage() {
    let fake = FakeApiServer::new();
    let namespace: Namespace =
        serde_json::from_value(json!({"metadata": {"name": "default", "labels": {"team": "a"}}}))
            .unwrap();
    fake.insert(&namespace).unwrap();
    // Pods of this Node and of others: policy peers are cluster-wide.
    fake.insert(&pod("p1", "n1")).unwrap();
    fake.insert(&pod("p2", "n2")).unwrap();
    let deny: NetworkPolicy = serde_json::from_value(json!({
        "metadata": {"name": "deny", "namespace": "default"},
        "spec": {"podSelector": {}, "policyTypes": ["Ingress"]},
    }))
    .unwrap();
    fake.insert(&deny).unwrap();

    let reflectors = SharedReflectors::start(
        &client(&fake),
        Keep::WhatControllersUse,
        Kinds::PolicyAndServices,
    );
    tokio::time::timeout(HANG_GUARD, reflectors.wait_synced())
        .await
        .unwrap();
    let mut feed = PolicyFeed::new(reflectors.policy.as_ref().expect("the policy kinds"));
    assert_eq!(
        feed.changes().iter().map(describe).collect::<Vec<_>>(),
        [
            "Namespace default",
            "Pod default/p1",
            "Pod default/p2",
            "Policy default/deny"
        ]
    );
    assert!(feed.changes().is_empty(), "nothing changed, nothing sent");

    let (tx, mut inputs) = mpsc::channel(64);
    tokio::spawn(feed.run(tx));
    // A label change on a Pod of another Node, then a policy deletion.
    let mut p2 = fake.get::<Pod>("default", "p2").unwrap().unwrap();
    p2.metadata.labels = Some([("app".to_owned(), "db".to_owned())].into());
    fake.insert(&p2).unwrap();
    assert_eq!(next_inputs(&mut inputs, 1).await, ["Pod default/p2"]);
    fake.delete::<NetworkPolicy>("default", "deny").unwrap();
    assert_eq!(
        next_inputs(&mut inputs, 1).await,
        ["PolicyDeleted default/deny"]
    );

    // An outage during which a Pod goes and the history is lost: the re-list's difference is
    // passed on, and nothing else.
    fake.set_available(false);
    eventually("the watches to break", || fake.active_watches() == 0).await;
    fake.delete::<Pod>("default", "p1").unwrap();
    fake.compact();
    fake.set_available(true);
    assert_eq!(next_inputs(&mut inputs, 1).await, ["PodDeleted default/p1"]);
    fake.insert(&deny).unwrap();
    assert_eq!(next_inputs(&mut inputs, 1).await, ["Policy default/deny"]);
    assert!(inputs.try_recv().is_err(), "exactly the changes");
}

#[tokio::test]
async fn in_controller_mode_only_this_nodes_pods_services_and_endpoint_slices_are_watched() {
    let fake = FakeApiServer::new();
    fake.insert(&node("n1", "10.10.0.11", Some("10.244.1.0/24")))
        .unwrap();
    fake.insert(&node("n2", "10.10.0.12", Some("10.244.2.0/24")))
        .unwrap();
    fake.insert(&pod("p1", "n1")).unwrap();
    fake.insert(&pod("p2", "n2")).unwrap();
    let namespace: Namespace =
        serde_json::from_value(json!({"metadata": {"name": "default"}})).unwrap();
    fake.insert(&namespace).unwrap();
    let policy: NetworkPolicy = serde_json::from_value(json!({
        "metadata": {"name": "deny", "namespace": "default"},
        "spec": {"podSelector": {}},
    }))
    .unwrap();
    fake.insert(&policy).unwrap();
    let service: Service = serde_json::from_value(json!({
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"ports": [{"port": 80}]},
    }))
    .unwrap();
    fake.insert(&service).unwrap();

    let session = KubernetesSession::with_client(client(&fake), "n1");
    let source = session.listed_source(HANG_GUARD).await.unwrap();
    let (deliveries_tx, deliveries) = mpsc::channel(1);
    let link = agent::agent::ControllerLink {
        deliveries,
        resync: Default::default(),
    };
    let api = agent::agent::ApiRun::start(session, source.store(), Some(link)).await;
    assert!(matches!(
        api.policy,
        agent::agent::PolicySource::Controller(_)
    ));
    let reflectors = &api.services.reflectors;
    assert!(reflectors.all_synced());
    assert!(reflectors.policy.is_none(), "no policy kinds watched");
    assert_eq!(reflectors.services.store().len(), 1);
    let pods: Vec<String> = source
        .store()
        .pods()
        .iter()
        .map(|p| p.metadata.name.clone().unwrap())
        .collect();
    assert_eq!(pods, ["p1"], "only the Pods of this Node");
    // What the API server was asked: Pods only with this Node's field selector, never a
    // Namespace or a NetworkPolicy.
    let requests = fake.requests();
    let pod_requests: Vec<_> = requests
        .iter()
        .filter(|r| r.path == "/api/v1/pods")
        .collect();
    assert!(!pod_requests.is_empty());
    for r in pod_requests {
        assert!(
            r.has_param("fieldSelector", "spec.nodeName=n1"),
            "a Pod request without this Node's selector: {} {}",
            r.path,
            r.query
        );
    }
    for r in &requests {
        assert!(
            r.path != "/api/v1/namespaces" && !r.path.contains("networkpolicies"),
            "{} {}",
            r.path,
            r.query
        );
    }
    drop(deliveries_tx);
}

#[tokio::test]
async fn the_role_grants_exactly_the_calls_the_controller_link_makes() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../build/yamls/antrea-agent-rbac.yml"
    ))
    .unwrap();
    let documents: Vec<serde_json::Value> = serde_saphyr::from_multiple(&text).unwrap();
    let role = documents
        .iter()
        .find(|d| d["kind"] == "Role" && d["metadata"]["name"] == "antrea-agent")
        .expect("the Role antrea-agent");
    assert_eq!(role["metadata"]["namespace"], "kube-system");
    let binding = documents
        .iter()
        .find(|d| d["kind"] == "RoleBinding" && d["metadata"]["name"] == "antrea-agent")
        .expect("the RoleBinding antrea-agent");
    assert_eq!(binding["roleRef"]["name"], "antrea-agent");
    assert_eq!(binding["subjects"][0]["name"], "antrea-agent");
    // (group, resource, verb, name): every rule names its objects.
    let mut granted = std::collections::BTreeSet::new();
    for rule in role["rules"].as_array().unwrap() {
        for group in rule["apiGroups"].as_array().unwrap() {
            for resource in rule["resources"].as_array().unwrap() {
                for verb in rule["verbs"].as_array().unwrap() {
                    for name in rule["resourceNames"].as_array().expect("resourceNames") {
                        granted.insert((
                            group.as_str().unwrap().to_owned(),
                            resource.as_str().unwrap().to_owned(),
                            verb.as_str().unwrap().to_owned(),
                            name.as_str().unwrap().to_owned(),
                        ));
                    }
                }
            }
        }
    }

    // Controller mode without controllerAddresses: the agent reads the CA's ConfigMap and the
    // controller's Service, both in kube-system, then dials the Service's address.
    let fake = FakeApiServer::new();
    let ca: k8s_openapi::api::core::v1::ConfigMap = serde_json::from_value(json!({
        "metadata": {"name": "antrea-ca", "namespace": "kube-system"},
        "data": {"ca.crt": "not a certificate: the watch cannot start, the calls are made"},
    }))
    .unwrap();
    fake.insert(&ca).unwrap();
    let service: Service = serde_json::from_value(json!({
        "metadata": {"name": "antrea", "namespace": "kube-system"},
        "spec": {"clusterIP": "10.96.0.9", "ports": [{"port": 443}]},
    }))
    .unwrap();
    fake.insert(&service).unwrap();
    let link = agent::kubernetes::link_to_controller(
        &agent::config::ControllerConnection::defaults(),
        &client(&fake),
        "n1",
    );
    eventually("the ConfigMap and the Service read", || {
        let paths: Vec<String> = fake.requests().iter().map(|r| r.path.clone()).collect();
        paths.iter().any(|p| p.ends_with("/configmaps/antrea-ca"))
            && paths.iter().any(|p| p.ends_with("/services/antrea"))
    })
    .await;
    drop(link);
    let used: std::collections::BTreeSet<_> = fake
        .requests()
        .iter()
        .map(|r| {
            assert!(
                r.path.starts_with("/api/v1/namespaces/kube-system/"),
                "{}",
                r.path
            );
            let (group, resource, verb) = rbac_request(r);
            let name = r.path.rsplit('/').next().unwrap().to_owned();
            (group, resource, verb, name)
        })
        .collect();
    let not_granted: Vec<_> = used.difference(&granted).collect();
    assert!(not_granted.is_empty(), "not granted: {not_granted:?}");
    let unused: Vec<_> = granted.difference(&used).collect();
    assert!(unused.is_empty(), "granted but never used: {unused:?}");
}
