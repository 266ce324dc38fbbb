//! The host's half of NodePort (proxyAll) on Windows: the NetNat instance `antrea-nat-nodeport`
//! on the virtual NodePort IP (169.254.0.252/32) and its static mappings, one per NodePort and
//! protocol, each translating the port on the Node's addresses to the same port on 169.254.0.252.
//! The Service routes send that address to the gateway, so the datapath load-balances the
//! connection. This module owns that instance and every mapping in it; mappings of other
//! instances are never touched.
//!
//! Without `nodePortAddresses` a mapping's external address is `0.0.0.0` (every address of the
//! Node); with them, each address gets its own mapping per port. NetNat maps single addresses
//! and TCP/UDP only: a wider prefix is refused, an SCTP NodePort is skipped with a warning.

use std::collections::BTreeSet;
use std::net::Ipv4Addr;

use ipnet::{IpNet, Ipv4Net};
use model::{Protocol, VIRTUAL_NODE_PORT_IP};
use winos::netnat::{ANTREA_NODE_PORT_NAT, NatProtocol, StaticMapping};

use super::{Backend, os, outcome};
use crate::error::{Error, Result};
use crate::model::{NodePortRules, Outcome};

/// The external addresses of the mappings: `0.0.0.0` without `nodePortAddresses`, else each
/// address once. A prefix wider than /32 is refused.
fn external_addresses(addresses: &[Ipv4Net]) -> Result<BTreeSet<Ipv4Addr>> {
    if addresses.is_empty() {
        return Ok(BTreeSet::from([Ipv4Addr::UNSPECIFIED]));
    }
    addresses
        .iter()
        .map(|address| {
            if address.prefix_len() == 32 {
                Ok(address.addr())
            } else {
                Err(Error::Invalid {
                    what: "NodePort address",
                    value: address.to_string(),
                    reason: "Windows NetNat maps single addresses: give each NodePort address as a /32",
                })
            }
        })
        .collect()
}

/// The NetNat protocol of a NodePort; `None` (with a warning) for SCTP, which NetNat lacks.
fn nat_protocol(protocol: Protocol, port: u16) -> Option<NatProtocol> {
    match protocol {
        Protocol::Tcp => Some(NatProtocol::Tcp),
        Protocol::Udp => Some(NatProtocol::Udp),
        Protocol::Sctp => {
            tracing::warn!(
                port,
                "NodePort SCTP/{port} skipped: Windows NetNat has no SCTP static mappings"
            );
            None
        }
    }
}

/// The mappings `rules` want in the NodePort instance.
fn wanted_mappings(rules: &NodePortRules) -> Result<BTreeSet<StaticMapping>> {
    let externals = external_addresses(&rules.addresses)?;
    let mut wanted = BTreeSet::new();
    for &(protocol, port) in &rules.ports {
        let Some(protocol) = nat_protocol(protocol, port) else {
            continue;
        };
        wanted.extend(externals.iter().map(|&external_address| StaticMapping {
            nat: ANTREA_NODE_PORT_NAT.to_owned(),
            protocol,
            external_address,
            external_port: port,
            internal_address: VIRTUAL_NODE_PORT_IP,
            internal_port: port,
        }));
    }
    Ok(wanted)
}

impl<H, I, N, F> Backend<H, I, N, F>
where
    N: winos::NetNat,
{
    /// See [`crate::HostNetwork::reconcile_node_ports`]. Nothing to map (no port, or SCTP
    /// ones only) removes the instance, its mappings with it; when it is absent already,
    /// nothing but the lookup is sent.
    pub(super) fn node_ports(&self, rules: &NodePortRules) -> Result<Outcome> {
        let wanted = wanted_mappings(rules)?;
        if wanted.is_empty() {
            let present = self
                .nat
                .get(ANTREA_NODE_PORT_NAT)
                .map_err(os(format!("reading NetNat {ANTREA_NODE_PORT_NAT}")))?
                .is_some();
            let removed = present
                && self
                    .nat
                    .remove(ANTREA_NODE_PORT_NAT)
                    .map_err(os(format!("removing NetNat {ANTREA_NODE_PORT_NAT}")))?;
            return Ok(outcome(removed));
        }
        let prefix = IpNet::V4(Ipv4Net::from(VIRTUAL_NODE_PORT_IP));
        let ensured = self
            .nat
            .ensure(ANTREA_NODE_PORT_NAT, prefix)
            .map_err(os(format!("NetNat {ANTREA_NODE_PORT_NAT} on {prefix}")))?;
        let mut changed = ensured != winos::Ensured::Unchanged;
        let existing = self
            .nat
            .static_mappings(ANTREA_NODE_PORT_NAT)
            .map_err(os(format!(
                "listing the static mappings of NetNat {ANTREA_NODE_PORT_NAT}"
            )))?;
        // Stale ones go first: one with a wanted external port but another target would
        // otherwise make the add fail.
        for stale in existing.iter().filter(|e| !wanted.contains(&e.mapping)) {
            self.nat
                .remove_static_mapping(ANTREA_NODE_PORT_NAT, stale.id)
                .map_err(os(format!(
                    "removing static mapping {} ({})",
                    stale.id, stale.mapping
                )))?;
            tracing::info!(id = stale.id, mapping = %stale.mapping, "NodePort mapping removed");
            changed = true;
        }
        for mapping in wanted
            .iter()
            .filter(|m| !existing.iter().any(|e| &e.mapping == *m))
        {
            self.nat
                .add_static_mapping(mapping)
                .map_err(os(format!("adding static mapping {mapping}")))?;
            tracing::info!(%mapping, "NodePort mapping added");
            changed = true;
        }
        Ok(outcome(changed))
    }
}
