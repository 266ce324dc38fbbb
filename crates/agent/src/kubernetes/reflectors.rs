//! [`SharedReflectors`]: one kube-runtime reflector per kind the agent's policy and Service
//! controllers read — Namespaces, Pods of every Node, NetworkPolicies (only when policy is
//! computed on the Node, [`Kinds::PolicyAndServices`]), Services, EndpointSlices — each a
//! watcher (paged list, then watch with bookmarks, re-list on `410
//! Gone`, exponential backoff) filling a shared read-only [`Store`]. Each kind says whether it
//! has been listed once, so readiness can wait for it, and wakes a reader when it changed,
//! telling it which objects did ([`ChangeJournal`]).
//!
//! [`Keep::WhatControllersUse`] drops what no controller reads before an object is stored
//! ([`Trim`]): from every kind `metadata.managedFields` and the
//! `kubectl.kubernetes.io/last-applied-configuration` annotation, which together are often
//! larger than the rest of the object; Pods, by far the most numerous, are cut down to what the
//! policy computation reads of them (`netpol::input::PodInfo`) and their identity.

use std::fmt;
use std::sync::Arc;

use futures_util::StreamExt;
use k8s_openapi::api::core::v1::{
    Container, ContainerPort, Namespace, Pod, PodSpec, PodStatus, Service,
};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::api::networking::v1::NetworkPolicy;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::runtime::reflector::{self, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Client, Resource};
use serde::de::DeserializeOwned;
use tokio::sync::{Notify, watch};
use tokio::task::JoinHandle;

use super::store_changes::{ChangeJournal, StoreChanges};

/// The annotation `kubectl apply` writes: a copy of the whole object.
pub const LAST_APPLIED_ANNOTATION: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// How much of each object the stores keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// The objects as the API server sends them.
    Everything,
    /// What the controllers read: without `managedFields` and the last-applied annotation,
    /// and Pods cut down further ([`Trim`]).
    WhatControllersUse,
}

/// What [`Keep::WhatControllersUse`] keeps of one kind.
pub trait Trim: Resource {
    /// Removes what no controller reads. By default `managedFields` and the last-applied
    /// annotation ([`trim_metadata`]).
    fn trim(&mut self) {
        trim_metadata(self.meta_mut());
    }
}

/// Drops `managedFields` and the last-applied annotation (and the annotations if that was the
/// only one).
pub fn trim_metadata(meta: &mut ObjectMeta) {
    meta.managed_fields = None;
    if let Some(annotations) = &mut meta.annotations {
        annotations.remove(LAST_APPLIED_ANNOTATION);
        if annotations.is_empty() {
            meta.annotations = None;
        }
    }
}

impl Trim for Namespace {}
impl Trim for NetworkPolicy {}
impl Trim for Service {}
impl Trim for EndpointSlice {}

/// A Pod keeps its identity (namespace, name, uid, resourceVersion), its labels, and what the
/// policy computation reads (`netpol::input::PodInfo::from_k8s`): its Node, `hostNetwork`, the
/// named ports of its containers and init containers (a container without one is dropped: it
/// has nothing a NetworkPolicy can name), its phase and its IPs (and its host's). The rest —
/// annotations, owner references, volumes, images, resources, tolerations, conditions,
/// container statuses — is dropped.
impl Trim for Pod {
    fn trim(&mut self) {
        let meta = std::mem::take(&mut self.metadata);
        self.metadata = ObjectMeta {
            name: meta.name,
            namespace: meta.namespace,
            uid: meta.uid,
            resource_version: meta.resource_version,
            labels: meta.labels,
            ..ObjectMeta::default()
        };
        self.spec = self.spec.take().map(|spec| PodSpec {
            node_name: spec.node_name,
            host_network: spec.host_network,
            containers: named_ports_only(spec.containers),
            init_containers: spec
                .init_containers
                .map(named_ports_only)
                .filter(|c| !c.is_empty()),
            ..PodSpec::default()
        });
        self.status = self.status.take().map(|status| PodStatus {
            phase: status.phase,
            pod_ip: status.pod_ip,
            pod_ips: status.pod_ips,
            host_ip: status.host_ip,
            host_ips: status.host_ips,
            ..PodStatus::default()
        });
    }
}

