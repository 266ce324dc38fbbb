//! Peer routes through IP Helper. Ownership rule: an IPv4 route with protocol `Other` (what
//! IP Helper writes) and metric [`PEER_ROUTE_METRIC`] is ours, on any interface; every other
//! route is never changed. Windows has no `onlink` flag: a next hop outside the interface's
//! subnets is used as given.

use std::collections::BTreeMap;
use std::net::IpAddr;

use ipnet::{IpNet, Ipv4Net};
use winos::model::{Route, RouteProtocol};

use super::{Backend, PEER_ROUTE_METRIC, os};
use crate::error::{Error, Result};
use crate::model::{PeerRoute, RouteChanges};

/// Whether the route belongs to the backend (see the module documentation).
fn is_ours(route: &Route) -> bool {
    matches!(route.destination, IpNet::V4(_))
        && route.protocol == RouteProtocol::Other
        && route.metric == PEER_ROUTE_METRIC
}

impl<H, I, N, F> Backend<H, I, N, F>
where
    H: hcn::HcnApi,
    I: winos::IpHelper,
{
    /// Creates `route`; someone else's route with the same key is a
    /// [`Error::RouteConflict`].
    pub(super) fn create_owned_route(&self, route: &Route) -> Result<()> {
        match self.ip.create_route(route) {
            Ok(()) => Ok(()),
            Err(e) if e.is_already_exists() => Err(Error::RouteConflict {
                destination: route.destination.to_string(),
            }),
            Err(e) => Err(os(format!("adding {}", route.key()))(e)),
        }
    }

    /// See [`crate::HostNetwork::reconcile_peer_routes`]. A desired destination listed twice
    /// keeps its first route.
    pub(super) fn peer_routes(&self, desired: &[PeerRoute]) -> Result<RouteChanges> {
        let adapters = self.adapters()?;
        let mut wanted: BTreeMap<Ipv4Net, Route> = BTreeMap::new();
        for peer in desired {
            let index = adapters
                .iter()
                .find(|a| a.alias == peer.interface)
                .map(|a| a.index)
                .ok_or_else(|| Error::InterfaceNotFound {
                    name: peer.interface.clone(),
                    purpose: "peer route",
                })?;
            let destination = peer.destination.trunc();
            wanted.entry(destination).or_insert_with(|| {
                Route::new(
                    IpNet::V4(destination),
                    IpAddr::V4(peer.gateway),
                    index,
                    PEER_ROUTE_METRIC,
                )
            });
        }
        let ours: Vec<Route> = self.routes()?.into_iter().filter(is_ours).collect();
        let mut changes = RouteChanges::default();
        for existing in &ours {
            let IpNet::V4(destination) = existing.destination else {
                continue;
            };
            let keep = wanted
                .get(&destination)
                .is_some_and(|w| w.key() == existing.key());
            if !keep {
                self.ip
                    .delete_route(&existing.key())
                    .map_err(os(format!("deleting {}", existing.key())))?;
                if !wanted.contains_key(&destination) {
                    changes.deleted.push(destination);
                }
            }
        }
        for (destination, route) in &wanted {
            let had_ours = ours.iter().any(|r| r.destination == route.destination);
            if ours.iter().any(|r| r.key() == route.key()) {
                continue;
            }
            self.create_owned_route(route)?;
            if had_ours {
                changes.replaced.push(*destination)
            } else {
                changes.added.push(*destination)
            }
        }
        if !changes.is_empty() {
            tracing::info!(
                "peer routes: {} added, {} replaced, {} deleted",
                changes.added.len(),
                changes.replaced.len(),
                changes.deleted.len()
            );
        }
        Ok(changes)
    }
}
