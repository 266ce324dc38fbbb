//! [`PeerController`]: every other Node with a Pod CIDR and an InternalIP becomes a peer of the
//! [`Datapath`]; a Node that disappears stops being one.

use std::sync::Arc;

use model::PeerNode;
use tokio::sync::mpsc;

use crate::cluster::{ClusterEvent, Store};
use crate::datapath::{Datapath, PeerChanges};
use crate::error::AgentError;
use crate::node::{NodeInfo, peer_node};
use crate::tasks::Requeue;

/// The peers `store` describes for Node `node_name`: every other Node with a Pod CIDR and an
/// InternalIP (Nodes that cannot be used yet are logged and skipped).
pub fn peers_of(store: &Store, node_name: &str) -> Vec<PeerNode> {
    store
        .nodes()
        .iter()
        .filter(|n| n.metadata.name.as_deref() != Some(node_name))
        .filter_map(|n| match NodeInfo::from_node(n) {
            Ok(info) => Some(peer_node(&info)),
            Err(reason) => {
                tracing::warn!(
                    "peer Node {:?} ignored until fixed: {reason}",
                    n.metadata.name.as_deref().unwrap_or("")
                );
                None
            }
        })
        .collect()
}

/// Keeps the datapath's peers equal to the store's Nodes.
#[derive(Debug)]
pub struct PeerController<D> {
    node_name: String,
    datapath: Arc<D>,
}

impl<D: Datapath> PeerController<D> {
    /// A controller for Node `node_name`'s peers in `datapath`.
    pub fn new(node_name: &str, datapath: Arc<D>) -> PeerController<D> {
        PeerController {
            node_name: node_name.to_owned(),
            datapath,
        }
    }

    /// Makes the datapath's peers those of the store.
    pub async fn reconcile(&self, store: &Store) -> Result<PeerChanges, AgentError> {
        self.datapath
            .set_peers(&peers_of(store, &self.node_name))
            .await
    }

    /// Reconciles on every Node event until the event stream ends. A failed reconciliation
    /// is retried by `requeue` with backoff, with no new event needed; Node events arriving
    /// meanwhile are folded into that retry (it reads the store as it is then).
    pub async fn run(
        self,
        store: Store,
        mut events: mpsc::Receiver<ClusterEvent>,
        mut requeue: Requeue,
    ) {
        loop {
            tokio::select! {
                event = events.recv() => {
                    let Some(event) = event else { return };
                    if !matches!(
                        event,
                        ClusterEvent::NodeAdded(_)
                            | ClusterEvent::NodeUpdated { .. }
                            | ClusterEvent::NodeDeleted(_)
                    ) {
                        continue;
                    }
                    if requeue.is_owed() {
                        tracing::info!("{event}: folded into the pending peer retry");
                        continue;
                    }
                    tracing::info!("{event}: reconciling peers");
                }
                () = requeue.due() => tracing::info!("retrying the failed peer reconciliation"),
            }
            match self.reconcile(&store).await {
                Ok(changes) => {
                    requeue.succeeded();
                    log_changes(&changes);
                }
                Err(error) => {
                    let delay = requeue.failed();
                    tracing::error!("peer reconciliation failed (retried in {delay:?}): {error}");
                }
            }
        }
    }
}

/// Logs what a reconciliation did, or that it changed nothing.
pub fn log_changes(changes: &PeerChanges) {
    if changes.is_empty() {
        tracing::info!("peers unchanged");
        return;
    }
    for name in &changes.set {
        tracing::info!("peer {name}: flows installed");
    }
    for name in &changes.removed {
        tracing::info!("peer {name}: flows removed");
    }
    let r = &changes.routes;
    for (what, list) in [
        ("added", &r.added),
        ("replaced", &r.replaced),
        ("deleted", &r.deleted),
    ] {
        for cidr in list {
            tracing::info!("route to {cidr} {what}");
        }
    }
    if changes.snat_changed {
        tracing::info!("Pod SNAT rule updated");
    }
}
