//! Routes to peer Nodes' Pod CIDRs. Ours carry the route protocol number [`ROUTE_PROTOCOL`]
//! (`ip route` shows `proto 164`); reconciliation only ever touches routes with it.

use std::collections::HashMap;
use std::time::Duration;

use ipnet::Ipv4Net;

use crate::error::{Error, Result};
use crate::model::{HostRoute, PeerRoute, RouteChanges};

use super::LinuxHost;
use super::netlink::{KernelRoute, Link, MAIN_TABLE, is_errno};

/// How long a route add waits for its interface to come (back) up. Open vSwitch's userspace
/// datapath re-opens its tap devices (e.g. `antrea-gw0`) while it reconfigures after a port
/// change, and the kernel refuses routes through a device that is down (`ENETDOWN`).
const LINK_UP_WAIT: Duration = Duration::from_secs(3);
const LINK_UP_POLL: Duration = Duration::from_millis(20);

/// The route protocol number marking routes antrea owns (unassigned in `rtnetlink.h` and in
/// iproute2's `rt_protos`).
pub const ROUTE_PROTOCOL: u8 = 164;

/// What [`LinuxHost::ensure_owned_route`] did.
pub(super) enum RouteOutcome {
    Unchanged,
    Added,
    Replaced,
}

fn host_route(peer: &PeerRoute) -> HostRoute {
    HostRoute {
        destination: peer.destination.trunc(),
        gateway: Some(peer.gateway),
        metric: 0,
        table: MAIN_TABLE,
        protocol: ROUTE_PROTOCOL,
        scope: 0,
        onlink: peer.onlink,
        pref_source: None,
    }
}

impl LinuxHost {
    pub(super) async fn peer_routes(&self, desired: &[PeerRoute]) -> Result<RouteChanges> {
        let mut wanted: HashMap<Ipv4Net, &PeerRoute> = HashMap::new();
        for peer in desired {
            if wanted.insert(peer.destination.trunc(), peer).is_some() {
                return Err(Error::Invalid {
                    what: "peer routes",
                    value: peer.destination.to_string(),
                    reason: "destination listed twice",
                });
            }
        }
        let ours = self.owned_routes(ROUTE_PROTOCOL).await?;
        let links = self.kernel.links().await?;
        let mut changes = RouteChanges::default();
        for (destination, peer) in &wanted {
            let link = links
                .iter()
                .find(|l| l.name == peer.interface)
                .ok_or_else(|| Error::InterfaceNotFound {
                    name: peer.interface.clone(),
                    purpose: "peer route",
                })?;
            match self
                .ensure_owned_route(&ours, &host_route(peer), link)
                .await?
            {
                RouteOutcome::Unchanged => {}
                RouteOutcome::Added => changes.added.push(*destination),
                RouteOutcome::Replaced => changes.replaced.push(*destination),
            }
        }
        changes.deleted = self
            .delete_routes(
                ours.iter()
                    .filter(|r| !wanted.contains_key(&r.route.destination)),
                &links,
            )
            .await?;
        changes.added.sort();
        changes.replaced.sort();
        changes.deleted.sort();
        Ok(changes)
    }

    /// The main table's routes with route protocol `protocol`: the ones a reconciliation owns.
    pub(super) async fn owned_routes(&self, protocol: u8) -> Result<Vec<KernelRoute>> {
        Ok(self
            .kernel
            .routes()
            .await?
            .into_iter()
            .filter(|r| r.route.protocol == protocol && r.route.table == MAIN_TABLE)
            .collect())
    }

    /// Makes `route` through `link` one of `ours`: nothing when it is, a replacement when our
    /// route to the destination differs, an add otherwise (someone else's route to the same
    /// destination is a [`Error::RouteConflict`]).
    pub(super) async fn ensure_owned_route(
        &self,
        ours: &[KernelRoute],
        route: &HostRoute,
        link: &Link,
    ) -> Result<RouteOutcome> {
        match ours
            .iter()
            .find(|r| r.route.destination == route.destination)
        {
            Some(current) if current.oif == Some(link.index) && current.route == *route => {
                Ok(RouteOutcome::Unchanged)
            }
            Some(_) => {
                self.add_route_when_up(route, link, true).await?;
                Ok(RouteOutcome::Replaced)
            }
            None => match self.add_route_when_up(route, link, false).await {
                Ok(()) => Ok(RouteOutcome::Added),
                Err(e) if is_errno(&e, libc::EEXIST) => Err(Error::RouteConflict {
                    destination: route.destination.to_string(),
                }),
                Err(e) => Err(e),
            },
        }
    }

    /// Deletes `stale` (routes whose interface is gone in `links` went with it) and returns
    /// their destinations.
    pub(super) async fn delete_routes(
        &self,
        stale: impl Iterator<Item = &KernelRoute>,
        links: &[Link],
    ) -> Result<Vec<Ipv4Net>> {
        let mut deleted = Vec::new();
        for route in stale {
            let Some(link) = links.iter().find(|l| Some(l.index) == route.oif) else {
                continue;
            };
            self.kernel.delete_route(&route.route, link).await?;
            deleted.push(route.route.destination);
        }
        Ok(deleted)
    }

    /// Adds `route` through `link`; while the kernel answers `ENETDOWN` (the device is being
    /// re-opened), brings the device up again and retries, for up to [`LINK_UP_WAIT`].
    async fn add_route_when_up(&self, route: &HostRoute, link: &Link, replace: bool) -> Result<()> {
        let deadline = tokio::time::Instant::now() + LINK_UP_WAIT;
        let mut link = link.clone();
        loop {
            match self.kernel.add_route(route, &link, replace).await {
                Err(e)
                    if is_errno(&e, libc::ENETDOWN) && tokio::time::Instant::now() < deadline =>
                {
                    tokio::time::sleep(LINK_UP_POLL).await;
                    if let Some(current) = self.kernel.link(&link.name).await? {
                        if !current.up {
                            self.kernel.set_up(&current).await?;
                        }
                        link = current;
                    }
                }
                result => return result,
            }
        }
    }
}
