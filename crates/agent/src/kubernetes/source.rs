//! [`KubernetesSource`]: the cluster source backed by the API server. Two kube-runtime watchers
//! — every Node, and the Pods of this Node (`spec.nodeName` field selector) — feed the same
//! [`StoreWriter`] the cluster directory feeds, so the controllers cannot tell the sources
//! apart. A watcher's (re-)list is applied as a replacement of its kind, so after an outage or
//! a `410 Gone` only real differences become events: nothing changed means no flow touched.
//! While the API server is unreachable the store keeps its last view and the datapath keeps
//! forwarding with it; the watchers retry with exponential backoff.

use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use futures_util::stream::{self, Stream, StreamExt};
use k8s_openapi::api::core::v1::{Node, Pod};
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use kube::{Api, Client};
use tokio::sync::mpsc;

use super::error::KubernetesError;
use crate::cluster::{ClusterEvent, ObjectKey, Store, StoreWriter};

/// One event of either watcher.
#[derive(Debug, Clone)]
pub enum Watched {
    /// From the Node watcher.
    Node(Box<Event<Node>>),
    /// From the watcher of this Node's Pods.
    Pod(Box<Event<Pod>>),
}

/// A watcher's initial list in progress: the objects seen since its `Init`.
#[derive(Debug)]
enum Listing<K> {
    Idle,
    Listing(Vec<Arc<K>>),
}

/// Turns watcher events into store changes: pure, so it is tested without an API server.
#[derive(Debug)]
pub struct WatchApplier {
    writer: StoreWriter,
    nodes: Listing<Node>,
    pods: Listing<Pod>,
    nodes_listed: bool,
    pods_listed: bool,
}

impl Default for WatchApplier {
    fn default() -> WatchApplier {
        WatchApplier::new(StoreWriter::new())
    }
}

impl WatchApplier {
    /// An applier filling `writer`'s store.
    pub fn new(writer: StoreWriter) -> WatchApplier {
        WatchApplier {
            writer,
            nodes: Listing::Idle,
            pods: Listing::Idle,
            nodes_listed: false,
            pods_listed: false,
        }
    }

    /// The store being filled.
    pub fn store(&self) -> Store {
        self.writer.store()
    }

    /// Applies one watcher event and returns the cluster events it amounts to. A list's
    /// objects are held until its end, then replace the kind's objects at once (so a re-list
    /// that finds what the store holds emits nothing); `Synced` follows once both watchers have
    /// listed.
    pub fn apply(&mut self, watched: Watched) -> Vec<ClusterEvent> {
        let mut events = match watched {
            Watched::Node(event) => match *event {
                Event::Init => {
                    self.nodes = Listing::Listing(Vec::new());
                    Vec::new()
                }
                Event::InitApply(node) => {
                    push(&mut self.nodes, node);
                    Vec::new()
                }
                Event::InitDone => {
                    self.nodes_listed = true;
                    let listed = take(&mut self.nodes);
                    self.writer.replace_nodes(listed)
                }
                Event::Apply(node) => self.writer.apply_node(node).into_iter().collect(),
                Event::Delete(node) => self
                    .writer
                    .delete_node(node.metadata.name.as_deref().unwrap_or_default())
                    .into_iter()
                    .collect(),
            },
            Watched::Pod(event) => match *event {
                Event::Init => {
                    self.pods = Listing::Listing(Vec::new());
                    Vec::new()
                }
                Event::InitApply(pod) => {
                    push(&mut self.pods, pod);
                    Vec::new()
                }
                Event::InitDone => {
                    self.pods_listed = true;
                    let listed = take(&mut self.pods);
                    self.writer.replace_pods(listed)
                }
                Event::Apply(pod) => self.writer.apply_pod(pod).into_iter().collect(),
                Event::Delete(pod) => self
                    .writer
                    .delete_pod(&ObjectKey::new(
                        pod.metadata.namespace.as_deref().unwrap_or("default"),
                        pod.metadata.name.as_deref().unwrap_or_default(),
                    ))
                    .into_iter()
                    .collect(),
            },
        };
        if self.nodes_listed && self.pods_listed {
            events.extend(self.writer.mark_synced());
        }
        events
    }
}

