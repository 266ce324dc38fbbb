//! The uplink takeover in Antrea's Windows order: save the NIC's routes and DNS servers, create
//! (or reuse) the Transparent HNS network on the NIC, wait for the Node IP on the network's
//! vNIC (putting it there ourselves when Windows did not), rename the vNIC to the bridge's name,
//! enable the OVS extension, enable forwarding. Also the uplink's recovery after a restart and
//! its restoration (the network deleted, the NIC's configuration back).

use std::net::{IpAddr, Ipv4Addr};
use std::time::Instant;

use hcn::schema::{
    HostComputeNetwork, Ipam, NetworkPolicy, NetworkType, OVS_EXTENSION_ID, QueryFilter, Subnet,
};
use hcn::vnic_name;
use ipnet::{IpNet, Ipv4Net};
use model::MacAddr;
use winos::model::{Adapter, IpFamily, IpInterfaceChange, Route, UnicastAddress};

use super::adapters::{mac_of, next_hop_v4, nic_config, routes_of};
use super::{Backend, HNS_NETWORK, hns, os, outcome};
use crate::error::{Error, Result};
use crate::model::{NicConfig, Outcome, Uplink};

/// The NIC configuration Windows should move to the vNIC, saved before the network exists.
#[derive(Debug, Clone)]
struct Saved {
    addresses: Vec<Ipv4Net>,
    /// The routes through the default gateway (the default route included), as Antrea saves them.
    routes: Vec<Route>,
    dns: Vec<IpAddr>,
}

impl Saved {
    fn read(adapter: &Adapter, routes: &[Route]) -> Saved {
        let on_nic: Vec<&Route> = routes_of(routes, adapter.index).collect();
        let gateway = on_nic
            .iter()
            .find(|r| r.destination.prefix_len() == 0)
            .and_then(|r| next_hop_v4(r));
        Saved {
            addresses: adapter.ipv4.clone(),
            routes: on_nic
                .into_iter()
                .filter(|r| gateway.is_some() && next_hop_v4(r) == gateway)
                .cloned()
                .collect(),
            dns: adapter
                .dns_servers
                .iter()
                .filter(|s| s.is_ipv4())
                .copied()
                .collect(),
        }
    }
}

/// The document of the HNS network on `nic` with the Pod subnet.
fn network_document(
    nic: &Adapter,
    mac: MacAddr,
    pod_cidr: Ipv4Net,
    gateway: Ipv4Addr,
) -> HostComputeNetwork {
    HostComputeNetwork {
        name: HNS_NETWORK.to_owned(),
        kind: NetworkType::Transparent,
        policies: vec![
            NetworkPolicy::NetAdapterName {
                network_adapter_name: nic.alias.clone(),
            },
            NetworkPolicy::SourceMacAddress {
                source_mac_address: mac.windows().to_string(),
            },
        ],
        ipams: vec![Ipam::static_subnets(vec![Subnet {
            ip_address_prefix: pod_cidr.trunc().to_string(),
            routes: vec![hcn::schema::Route::default_via(gateway.to_string())],
            flags: 0,
        }])],
        ..HostComputeNetwork::default()
    }
}

