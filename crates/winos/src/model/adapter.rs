//! A network adapter as `GetAdaptersAddresses` describes it.

use std::net::IpAddr;

use ipnet::Ipv4Net;
use model::MacAddr;

/// The 64-bit locally unique identifier Windows gives each interface (`NET_LUID`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Luid(pub u64);

/// The operational state of an adapter (`IF_OPER_STATUS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OperStatus {
    /// `IfOperStatusUp` (1): can pass packets.
    Up,
    /// `IfOperStatusDown` (2).
    Down,
    /// `IfOperStatusNotPresent` (6): a component (typically the hardware) is missing.
    NotPresent,
    /// `IfOperStatusLowerLayerDown` (7).
    LowerLayerDown,
    /// Any other status code (testing, unknown, dormant).
    Other(u32),
}

impl OperStatus {
    /// The status for an `IF_OPER_STATUS` code.
    pub fn from_code(code: u32) -> Self {
        match code {
            1 => OperStatus::Up,
            2 => OperStatus::Down,
            6 => OperStatus::NotPresent,
            7 => OperStatus::LowerLayerDown,
            other => OperStatus::Other(other),
        }
    }
}

/// The IANA interface type of an adapter (`IFTYPE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum InterfaceType {
    /// `IF_TYPE_ETHERNET_CSMACD` (6): Ethernet, including Hyper-V virtual NICs.
    Ethernet,
    /// `IF_TYPE_SOFTWARE_LOOPBACK` (24).
    Loopback,
    /// `IF_TYPE_IEEE80211` (71): Wi-Fi.
    Wireless,
    /// `IF_TYPE_TUNNEL` (131).
    Tunnel,
    /// Any other type code.
    Other(u32),
}

impl InterfaceType {
    /// The type for an `IFTYPE` code.
    pub fn from_code(code: u32) -> Self {
        match code {
            6 => InterfaceType::Ethernet,
            24 => InterfaceType::Loopback,
            71 => InterfaceType::Wireless,
            131 => InterfaceType::Tunnel,
            other => InterfaceType::Other(other),
        }
    }
}

/// One network adapter of the host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Adapter {
    /// The adapter name (`AdapterName`, a GUID string such as `{4D36E972-…}`).
    pub name: String,
    /// The friendly name shown by `Get-NetAdapter` (`FriendlyName`, the interface alias), e.g.
    /// `Ethernet0` or `vEthernet (Ethernet0)`.
    pub alias: String,
    /// The driver description, e.g. `Hyper-V Virtual Ethernet Adapter`.
    pub description: String,
    /// The IPv4 interface index (`IfIndex`; 0 when IPv4 is not bound).
    pub index: u32,
    /// The interface LUID.
    pub luid: Luid,
    /// The hardware address, when the adapter has a 6-byte one.
    pub mac: Option<MacAddr>,
    /// The link MTU in bytes.
    pub mtu: u32,
    /// The IPv4 unicast addresses with their on-link prefix length.
    pub ipv4: Vec<Ipv4Net>,
    /// The DNS servers configured on the adapter.
    pub dns_servers: Vec<IpAddr>,
    /// The adapter's DNS suffix (empty when none).
    pub dns_suffix: String,
    /// Whether the adapter can pass packets.
    pub oper_status: OperStatus,
    /// The interface type.
    pub if_type: InterfaceType,
}

/// The description prefix of Hyper-V's host virtual NICs (the `vEthernet (...)` adapters).
const HYPER_V_DESCRIPTION: &str = "Hyper-V Virtual Ethernet Adapter";
/// The alias prefix Hyper-V gives host virtual NICs.
const HYPER_V_ALIAS: &str = "vEthernet";

impl Adapter {
    /// Whether the adapter is virtual rather than a NIC the agent may take over as the Node's
    /// uplink: a Hyper-V host vNIC (description `Hyper-V Virtual Ethernet Adapter…` or alias
    /// `vEthernet…`), a loopback or a tunnel interface. A plain Ethernet NIC of a VM (whose
    /// description names the hypervisor's NIC model, e.g. `Microsoft Hyper-V Network Adapter`)
    /// is not virtual in this sense.
    pub fn is_virtual(&self) -> bool {
        self.description.starts_with(HYPER_V_DESCRIPTION)
            || self.alias.starts_with(HYPER_V_ALIAS)
            || matches!(
                self.if_type,
                InterfaceType::Loopback | InterfaceType::Tunnel
            )
    }

    /// Whether one of the adapter's IPv4 addresses is `address`.
    pub fn has_ipv4(&self, address: std::net::Ipv4Addr) -> bool {
        self.ipv4.iter().any(|net| net.addr() == address)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn adapter(alias: &str, description: &str, if_type: InterfaceType) -> Adapter {
        Adapter {
            name: "{00000000-0000-0000-0000-000000000001}".into(),
            alias: alias.into(),
            description: description.into(),
            index: 5,
            luid: Luid(1),
            mac: None,
            mtu: 1500,
            ipv4: Vec::new(),
            dns_servers: Vec::new(),
            dns_suffix: String::new(),
            oper_status: OperStatus::Up,
            if_type,
        }
    }

    #[test]
    fn hyper_v_host_vnics_loopback_and_tunnels_are_virtual() {
        let e = InterfaceType::Ethernet;
        assert!(
            adapter(
                "vEthernet (Ethernet0)",
                "Hyper-V Virtual Ethernet Adapter #2",
                e
            )
            .is_virtual()
        );
        assert!(adapter("br-int", "Hyper-V Virtual Ethernet Adapter", e).is_virtual());
        assert!(adapter("vEthernet (nat)", "Some other driver", e).is_virtual());
        assert!(
            adapter(
                "Loopback Pseudo-Interface 1",
                "Software Loopback Interface 1",
                InterfaceType::Loopback
            )
            .is_virtual()
        );
        assert!(adapter("isatap", "Microsoft ISATAP Adapter", InterfaceType::Tunnel).is_virtual());
    }

    #[test]
    fn physical_and_vm_nics_are_not_virtual() {
        let e = InterfaceType::Ethernet;
        assert!(
            !adapter("Ethernet0", "Intel(R) 82574L Gigabit Network Connection", e).is_virtual()
        );
        assert!(!adapter("Ethernet", "Microsoft Hyper-V Network Adapter", e).is_virtual());
    }

    #[test]
    fn status_and_type_codes_map_both_ways_of_unknown() {
        assert_eq!(OperStatus::from_code(1), OperStatus::Up);
        assert_eq!(OperStatus::from_code(5), OperStatus::Other(5));
        assert_eq!(InterfaceType::from_code(24), InterfaceType::Loopback);
        assert_eq!(InterfaceType::from_code(53), InterfaceType::Other(53));
    }
}
