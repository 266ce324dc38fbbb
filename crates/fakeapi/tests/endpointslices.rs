//! The EndpointSlice controller through a real kube-rs client against the in-process fake: Pods
//! and Services created through the API become slices as kube-controller-manager would make
//! them (selection, conditions, named target ports, 100 endpoints per slice), changes follow,
//! slices of selector-less Services stay the user's, a recompute without change writes nothing,
//! and malformed objects are skipped without stopping the others.

mod support;

use fakeapi::FakeApiServer;
use k8s_openapi::api::core::v1::{Pod, Service};
use k8s_openapi::api::discovery::v1::{Endpoint, EndpointSlice};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};
use std::time::Duration;
use support::{PATIENCE, client};

const MANAGED_BY: &str = "endpointslice.kubernetes.io/managed-by=endpointslice-controller.k8s.io";

/// A server with the controller on, and typed APIs for namespace `ns`.
struct Lab {
    server: FakeApiServer,
    client: kube::Client,
    ns: &'static str,
    settled: std::sync::atomic::AtomicUsize,
}

impl Lab {
    fn new(ns: &'static str) -> Self {
        let server = FakeApiServer::new();
        server.start_endpointslice_controller().unwrap();
        Self::on(server, ns)
    }

    fn on(server: FakeApiServer, ns: &'static str) -> Self {
        Self {
            client: client(&server),
            server,
            ns,
            settled: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    fn pods(&self) -> Api<Pod> {
        Api::namespaced(self.client.clone(), self.ns)
    }

    fn services(&self) -> Api<Service> {
        Api::namespaced(self.client.clone(), self.ns)
    }

    fn slices(&self) -> Api<EndpointSlice> {
        Api::namespaced(self.client.clone(), self.ns)
    }

    async fn create_pod(&self, pod: Value) {
        let pod: Pod = serde_json::from_value(pod).unwrap();
        self.pods()
            .create(&PostParams::default(), &pod)
            .await
            .unwrap();
    }

    async fn create_service(&self, service: Value) -> Service {
        let service: Service = serde_json::from_value(service).unwrap();
        self.services()
            .create(&PostParams::default(), &service)
            .await
            .unwrap()
    }

    /// The managed slices of Service `name`, by name.
    async fn managed(&self, name: &str) -> Vec<EndpointSlice> {
        let selector = format!("kubernetes.io/service-name={name},{MANAGED_BY}");
        let mut slices = self
            .slices()
            .list(&ListParams::default().labels(&selector))
            .await
            .unwrap()
            .items;
        slices.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
        slices
    }

    /// Waits until the managed slices of `name` satisfy `done`, and returns them.
    async fn until(
        &self,
        name: &str,
        what: &str,
        done: impl Fn(&[EndpointSlice]) -> bool,
    ) -> Vec<EndpointSlice> {
        let deadline = tokio::time::Instant::now() + PATIENCE;
        loop {
            let slices = self.managed(name).await;
            if done(&slices) {
                return slices;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "{what} not within {PATIENCE:?}; slices of {name}: {slices:#?}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Waits until the controller has handled every change made so far: it handles changes in
    /// commit order, so once a Service created now has its slice, everything before is done.
    async fn settle(&self) {
        let n = self
            .settled
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let name = format!("settle-{n}");
        let marker = Lab::on(self.server.clone(), "settle");
        marker
            .create_service(service(
                "settle",
                &name,
                json!({"settle": "yes"}),
                json!([]),
            ))
            .await;
        marker
            .until(&name, "the marker Service's slice", |s| s.len() == 1)
            .await;
    }
}

/// A Pod in `ns` with `labels`, on `node`, with `ip` (none if empty), ready or not, and
/// `ports` as its container's ports.
fn pod(ns: &str, name: &str, labels: Value, ip: &str, ready: bool, ports: Value) -> Value {
    let mut pod = json!({
        "metadata": {"name": name, "namespace": ns, "labels": labels},
        "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "i", "ports": ports}]},
        "status": {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": if ready { "True" } else { "False" }}],
        },
    });
    if !ip.is_empty() {
        pod["status"]["podIP"] = json!(ip);
        pod["status"]["podIPs"] = json!([{"ip": ip}]);
    }
    pod
}

fn service(ns: &str, name: &str, selector: Value, ports: Value) -> Value {
    json!({
        "metadata": {"name": name, "namespace": ns},
        "spec": {"selector": selector, "ports": ports},
    })
}

fn web_port() -> Value {
    json!([{"name": "http", "port": 80, "targetPort": 8080, "protocol": "TCP"}])
}

fn endpoints(slices: &[EndpointSlice]) -> Vec<&Endpoint> {
    slices.iter().flat_map(|s| &s.endpoints).collect()
}

fn pod_names(slices: &[EndpointSlice]) -> Vec<String> {
    let mut names: Vec<String> = endpoints(slices)
        .iter()
        .filter_map(|e| e.target_ref.as_ref()?.name.clone())
        .collect();
    names.sort();
    names
}

fn conditions(slices: &[EndpointSlice], pod: &str) -> (bool, bool, bool) {
    let endpoint = endpoints(slices)
        .into_iter()
        .find(|e| e.target_ref.as_ref().and_then(|r| r.name.as_deref()) == Some(pod))
        .unwrap_or_else(|| panic!("no endpoint for {pod}"));
    let c = endpoint.conditions.as_ref().unwrap();
    (c.ready.unwrap(), c.serving.unwrap(), c.terminating.unwrap())
}

/// A slice port as (name, protocol, number).
type SlicePort = (String, String, i32);

fn ports(slice: &EndpointSlice) -> Vec<SlicePort> {
    slice
        .ports
        .iter()
        .flatten()
        .map(|p| {
            (
                p.name.clone().unwrap(),
                p.protocol.clone().unwrap(),
                p.port.unwrap(),
            )
        })
        .collect()
}

#[tokio::test]
async fn existing_objects_are_synced_at_start_into_one_owned_slice() {
    let server = FakeApiServer::new();
    let lab = Lab::on(server.clone(), "shop");
    let web = json!({"app": "web"});
    lab.create_pod(pod(
        "shop",
        "web-1",
        web.clone(),
        "10.244.1.5",
        true,
        json!([]),
    ))
    .await;
    lab.create_pod(pod(
        "shop",
        "web-2",
        web.clone(),
        "10.244.2.6",
        false,
        json!([]),
    ))
    .await;
    lab.create_pod(pod("shop", "web-no-ip", web.clone(), "", true, json!([])))
        .await;
    lab.create_pod(pod(
        "shop",
        "db-1",
        json!({"app": "db"}),
        "10.244.1.7",
        true,
        json!([]),
    ))
    .await;
    Lab::on(server.clone(), "other")
        .create_pod(pod(
            "other",
            "web-elsewhere",
            web.clone(),
            "10.244.1.8",
            true,
            json!([]),
        ))
        .await;
    let svc = lab
        .create_service(service("shop", "web", web.clone(), web_port()))
        .await;
    assert!(lab.managed("web").await.is_empty(), "no controller yet");

    server.start_endpointslice_controller().unwrap();
    let slices = lab
        .until("web", "the slice of web", |s| {
            pod_names(s) == ["web-1", "web-2"]
        })
        .await;
    assert_eq!(slices.len(), 1);
    let slice = &slices[0];
    let name = slice.metadata.name.as_deref().unwrap();
    assert!(name.starts_with("web-") && name.len() > 4, "{name}");
    assert_eq!(slice.address_type, "IPv4");
    let labels = slice.metadata.labels.as_ref().unwrap();
    assert_eq!(labels["kubernetes.io/service-name"], "web");
    assert_eq!(
        labels["endpointslice.kubernetes.io/managed-by"],
        "endpointslice-controller.k8s.io"
    );
    let owner = &slice.metadata.owner_references.as_ref().unwrap()[0];
    assert_eq!(
        (
            owner.api_version.as_str(),
            owner.kind.as_str(),
            owner.name.as_str()
        ),
        ("v1", "Service", "web")
    );
    assert_eq!(Some(&owner.uid), svc.metadata.uid.as_ref());
    assert_eq!(owner.controller, Some(true));
    assert_eq!(ports(slice), [("http".to_owned(), "TCP".to_owned(), 8080)]);
    let first = &slice.endpoints[0];
    assert_eq!(first.addresses, ["10.244.1.5"]);
    assert_eq!(first.node_name.as_deref(), Some("n1"));
    let target = first.target_ref.as_ref().unwrap();
    let stored: Pod = server.get("shop", "web-1").unwrap().unwrap();
    assert_eq!(target.kind.as_deref(), Some("Pod"));
    assert_eq!(target.namespace.as_deref(), Some("shop"));
    assert_eq!(target.uid, stored.metadata.uid);
}

#[tokio::test]
async fn ready_serving_and_terminating_follow_the_pod_as_upstream() {
    let lab = Lab::new("default");
    let web = json!({"app": "web"});
    let deleting = |mut pod: Value| {
        pod["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
        pod
    };
    lab.create_pod(pod(
        "default",
        "ready",
        web.clone(),
        "10.0.0.1",
        true,
        json!([]),
    ))
    .await;
    lab.create_pod(pod(
        "default",
        "unready",
        web.clone(),
        "10.0.0.2",
        false,
        json!([]),
    ))
    .await;
    lab.create_pod(deleting(pod(
        "default",
        "ready-terminating",
        web.clone(),
        "10.0.0.3",
        true,
        json!([]),
    )))
    .await;
    lab.create_pod(deleting(pod(
        "default",
        "unready-terminating",
        web.clone(),
        "10.0.0.4",
        false,
        json!([]),
    )))
    .await;
    let mut failed = pod(
        "default",
        "failed",
        web.clone(),
        "10.0.0.5",
        false,
        json!([]),
    );
    failed["status"]["phase"] = json!("Failed");
    lab.create_pod(failed).await;
    lab.create_service(service("default", "web", web.clone(), web_port()))
        .await;
    let mut tolerant = service("default", "tolerant", web.clone(), web_port());
    tolerant["spec"]["publishNotReadyAddresses"] = json!(true);
    lab.create_service(tolerant).await;

    let all = [
        "ready",
        "ready-terminating",
        "unready",
        "unready-terminating",
    ];
    let slices = lab
        .until("web", "web's endpoints", |s| pod_names(s) == all)
        .await;
    assert_eq!(conditions(&slices, "ready"), (true, true, false));
    assert_eq!(conditions(&slices, "unready"), (false, false, false));
    assert_eq!(
        conditions(&slices, "ready-terminating"),
        (false, true, true)
    );
    assert_eq!(
        conditions(&slices, "unready-terminating"),
        (false, false, true)
    );

    let slices = lab
        .until("tolerant", "tolerant's endpoints", |s| pod_names(s) == all)
        .await;
    for pod in all {
        let (ready, serving, _) = conditions(&slices, pod);
        assert!(ready && serving, "{pod} with publishNotReadyAddresses");
    }
    assert_eq!(
        conditions(&slices, "unready-terminating"),
        (true, true, true)
    );

    // Readiness changes are followed.
    let patch = json!({"status": {"conditions": [{"type": "Ready", "status": "True"}]}});
    lab.pods()
        .patch_status("unready", &PatchParams::default(), &Patch::Merge(patch))
        .await
        .unwrap();
    lab.until("web", "unready turning ready", |s| {
        pod_names(s) == all && conditions(s, "unready") == (true, true, false)
    })
    .await;
}

#[tokio::test]
async fn a_named_target_port_resolving_differently_splits_the_slices() {
    let lab = Lab::new("default");
    let web = json!({"app": "web"});
    let named = |name: &str, number: i32, protocol: &str| json!([{"name": name, "containerPort": number, "protocol": protocol}]);
    lab.create_pod(pod(
        "default",
        "a",
        web.clone(),
        "10.0.0.1",
        true,
        named("http", 8080, "TCP"),
    ))
    .await;
    lab.create_pod(pod(
        "default",
        "b",
        web.clone(),
        "10.0.0.2",
        true,
        named("http", 9090, "TCP"),
    ))
    .await;
    lab.create_pod(pod(
        "default",
        "a2",
        web.clone(),
        "10.0.0.3",
        true,
        named("http", 8080, "TCP"),
    ))
    .await;
    // Named http, but UDP: does not resolve for a TCP port.
    lab.create_pod(pod(
        "default",
        "c",
        web.clone(),
        "10.0.0.4",
        true,
        named("http", 7070, "UDP"),
    ))
    .await;
    let service_ports = json!([
        {"name": "web", "port": 80, "targetPort": "http"},
        {"name": "metrics", "port": 9100, "targetPort": 9100, "protocol": "TCP"},
    ]);
    lab.create_service(service("default", "web", web.clone(), service_ports))
        .await;

    let slices = lab
        .until("web", "three slices", |s| {
            s.len() == 3 && pod_names(s).len() == 4
        })
        .await;
    let mut by_ports: Vec<(Vec<SlicePort>, Vec<String>)> = slices
        .iter()
        .map(|s| (ports(s), pod_names(std::slice::from_ref(s))))
        .collect();
    by_ports.sort();
    let metrics = ("metrics".to_owned(), "TCP".to_owned(), 9100);
    let web_on = |n: i32| ("web".to_owned(), "TCP".to_owned(), n);
    assert_eq!(
        by_ports,
        [
            (vec![metrics.clone()], vec!["c".to_owned()]),
            (
                vec![web_on(8080), metrics.clone()],
                vec!["a".to_owned(), "a2".to_owned()]
            ),
            (vec![web_on(9090), metrics], vec!["b".to_owned()]),
        ]
    );
    let names: std::collections::BTreeSet<_> =
        slices.iter().map(|s| s.metadata.name.clone()).collect();
    assert_eq!(names.len(), 3, "distinct slice names");
}

#[tokio::test]
async fn more_than_100_endpoints_take_a_second_slice() {
    let lab = Lab::new("default");
    let web = json!({"app": "web"});
    for i in 0..150 {
        let name = format!("web-{i:03}");
        let ip = format!("10.1.{}.{}", i / 100, i % 100 + 1);
        let pod: Pod =
            serde_json::from_value(pod("default", &name, web.clone(), &ip, true, json!([])))
                .unwrap();
        lab.server.insert(&pod).unwrap();
    }
    lab.create_service(service("default", "web", web.clone(), web_port()))
        .await;
    let slices = lab
        .until("web", "150 endpoints", |s| pod_names(s).len() == 150)
        .await;
    let mut sizes: Vec<usize> = slices.iter().map(|s| s.endpoints.len()).collect();
    sizes.sort();
    assert_eq!(sizes, [50, 100]);
    let mut addresses: Vec<&String> = endpoints(&slices)
        .iter()
        .flat_map(|e| &e.addresses)
        .collect();
    addresses.sort();
    addresses.dedup();
    assert_eq!(addresses.len(), 150);

    // Down to 100: one slice again, the other deleted.
    for i in 100..150 {
        lab.server
            .delete::<Pod>("default", &format!("web-{i:03}"))
            .unwrap();
    }
    lab.until("web", "one slice of 100", |s| {
        s.len() == 1 && s[0].endpoints.len() == 100
    })
    .await;
}

#[tokio::test]
async fn a_label_change_moves_the_pod_out_and_back() {
    let lab = Lab::new("default");
    let web = json!({"app": "web"});
    lab.create_pod(pod(
        "default",
        "a",
        web.clone(),
        "10.0.0.1",
        true,
        json!([]),
    ))
    .await;
    lab.create_pod(pod(
        "default",
        "b",
        web.clone(),
        "10.0.0.2",
        true,
        json!([]),
    ))
    .await;
    lab.create_service(service("default", "web", web.clone(), web_port()))
        .await;
    lab.until("web", "both pods", |s| pod_names(s) == ["a", "b"])
        .await;
    let relabel = |app: &str| Patch::Merge(json!({"metadata": {"labels": {"app": app}}}));
    lab.pods()
        .patch("b", &PatchParams::default(), &relabel("db"))
        .await
        .unwrap();
    lab.until("web", "b gone", |s| pod_names(s) == ["a"]).await;
    lab.pods()
        .patch("b", &PatchParams::default(), &relabel("web"))
        .await
        .unwrap();
    lab.until("web", "b back", |s| pod_names(s) == ["a", "b"])
        .await;
    lab.pods()
        .delete("a", &DeleteParams::default())
        .await
        .unwrap();
    lab.until("web", "a deleted", |s| pod_names(s) == ["b"])
        .await;
}

#[tokio::test]
async fn deleting_the_service_deletes_only_its_managed_slices() {
    let lab = Lab::new("default");
    let web = json!({"app": "web"});
    lab.create_pod(pod(
        "default",
        "a",
        web.clone(),
        "10.0.0.1",
        true,
        json!([]),
    ))
    .await;
    lab.create_service(service("default", "web", web.clone(), web_port()))
        .await;
    lab.create_service(service("default", "keep", web.clone(), web_port()))
        .await;
    // A slice a user made for web, without the managed-by label.
    let mine: EndpointSlice = serde_json::from_value(json!({
        "metadata": {"name": "web-mine", "labels": {"kubernetes.io/service-name": "web"}},
        "addressType": "IPv4",
        "endpoints": [{"addresses": ["192.0.2.1"]}],
    }))
    .unwrap();
    let mine = lab
        .slices()
        .create(&PostParams::default(), &mine)
        .await
        .unwrap();
    lab.until("web", "web's slice", |s| pod_names(s) == ["a"])
        .await;
    lab.until("keep", "keep's slice", |s| pod_names(s) == ["a"])
        .await;

    lab.services()
        .delete("web", &DeleteParams::default())
        .await
        .unwrap();
    lab.until("web", "web's slices gone", <[EndpointSlice]>::is_empty)
        .await;
    lab.settle().await;
    let still = lab.slices().get("web-mine").await.unwrap();
    assert_eq!(
        still.metadata.resource_version,
        mine.metadata.resource_version
    );
    assert_eq!(pod_names(&lab.managed("keep").await), ["a"]);
}

#[tokio::test]
async fn a_selectorless_services_hand_made_slice_is_left_alone() {
    let lab = Lab::new("default");
    lab.create_pod(pod(
        "default",
        "a",
        json!({"app": "web"}),
        "10.0.0.1",
        true,
        json!([]),
    ))
    .await;
    lab.create_service(json!({
        "metadata": {"name": "external", "namespace": "default"},
        "spec": {"ports": [{"name": "db", "port": 5432, "protocol": "TCP"}]},
    }))
    .await;
    // The user's slice, even carrying the managed-by label of another controller.
    let mine: EndpointSlice = serde_json::from_value(json!({
        "metadata": {"name": "external-1", "labels": {
            "kubernetes.io/service-name": "external",
            "endpointslice.kubernetes.io/managed-by": "someone-else",
        }},
        "addressType": "IPv4",
        "ports": [{"name": "db", "port": 5432, "protocol": "TCP"}],
        "endpoints": [{"addresses": ["192.0.2.10"]}],
    }))
    .unwrap();
    let mine = lab
        .slices()
        .create(&PostParams::default(), &mine)
        .await
        .unwrap();
    // A change to the user's slice and to the Service reach the controller too.
    lab.slices()
        .patch(
            "external-1",
            &PatchParams::default(),
            &Patch::Merge(json!({"endpoints": [{"addresses": ["192.0.2.11"]}]})),
        )
        .await
        .unwrap();
    lab.services()
        .patch(
            "external",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"touched": "yes"}}})),
        )
        .await
        .unwrap();
    let patched_rv = lab
        .slices()
        .get("external-1")
        .await
        .unwrap()
        .metadata
        .resource_version;
    lab.settle().await;
    assert!(lab.managed("external").await.is_empty());
    let still = lab.slices().get("external-1").await.unwrap();
    assert_eq!(still.metadata.resource_version, patched_rv);
    assert_eq!(still.endpoints[0].addresses, ["192.0.2.11"]);
    assert_eq!(still.metadata.uid, mine.metadata.uid);
}

#[tokio::test]
async fn a_recompute_that_changes_nothing_writes_nothing() {
    let lab = Lab::new("default");
    let web = json!({"app": "web"});
    lab.create_pod(pod(
        "default",
        "a",
        web.clone(),
        "10.0.0.1",
        true,
        json!([]),
    ))
    .await;
    lab.create_service(service("default", "web", web.clone(), web_port()))
        .await;
    let before = lab
        .until("web", "web's slice", |s| pod_names(s) == ["a"])
        .await;
    lab.settle().await;
    let rv_before = lab.server.resource_version();

    // Changes that concern web but not its slice: a Pod annotation, a Service label.
    lab.pods()
        .patch(
            "a",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"annotations": {"note": "x"}}})),
        )
        .await
        .unwrap();
    lab.services()
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"tier": "front"}}})),
        )
        .await
        .unwrap();
    lab.settle().await;
    let after = lab.managed("web").await;
    assert_eq!(
        after[0].metadata.resource_version,
        before[0].metadata.resource_version
    );
    // Exactly the two patches and the marker Service with its one slice were written.
    assert_eq!(lab.server.resource_version(), rv_before + 4);

    // A managed slice changed behind the controller's back is put right.
    lab.slices()
        .patch(
            before[0].metadata.name.as_deref().unwrap(),
            &PatchParams::default(),
            &Patch::Merge(json!({"endpoints": []})),
        )
        .await
        .unwrap();
    lab.until("web", "the slice repaired", |s| pod_names(s) == ["a"])
        .await;
}