/// The containers that have named ports, each with its name and those ports only.
fn named_ports_only(containers: Vec<Container>) -> Vec<Container> {
    containers
        .into_iter()
        .filter_map(|container| {
            let ports: Vec<ContainerPort> = container
                .ports
                .into_iter()
                .flatten()
                .filter(|p| p.name.is_some())
                .collect();
            (!ports.is_empty()).then(|| Container {
                name: container.name,
                ports: Some(ports),
                ..Container::default()
            })
        })
        .collect()
}

/// Which kinds the reflectors watch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kinds {
    /// Namespaces, every Pod and NetworkPolicies (policy computed on the Node), and Services
    /// and EndpointSlices.
    PolicyAndServices,
    /// Services and EndpointSlices only (policy received from antrea-controller).
    Services,
}

/// One kind's store, whether it has been listed once, and a wake-up for its changes with the
/// keys of the objects changed. The flag is set, the change recorded and the wake-up given by
/// the reflector's task after an event came out of the reflector, so the store already holds it.
pub struct Reflected<K: Resource<DynamicType = ()> + Clone + 'static> {
    store: Store<K>,
    listed: watch::Receiver<bool>,
    changed: Arc<Notify>,
    changes: ChangeJournal<K>,
}

impl<K: Resource<DynamicType = ()> + Clone + 'static> Reflected<K> {
    /// The read-only store.
    pub fn store(&self) -> &Store<K> {
        &self.store
    }

    /// Whether the first list has been stored.
    pub fn is_synced(&self) -> bool {
        *self.listed.borrow()
    }

    /// Waits for the first list; `false` if the reflector stopped before it.
    pub async fn synced(&self) -> bool {
        self.listed.clone().wait_for(|listed| *listed).await.is_ok()
    }

    /// Returns once the store has changed since the last return (at once when it has): the
    /// changes in between coalesce into one wake-up, and their keys into one
    /// [`Self::take_changes`]. For one reader.
    pub async fn changed(&self) {
        self.changed.notified().await;
    }

    /// Which objects the store changed since the last call (everything at the first, and after
    /// a re-list). For the one reader of [`Self::changed`].
    pub fn take_changes(&self) -> StoreChanges<K> {
        self.changes.take()
    }
}

impl<K: Resource<DynamicType = ()> + Clone + 'static> Clone for Reflected<K> {
    fn clone(&self) -> Self {
        Reflected {
            store: self.store.clone(),
            listed: self.listed.clone(),
            changed: self.changed.clone(),
            changes: self.changes.clone(),
        }
    }
}

impl<K: Resource<DynamicType = ()> + Clone + 'static> fmt::Debug for Reflected<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reflected")
            .field("kind", &K::kind(&()))
            .field("objects", &self.store.len())
            .field("synced", &self.is_synced())
            .finish()
    }
}

/// The kinds NetworkPolicy is computed from.
#[derive(Debug, Clone)]
pub struct PolicyReflectors {
    /// Namespaces (for policies' namespace selectors).
    pub namespaces: Reflected<Namespace>,
    /// Pods of every Node (for policies' Pod selectors).
    pub pods: Reflected<Pod>,
    /// NetworkPolicies.
    pub network_policies: Reflected<NetworkPolicy>,
}

/// The reflectors; their tasks stop when this is dropped.
#[derive(Debug)]
pub struct SharedReflectors {
    /// The policy kinds, watched only with [`Kinds::PolicyAndServices`].
    pub policy: Option<PolicyReflectors>,
    /// Services.
    pub services: Reflected<Service>,
    /// EndpointSlices.
    pub endpoint_slices: Reflected<EndpointSlice>,
    tasks: Vec<JoinHandle<()>>,
}

/// Starts one reflector task for `K`, keeping what `keep` says.
fn reflect<K>(client: &Client, keep: Keep, tasks: &mut Vec<JoinHandle<()>>) -> Reflected<K>
where
    K: Trim<DynamicType = ()> + Clone + DeserializeOwned + fmt::Debug + Send + Sync + 'static,
{
    let (store, writer) = reflector::store();
    let (listed_tx, listed) = watch::channel(false);
    let changed = Arc::new(Notify::new());
    let notify = changed.clone();
    let changes = ChangeJournal::default();
    let journal = changes.clone();
    let kind = K::kind(&());
    let stream = watcher::watcher(Api::<K>::all(client.clone()), watcher::Config::default())
        .default_backoff()
        .modify(move |object: &mut K| {
            if keep == Keep::WhatControllersUse {
                object.trim();
            }
        })
        .reflect(writer);
    tasks.push(tokio::spawn(async move {
        let mut stream = std::pin::pin!(stream);
        let mut failing = false;
        while let Some(item) = stream.next().await {
            match item {
                Ok(event) => {
                    if failing {
                        tracing::info!("{kind} watch back");
                    }
                    failing = false;
                    if matches!(event, watcher::Event::InitDone) {
                        listed_tx.send_replace(true);
                        tracing::debug!("{kind}: listed");
                    }
                    journal.record(&event);
                    notify.notify_one();
                }
                Err(error) => {
                    if !failing {
                        tracing::warn!("{kind} watch failed ({error}); retrying with backoff");
                    }
                    failing = true;
                }
            }
        }
    }));
    Reflected {
        store,
        listed,
        changed,
        changes,
    }
}

