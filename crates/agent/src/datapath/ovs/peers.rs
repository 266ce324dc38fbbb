//! Peer Nodes on the OVS datapath: each peer's flows (owner `peer:<name>`), the host's route to
//! its Pod CIDR, and its Pod CIDR in the Pod egress SNAT's exceptions. A peer that is no longer
//! listed takes exactly these with it.

use std::collections::BTreeSet;

use hostnet::{HostNetwork, Outcome, PodSnat};
use ipnet::Ipv4Net;
use model::PeerNode;
use pipeline::Owner;
use pipeline::owners::PEER;
use pipeline::render::peer_flows;

use super::OvsDatapath;
use crate::datapath::PeerChanges;
use crate::error::AgentError;
use crate::node::peer_route;

impl<H: HostNetwork> OvsDatapath<H> {
    pub(super) async fn reconcile_peers(
        &self,
        peers: &[PeerNode],
    ) -> Result<PeerChanges, AgentError> {
        let mut changes = PeerChanges::default();
        let wanted: BTreeSet<&str> = peers.iter().map(|p| p.name.as_str()).collect();
        for peer in peers {
            let diff = self
                .flows
                .set(
                    Owner::new(PEER, &peer.name),
                    peer_flows(&self.network, peer),
                )
                .await?;
            if !diff.is_empty() {
                changes.set.push(peer.name.clone());
            }
        }
        for owner in self.flows.owners() {
            if owner.kind() == PEER
                && let Some(name) = owner.id()
                && !wanted.contains(name)
            {
                let name = name.to_string();
                self.flows.remove(owner.clone()).await?;
                changes.removed.push(name);
            }
        }
        let bridge = self.bridge.name();
        let routes: Vec<hostnet::PeerRoute> = peers
            .iter()
            .map(|p| peer_route(&self.network, p, &self.gateway_if, bridge))
            .collect();
        changes.routes = self.host.reconcile_peer_routes(&routes).await?;
        let snat = if self.snat {
            let mut cluster_cidrs: Vec<Ipv4Net> =
                peers.iter().map(|p| p.pod_cidr.trunc()).collect();
            cluster_cidrs.push(self.network.pod_cidr.trunc());
            cluster_cidrs.sort_by_key(|c| (c.addr(), c.prefix_len()));
            let snat = PodSnat {
                pod_cidr: self.network.pod_cidr.trunc(),
                cluster_cidrs,
                egress_interface: bridge.to_owned(),
            };
            self.host.ensure_pod_snat(&snat).await?
        } else {
            self.host.remove_pod_snat().await?
        };
        changes.snat_changed = snat == Outcome::Changed;
        Ok(changes)
    }
}
