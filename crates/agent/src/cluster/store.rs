//! The agent's view of the cluster: Nodes and Namespaces by name, Pods and NetworkPolicies by
//! namespace/name, and whether the first full view has arrived. One [`StoreWriter`] per source
//! changes it; any number of [`Store`] handles read it.

use std::collections::BTreeMap;
use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use k8s_openapi::api::core::v1::{Namespace, Node, Pod};
use k8s_openapi::api::networking::v1::NetworkPolicy;

use super::decode::ClusterObject;
use super::event::{ClusterEvent, ObjectKey};

#[derive(Debug, Default)]
struct State {
    nodes: BTreeMap<String, Arc<Node>>,
    pods: BTreeMap<ObjectKey, Arc<Pod>>,
    namespaces: BTreeMap<String, Arc<Namespace>>,
    policies: BTreeMap<ObjectKey, Arc<NetworkPolicy>>,
    synced: bool,
}

/// A read handle on the cluster view (cheap to clone; every clone sees the same objects).
#[derive(Debug, Clone, Default)]
pub struct Store {
    state: Arc<RwLock<State>>,
}

/// The name a Node is stored under.
pub(crate) fn node_key(node: &Node) -> String {
    node.metadata.name.clone().unwrap_or_default()
}

/// The name a Namespace is stored under.
pub(crate) fn namespace_key(namespace: &Namespace) -> String {
    namespace.metadata.name.clone().unwrap_or_default()
}

/// The key a Pod is stored under; a Pod without a namespace is in `default`, as in Kubernetes.
pub(crate) fn pod_key(pod: &Pod) -> ObjectKey {
    ObjectKey::new(
        pod.metadata.namespace.as_deref().unwrap_or("default"),
        pod.metadata.name.as_deref().unwrap_or_default(),
    )
}

/// The key a NetworkPolicy is stored under (`default` when it has no namespace).
pub(crate) fn policy_key(policy: &NetworkPolicy) -> ObjectKey {
    ObjectKey::new(
        policy.metadata.namespace.as_deref().unwrap_or("default"),
        policy.metadata.name.as_deref().unwrap_or_default(),
    )
}

impl Store {
    fn read(&self) -> RwLockReadGuard<'_, State> {
        self.state.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> RwLockWriteGuard<'_, State> {
        self.state.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// The Node named `name`.
    pub fn node(&self, name: &str) -> Option<Arc<Node>> {
        self.read().nodes.get(name).cloned()
    }

    /// Every Node, by name.
    pub fn nodes(&self) -> Vec<Arc<Node>> {
        self.read().nodes.values().cloned().collect()
    }

    /// The Pod with this namespace and name.
    pub fn pod(&self, key: &ObjectKey) -> Option<Arc<Pod>> {
        self.read().pods.get(key).cloned()
    }

    /// Every Pod, by namespace then name.
    pub fn pods(&self) -> Vec<Arc<Pod>> {
        self.read().pods.values().cloned().collect()
    }

    /// Every Namespace, by name.
    pub fn namespaces(&self) -> Vec<Arc<Namespace>> {
        self.read().namespaces.values().cloned().collect()
    }

    /// Every NetworkPolicy, by namespace then name.
    pub fn policies(&self) -> Vec<Arc<NetworkPolicy>> {
        self.read().policies.values().cloned().collect()
    }

    /// The Pods scheduled on the Node `node_name` (`spec.nodeName`).
    pub fn pods_on_node(&self, node_name: &str) -> Vec<Arc<Pod>> {
        self.read()
            .pods
            .values()
            .filter(|p| p.spec.as_ref().and_then(|s| s.node_name.as_deref()) == Some(node_name))
            .cloned()
            .collect()
    }

    /// Whether the source has delivered its first complete view.
    pub fn is_synced(&self) -> bool {
        self.read().synced
    }
}

/// What storing an object did: added it, replaced a different one, or nothing.
enum Stored<T> {
    Added(Arc<T>),
    Updated { old: Arc<T>, new: Arc<T> },
}

/// Stores `new` under `key`; nothing when the same object is already there.
fn upsert<K: Ord, T: PartialEq>(
    map: &mut BTreeMap<K, Arc<T>>,
    key: K,
    new: Arc<T>,
) -> Option<Stored<T>> {
    match map.insert(key, new.clone()) {
        None => Some(Stored::Added(new)),
        Some(old) if old == new => None,
        Some(old) => Some(Stored::Updated { old, new }),
    }
}