impl SharedReflectors {
    /// Starts a reflector of each of `kinds` on `client`, and a task logging when all are
    /// synced.
    pub fn start(client: &Client, keep: Keep, kinds: Kinds) -> SharedReflectors {
        let mut tasks = Vec::new();
        let policy = match kinds {
            Kinds::PolicyAndServices => Some(PolicyReflectors {
                namespaces: reflect(client, keep, &mut tasks),
                pods: reflect(client, keep, &mut tasks),
                network_policies: reflect(client, keep, &mut tasks),
            }),
            Kinds::Services => None,
        };
        let mut reflectors = SharedReflectors {
            policy,
            services: reflect(client, keep, &mut tasks),
            endpoint_slices: reflect(client, keep, &mut tasks),
            tasks: Vec::new(),
        };
        let readiness = reflectors.handles();
        tasks.push(tokio::spawn(async move {
            if readiness.wait_synced().await {
                let policy = match &readiness.policy {
                    Some(p) => format!(
                        "{} Namespaces, {} Pods, {} NetworkPolicies, ",
                        p.namespaces.store.len(),
                        p.pods.store.len(),
                        p.network_policies.store.len()
                    ),
                    None => String::new(),
                };
                tracing::info!(
                    "shared reflectors synced: {policy}{} Services, {} EndpointSlices",
                    readiness.services.store.len(),
                    readiness.endpoint_slices.store.len()
                );
            }
        }));
        reflectors.tasks = tasks;
        reflectors
    }

    /// Read handles on the same stores, owning no task.
    fn handles(&self) -> SharedReflectors {
        SharedReflectors {
            policy: self.policy.clone(),
            services: self.services.clone(),
            endpoint_slices: self.endpoint_slices.clone(),
            tasks: Vec::new(),
        }
    }

    /// Each kind watched and whether it is synced.
    pub fn synced(&self) -> Vec<(&'static str, bool)> {
        let mut kinds = Vec::new();
        if let Some(p) = &self.policy {
            kinds.extend([
                ("Namespaces", p.namespaces.is_synced()),
                ("Pods", p.pods.is_synced()),
                ("NetworkPolicies", p.network_policies.is_synced()),
            ]);
        }
        kinds.extend([
            ("Services", self.services.is_synced()),
            ("EndpointSlices", self.endpoint_slices.is_synced()),
        ]);
        kinds
    }

    /// A probe of [`Self::all_synced`] that owns no task (for readiness).
    pub fn synced_probe(&self) -> impl Fn() -> bool + Send + Sync + 'static {
        let handles = self.handles();
        move || handles.all_synced()
    }

    /// Whether every kind is synced.
    pub fn all_synced(&self) -> bool {
        self.synced().iter().all(|(_, synced)| *synced)
    }

    /// Waits until every kind is synced; `false` if a reflector stopped before.
    pub async fn wait_synced(&self) -> bool {
        let policy = match &self.policy {
            Some(p) => {
                p.namespaces.synced().await
                    && p.pods.synced().await
                    && p.network_policies.synced().await
            }
            None => true,
        };
        policy && self.services.synced().await && self.endpoint_slices.synced().await
    }
}

impl Drop for SharedReflectors {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry;
    use netpol::input::PodInfo;
    use serde_json::json;

    use super::*;

