//! The gateway adapter `antrea-gw0` (the vNIC of OVS's internal port): its one IPv4 address,
//! forwarding and MTU through IP Helper, and the firewall rules that let the host and its Pods
//! talk.

use ipnet::IpNet;
use model::MacAddr;
use winos::model::{IpFamily, IpInterfaceChange, UnicastAddress};

use super::adapters::mac_of;
use super::{Backend, os, outcome};
use crate::error::Result;
use crate::model::{GatewayConfig, Outcome};

impl<H, I, N, F> Backend<H, I, N, F>
where
    H: hcn::HcnApi,
    I: winos::IpHelper,
    F: winos::Firewall,
{
    /// See [`crate::HostNetwork::configure_gateway`]. The requested MAC is not applied: the
    /// adapter keeps the MAC Windows gave it, which is returned. The firewall rules allowing
    /// traffic from and to the Pod CIDR are ensured here, because they belong to the gateway's
    /// subnet and are wanted with and without SNAT (Antrea creates them in its route client's
    /// initialisation).
    pub(super) fn gateway(&self, gateway: &GatewayConfig) -> Result<(MacAddr, Outcome)> {
        let name = gateway.name.as_str();
        let adapter = self.wait_for_adapter(name)?;
        let want = gateway.address;
        let mut changed = false;
        let current = self
            .ip
            .unicast_addresses()
            .map_err(os("listing unicast addresses"))?;
        let mut present = false;
        for address in current
            .iter()
            .filter(|a| a.interface_index == adapter.index)
        {
            let IpNet::V4(net) = address.address else {
                continue;
            };
            if net == want {
                present = true;
            } else if !net.addr().is_link_local() {
                self.ip
                    .delete_unicast_address(address)
                    .map_err(os(format!("removing {net} from {name}")))?;
                tracing::info!("stale address {net} removed from {name}");
                changed = true;
            }
        }
        if !present {
            let address = UnicastAddress {
                interface_index: adapter.index,
                address: IpNet::V4(want),
            };
            self.ip
                .create_unicast_address(&address)
                .map_err(os(format!("adding {want} to {name}")))?;
            changed = true;
        }
        let settings = self
            .ip
            .ip_interface(adapter.index, IpFamily::V4)
            .map_err(os(format!("reading IPv4 settings of {name}")))?;
        let change = IpInterfaceChange {
            forwarding: (!settings.forwarding).then_some(true),
            nl_mtu: (settings.nl_mtu != gateway.mtu).then_some(gateway.mtu),
        };
        if change != IpInterfaceChange::default() {
            self.ip
                .set_ip_interface(adapter.index, IpFamily::V4, change)
                .map_err(os(format!(
                    "setting forwarding and MTU {} on {name}",
                    gateway.mtu
                )))?;
            changed = true;
        }
        let pod_cidr = IpNet::V4(want.trunc());
        for rule in winos::firewall::pod_cidr_rules(&[pod_cidr]) {
            let ensured = self
                .firewall
                .ensure_rule(&rule)
                .map_err(os(format!("firewall rule {} for {pod_cidr}", rule.name)))?;
            changed |= ensured != winos::Ensured::Unchanged;
        }
        Ok((mac_of(&adapter)?, outcome(changed)))
    }
}
