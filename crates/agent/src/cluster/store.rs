//! The agent's view of the cluster: Nodes by name, Pods by namespace/name, and whether the first
//! full view has arrived. One [`StoreWriter`] per source changes it; any number of [`Store`]
//! handles read it.

use std::collections::BTreeMap;
use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use k8s_openapi::api::core::v1::{Node, Pod};

use super::event::{ClusterEvent, ObjectKey};

#[derive(Debug, Default)]
struct State {
    nodes: BTreeMap<String, Arc<Node>>,
    pods: BTreeMap<ObjectKey, Arc<Pod>>,
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

/// The key a Pod is stored under; a Pod without a namespace is in `default`, as in Kubernetes.
pub(crate) fn pod_key(pod: &Pod) -> ObjectKey {
    ObjectKey::new(
        pod.metadata.namespace.as_deref().unwrap_or("default"),
        pod.metadata.name.as_deref().unwrap_or_default(),
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
        let mut state = self.store.write();
        let new = node.into();
        match state.nodes.insert(node_key(&new), new.clone()) {
            None => Some(ClusterEvent::NodeAdded(new)),
            Some(old) if old == new => None,
            Some(old) => Some(ClusterEvent::NodeUpdated { old, new }),
        }
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
        let mut state = self.store.write();
        let new = pod.into();
        match state.pods.insert(pod_key(&new), new.clone()) {
            None => Some(ClusterEvent::PodAdded(new)),
            Some(old) if old == new => None,
            Some(old) => Some(ClusterEvent::PodUpdated { old, new }),
        }
    }

    /// Removes the Pod: `PodDeleted`, or nothing when it is not stored.
    pub fn delete_pod(&mut self, key: &ObjectKey) -> Option<ClusterEvent> {
        self.store
            .write()
            .pods
            .remove(key)
            .map(ClusterEvent::PodDeleted)
    }

    /// Makes the store hold exactly these objects (a full re-list) and returns the changes in
    /// dependency order: Nodes added or updated, then Pods added or updated, then Pods deleted,
    /// then Nodes deleted; by key within each group. Of objects with the same key the last wins.
    pub fn replace<N, P>(
        &mut self,
        nodes: impl IntoIterator<Item = N>,
        pods: impl IntoIterator<Item = P>,
    ) -> Vec<ClusterEvent>
    where
        N: Into<Arc<Node>>,
        P: Into<Arc<Pod>>,
    {
        let (nodes_applied, nodes_deleted) = self.nodes_replaced(nodes);
        let (pods_applied, pods_deleted) = self.pods_replaced(pods);
        [nodes_applied, pods_applied, pods_deleted, nodes_deleted].concat()
    }

    /// Makes the store hold exactly these Nodes (a full re-list of Nodes only, as a watcher's
    /// list gives): Nodes added or updated, then Nodes deleted, by name within each.
    pub fn replace_nodes<N: Into<Arc<Node>>>(
        &mut self,
        nodes: impl IntoIterator<Item = N>,
    ) -> Vec<ClusterEvent> {
        let (applied, deleted) = self.nodes_replaced(nodes);
        [applied, deleted].concat()
    }

    /// Makes the store hold exactly these Pods (a full re-list of Pods only): Pods added or
    /// updated, then Pods deleted, by key within each.
    pub fn replace_pods<P: Into<Arc<Pod>>>(
        &mut self,
        pods: impl IntoIterator<Item = P>,
    ) -> Vec<ClusterEvent> {
        let (applied, deleted) = self.pods_replaced(pods);
        [applied, deleted].concat()
    }

    /// Replaces the Nodes: the events of those applied, and of those deleted.
    fn nodes_replaced<N: Into<Arc<Node>>>(
        &mut self,
        nodes: impl IntoIterator<Item = N>,
    ) -> (Vec<ClusterEvent>, Vec<ClusterEvent>) {
        let nodes: BTreeMap<String, Arc<Node>> = nodes
            .into_iter()
            .map(Into::into)
            .map(|n| (node_key(&n), n))
            .collect();
        let gone = missing_keys(&self.store.read().nodes, &nodes);
        let applied = (nodes.into_values())
            .filter_map(|n| self.apply_node(n))
            .collect();
        let deleted = gone.iter().filter_map(|k| self.delete_node(k)).collect();
        (applied, deleted)
    }

    /// Replaces the Pods: the events of those applied, and of those deleted.
    fn pods_replaced<P: Into<Arc<Pod>>>(
        &mut self,
        pods: impl IntoIterator<Item = P>,
    ) -> (Vec<ClusterEvent>, Vec<ClusterEvent>) {
        let pods: BTreeMap<ObjectKey, Arc<Pod>> = pods
            .into_iter()
            .map(Into::into)
            .map(|p| (pod_key(&p), p))
            .collect();
        let gone = missing_keys(&self.store.read().pods, &pods);
        let applied = (pods.into_values())
            .filter_map(|p| self.apply_pod(p))
            .collect();
        let deleted = gone.iter().filter_map(|k| self.delete_pod(k)).collect();
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

/// The keys of `held` that `wanted` lacks.
fn missing_keys<K: Ord + Clone, A, B>(held: &BTreeMap<K, A>, wanted: &BTreeMap<K, B>) -> Vec<K> {
    held.keys()
        .filter(|k| !wanted.contains_key(*k))
        .cloned()
        .collect()
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
        writer.replace([node("n1", "a"), node("n2", "b")], [pod(None, "p1", "n1")]);
        let events: Vec<String> = writer
            .replace([node("n2", "c"), node("n3", "d")], [pod(None, "p2", "n3")])
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
            writer.replace([node("n2", "c"), node("n3", "d")], [pod(None, "p2", "n3")]),
            vec![]
        );
    }

    #[test]
    fn replacing_one_kind_leaves_the_other_alone() {
        let mut writer = StoreWriter::new();
        writer.replace([node("n1", "a"), node("n2", "b")], [pod(None, "p1", "n1")]);
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