    fn service(annotations: &[(&str, &str)]) -> Service {
        Service {
            metadata: ObjectMeta {
                name: Some("web".into()),
                namespace: Some("default".into()),
                annotations: Some(
                    annotations
                        .iter()
                        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                        .collect::<BTreeMap<_, _>>(),
                ),
                managed_fields: Some(vec![ManagedFieldsEntry {
                    manager: Some("kubectl".into()),
                    ..Default::default()
                }]),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn trimming_drops_managed_fields_and_last_applied_only() {
        let mut s = service(&[(LAST_APPLIED_ANNOTATION, "{...}"), ("team", "a")]);
        s.trim();
        assert_eq!(s.metadata.managed_fields, None);
        assert_eq!(
            s.metadata.annotations,
            Some(BTreeMap::from([("team".to_owned(), "a".to_owned())]))
        );
        assert_eq!(s.metadata.name.as_deref(), Some("web"));
        let mut s = service(&[(LAST_APPLIED_ANNOTATION, "{...}")]);
        s.trim();
        assert_eq!(s.metadata.annotations, None);
    }

    /// A Pod as the API server returns it: `host_network` and `phase` vary.
    fn pod(host_network: bool, phase: &str) -> Pod {
        serde_json::from_value(json!({
            "metadata": {
                "name": "web-1", "namespace": "shop", "uid": "u-1", "resourceVersion": "42",
                "labels": {"app": "web"}, "annotations": {"team": "a"},
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                    "name": "web", "uid": "u-0"}],
                "managedFields": [{"manager": "kubelet", "operation": "Update"}],
            },
            "spec": {
                "nodeName": "n1", "hostNetwork": host_network,
                "initContainers": [{"name": "init", "image": "init:1",
                    "ports": [{"name": "setup", "containerPort": 9000, "protocol": "UDP"}]}],
                "containers": [{"name": "main", "image": "app:1",
                    "ports": [{"name": "http", "containerPort": 8080}, {"containerPort": 9090}],
                    "volumeMounts": [{"name": "token", "mountPath": "/var/run/secrets"}]},
                    {"name": "sidecar", "image": "proxy:1", "ports": [{"containerPort": 15000}]}],
                "volumes": [{"name": "token", "emptyDir": {}}],
                "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists"}],
            },
            "status": {
                "phase": phase, "podIP": "10.0.0.5", "podIPs": [{"ip": "10.0.0.5"}],
                "hostIP": "192.168.0.1",
                "conditions": [{"type": "Ready", "status": "True"}],
                "containerStatuses": [{"name": "main", "ready": true, "restartCount": 0,
                    "image": "app:1", "imageID": "app@sha256:0"}],
            },
        }))
        .expect("a Pod")
    }

    #[test]
    fn a_trimmed_pod_reads_the_same_to_the_policy_computation() {
        for (host_network, phase) in [(false, "Running"), (true, "Running"), (false, "Failed")] {
            let whole = pod(host_network, phase);
            let mut trimmed = whole.clone();
            trimmed.trim();
            assert_eq!(
                PodInfo::from_k8s(&trimmed).expect("a trimmed Pod reads"),
                PodInfo::from_k8s(&whole).expect("a whole Pod reads"),
                "hostNetwork {host_network}, phase {phase}"
            );
        }
        let mut trimmed = pod(false, "Running");
        trimmed.trim();
        assert_eq!(trimmed.metadata.uid.as_deref(), Some("u-1"));
        assert_eq!(trimmed.metadata.resource_version.as_deref(), Some("42"));
        let info = PodInfo::from_k8s(&trimmed).expect("a trimmed Pod reads");
        assert_eq!(
            info.named_ports.len(),
            2,
            "the named ports of both containers"
        );
        assert!(info.ip.is_some());
    }

    #[test]
    fn a_trimmed_pod_drops_what_no_controller_reads() {
        let mut p = pod(false, "Running");
        p.trim();
        assert_eq!(p.metadata.annotations, None);
        assert_eq!(p.metadata.owner_references, None);
        assert_eq!(p.metadata.managed_fields, None);
        let spec = p.spec.expect("the spec");
        assert_eq!(spec.volumes, None);
        assert_eq!(spec.tolerations, None);
        let names: Vec<&str> = spec.containers.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["main"], "only containers with named ports");
        let main = &spec.containers[0];
        assert_eq!(
            main.ports.as_ref().map(Vec::len),
            Some(1),
            "only the named port"
        );
        assert_eq!(main.image, None);
        assert_eq!(main.volume_mounts, None);
        let status = p.status.expect("the status");
        assert_eq!(status.conditions, None);
        assert_eq!(status.container_statuses, None);
        assert_eq!(status.host_ip.as_deref(), Some("192.168.0.1"));
    }
}
