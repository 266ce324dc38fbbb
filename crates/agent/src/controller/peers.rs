//! [`PeerController`]: every other Node with a Pod CIDR and an InternalIP becomes a peer — its
//! flows (owner `peer:<name>`), its host route, and its Pod CIDR in the SNAT exception list. A
//! Node that disappears takes exactly these with it.

use std::collections::BTreeSet;
use std::sync::Arc;

use hostnet::{HostNetwork, Outcome, PodSnat, RouteChanges};
use pipeline::Owner;
use pipeline::model::{NodeNetwork, PeerNode};
use pipeline::owners::PEER;
use pipeline::render::peer_flows;
use tokio::sync::mpsc;

use crate::cluster::{ClusterEvent, Store};
use crate::error::AgentError;
use crate::flows::Flows;
use crate::node::{NodeInfo, host_cidr, peer_node, peer_route};

/// What one reconciliation changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PeerChanges {
    /// Peers whose flows were added or changed.
    pub flows_set: Vec<String>,
    /// Peers whose flows were removed.
    pub flows_removed: Vec<String>,
    pub routes: RouteChanges,
    pub snat: Option<Outcome>,
}

impl PeerChanges {
    /// Whether nothing was changed.
    pub fn is_empty(&self) -> bool {
        self.flows_set.is_empty()
            && self.flows_removed.is_empty()
            && self.routes.is_empty()
            && self.snat != Some(Outcome::Changed)
    }
}

/// Keeps peers' flows, routes and the SNAT rule equal to the store's Nodes.
#[derive(Debug)]
pub struct PeerController<H> {
    node_name: String,
    node: NodeNetwork,
    flows: Arc<Flows>,
    host: Arc<H>,
    gateway_if: String,
    bridge: String,
    snat: bool,
}

impl<H: HostNetwork> PeerController<H> {
    /// A controller for Node `node_name` with network `node`; `snat` installs the Pod egress
    /// masquerade (off with `noSNAT`).
    pub fn new(
        node_name: &str,
        node: NodeNetwork,
        flows: Arc<Flows>,
        host: Arc<H>,
        gateway_if: &str,
        bridge: &str,
        snat: bool,
    ) -> PeerController<H> {
        PeerController {
            node_name: node_name.to_owned(),
            node,
            flows,
            host,
            gateway_if: gateway_if.to_owned(),
            bridge: bridge.to_owned(),
            snat,
        }
    }

    /// The peers the store describes (Nodes that cannot be used yet are logged and skipped).
    pub fn peers(&self, store: &Store) -> Vec<PeerNode> {
        store
            .nodes()
            .iter()
            .filter(|n| n.metadata.name.as_deref() != Some(self.node_name.as_str()))
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

    /// Makes flows, routes and SNAT match the store.
    pub async fn reconcile(&self, store: &Store) -> Result<PeerChanges, AgentError> {
        let peers = self.peers(store);
        let mut changes = PeerChanges::default();
        let wanted: BTreeSet<&str> = peers.iter().map(|p| p.name.as_str()).collect();
        for peer in &peers {
            let diff = self
                .flows
                .set(Owner::new(PEER, &peer.name), peer_flows(&self.node, peer))
                .await?;
            if !diff.is_empty() {
                changes.flows_set.push(peer.name.clone());
            }
        }
        for owner in self.flows.owners() {
            if owner.kind() == PEER
                && let Some(name) = owner.id()
                && !wanted.contains(name)
            {
                let name = name.to_string();
                self.flows.remove(owner.clone()).await?;
                changes.flows_removed.push(name);
            }
        }
        let routes: Vec<hostnet::PeerRoute> = peers
            .iter()
            .map(|p| peer_route(&self.node, p, &self.gateway_if, &self.bridge))
            .collect();
        changes.routes = self.host.reconcile_peer_routes(&routes).await?;
        changes.snat = Some(if self.snat {
            let mut cluster_cidrs: Vec<hostnet::Ipv4Cidr> =
                peers.iter().map(|p| subnet(p.pod_cidr)).collect();
            cluster_cidrs.push(subnet(self.node.pod_cidr));
            cluster_cidrs.sort_by_key(|c| (c.addr(), c.prefix_len()));
            let snat = PodSnat {
                pod_cidr: subnet(self.node.pod_cidr),
                cluster_cidrs,
                egress_interface: self.bridge.clone(),
            };
            self.host.ensure_pod_snat(&snat).await?
        } else {
            self.host.remove_pod_snat().await?
        });
        Ok(changes)
    }

    /// Reconciles on every Node event until the event stream ends.
    pub async fn run(self, store: Store, mut events: mpsc::Receiver<ClusterEvent>) {
        while let Some(event) = events.recv().await {
            if !matches!(
                event,
                ClusterEvent::NodeAdded(_)
                    | ClusterEvent::NodeUpdated { .. }
                    | ClusterEvent::NodeDeleted(_)
            ) {
                continue;
            }
            tracing::info!("{event}: reconciling peers");
            match self.reconcile(&store).await {
                Ok(changes) => log_changes(&changes),
                Err(error) => tracing::error!(
                    "peer reconciliation failed (retried on the next Node event): {error}"
                ),
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
    for name in &changes.flows_set {
        tracing::info!("peer {name}: flows installed");
    }
    for name in &changes.flows_removed {
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
    if changes.snat == Some(Outcome::Changed) {
        tracing::info!("Pod SNAT rule updated");
    }
}

/// A subnet of the pipeline's model in the host network's type.
fn subnet(c: pipeline::model::Ipv4Cidr) -> hostnet::Ipv4Cidr {
    host_cidr(c.network(), c.prefix_len())
}
