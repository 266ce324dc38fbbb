//! [`PolicyFeed`]: the NetworkPolicy controller's inputs from the shared reflectors — every
//! Namespace, every Pod of the cluster (policy peers live on other Nodes) and every
//! NetworkPolicy. The feed remembers the resourceVersion of each object it has passed on; when
//! a reflector wakes it, it compares the store with that memory and passes on what was added,
//! changed or removed. A re-list after an outage or a `410 Gone` therefore yields exactly the
//! differences, deletions missed while the watch was down included, and an unchanged store
//! yields nothing.

use std::collections::HashMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{Namespace, Pod};
use k8s_openapi::api::networking::v1::NetworkPolicy;
use kube::Resource;
use kube::runtime::reflector::{ObjectRef, Store};
use tokio::sync::mpsc;

use super::reflectors::{PolicyReflectors, Reflected};
use crate::cluster::ObjectKey;
use crate::controller::PolicyInput;

/// What the feed last passed on of one kind: resourceVersion by object.
type Seen<K> = HashMap<ObjectRef<K>, Option<String>>;

/// The reflectors' Namespaces, Pods and NetworkPolicies as [`PolicyInput`]s.
#[derive(Debug)]
pub struct PolicyFeed {
    namespaces: Reflected<Namespace>,
    pods: Reflected<Pod>,
    policies: Reflected<NetworkPolicy>,
    seen_namespaces: Seen<Namespace>,
    seen_pods: Seen<Pod>,
    seen_policies: Seen<NetworkPolicy>,
}

impl PolicyFeed {
    /// A feed over `reflectors` that has passed nothing on yet.
    pub fn new(reflectors: &PolicyReflectors) -> PolicyFeed {
        PolicyFeed {
            namespaces: reflectors.namespaces.clone(),
            pods: reflectors.pods.clone(),
            policies: reflectors.network_policies.clone(),
            seen_namespaces: HashMap::new(),
            seen_pods: HashMap::new(),
            seen_policies: HashMap::new(),
        }
    }

    /// The inputs that take the controller from what this feed passed on so far to what the
    /// stores hold now: Namespaces, then Pods, then NetworkPolicies; removals after additions.
    pub fn changes(&mut self) -> Vec<PolicyInput> {
        let mut inputs = Vec::new();
        diff(
            self.namespaces.store(),
            &mut self.seen_namespaces,
            &mut inputs,
            PolicyInput::Namespace,
            |gone| PolicyInput::NamespaceDeleted(gone.name),
        );
        diff(
            self.pods.store(),
            &mut self.seen_pods,
            &mut inputs,
            PolicyInput::Pod,
            |gone| PolicyInput::PodDeleted(object_key(gone)),
        );
        diff(
            self.policies.store(),
            &mut self.seen_policies,
            &mut inputs,
            PolicyInput::Policy,
            |gone| PolicyInput::PolicyDeleted(object_key(gone)),
        );
        inputs
    }

    /// Sends the changes each time a reflector wakes the feed, until `inputs` closes.
    pub async fn run(mut self, inputs: mpsc::Sender<PolicyInput>) {
        loop {
            tokio::select! {
                () = self.namespaces.changed() => {}
                () = self.pods.changed() => {}
                () = self.policies.changed() => {}
            }
            for input in self.changes() {
                if inputs.send(input).await.is_err() {
                    return;
                }
            }
        }
    }
}

fn object_key<K: Resource<DynamicType = ()>>(gone: ObjectRef<K>) -> ObjectKey {
    ObjectKey::new(gone.namespace.as_deref().unwrap_or("default"), &gone.name)
}

/// Appends to `inputs` what differs between `store` and `seen`, and makes `seen` match.
fn diff<K>(
    store: &Store<K>,
    seen: &mut Seen<K>,
    inputs: &mut Vec<PolicyInput>,
    upsert: impl Fn(Arc<K>) -> PolicyInput,
    removed: impl Fn(ObjectRef<K>) -> PolicyInput,
) where
    K: Resource<DynamicType = ()> + Clone + 'static,
{
    let mut now: Seen<K> = HashMap::with_capacity(seen.len());
    let mut changed = Vec::new();
    for object in store.state() {
        let key = ObjectRef::from_obj(object.as_ref());
        let version = object.meta().resource_version.clone();
        if seen.get(&key) != Some(&version) {
            changed.push((key.clone(), object));
        }
        now.insert(key, version);
    }
    let mut gone: Vec<ObjectRef<K>> = seen
        .keys()
        .filter(|key| !now.contains_key(key))
        .cloned()
        .collect();
    // In name order, so that the same change gives the same inputs.
    changed.sort_by(|(a, _), (b, _)| by_name(a, b));
    gone.sort_by(by_name);
    inputs.extend(changed.into_iter().map(|(_, object)| upsert(object)));
    inputs.extend(gone.into_iter().map(removed));
    *seen = now;
}

fn by_name<K: Resource<DynamicType = ()>>(
    a: &ObjectRef<K>,
    b: &ObjectRef<K>,
) -> std::cmp::Ordering {
    (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name))
}