impl<H, I, N, F> Backend<H, I, N, F>
where
    H: hcn::HcnApi,
    I: winos::IpHelper,
{
    /// Our HNS network, if it exists.
    pub(super) fn network(&self) -> Result<Option<HostComputeNetwork>> {
        self.hcn
            .find_network_by_name(HNS_NETWORK)
            .map_err(hns(format!("looking up HNS network {HNS_NETWORK}")))
    }

    /// Whether our HNS network holds the NIC named `nic`.
    pub(super) fn bound_to_network(&self, nic: &str) -> Result<bool> {
        Ok(self
            .network()?
            .is_some_and(|n| n.adapter_name() == Some(nic)))
    }

    /// The uplink of `bridge` and our network: the network's NIC, and the configuration on its
    /// vNIC (named `bridge`, or still `vEthernet (antrea-hnsnetwork)` before the rename).
    pub(super) fn uplink_of(&self, bridge: &str) -> Result<Option<(Uplink, HostComputeNetwork)>> {
        let Some(network) = self.network()? else {
            return Ok(None);
        };
        let nic = network.adapter_name().ok_or_else(|| Error::Invalid {
            what: "HNS network",
            value: HNS_NETWORK.to_owned(),
            reason: "it has no NetAdapterName policy",
        })?;
        let vnic = vnic_name(HNS_NETWORK);
        let adapters = self.adapters()?;
        let local = adapters
            .iter()
            .find(|a| a.alias == bridge)
            .or_else(|| adapters.iter().find(|a| a.alias == vnic))
            .ok_or_else(|| Error::InterfaceNotFound {
                name: bridge.to_owned(),
                purpose: "the HNS network's vNIC",
            })?;
        let uplink = Uplink {
            nic: nic.to_owned(),
            bridge: nic_config(local, &self.routes()?)?,
        };
        Ok(Some((uplink, network)))
    }

    /// See [`crate::HostNetwork::take_over_uplink`]. When the takeover is done already (`nic`
    /// is the network's vNIC under either name after a restart, or the NIC is bare and bound to
    /// our network), only the last steps are checked.
    pub(super) fn take_over(&self, nic: &NicConfig, bridge: &str) -> Result<(Uplink, Outcome)> {
        if nic.name != bridge && nic.name != vnic_name(HNS_NETWORK) {
            let adapter = self.adapter(&nic.name, "uplink")?;
            if adapter.is_virtual() {
                return Err(Error::VirtualUplink {
                    nic: adapter.alias,
                    description: adapter.description,
                });
            }
            if !adapter.ipv4.is_empty() || !self.bound_to_network(&adapter.alias)? {
                return self.take_over_fresh(&adapter, bridge);
            }
        }
        let (_, network) = self
            .uplink_of(bridge)?
            .ok_or_else(|| Error::UplinkUnknown {
                bridge: bridge.to_owned(),
            })?;
        let changed = self.finish(&network, bridge)?;
        let (uplink, _) = self
            .uplink_of(bridge)?
            .ok_or_else(|| Error::UplinkUnknown {
                bridge: bridge.to_owned(),
            })?;
        Ok((uplink, outcome(changed)))
    }

    /// The takeover of a NIC that still holds its configuration; on failure the network this
    /// call created is deleted, which gives the NIC its configuration back.
    fn take_over_fresh(&self, adapter: &Adapter, bridge: &str) -> Result<(Uplink, Outcome)> {
        let mut created = None;
        match self.take_over_nic(adapter, bridge, &mut created) {
            Ok(done) => Ok(done),
            Err(error) => {
                let rollback = match created {
                    None => {
                        "nothing to undo (no HNS network was created by this attempt)".to_owned()
                    }
                    Some(id) => match self.hcn.delete_network(id) {
                        Ok(()) => format!("HNS network {HNS_NETWORK} deleted"),
                        Err(e) => format!("deleting HNS network {HNS_NETWORK} failed: {e}"),
                    },
                };
                tracing::warn!(
                    "taking over {} failed: {error}; rollback: {rollback}",
                    adapter.alias
                );
                Err(Error::TakeoverFailed {
                    nic: adapter.alias.clone(),
                    source: Box::new(error),
                    rollback,
                })
            }
        }
    }

    /// The takeover of a physical NIC; `created` gets the network's ID once this call made it.
    fn take_over_nic(
        &self,
        adapter: &Adapter,
        bridge: &str,
        created: &mut Option<hcn::Guid>,
    ) -> Result<(Uplink, Outcome)> {
        let saved = Saved::read(adapter, &self.routes()?);
        if saved.addresses.is_empty() {
            return Err(Error::Invalid {
                what: "uplink",
                value: adapter.alias.clone(),
                reason: "it has no IPv4 address to move",
            });
        }
        let mac = mac_of(adapter)?;
        let network = match self.network()? {
            Some(network) if network.adapter_name() == Some(adapter.alias.as_str()) => {
                tracing::info!(
                    "HNS network {HNS_NETWORK} on {} exists; reusing it",
                    adapter.alias
                );
                network
            }
            Some(network) => {
                return Err(Error::Invalid {
                    what: "HNS network",
                    value: format!(
                        "{HNS_NETWORK} on {:?}",
                        network.adapter_name().unwrap_or_default()
                    ),
                    reason: "it is bound to another adapter than the uplink",
                });
            }
            None => {
                let pod_cidr = self.settings.pod_cidr;
                // The first usable address (`.1` of a /24); a /31 or /32 has no room for a
                // gateway, and `hosts()` then starts at the network address.
                let gateway = pod_cidr.hosts().next().unwrap_or(pod_cidr.network());
                let document = network_document(adapter, mac, pod_cidr, gateway);
                let network = self.hcn.create_network(&document).map_err(hns(format!(
                    "creating HNS network {HNS_NETWORK} on {}",
                    adapter.alias
                )))?;
                *created = Some(network.id);
                tracing::info!(
                    "HNS network {HNS_NETWORK} created on {} ({})",
                    adapter.alias,
                    network.id
                );
                network
            }
        };
        let vnic = self.wait_for_vnic(adapter, &saved, bridge)?;
        if !saved.addresses.iter().all(|net| vnic.has_ipv4(net.addr())) {
            tracing::warn!(
                "Windows did not move the addresses of {} to {}; moving them, the DNS servers and the routes",
                adapter.alias,
                vnic.alias
            );
            self.put_back(&vnic, &saved)?;
        }
        self.finish(&network, bridge)?;
        let (uplink, _) = self
            .uplink_of(bridge)?
            .ok_or_else(|| Error::UplinkUnknown {
                bridge: bridge.to_owned(),
            })?;
        tracing::info!("configuration of {} moved to {bridge}", adapter.alias);
        // Reusing a network of an interrupted attempt writes nothing new until `finish`; either
        // way the host changed since the NIC still held the configuration.
        Ok((uplink, Outcome::Changed))
    }

    /// Polls (bounded) for the network's vNIC with the NIC's MAC and all of its addresses;
    /// returns the vNIC as last seen (possibly without them). Fails when it never appears.
    fn wait_for_vnic(&self, nic: &Adapter, saved: &Saved, bridge: &str) -> Result<Adapter> {
        let vnic = vnic_name(HNS_NETWORK);
        let deadline = Instant::now() + self.settings.settle_wait;
        loop {
            let found = self.adapters()?.into_iter().find(|a| {
                (a.alias == vnic || a.alias == bridge) && a.mac == nic.mac && a.index != nic.index
            });
            let complete = found
                .as_ref()
                .is_some_and(|a| saved.addresses.iter().all(|net| a.has_ipv4(net.addr())));
            if complete || Instant::now() >= deadline {
                return found.ok_or_else(|| Error::Timeout {
                    op: format!("waiting for {vnic} with the MAC of {}", nic.alias),
                    waited: self.settings.settle_wait,
                });
            }
            std::thread::sleep(self.settings.poll_interval);
        }
    }

    /// Gives `adapter` the saved addresses, DNS servers and routes (what is missing only);
    /// returns whether anything was written.
    fn put_back(&self, adapter: &Adapter, saved: &Saved) -> Result<bool> {
        let mut changed = false;
        for net in &saved.addresses {
            if !adapter.has_ipv4(net.addr()) {
                let address = UnicastAddress {
                    interface_index: adapter.index,
                    address: IpNet::V4(*net),
                };
                self.ip
                    .create_unicast_address(&address)
                    .map_err(os(format!("adding {net} to {}", adapter.alias)))?;
                changed = true;
            }
        }
        let dns_v4: Vec<IpAddr> = adapter
            .dns_servers
            .iter()
            .filter(|s| s.is_ipv4())
            .copied()
            .collect();
        if !saved.dns.is_empty() && dns_v4 != saved.dns {
            self.ip
                .set_dns_servers(adapter.index, IpFamily::V4, &saved.dns)
                .map_err(os(format!("setting the DNS servers of {}", adapter.alias)))?;
            changed = true;
        }
        for route in &saved.routes {
            let moved = Route::new(
                route.destination,
                route.next_hop,
                adapter.index,
                route.metric,
            );
            let ensured = self.ip.ensure_route(&moved).map_err(os(format!(
                "adding {} to {}",
                moved.key(),
                adapter.alias
            )))?;
            changed |= ensured != winos::Ensured::Unchanged;
        }
        Ok(changed)
    }

    /// The steps after the address move, each skipped when done: rename the vNIC to `bridge`,
    /// enable the OVS extension (only now: enabling it earlier can keep the vNIC from getting
    /// its DHCP address), enable forwarding on it. Returns whether anything was written.
    fn finish(&self, network: &HostComputeNetwork, bridge: &str) -> Result<bool> {
        let mut changed = false;
        let vnic = vnic_name(HNS_NETWORK);
        if self.adapters()?.iter().any(|a| a.alias == vnic) {
            self.ip
                .rename_adapter(&vnic, bridge)
                .map_err(os(format!("renaming {vnic} to {bridge}")))?;
            tracing::info!("{vnic} renamed to {bridge}");
            changed = true;
        }
        if network.extension_enabled(OVS_EXTENSION_ID) != Some(true) {
            self.hcn
                .set_extension_enabled(network.id, OVS_EXTENSION_ID, true)
                .map_err(hns(format!(
                    "enabling the Open vSwitch extension on {HNS_NETWORK}"
                )))?;
            tracing::info!("Open vSwitch extension enabled on {HNS_NETWORK}");
            changed = true;
        }
        let local = self.adapter(bridge, "the bridge's LOCAL interface")?;
        let settings = self
            .ip
            .ip_interface(local.index, IpFamily::V4)
            .map_err(os(format!("reading IPv4 settings of {bridge}")))?;
        if !settings.forwarding {
            let change = IpInterfaceChange {
                forwarding: Some(true),
                nl_mtu: None,
            };
            self.ip
                .set_ip_interface(local.index, IpFamily::V4, change)
                .map_err(os(format!("enabling forwarding on {bridge}")))?;
            changed = true;
        }
        Ok(changed)
    }

    /// See [`crate::HostNetwork::restore_uplink`]: the network's endpoints and the network are
    /// deleted (HNS gives the NIC its configuration back); what is still missing on the NIC is
    /// put back from the vNIC's configuration.
    pub(super) fn restore(&self, bridge: &str) -> Result<Option<NicConfig>> {
        let Some((uplink, network)) = self.uplink_of(bridge)? else {
            return Ok(None);
        };
        let routes = self.routes()?;
        let local = self.adapter(&uplink.bridge.name, "the HNS network's vNIC")?;
        let saved = Saved::read(&local, &routes);
        let endpoints = self
            .hcn
            .enumerate_endpoints(&hcn::schema::HostComputeQuery::new(QueryFilter::Network(
                network.id,
            )))
            .map_err(hns(format!("listing the endpoints of {HNS_NETWORK}")))?;
        for id in endpoints {
            match self.hcn.delete_endpoint(id) {
                Err(e) if !e.is_not_found() => {
                    return Err(hns(format!("deleting endpoint {id}"))(e));
                }
                _ => {}
            }
        }
        self.hcn
            .delete_network(network.id)
            .map_err(hns(format!("deleting HNS network {HNS_NETWORK}")))?;
        tracing::info!(
            "HNS network {HNS_NETWORK} deleted; {} gets its configuration back",
            uplink.nic
        );
        let nic = self.adapter(&uplink.nic, "uplink")?;
        if self.put_back(&nic, &saved)? {
            tracing::warn!(
                "Windows did not give {} its configuration back; restored it",
                uplink.nic
            );
        }
        self.config_of(&uplink.nic, "uplink").map(Some)
    }
}
