//! The host's routes to Services through IP Helper (proxyAll), as Antrea sets them on the
//! gateway: a permanent neighbour entry 169.254.0.253 → `AA-BB-CC-DD-EE-FF`, the on-link route
//! 169.254.0.253/32 (next hop 0.0.0.0) and each destination via 169.254.0.253, all with metric
//! [`SERVICE_ROUTE_METRIC`]. Ownership rule: an IPv4 route with protocol `Other` (what IP
//! Helper writes), that metric, and the virtual IP as its next hop or destination is ours;
//! the neighbour entry is ours when it is the virtual IP's, permanent, with the virtual MAC.

use std::net::{IpAddr, Ipv4Addr};

use ipnet::{IpNet, Ipv4Net};
use model::{GLOBAL_VIRTUAL_MAC, VIRTUAL_SERVICE_IP};
use winos::model::{IpFamily, Neighbor, NeighborState, Route, RouteProtocol};

use super::{Backend, os};
use crate::error::Result;
use crate::model::{RouteChanges, ServiceRoutes};

/// The metric of the host's Service routes (Antrea's, on `antrea-gw0`).
pub const SERVICE_ROUTE_METRIC: u32 = 50;

fn virtual_ip_net() -> IpNet {
    IpNet::V4(Ipv4Net::from(VIRTUAL_SERVICE_IP))
}

/// Whether the route belongs to this module (see the module documentation).
fn is_ours(route: &Route) -> bool {
    matches!(route.destination, IpNet::V4(_))
        && route.protocol == RouteProtocol::Other
        && route.metric == SERVICE_ROUTE_METRIC
        && (route.next_hop == IpAddr::V4(VIRTUAL_SERVICE_IP)
            || route.destination == virtual_ip_net())
}

fn is_our_neighbor(neighbor: &Neighbor) -> bool {
    neighbor.address == IpAddr::V4(VIRTUAL_SERVICE_IP)
        && neighbor.state == NeighborState::Permanent
        && neighbor.mac == GLOBAL_VIRTUAL_MAC
}

impl<H, I, N, F> Backend<H, I, N, F>
where
    H: hcn::HcnApi,
    I: winos::IpHelper,
{
    /// See [`crate::HostNetwork::reconcile_service_routes`].
    pub(super) fn service_routes(&self, routes: &ServiceRoutes) -> Result<RouteChanges> {
        let wanted = routes.checked_destinations()?;
        let index = if wanted.is_empty() {
            None
        } else {
            Some(self.adapter(&routes.interface, "Service routes")?.index)
        };
        self.service_neighbor(index)?;
        let mut desired: Vec<Route> = Vec::new();
        if let Some(index) = index {
            desired.push(Route::new(
                virtual_ip_net(),
                IpAddr::V4(Ipv4Addr::UNSPECIFIED),
                index,
                SERVICE_ROUTE_METRIC,
            ));
            desired.extend(wanted.iter().map(|destination| {
                Route::new(
                    IpNet::V4(*destination),
                    IpAddr::V4(VIRTUAL_SERVICE_IP),
                    index,
                    SERVICE_ROUTE_METRIC,
                )
            }));
        }
        let ours: Vec<Route> = self.routes()?.into_iter().filter(is_ours).collect();
        let mut changes = RouteChanges::default();
        for existing in &ours {
            if desired.iter().any(|d| d.key() == existing.key()) {
                continue;
            }
            self.ip
                .delete_route(&existing.key())
                .map_err(os(format!("deleting {}", existing.key())))?;
            if let IpNet::V4(destination) = existing.destination
                && !wanted.contains(&destination)
                && existing.destination != virtual_ip_net()
            {
                changes.deleted.push(destination);
            }
        }
        for route in &desired {
            if ours.iter().any(|r| r.key() == route.key()) {
                continue;
            }
            let IpNet::V4(destination) = route.destination else {
                continue;
            };
            self.create_owned_route(route)?;
            if route.destination == virtual_ip_net() {
                continue;
            }
            if ours.iter().any(|r| r.destination == route.destination) {
                changes.replaced.push(destination);
            } else {
                changes.added.push(destination);
            }
        }
        changes.deleted.sort();
        changes.log_service_routes(&routes.interface);
        Ok(changes)
    }

    /// Makes our neighbour entry exist on interface `index` only (nowhere with `None`). Another
    /// entry for the virtual IP on that interface (learned, or with another MAC) is replaced.
    fn service_neighbor(&self, index: Option<u32>) -> Result<()> {
        let neighbors = self
            .ip
            .neighbors(IpFamily::V4)
            .map_err(os("listing neighbors"))?;
        for neighbor in neighbors
            .iter()
            .filter(|n| n.address == IpAddr::V4(VIRTUAL_SERVICE_IP))
        {
            let keep = Some(neighbor.interface_index) == index && is_our_neighbor(neighbor);
            let foreign_elsewhere =
                Some(neighbor.interface_index) != index && !is_our_neighbor(neighbor);
            if keep || foreign_elsewhere {
                continue;
            }
            self.ip
                .delete_neighbor(neighbor.interface_index, neighbor.address)
                .map_err(os(format!("deleting {neighbor}")))?;
        }
        let Some(index) = index else {
            return Ok(());
        };
        if neighbors
            .iter()
            .any(|n| n.interface_index == index && is_our_neighbor(n))
        {
            return Ok(());
        }
        self.ip
            .create_permanent_neighbor(index, IpAddr::V4(VIRTUAL_SERVICE_IP), GLOBAL_VIRTUAL_MAC)
            .map_err(os(format!(
                "adding neighbor {VIRTUAL_SERVICE_IP} ({GLOBAL_VIRTUAL_MAC}) on interface {index}"
            )))
    }
}
