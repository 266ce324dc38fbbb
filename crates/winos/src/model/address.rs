//! A unicast IP address bound to an interface (`MIB_UNICASTIPADDRESS_ROW`).

use ipnet::IpNet;

/// One unicast address of an interface, with its on-link prefix length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct UnicastAddress {
    /// The interface index the address is bound to.
    pub interface_index: u32,
    /// The address and its on-link prefix length (`10.0.0.5/24`; host bits kept).
    pub address: IpNet,
}

impl std::fmt::Display for UnicastAddress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "address {} on interface {}",
            self.address, self.interface_index
        )
    }
}