/// The only way to change a [`Store`]: each change returns the event it amounts to, and
/// nothing when the store already holds that state (so re-applying is harmless).
#[derive(Debug, Default)]
pub struct StoreWriter {
    store: Store,
}

impl StoreWriter {
    /// A writer over a new, empty, unsynced store.
    pub fn new() -> StoreWriter {
        StoreWriter::default()
    }

    /// A read handle on this writer's store.
    pub fn store(&self) -> Store {
        self.store.clone()
    }

    /// Stores the Node: `NodeAdded`, `NodeUpdated`, or nothing when it is unchanged.
    pub fn apply_node(&mut self, node: impl Into<Arc<Node>>) -> Option<ClusterEvent> {
        let new = node.into();
        upsert(&mut self.store.write().nodes, node_key(&new), new).map(|stored| match stored {
            Stored::Added(new) => ClusterEvent::NodeAdded(new),
            Stored::Updated { old, new } => ClusterEvent::NodeUpdated { old, new },
        })
    }

    /// Removes the Node named `name`: `NodeDeleted`, or nothing when it is not stored.
    pub fn delete_node(&mut self, name: &str) -> Option<ClusterEvent> {
        self.store
            .write()
            .nodes
            .remove(name)
            .map(ClusterEvent::NodeDeleted)
    }

    /// Stores the Pod: `PodAdded`, `PodUpdated`, or nothing when it is unchanged.
    pub fn apply_pod(&mut self, pod: impl Into<Arc<Pod>>) -> Option<ClusterEvent> {
        let new = pod.into();
        upsert(&mut self.store.write().pods, pod_key(&new), new).map(|stored| match stored {
            Stored::Added(new) => ClusterEvent::PodAdded(new),
            Stored::Updated { old, new } => ClusterEvent::PodUpdated { old, new },
        })
    }

    /// Removes the Pod: `PodDeleted`, or nothing when it is not stored.
    pub fn delete_pod(&mut self, key: &ObjectKey) -> Option<ClusterEvent> {
        self.store
            .write()
            .pods
            .remove(key)
            .map(ClusterEvent::PodDeleted)
    }

    /// Stores the Namespace: `NamespaceAdded`, `NamespaceUpdated`, or nothing when unchanged.
    pub fn apply_namespace(
        &mut self,
        namespace: impl Into<Arc<Namespace>>,
    ) -> Option<ClusterEvent> {
        let new = namespace.into();
        upsert(&mut self.store.write().namespaces, namespace_key(&new), new).map(|stored| {
            match stored {
                Stored::Added(new) => ClusterEvent::NamespaceAdded(new),
                Stored::Updated { old, new } => ClusterEvent::NamespaceUpdated { old, new },
            }
        })
    }

    /// Removes the Namespace named `name`: `NamespaceDeleted`, or nothing when not stored.
    pub fn delete_namespace(&mut self, name: &str) -> Option<ClusterEvent> {
        self.store
            .write()
            .namespaces
            .remove(name)
            .map(ClusterEvent::NamespaceDeleted)
    }

    /// Stores the NetworkPolicy: `PolicyAdded`, `PolicyUpdated`, or nothing when unchanged.
    pub fn apply_policy(&mut self, policy: impl Into<Arc<NetworkPolicy>>) -> Option<ClusterEvent> {
        let new = policy.into();
        upsert(&mut self.store.write().policies, policy_key(&new), new).map(|stored| match stored {
            Stored::Added(new) => ClusterEvent::PolicyAdded(new),
            Stored::Updated { old, new } => ClusterEvent::PolicyUpdated { old, new },
        })
    }

    /// Removes the NetworkPolicy: `PolicyDeleted`, or nothing when it is not stored.
    pub fn delete_policy(&mut self, key: &ObjectKey) -> Option<ClusterEvent> {
        self.store
            .write()
            .policies
            .remove(key)
            .map(ClusterEvent::PolicyDeleted)
    }