#[tokio::test]
async fn malformed_pods_and_services_are_skipped_while_the_others_work() {
    let lab = Lab::new("default");
    let web = json!({"app": "web"});
    lab.create_pod(pod(
        "default",
        "bad-ip",
        web.clone(),
        "10.0.0.999",
        true,
        json!([]),
    ))
    .await;
    // Not a Pod k8s-openapi can read: containers is not a list.
    let mut unreadable = pod(
        "default",
        "unreadable",
        web.clone(),
        "10.0.0.3",
        true,
        json!([]),
    );
    unreadable["spec"]["containers"] = json!("oops");
    let resource = lab.server.resource_of::<Pod>().unwrap();
    lab.server.insert_json(&resource, unreadable).unwrap();
    lab.create_pod(pod(
        "default",
        "good",
        web.clone(),
        "10.0.0.2",
        true,
        json!([]),
    ))
    .await;
    lab.create_service(service(
        "default",
        "bad",
        json!({"app": "no spaces allowed"}),
        web_port(),
    ))
    .await;
    let mut unreadable_svc = service("default", "unreadable", web.clone(), web_port());
    unreadable_svc["spec"]["ports"] = json!({"not": "a list"});
    let resource = lab.server.resource_of::<Service>().unwrap();
    lab.server.insert_json(&resource, unreadable_svc).unwrap();
    lab.create_service(service("default", "web", web.clone(), web_port()))
        .await;

    lab.until("web", "the good pod", |s| pod_names(s) == ["good"])
        .await;
    lab.settle().await;
    assert!(lab.managed("bad").await.is_empty());
    assert!(lab.managed("unreadable").await.is_empty());
    // Mending the Pod brings it in.
    lab.pods()
        .patch_status(
            "bad-ip",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"podIP": "10.0.0.9", "podIPs": [{"ip": "10.0.0.9"}]}})),
        )
        .await
        .unwrap();
    lab.until("web", "the mended pod", |s| {
        pod_names(s) == ["bad-ip", "good"]
    })
    .await;
}
