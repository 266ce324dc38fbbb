//! Routes to peer Nodes' Pod CIDRs. Ours carry the route protocol number [`ROUTE_PROTOCOL`]
//! (`ip route` shows `proto 164`); reconciliation only ever touches routes with it.

use std::collections::HashMap;
use std::time::Duration;

use ipnet::Ipv4Net;

use crate::error::{Error, Result};
use crate::model::{HostRoute, PeerRoute, RouteChanges};

use super::LinuxHost;
use super::netlink::{Link, MAIN_TABLE, is_errno};

/// How long a route add waits for its interface to come (back) up. Open vSwitch's userspace
/// datapath re-opens its tap devices (e.g. `antrea-gw0`) while it reconfigures after a port
/// change, and the kernel refuses routes through a device that is down (`ENETDOWN`).
const LINK_UP_WAIT: Duration = Duration::from_secs(3);
const LINK_UP_POLL: Duration = Duration::from_millis(20);

/// The route protocol number marking routes antrea owns (unassigned in `rtnetlink.h` and in
/// iproute2's `rt_protos`).
pub const ROUTE_PROTOCOL: u8 = 164;

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
        let ours: Vec<_> = self
            .kernel
            .routes()
            .await?
            .into_iter()
            .filter(|r| r.route.protocol == ROUTE_PROTOCOL && r.route.table == MAIN_TABLE)
            .collect();
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
            let route = host_route(peer);
            match ours.iter().find(|r| r.route.destination == *destination) {
                Some(current) if current.oif == Some(link.index) && current.route == route => {}
                Some(_) => {
                    self.add_route_when_up(&route, link, true).await?;
                    changes.replaced.push(*destination);
                }
                None => match self.add_route_when_up(&route, link, false).await {
                    Ok(()) => changes.added.push(*destination),
                    Err(e) if is_errno(&e, libc::EEXIST) => {
                        return Err(Error::RouteConflict {
                            destination: destination.to_string(),
                        });
                    }
                    Err(e) => return Err(e),
                },
            }
        }
        for stale in ours
            .iter()
            .filter(|r| !wanted.contains_key(&r.route.destination))
        {
            let Some(link) = links.iter().find(|l| Some(l.index) == stale.oif) else {
                continue;
            };
            self.kernel.delete_route(&stale.route, link).await?;
            changes.deleted.push(stale.route.destination);
        }
        changes.added.sort();
        changes.replaced.sort();
        changes.deleted.sort();
        Ok(changes)
    }

    /// Adds `route` through `link`; while the kernel answers `ENETDOWN` (the device is being
    /// re-opened), brings the device up again and retries, for up to [`LINK_UP_WAIT`].
    pub(super) async fn add_route_when_up(
        &self,
        route: &HostRoute,
        link: &Link,
        replace: bool,
    ) -> Result<()> {
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
