//! The transport interface and the uplink takeover: the Linux twin of HNS creating a
//! Transparent network, whose vNIC takes over the NIC's IP configuration.
//!
//! Taking over copies the NIC's MAC and MTU to the bridge's LOCAL interface, moves its IPv4
//! addresses and routes there and leaves the NIC up without addresses. The NIC is marked with
//! the link alias `antrea-uplink-of:<bridge>`; after a restart the marker names the NIC again
//! (the Windows agent reads the same from the HNS network), and the configuration itself is
//! re-read from the bridge. The same move in the other direction is the rollback and
//! [`crate::HostNetwork::restore_uplink`].

use ipnet::Ipv4Net;

use crate::error::{Error, Result};
use crate::model::{HostRoute, NicConfig, Outcome, TransportSelector, Uplink};

use super::netlink::{Kernel, KernelRoute, Link};
use super::routes::ROUTE_PROTOCOL;
use super::{LinuxHost, ethtool};

/// Link alias prefix marking a NIC as the uplink of the bridge named after it.
pub const UPLINK_ALIAS_PREFIX: &str = "antrea-uplink-of:";

fn same_route(a: &HostRoute, b: &HostRoute) -> bool {
    a.destination.trunc() == b.destination.trunc()
        && a.gateway == b.gateway
        && a.table == b.table
        && a.metric == b.metric
}

fn has_route(routes: &[KernelRoute], route: &HostRoute, oif: u32) -> bool {
    routes
        .iter()
        .any(|r| r.oif == Some(oif) && same_route(&r.route, route))
}

impl LinuxHost {
    pub(super) async fn find_transport(&self, selector: &TransportSelector) -> Result<NicConfig> {
        let links = self.kernel.links().await?;
        let addresses = self.kernel.addresses().await?;
        let holder = match selector {
            TransportSelector::NodeIp(ip) => addresses
                .iter()
                .find(|(_, a)| a.addr() == *ip)
                .map(|(i, _)| *i),
            TransportSelector::Cidrs(cidrs) => addresses
                .iter()
                .find(|(_, a)| cidrs.iter().any(|c| c.contains(&a.addr())))
                .map(|(i, _)| *i),
            TransportSelector::InterfaceName(name) => {
                links.iter().find(|l| &l.name == name).map(|link| {
                    // A NIC already taken over: its configuration lives on the bridge now.
                    let bridge = link
                        .alias
                        .as_deref()
                        .and_then(|a| a.strip_prefix(UPLINK_ALIAS_PREFIX));
                    bridge
                        .and_then(|b| links.iter().find(|l| l.name == b))
                        .unwrap_or(link)
                        .index
                })
            }
        };
        let Some(link) = holder.and_then(|index| links.iter().find(|l| l.index == index)) else {
            let available: Vec<String> = links
                .iter()
                .map(|l| {
                    let own: Vec<String> = addresses
                        .iter()
                        .filter(|(i, _)| *i == l.index)
                        .map(|(_, a)| a.to_string())
                        .collect();
                    format!("{} [{}]", l.name, own.join(" "))
                })
                .collect();
            return Err(Error::TransportInterfaceNotFound {
                selector: selector.to_string(),
                available: available.join(", "),
            });
        };
        self.kernel.nic_config(link, ROUTE_PROTOCOL).await
    }

    pub(super) async fn uplink_of(&self, bridge: &str) -> Result<Option<Uplink>> {
        let marker = format!("{UPLINK_ALIAS_PREFIX}{bridge}");
        let links = self.kernel.links().await?;
        let Some(nic) = links
            .iter()
            .find(|l| l.alias.as_deref() == Some(marker.as_str()))
        else {
            return Ok(None);
        };
        let bridge_link = self
            .kernel
            .require_link(bridge, "bridge LOCAL interface")
            .await?;
        let config = self.kernel.nic_config(&bridge_link, ROUTE_PROTOCOL).await?;
        Ok(Some(Uplink {
            nic: nic.name.clone(),
            bridge: config,
        }))
    }

    pub(super) async fn take_over(
        &self,
        nic: &NicConfig,
        bridge: &str,
    ) -> Result<(Uplink, Outcome)> {
        if nic.name == bridge {
            let uplink = self
                .uplink_of(bridge)
                .await?
                .ok_or_else(|| Error::UplinkUnknown {
                    bridge: bridge.to_owned(),
                })?;
            return Ok((uplink, Outcome::Unchanged));
        }
        let bridge_link = self
            .kernel
            .require_link(bridge, "bridge LOCAL interface")
            .await?;
        let nic_link = self.kernel.require_link(&nic.name, "uplink NIC").await?;
        let kernel = self.kernel.scoped();
        if let Err(error) = self.attach(&kernel, &nic_link, &bridge_link, nic).await {
            let rollback = match self
                .detach(
                    &kernel,
                    &bridge_link,
                    &nic_link,
                    &nic.addresses,
                    &nic.routes,
                )
                .await
            {
                Ok(()) => "the NIC's configuration was put back".to_owned(),
                Err(e) => format!("putting the NIC's configuration back failed too: {e}"),
            };
            return Err(Error::TakeoverFailed {
                nic: nic.name.clone(),
                source: Box::new(error),
                rollback,
            });
        }
        let bridge_link = self
            .kernel
            .require_link(bridge, "bridge LOCAL interface")
            .await?;
        let config = self.kernel.nic_config(&bridge_link, ROUTE_PROTOCOL).await?;
        Ok((
            Uplink {
                nic: nic.name.clone(),
                bridge: config,
            },
            kernel.writes().outcome(),
        ))
    }

