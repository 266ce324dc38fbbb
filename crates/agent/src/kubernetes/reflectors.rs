//! [`SharedReflectors`]: one kube-runtime reflector per kind the agent's policy and Service
//! controllers read — Namespaces, Pods of every Node, NetworkPolicies, Services,
//! EndpointSlices — each a watcher (paged list, then watch with bookmarks, re-list on `410
//! Gone`, exponential backoff) filling a shared read-only [`Store`]. Each kind says whether it
//! has been listed once, so readiness can wait for it, and wakes a reader when it changed.
//!
//! [`Keep::WhatControllersUse`] drops what no controller reads before an object is stored:
//! `metadata.managedFields` and the `kubectl.kubernetes.io/last-applied-configuration`
//! annotation, which together are often larger than the rest of the object.

use std::fmt;
use std::sync::Arc;

use futures_util::StreamExt;
use k8s_openapi::api::core::v1::{Namespace, Pod, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::api::networking::v1::NetworkPolicy;
use kube::runtime::reflector::{self, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Client, Resource, ResourceExt};
use serde::de::DeserializeOwned;
use tokio::sync::{Notify, watch};
use tokio::task::JoinHandle;

/// The annotation `kubectl apply` writes: a copy of the whole object.
pub const LAST_APPLIED_ANNOTATION: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// How much of each object the stores keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// The objects as the API server sends them.
    Everything,
    /// Without `managedFields` and the last-applied annotation.
    WhatControllersUse,
}

/// Removes from `object` what [`Keep::WhatControllersUse`] drops.
pub fn trim<K: Resource>(object: &mut K) {
    object.managed_fields_mut().clear();
    object.annotations_mut().remove(LAST_APPLIED_ANNOTATION);
    if object
        .meta()
        .annotations
        .as_ref()
        .is_some_and(|a| a.is_empty())
    {
        object.meta_mut().annotations = None;
    }
    if object
        .meta()
        .managed_fields
        .as_ref()
        .is_some_and(|m| m.is_empty())
    {
        object.meta_mut().managed_fields = None;
    }
}

/// One kind's store, whether it has been listed once, and a wake-up for its changes. The flag
/// is set, and the wake-up given, by the reflector's task after an event came out of the
/// reflector, so the store already holds it.
pub struct Reflected<K: Resource<DynamicType = ()> + Clone + 'static> {
    store: Store<K>,
    listed: watch::Receiver<bool>,
    changed: Arc<Notify>,
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
    /// changes in between coalesce into one wake-up, so a reader compares the store with what it
    /// last saw. For one reader.
    pub async fn changed(&self) {
        self.changed.notified().await;
    }
}

impl<K: Resource<DynamicType = ()> + Clone + 'static> Clone for Reflected<K> {
    fn clone(&self) -> Self {
        Reflected {
            store: self.store.clone(),
            listed: self.listed.clone(),
            changed: self.changed.clone(),
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

/// The reflectors; their tasks stop when this is dropped.
#[derive(Debug)]
pub struct SharedReflectors {
    /// Namespaces (for policies' namespace selectors).
    pub namespaces: Reflected<Namespace>,
    /// Pods of every Node (for policies' Pod selectors and Service endpoints).
    pub pods: Reflected<Pod>,
    /// NetworkPolicies.
    pub network_policies: Reflected<NetworkPolicy>,
    /// Services.
    pub services: Reflected<Service>,
    /// EndpointSlices.
    pub endpoint_slices: Reflected<EndpointSlice>,
    tasks: Vec<JoinHandle<()>>,
}

/// Starts one reflector task for `K`, keeping what `keep` says.
fn reflect<K>(client: &Client, keep: Keep, tasks: &mut Vec<JoinHandle<()>>) -> Reflected<K>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + fmt::Debug + Send + Sync + 'static,
{
    let (store, writer) = reflector::store();
    let (listed_tx, listed) = watch::channel(false);
    let changed = Arc::new(Notify::new());
    let notify = changed.clone();
    let kind = K::kind(&());
    let stream = watcher::watcher(Api::<K>::all(client.clone()), watcher::Config::default())
        .default_backoff()
        .modify(move |object: &mut K| {
            if keep == Keep::WhatControllersUse {
                trim(object);
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
    }
}

impl SharedReflectors {
    /// Starts every reflector on `client`, and a task logging when all are synced.
    pub fn start(client: &Client, keep: Keep) -> SharedReflectors {
        let mut tasks = Vec::new();
        let mut reflectors = SharedReflectors {
            namespaces: reflect(client, keep, &mut tasks),
            pods: reflect(client, keep, &mut tasks),
            network_policies: reflect(client, keep, &mut tasks),
            services: reflect(client, keep, &mut tasks),
            endpoint_slices: reflect(client, keep, &mut tasks),
            tasks: Vec::new(),
        };
        let readiness = reflectors.handles();
        tasks.push(tokio::spawn(async move {
            if readiness.wait_synced().await {
                tracing::info!(
                    "shared reflectors synced: {} Namespaces, {} Pods, {} NetworkPolicies, \
                     {} Services, {} EndpointSlices",
                    readiness.namespaces.store.len(),
                    readiness.pods.store.len(),
                    readiness.network_policies.store.len(),
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
            namespaces: self.namespaces.clone(),
            pods: self.pods.clone(),
            network_policies: self.network_policies.clone(),
            services: self.services.clone(),
            endpoint_slices: self.endpoint_slices.clone(),
            tasks: Vec::new(),
        }
    }

    /// Each kind and whether it is synced.
    pub fn synced(&self) -> [(&'static str, bool); 5] {
        [
            ("Namespaces", self.namespaces.is_synced()),
            ("Pods", self.pods.is_synced()),
            ("NetworkPolicies", self.network_policies.is_synced()),
            ("Services", self.services.is_synced()),
            ("EndpointSlices", self.endpoint_slices.is_synced()),
        ]
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
        self.namespaces.synced().await
            && self.pods.synced().await
            && self.network_policies.synced().await
            && self.services.synced().await
            && self.endpoint_slices.synced().await
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

    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ManagedFieldsEntry, ObjectMeta};

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
        trim(&mut s);
        assert_eq!(s.metadata.managed_fields, None);
        assert_eq!(
            s.metadata.annotations,
            Some(BTreeMap::from([("team".to_owned(), "a".to_owned())]))
        );
        let mut s = service(&[(LAST_APPLIED_ANNOTATION, "{...}")]);
        trim(&mut s);
        assert_eq!(s.metadata.annotations, None);
    }
}