    /// Makes the store hold exactly these objects (a full re-list) and returns the changes in
    /// dependency order: Namespaces, Nodes, Pods, then NetworkPolicies added or updated; then
    /// NetworkPolicies, Pods, Nodes, then Namespaces deleted; by key within each group. Of
    /// objects with the same kind and key the last wins.
    pub fn replace(
        &mut self,
        objects: impl IntoIterator<Item = ClusterObject>,
    ) -> Vec<ClusterEvent> {
        let (mut nodes, mut pods, mut namespaces, mut policies) = (vec![], vec![], vec![], vec![]);
        for object in objects {
            match object {
                ClusterObject::Node(n) => nodes.push(n),
                ClusterObject::Pod(p) => pods.push(p),
                ClusterObject::Namespace(n) => namespaces.push(n),
                ClusterObject::NetworkPolicy(p) => policies.push(p),
            }
        }
        let (namespaces_applied, namespaces_deleted) = self.replaced(
            namespaces,
            |s| &s.namespaces,
            namespace_key,
            |w, n| w.apply_namespace(n),
            |w, k| w.delete_namespace(k),
        );
        let (nodes_applied, nodes_deleted) = self.nodes_replaced(nodes);
        let (pods_applied, pods_deleted) = self.pods_replaced(pods);
        let (policies_applied, policies_deleted) = self.replaced(
            policies,
            |s| &s.policies,
            policy_key,
            |w, p| w.apply_policy(p),
            |w, k| w.delete_policy(k),
        );
        [
            namespaces_applied,
            nodes_applied,
            pods_applied,
            policies_applied,
            policies_deleted,
            pods_deleted,
            nodes_deleted,
            namespaces_deleted,
        ]
        .concat()
    }

    /// Makes the store hold exactly these Nodes (a full re-list of Nodes only, as a watcher's
    /// list gives): Nodes added or updated, then Nodes deleted, by name within each.
    pub fn replace_nodes<N: Into<Arc<Node>>>(
        &mut self,
        nodes: impl IntoIterator<Item = N>,
    ) -> Vec<ClusterEvent> {
        let (applied, deleted) = self.nodes_replaced(nodes.into_iter().map(Into::into).collect());
        [applied, deleted].concat()
    }

    /// Makes the store hold exactly these Pods (a full re-list of Pods only): Pods added or
    /// updated, then Pods deleted, by key within each.
    pub fn replace_pods<P: Into<Arc<Pod>>>(
        &mut self,
        pods: impl IntoIterator<Item = P>,
    ) -> Vec<ClusterEvent> {
        let (applied, deleted) = self.pods_replaced(pods.into_iter().map(Into::into).collect());
        [applied, deleted].concat()
    }

    fn nodes_replaced(&mut self, nodes: Vec<Arc<Node>>) -> (Vec<ClusterEvent>, Vec<ClusterEvent>) {
        self.replaced(
            nodes,
            |s| &s.nodes,
            node_key,
            |w, n| w.apply_node(n),
            |w, k| w.delete_node(k),
        )
    }

    fn pods_replaced(&mut self, pods: Vec<Arc<Pod>>) -> (Vec<ClusterEvent>, Vec<ClusterEvent>) {
        self.replaced(
            pods,
            |s| &s.pods,
            pod_key,
            |w, p| w.apply_pod(p),
            |w, k| w.delete_pod(k),
        )
    }

    /// Replaces the objects of one kind: the events of those applied, and of those deleted.
    fn replaced<K: Ord + Clone, T>(
        &mut self,
        objects: Vec<Arc<T>>,
        held: impl Fn(&State) -> &BTreeMap<K, Arc<T>>,
        key: impl Fn(&T) -> K,
        apply: impl Fn(&mut Self, Arc<T>) -> Option<ClusterEvent>,
        delete: impl Fn(&mut Self, &K) -> Option<ClusterEvent>,
    ) -> (Vec<ClusterEvent>, Vec<ClusterEvent>) {
        let wanted: BTreeMap<K, Arc<T>> = objects.into_iter().map(|o| (key(&o), o)).collect();
        let gone: Vec<K> = held(&self.store.read())
            .keys()
            .filter(|k| !wanted.contains_key(*k))
            .cloned()
            .collect();
        let applied = wanted
            .into_values()
            .filter_map(|o| apply(self, o))
            .collect();
        let deleted = gone.iter().filter_map(|k| delete(self, k)).collect();
        (applied, deleted)
    }