    /// Moves the NIC's configuration (`snapshot`) onto the bridge.
    async fn attach(
        &self,
        kernel: &Kernel,
        nic: &Link,
        bridge: &Link,
        snapshot: &NicConfig,
    ) -> Result<()> {
        let marker = format!("{UPLINK_ALIAS_PREFIX}{}", bridge.name);
        if nic.alias.as_deref() != Some(marker.as_str()) {
            kernel.set_alias(nic, &marker).await?;
        }
        if bridge.mac != Some(snapshot.mac) || bridge.mtu != snapshot.mtu || !bridge.up {
            let message = rtnetlink::LinkUnspec::new_with_index(bridge.index)
                .address(snapshot.mac.octets().to_vec())
                .mtu(snapshot.mtu)
                .up()
                .build();
            let op = format!(
                "give {:?} the MAC {} and MTU {} of {:?}",
                bridge.name, snapshot.mac, snapshot.mtu, nic.name
            );
            kernel.set_link(message, op).await?;
        }
        self.tx_checksum_off(kernel, &bridge.name).await?;
        self.move_config(kernel, nic, bridge, &snapshot.addresses, &snapshot.routes)
            .await?;
        if !nic.up {
            kernel.set_up(nic).await?;
        }
        Ok(())
    }

    /// Moves `addresses` and `routes` from `bridge` back to `nic` and removes the marker.
    async fn detach(
        &self,
        kernel: &Kernel,
        bridge: &Link,
        nic: &Link,
        addresses: &[Ipv4Net],
        routes: &[HostRoute],
    ) -> Result<()> {
        if !nic.up {
            kernel.set_up(nic).await?;
        }
        self.move_config(kernel, bridge, nic, addresses, routes)
            .await?;
        let nic = kernel.require_link(&nic.name, "uplink NIC").await?;
        if nic.alias.is_some() {
            kernel.set_alias(&nic, "").await?;
        }
        Ok(())
    }

    /// Makes `to` hold `addresses` and `routes` instead of `from`; every step is skipped when
    /// already done, so an interrupted move can be repeated.
    async fn move_config(
        &self,
        kernel: &Kernel,
        from: &Link,
        to: &Link,
        addresses: &[Ipv4Net],
        routes: &[HostRoute],
    ) -> Result<()> {
        let present = kernel.addresses().await?;
        for address in addresses {
            if !present.contains(&(to.index, *address)) {
                kernel.add_address(to, *address).await?;
            }
        }
        let existing = kernel.routes().await?;
        for route in routes {
            if has_route(&existing, route, from.index) {
                kernel.delete_route(route, from).await?;
            }
        }
        for address in addresses {
            if present.contains(&(from.index, *address)) {
                kernel.delete_address(from, *address).await?;
            }
        }
        let existing = kernel.routes().await?;
        for route in routes {
            if !has_route(&existing, route, to.index) {
                kernel.add_route(route, to, false).await?;
            }
        }
        Ok(())
    }

    pub(super) async fn restore(&self, bridge: &str) -> Result<Option<NicConfig>> {
        let Some(uplink) = self.uplink_of(bridge).await? else {
            return Ok(None);
        };
        let bridge_link = self
            .kernel
            .require_link(bridge, "bridge LOCAL interface")
            .await?;
        let nic_link = self.kernel.require_link(&uplink.nic, "uplink NIC").await?;
        self.detach(
            &self.kernel,
            &bridge_link,
            &nic_link,
            &uplink.bridge.addresses,
            &uplink.bridge.routes,
        )
        .await?;
        let nic_link = self.kernel.require_link(&uplink.nic, "uplink NIC").await?;
        self.kernel
            .nic_config(&nic_link, ROUTE_PROTOCOL)
            .await
            .map(Some)
    }

    /// Turns transmit checksum offload off on `interface` in our namespace (userspace datapath,
    /// lab gotcha G2); nothing is written when it is already off. The write is counted on `kernel`.
    pub(super) async fn tx_checksum_off(&self, kernel: &Kernel, interface: &str) -> Result<()> {
        let name = interface.to_owned();
        if self.netns.run(move || turn_off_tx_checksum(&name)).await? {
            kernel.writes().record();
        }
        Ok(())
    }
}

/// Turns transmit checksum offload off on `interface` in the calling thread's namespace;
/// returns whether it was on (nothing is written when it is already off).
pub(super) fn turn_off_tx_checksum(interface: &str) -> Result<bool> {
    let op = |what: &str| format!("{what} transmit checksum offload of {interface:?}");
    if !ethtool::tx_checksum(interface).map_err(|e| Error::os(op("read"), e))? {
        return Ok(false);
    }
    ethtool::set_tx_checksum(interface, false).map_err(|e| Error::os(op("turn off"), e))?;
    Ok(true)
}
