//! The [`Feed`] serves no snapshot before it has listed Pods, Namespaces and NetworkPolicies in
//! full: a watcher waiting while the NetworkPolicy list is held back by the API server gets,
//! as its first message, a snapshot that holds the policy. A snapshot served earlier would be
//! a partial view that drops the policies not listed yet from the agent.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use controller::feed::Feed;
use controlplane::Delivery;
use controlplane::hub::{Hub, HubLimits};
use fakeapi::FakeApiServer;
use futures_util::StreamExt;
use k8s_openapi::api::core::v1::{Namespace, Pod};
use k8s_openapi::api::networking::v1::NetworkPolicy;
use model::policy::PodKey;
use serde_json::json;
use tokio::sync::watch;
use tower::ServiceExt;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// How long the test waits for an event that must come.
const DEADLINE: Duration = Duration::from_secs(60);

/// What the API server has been asked so far, of the requests the test waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Seen {
    PodWatch,
    NamespaceWatch,
    PolicyListHeld,
}

#[tokio::test]
async fn no_snapshot_is_served_before_every_kind_is_listed() {
    let fake = FakeApiServer::new();
    let namespace: Namespace =
        serde_json::from_value(json!({"metadata": {"name": "x", "labels": {"team": "a"}}}))
            .unwrap();
    let pod: Pod = serde_json::from_value(json!({
        "metadata": {"namespace": "x", "name": "a", "labels": {"app": "web"}},
        "spec": {"nodeName": "n1", "containers": [{"name": "c"}]},
        "status": {"phase": "Running", "podIP": "10.0.0.1"},
    }))
    .unwrap();
    let policy: NetworkPolicy = serde_json::from_value(json!({
        "metadata": {"namespace": "x", "name": "web"},
        "spec": {"podSelector": {"matchLabels": {"app": "web"}}, "ingress": [{"from": [{"podSelector": {}}]}]},
    }))
    .unwrap();
    fake.insert(&namespace).unwrap();
    fake.insert(&pod).unwrap();
    fake.insert(&policy).unwrap();

    // The API server as the feed sees it: every request served by the fake, but the
    // NetworkPolicy list (not its watch) held until the test opens the gate.
    let (open, gate) = watch::channel(false);
    let (seen_sender, mut seen) = watch::channel(BTreeSet::new());
    let seen_sender = Arc::new(seen_sender);
    let served = fake.service();
    let gated = tower::service_fn(move |request: http::Request<kube::client::Body>| {
        let fake = served.clone();
        let mut gate = gate.clone();
        let seen = seen_sender.clone();
        async move {
            let path = request.uri().path().to_owned();
            let watching = request
                .uri()
                .query()
                .is_some_and(|q| q.contains("watch=true"));
            let event = match (path.rsplit('/').next(), watching) {
                (Some("pods"), true) => Some(Seen::PodWatch),
                (Some("namespaces"), true) => Some(Seen::NamespaceWatch),
                (Some("networkpolicies"), false) => Some(Seen::PolicyListHeld),
                _ => None,
            };
            if let Some(event) = event {
                seen.send_modify(|seen| {
                    seen.insert(event);
                });
            }
            if event == Some(Seen::PolicyListHeld) {
                gate.wait_for(|open| *open).await.map_err(BoxError::from)?;
            }
            fake.oneshot(request).await.map_err(BoxError::from)
        }
    });
    let client = kube::Client::new(gated, "default");

    // The watcher waits for its snapshot from before the feed starts.
    let (hub, driver) = Hub::new(HubLimits::default());
    let mut watcher = hub.subscribe("n1", None, "the test's watcher");
    let feed = tokio::spawn(async move { Feed::default().run(client, &driver).await });

    // Pods and Namespaces are listed (their watches start after their lists), NetworkPolicies
    // are not: the feed has had every chance to serve a snapshot now.
    tokio::time::timeout(DEADLINE, seen.wait_for(|seen| seen.len() == 3))
        .await
        .expect("the feed lists Pods and Namespaces and asks for NetworkPolicies")
        .unwrap();
    open.send_replace(true);

    let first = tokio::time::timeout(DEADLINE, watcher.next())
        .await
        .expect("a snapshot once every kind is listed")
        .expect("the watcher's stream goes on")
        .expect("the watcher is served");
    let Delivery::Snapshot(view) = &first.delivery else {
        panic!("the first message is not a snapshot: {first:?}");
    };
    let policies: Vec<String> = view.policies.keys().map(|k| k.to_string()).collect();
    assert_eq!(
        policies,
        ["x/web"],
        "the first snapshot lacks the policy: {view:?}"
    );
    // Its applied-to group and its peer group, each with the Pod.
    assert_eq!(view.groups.len(), 2, "{view:?}");
    for members in view.groups.values() {
        let pods: Vec<&PodKey> = members.keys().collect();
        assert_eq!(pods, [&PodKey::new("x", "a")], "{view:?}");
    }
    feed.abort();
}