    /// Records that the first complete view has been stored: `Synced` the first time only.
    pub fn mark_synced(&mut self) -> Option<ClusterEvent> {
        let mut state = self.store.write();
        if state.synced {
            return None;
        }
        state.synced = true;
        Some(ClusterEvent::Synced)
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::PodSpec;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    use super::*;

    fn node(name: &str, pod_cidr: &str) -> Node {
        Node {
            metadata: ObjectMeta {
                name: Some(name.into()),
                ..Default::default()
            },
            spec: Some(k8s_openapi::api::core::v1::NodeSpec {
                pod_cidr: Some(pod_cidr.into()),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn pod(namespace: Option<&str>, name: &str, node: &str) -> Pod {
        Pod {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: namespace.map(Into::into),
                ..Default::default()
            },
            spec: Some(PodSpec {
                node_name: Some(node.into()),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn objects<const N: usize, const P: usize>(
        nodes: [Node; N],
        pods: [Pod; P],
    ) -> Vec<ClusterObject> {
        let nodes = nodes.into_iter().map(|n| ClusterObject::Node(Arc::new(n)));
        let pods = pods.into_iter().map(|p| ClusterObject::Pod(Arc::new(p)));
        nodes.chain(pods).collect()
    }

    #[test]
    fn applying_is_idempotent() {
        let mut writer = StoreWriter::new();
        let store = writer.store();
        assert!(matches!(
            writer.apply_node(node("n1", "10.0.1.0/24")),
            Some(ClusterEvent::NodeAdded(_))
        ));
        assert_eq!(writer.apply_node(node("n1", "10.0.1.0/24")), None);
        match writer.apply_node(node("n1", "10.0.2.0/24")) {
            Some(ClusterEvent::NodeUpdated { old, new }) => {
                assert_eq!(
                    old.spec.as_ref().unwrap().pod_cidr.as_deref(),
                    Some("10.0.1.0/24")
                );
                assert_eq!(
                    new.spec.as_ref().unwrap().pod_cidr.as_deref(),
                    Some("10.0.2.0/24")
                );
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(store.nodes().len(), 1);
        assert!(matches!(
            writer.delete_node("n1"),
            Some(ClusterEvent::NodeDeleted(_))
        ));
        assert_eq!(writer.delete_node("n1"), None);
        assert!(store.node("n1").is_none());
    }

    #[test]
    fn pods_default_to_the_default_namespace_and_are_found_by_node() {
        let mut writer = StoreWriter::new();
        let store = writer.store();
        writer.apply_pod(pod(None, "a", "n1"));
        writer.apply_pod(pod(Some("kube-system"), "b", "n2"));
        assert!(store.pod(&ObjectKey::new("default", "a")).is_some());
        assert_eq!(store.pods_on_node("n2").len(), 1);
        assert_eq!(store.pods_on_node("n3").len(), 0);
        assert!(matches!(
            writer.delete_pod(&ObjectKey::new("default", "a")),
            Some(ClusterEvent::PodDeleted(_))
        ));
    }

    #[test]
    fn replace_orders_changes_by_dependency() {
        let mut writer = StoreWriter::new();
        writer.replace(objects(
            [node("n1", "a"), node("n2", "b")],
            [pod(None, "p1", "n1")],
        ));
        let events: Vec<String> = writer
            .replace(objects(
                [node("n2", "c"), node("n3", "d")],
                [pod(None, "p2", "n3")],
            ))
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            events,
            [
                "NodeUpdated n2",
                "NodeAdded n3",
                "PodAdded default/p2",
                "PodDeleted default/p1",
                "NodeDeleted n1"
            ]
        );
        assert_eq!(
            writer.replace(objects(
                [node("n2", "c"), node("n3", "d")],
                [pod(None, "p2", "n3")]
            )),
            vec![]
        );
    }

    #[test]
    fn replacing_one_kind_leaves_the_other_alone() {
        let mut writer = StoreWriter::new();
        writer.replace(objects(
            [node("n1", "a"), node("n2", "b")],
            [pod(None, "p1", "n1")],
        ));
        let names = |events: Vec<ClusterEvent>| -> Vec<String> {
            events.iter().map(ToString::to_string).collect()
        };
        assert_eq!(
            names(writer.replace_nodes([node("n2", "c"), node("n3", "d")])),
            ["NodeUpdated n2", "NodeAdded n3", "NodeDeleted n1"]
        );
        assert_eq!(writer.store().pods().len(), 1);
        assert_eq!(
            names(writer.replace_pods([pod(None, "p2", "n3")])),
            ["PodAdded default/p2", "PodDeleted default/p1"]
        );
        assert_eq!(writer.store().nodes().len(), 2);
        assert!(writer.replace_pods([pod(None, "p2", "n3")]).is_empty());
        assert!(
            writer
                .replace_nodes([node("n2", "c"), node("n3", "d")])
                .is_empty()
        );
    }

    #[test]
    fn synced_is_reported_once() {
        let mut writer = StoreWriter::new();
        assert!(!writer.store().is_synced());
        assert_eq!(writer.mark_synced(), Some(ClusterEvent::Synced));
        assert_eq!(writer.mark_synced(), None);
        assert!(writer.store().is_synced());
    }
}