fn push<K>(listing: &mut Listing<K>, object: K) {
    match listing {
        Listing::Listing(objects) => objects.push(Arc::new(object)),
        // An object outside a list (not expected from the watcher) starts one.
        Listing::Idle => *listing = Listing::Listing(vec![Arc::new(object)]),
    }
}

fn take<K>(listing: &mut Listing<K>) -> Vec<Arc<K>> {
    match std::mem::replace(listing, Listing::Idle) {
        Listing::Listing(objects) => objects,
        Listing::Idle => Vec::new(),
    }
}

type WatchStream = Pin<Box<dyn Stream<Item = Result<Watched, watcher::Error>> + Send>>;

/// The Kubernetes API as the agent's cluster source.
pub struct KubernetesSource {
    node_name: String,
    applier: WatchApplier,
    stream: WatchStream,
    /// Whether the last watcher poll failed (to log the outage and the return once).
    failing: bool,
}

impl std::fmt::Debug for KubernetesSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KubernetesSource")
            .field("node_name", &self.node_name)
            .field("applier", &self.applier)
            .field("failing", &self.failing)
            .finish_non_exhaustive()
    }
}

impl KubernetesSource {
    /// Watches every Node and the Pods of Node `node_name` through `client`; nothing is sent
    /// until the source is polled.
    pub fn new(client: Client, node_name: &str) -> KubernetesSource {
        let nodes = watcher::watcher(Api::<Node>::all(client.clone()), watcher::Config::default())
            .default_backoff()
            .map(|r| r.map(|e| Watched::Node(Box::new(e))));
        let pods = watcher::watcher(
            Api::<Pod>::all(client),
            watcher::Config::default().fields(&format!("spec.nodeName={node_name}")),
        )
        .default_backoff()
        .map(|r| r.map(|e| Watched::Pod(Box::new(e))));
        KubernetesSource {
            node_name: node_name.to_owned(),
            applier: WatchApplier::default(),
            stream: Box::pin(stream::select(nodes, pods)),
            failing: false,
        }
    }

    /// The store this source fills.
    pub fn store(&self) -> Store {
        self.applier.store()
    }

    /// The next change: the events of the next watcher event (often none). Watcher errors
    /// are logged (once per outage) and retried after a backoff.
    async fn next(&mut self) -> Option<Vec<ClusterEvent>> {
        match self.stream.next().await? {
            Ok(watched) => {
                if self.failing {
                    self.failing = false;
                    tracing::info!("Kubernetes API server reachable again: resyncing");
                }
                Some(self.applier.apply(watched))
            }
            Err(error) => {
                if !self.failing {
                    self.failing = true;
                    tracing::warn!(
                        "Kubernetes API watch failed ({error}); forwarding with the last known \
                         cluster state, retrying with backoff"
                    );
                } else {
                    tracing::debug!("Kubernetes API watch still failing: {error}");
                }
                Some(Vec::new())
            }
        }
    }

    /// Reads until the Nodes and this Node's Pods have been listed once, for at most `wait`.
    /// The events of the first list are not returned: the store holds their result.
    pub async fn wait_synced(&mut self, wait: Duration) -> Result<(), KubernetesError> {
        let store = self.store();
        let listed = async {
            while !store.is_synced() {
                if self.next().await.is_none() {
                    break;
                }
            }
        };
        let done = tokio::time::timeout(wait, listed).await.is_ok() && store.is_synced();
        if done {
            tracing::info!(
                "cluster listed: {} Nodes, {} Pods on Node {}",
                store.nodes().len(),
                store.pods().len(),
                self.node_name
            );
            Ok(())
        } else {
            Err(KubernetesError::NotSynced {
                waited: wait,
                reason: if self.failing {
                    "the API server did not answer".to_owned()
                } else {
                    "the lists did not complete".to_owned()
                },
            })
        }
    }

