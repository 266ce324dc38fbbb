//! The host's routes to Services (proxyAll): a permanent neighbour entry for the virtual
//! Service IP on the gateway, a link route to that IP, and one route per destination via it.
//! Ours carry the route protocol number [`SERVICE_ROUTE_PROTOCOL`] (`ip route` shows
//! `proto 165`), distinct from the peer routes' so that neither reconciliation touches the
//! other's; the neighbour entry is ours when it is the virtual IP's, permanent, with the
//! virtual MAC.

use std::collections::BTreeSet;

use ipnet::Ipv4Net;
use model::{GLOBAL_VIRTUAL_MAC, VIRTUAL_SERVICE_IP};

use crate::error::{Error, Result};
use crate::model::{HostRoute, RouteChanges, ServiceRoutes};

use super::LinuxHost;
use super::netlink::{KernelNeighbour, KernelRoute, Link, MAIN_TABLE, is_errno};

/// The route protocol number marking the host's routes to Services (unassigned in
/// `rtnetlink.h` and in iproute2's `rt_protos`; the peer routes' is 164).
pub const SERVICE_ROUTE_PROTOCOL: u8 = 165;

/// `RT_SCOPE_LINK`: the destination is on the link itself.
const SCOPE_LINK: u8 = 253;

/// The route to the virtual Service IP itself: on the gateway's link.
fn virtual_ip_route() -> HostRoute {
    HostRoute {
        destination: Ipv4Net::from(VIRTUAL_SERVICE_IP),
        gateway: None,
        metric: 0,
        table: MAIN_TABLE,
        protocol: SERVICE_ROUTE_PROTOCOL,
        scope: SCOPE_LINK,
        onlink: false,
        pref_source: None,
    }
}

/// The route of one destination: via the virtual Service IP, on-link.
fn destination_route(destination: Ipv4Net) -> HostRoute {
    HostRoute {
        destination,
        gateway: Some(VIRTUAL_SERVICE_IP),
        metric: 0,
        table: MAIN_TABLE,
        protocol: SERVICE_ROUTE_PROTOCOL,
        scope: 0,
        onlink: true,
        pref_source: None,
    }
}

/// Whether `neighbour` is the entry this module writes (on any interface).
fn is_ours(neighbour: &KernelNeighbour) -> bool {
    neighbour.address == VIRTUAL_SERVICE_IP
        && neighbour.permanent
        && neighbour.mac == Some(GLOBAL_VIRTUAL_MAC)
}

/// What [`LinuxHost::ensure_route`] did.
enum Ensured {
    Unchanged,
    Added,
    Replaced,
}

impl LinuxHost {
    /// See [`crate::HostNetwork::reconcile_service_routes`].
    pub(super) async fn service_routes(&self, routes: &ServiceRoutes) -> Result<RouteChanges> {
        let wanted = routes.checked_destinations()?;
        let ours: Vec<KernelRoute> = self
            .kernel
            .routes()
            .await?
            .into_iter()
            .filter(|r| r.route.protocol == SERVICE_ROUTE_PROTOCOL && r.route.table == MAIN_TABLE)
            .collect();
        let link = if wanted.is_empty() {
            None
        } else {
            Some(
                self.kernel
                    .require_link(&routes.interface, "Service routes")
                    .await?,
            )
        };
        let neighbours = self.kernel.neighbours().await?;
        for stale in neighbours
            .iter()
            .filter(|n| is_ours(n) && Some(n.index) != link.as_ref().map(|l| l.index))
        {
            self.kernel.delete_neighbour(stale).await?;
        }
        let mut changes = RouteChanges::default();
        let mut kept = BTreeSet::new();
        if let Some(link) = &link {
            if !neighbours
                .iter()
                .any(|n| n.index == link.index && is_ours(n))
            {
                self.kernel
                    .set_permanent_neighbour(link, VIRTUAL_SERVICE_IP, GLOBAL_VIRTUAL_MAC)
                    .await?;
            }
            self.ensure_route(&ours, &virtual_ip_route(), link).await?;
            kept.insert(Ipv4Net::from(VIRTUAL_SERVICE_IP));
            for destination in &wanted {
                match self
                    .ensure_route(&ours, &destination_route(*destination), link)
                    .await?
                {
                    Ensured::Unchanged => {}
                    Ensured::Added => changes.added.push(*destination),
                    Ensured::Replaced => changes.replaced.push(*destination),
                }
                kept.insert(*destination);
            }
        }
        let links = self.kernel.links().await?;
        for stale in ours.iter().filter(|r| !kept.contains(&r.route.destination)) {
            let Some(link) = links.iter().find(|l| Some(l.index) == stale.oif) else {
                continue;
            };
            self.kernel.delete_route(&stale.route, link).await?;
            if stale.route.destination != Ipv4Net::from(VIRTUAL_SERVICE_IP) {
                changes.deleted.push(stale.route.destination);
            }
        }
        changes.deleted.sort();
        changes.log_service_routes(&routes.interface);
        Ok(changes)
    }

    /// Makes `route` through `link` one of `ours`: nothing when it is, a replacement when our
    /// route to the destination differs, an add otherwise (someone else's route to the same
    /// destination is a conflict).
    async fn ensure_route(
        &self,
        ours: &[KernelRoute],
        route: &HostRoute,
        link: &Link,
    ) -> Result<Ensured> {
        match ours
            .iter()
            .find(|r| r.route.destination == route.destination)
        {
            Some(current) if current.oif == Some(link.index) && current.route == *route => {
                Ok(Ensured::Unchanged)
            }
            Some(_) => {
                self.add_route_when_up(route, link, true).await?;
                Ok(Ensured::Replaced)
            }
            None => match self.add_route_when_up(route, link, false).await {
                Ok(()) => Ok(Ensured::Added),
                Err(e) if is_errno(&e, libc::EEXIST) => Err(Error::RouteConflict {
                    destination: route.destination.to_string(),
                }),
                Err(e) => Err(e),
            },
        }
    }
}
