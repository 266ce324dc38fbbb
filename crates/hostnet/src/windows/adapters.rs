//! Reading the host's adapters through IP Helper: an adapter's [`NicConfig`], lookups by alias,
//! and the transport interface search.

use std::net::{IpAddr, Ipv4Addr};
use std::time::Instant;

use ipnet::IpNet;
use model::MacAddr;
use winos::model::{Adapter, Route, RouteProtocol};

use super::{Backend, os};
use crate::error::{Error, Result};
use crate::model::{HostRoute, NicConfig, TransportSelector};

/// The adapter's MAC; adapters without a 6-byte one cannot be used.
pub(super) fn mac_of(adapter: &Adapter) -> Result<MacAddr> {
    adapter.mac.ok_or_else(|| Error::Invalid {
        what: "adapter",
        value: adapter.alias.clone(),
        reason: "it has no Ethernet address",
    })
}

/// The IPv4 next hop of a route, `None` for on-link.
pub(super) fn next_hop_v4(route: &Route) -> Option<Ipv4Addr> {
    match route.next_hop {
        IpAddr::V4(hop) if !hop.is_unspecified() => Some(hop),
        _ => None,
    }
}

/// The IPv4 routes through `index` that the stack did not derive from addresses.
pub(super) fn routes_of(routes: &[Route], index: u32) -> impl Iterator<Item = &Route> {
    routes.iter().filter(move |r| {
        r.interface_index == index
            && matches!(r.destination, IpNet::V4(_))
            && r.protocol != RouteProtocol::Local
    })
}

/// `adapter`'s IPv4 configuration with its routes from `routes`.
pub(super) fn nic_config(adapter: &Adapter, routes: &[Route]) -> Result<NicConfig> {
    let routes = routes_of(routes, adapter.index)
        .filter_map(|r| match r.destination {
            IpNet::V4(destination) => Some(HostRoute {
                destination,
                gateway: next_hop_v4(r),
                metric: r.metric,
                table: 0,
                protocol: u8::try_from(r.protocol.code()).unwrap_or(u8::MAX),
                scope: 0,
                onlink: false,
                pref_source: None,
            }),
            IpNet::V6(_) => None,
        })
        .collect();
    Ok(NicConfig {
        name: adapter.alias.clone(),
        index: adapter.index,
        mac: mac_of(adapter)?,
        mtu: adapter.mtu,
        addresses: adapter.ipv4.clone(),
        routes,
    })
}

/// Every adapter with its IPv4 addresses, for error messages.
fn describe(adapters: &[Adapter]) -> String {
    adapters
        .iter()
        .map(|a| {
            let addresses: Vec<String> = a.ipv4.iter().map(ToString::to_string).collect();
            format!("{} [{}]", a.alias, addresses.join(", "))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

impl<H, I, N, F> Backend<H, I, N, F>
where
    H: hcn::HcnApi,
    I: winos::IpHelper,
{
    /// Every adapter.
    pub(super) fn adapters(&self) -> Result<Vec<Adapter>> {
        self.ip.adapters().map_err(os("listing adapters"))
    }

    /// Every route.
    pub(super) fn routes(&self) -> Result<Vec<Route>> {
        self.ip.routes().map_err(os("listing routes"))
    }

    /// The adapter whose alias is `alias`.
    pub(super) fn adapter(&self, alias: &str, purpose: &'static str) -> Result<Adapter> {
        self.adapters()?
            .into_iter()
            .find(|a| a.alias == alias)
            .ok_or_else(|| Error::InterfaceNotFound {
                name: alias.to_owned(),
                purpose,
            })
    }

    /// The adapter whose alias is `alias`, once Windows shows it: vNICs of HNS endpoints and
    /// of OVS internal ports appear a little after their creation (bounded wait).
    pub(super) fn wait_for_adapter(&self, alias: &str) -> Result<Adapter> {
        let deadline = Instant::now() + self.settings.settle_wait;
        loop {
            if let Some(adapter) = self.adapters()?.into_iter().find(|a| a.alias == alias) {
                return Ok(adapter);
            }
            if Instant::now() >= deadline {
                return Err(Error::Timeout {
                    op: format!("waiting for adapter {alias:?}"),
                    waited: self.settings.settle_wait,
                });
            }
            std::thread::sleep(self.settings.poll_interval);
        }
    }

    /// The configuration of the adapter whose alias is `alias`.
    pub(super) fn config_of(&self, alias: &str, purpose: &'static str) -> Result<NicConfig> {
        let adapter = self.adapter(alias, purpose)?;
        nic_config(&adapter, &self.routes()?)
    }

    /// The adapter the selector names. A NIC named by the selector that lost its addresses to
    /// the HNS network is answered with the network's vNIC (the bridge's LOCAL interface, found
    /// by the NIC's MAC), as Antrea tries the configured name and then `br-int`.
    pub(super) fn find_transport(&self, selector: &TransportSelector) -> Result<NicConfig> {
        let adapters = self.adapters()?;
        let found = match selector {
            TransportSelector::NodeIp(ip) => adapters.iter().find(|a| a.has_ipv4(*ip)),
            TransportSelector::Cidrs(cidrs) => adapters.iter().find(|a| {
                a.ipv4
                    .iter()
                    .any(|net| cidrs.iter().any(|c| c.contains(&net.addr())))
            }),
            TransportSelector::InterfaceName(name) => match adapters
                .iter()
                .find(|a| &a.alias == name)
            {
                Some(nic) if nic.ipv4.is_empty() && self.bound_to_network(name)? => {
                    adapters.iter().find(|a| {
                        a.is_virtual() && a.mac.is_some() && a.mac == nic.mac && !a.ipv4.is_empty()
                    })
                }
                found => found,
            },
        };
        match found {
            Some(adapter) => nic_config(adapter, &self.routes()?),
            None => Err(Error::TransportInterfaceNotFound {
                selector: selector.to_string(),
                available: describe(&adapters),
            }),
        }
    }
}