    /// Sends every change until the receiver is dropped.
    pub async fn run(mut self, events: mpsc::Sender<ClusterEvent>) {
        while let Some(changes) = self.next().await {
            for event in changes {
                if events.send(event).await.is_err() {
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::{NodeSpec, PodSpec};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    use super::*;

    fn node(name: &str, cidr: &str) -> Node {
        Node {
            metadata: ObjectMeta {
                name: Some(name.into()),
                ..Default::default()
            },
            spec: Some(NodeSpec {
                pod_cidr: Some(cidr.into()),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn pod(name: &str) -> Pod {
        Pod {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some("default".into()),
                ..Default::default()
            },
            spec: Some(PodSpec {
                node_name: Some("n1".into()),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn names(events: Vec<ClusterEvent>) -> Vec<String> {
        events.iter().map(ToString::to_string).collect()
    }

    fn list_nodes(applier: &mut WatchApplier, nodes: &[Node]) -> Vec<String> {
        let mut events = applier.apply(Watched::Node(Box::new(Event::Init)));
        for n in nodes {
            events.extend(applier.apply(Watched::Node(Box::new(Event::InitApply(n.clone())))));
        }
        events.extend(applier.apply(Watched::Node(Box::new(Event::InitDone))));
        names(events)
    }

    fn list_pods(applier: &mut WatchApplier, pods: &[Pod]) -> Vec<String> {
        let mut events = applier.apply(Watched::Pod(Box::new(Event::Init)));
        for p in pods {
            events.extend(applier.apply(Watched::Pod(Box::new(Event::InitApply(p.clone())))));
        }
        events.extend(applier.apply(Watched::Pod(Box::new(Event::InitDone))));
        names(events)
    }

    #[test]
    fn synced_after_both_lists_then_watch_events_apply() {
        let mut applier = WatchApplier::default();
        let store = applier.store();
        assert_eq!(
            list_nodes(&mut applier, &[node("n1", "a"), node("n2", "b")]),
            ["NodeAdded n1", "NodeAdded n2"]
        );
        assert!(!store.is_synced());
        assert_eq!(
            list_pods(&mut applier, &[pod("p1")]),
            ["PodAdded default/p1", "Synced"]
        );
        assert!(store.is_synced());
        assert_eq!(
            names(applier.apply(Watched::Node(Box::new(Event::Apply(node("n2", "c")))))),
            ["NodeUpdated n2"]
        );
        assert_eq!(
            names(applier.apply(Watched::Node(Box::new(Event::Apply(node("n2", "c")))))),
            Vec::<String>::new()
        );
        assert_eq!(
            names(applier.apply(Watched::Pod(Box::new(Event::Delete(pod("p1")))))),
            ["PodDeleted default/p1"]
        );
        assert_eq!(
            names(applier.apply(Watched::Node(Box::new(Event::Delete(node("n1", "a")))))),
            ["NodeDeleted n1"]
        );
    }

    #[test]
    fn a_relist_after_an_outage_emits_only_differences() {
        let mut applier = WatchApplier::default();
        list_nodes(&mut applier, &[node("n1", "a"), node("n2", "b")]);
        list_pods(&mut applier, &[pod("p1")]);
        // The same cluster listed again (a 410 Gone, an API server restart): nothing.
        assert!(list_nodes(&mut applier, &[node("n1", "a"), node("n2", "b")]).is_empty());
        assert!(list_pods(&mut applier, &[pod("p1")]).is_empty());
        // What changed while the watch was down shows up as such, and the store keeps its
        // objects while the new list is in progress.
        applier.apply(Watched::Node(Box::new(Event::Init)));
        applier.apply(Watched::Node(Box::new(Event::InitApply(node("n2", "b")))));
        assert_eq!(applier.store().nodes().len(), 2);
        assert_eq!(
            names(applier.apply(Watched::Node(Box::new(Event::InitDone)))),
            ["NodeDeleted n1"]
        );
    }
}
