//! The host's routes to Services (proxyAll): a permanent neighbour entry for the virtual
//! Service IP on the gateway, a link route to that IP, and one route per destination via it.
//! Ours carry the route protocol number [`SERVICE_ROUTE_PROTOCOL`] (`ip route` shows
//! `proto 165`), distinct from the peer routes' so that neither reconciliation touches the
//! other's; the neighbour entry is ours when it is the virtual IP's, permanent, with the
//! virtual MAC.
//!
//! With any destination the host also masquerades 169.254.0.253 leaving through another
//! interface (`virtual_source_snat.rs`), and IPv4 forwarding is switched on: Service traffic from outside (an
//! external or load-balancer IP routed to the Node, a NodePort after its DNAT) arrives on the
//! bridge's interface and leaves through the gateway.

use std::collections::BTreeSet;

use ipnet::Ipv4Net;
use model::{GLOBAL_VIRTUAL_MAC, VIRTUAL_SERVICE_IP};

use crate::error::{Error, Result};
use crate::model::{HostRoute, RouteChanges, ServiceRoutes};

use super::netlink::{KernelNeighbour, MAIN_TABLE};
use super::routes::RouteOutcome;
use super::{LinuxHost, validate_ifname};
use super::{sysctl, virtual_source_snat};

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

impl LinuxHost {
    /// See [`crate::HostNetwork::reconcile_service_routes`].
    pub(super) async fn service_routes(&self, routes: &ServiceRoutes) -> Result<RouteChanges> {
        let wanted = routes.checked_destinations()?;
        let ours = self.owned_routes(SERVICE_ROUTE_PROTOCOL).await?;
        let link = if wanted.is_empty() {
            None
        } else {
            validate_ifname(&routes.interface)?;
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
            let forwarding = self
                .netns
                .run(|| {
                    sysctl::enable_ip_forwarding()
                        .map_err(|e| Error::os("switch on net.ipv4.ip_forward", e))
                })
                .await?;
            if forwarding {
                self.kernel.writes().record();
                tracing::info!(
                    "IPv4 forwarding switched on: Service traffic from outside is forwarded to the gateway"
                );
            }
            if !neighbours
                .iter()
                .any(|n| n.index == link.index && is_ours(n))
            {
                self.kernel
                    .set_permanent_neighbour(link, VIRTUAL_SERVICE_IP, GLOBAL_VIRTUAL_MAC)
                    .await?;
            }
            self.ensure_owned_route(&ours, &virtual_ip_route(), link)
                .await?;
            kept.insert(Ipv4Net::from(VIRTUAL_SERVICE_IP));
            for destination in &wanted {
                match self
                    .ensure_owned_route(&ours, &destination_route(*destination), link)
                    .await?
                {
                    RouteOutcome::Unchanged => {}
                    RouteOutcome::Added => changes.added.push(*destination),
                    RouteOutcome::Replaced => changes.replaced.push(*destination),
                }
                kept.insert(*destination);
            }
        }
        let gateway = link.as_ref().map(|_| routes.interface.clone());
        if self
            .netns
            .run(move || virtual_source_snat::reconcile(gateway.as_deref()))
            .await?
        {
            self.kernel.writes().record();
        }
        let links = self.kernel.links().await?;
        changes.deleted = self
            .delete_routes(
                ours.iter().filter(|r| !kept.contains(&r.route.destination)),
                &links,
            )
            .await?;
        changes
            .deleted
            .retain(|d| *d != Ipv4Net::from(VIRTUAL_SERVICE_IP));
        changes.deleted.sort();
        changes.log_service_routes(&routes.interface);
        Ok(changes)
    }
}
