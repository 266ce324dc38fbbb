//! The gateway interface (`antrea-gw0`): one IPv4 address (the first of the Pod CIDR), MAC,
//! MTU, transmit checksum offload off, up.

use model::MacAddr;

use crate::error::{Error, Result};
use crate::model::{GatewayConfig, Outcome};

use super::{LinuxHost, validate_ifname};

impl LinuxHost {
    pub(super) async fn gateway(&self, gateway: &GatewayConfig) -> Result<(MacAddr, Outcome)> {
        validate_ifname(&gateway.name)?;
        let kernel = self.kernel.scoped();
        let link = kernel
            .require_link(&gateway.name, "gateway interface")
            .await?;
        let mac_differs = gateway.mac.is_some_and(|mac| link.mac != Some(mac));
        if mac_differs || link.mtu != gateway.mtu {
            let mut message = rtnetlink::LinkUnspec::new_with_index(link.index).mtu(gateway.mtu);
            if let Some(mac) = gateway.mac {
                message = message.address(mac.octets().to_vec());
            }
            let op = format!("set MAC/MTU {} of gateway {:?}", gateway.mtu, gateway.name);
            kernel.set_link(message.build(), op).await?;
        }
        self.tx_checksum_off(&kernel, &gateway.name).await?;
        let present = kernel.link_addresses(link.index).await?;
        for stale in present
            .iter()
            .filter(|a| **a != gateway.address && !a.addr().is_link_local())
        {
            kernel.delete_address(&link, *stale).await?;
        }
        if !present.contains(&gateway.address) {
            kernel.add_address(&link, gateway.address).await?;
        }
        if !link.up {
            kernel.set_up(&link).await?;
        }
        let link = kernel
            .require_link(&gateway.name, "gateway interface")
            .await?;
        let mac = link.mac.ok_or_else(|| Error::Invalid {
            what: "gateway interface",
            value: gateway.name.clone(),
            reason: "has no Ethernet address",
        })?;
        Ok((mac, kernel.writes().outcome()))
    }
}
