//! Per-interface, per-family IP settings (`MIB_IPINTERFACE_ROW`) the agent reads and changes.

/// The IP settings of one interface for one family, as far as the agent uses them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct IpInterface {
    /// Whether the interface forwards packets not addressed to the host
    /// (`Set-NetIPInterface -Forwarding Enabled`).
    pub forwarding: bool,
    /// The network-layer MTU (`NlMtu`, `Set-NetIPInterface -NlMtu`).
    pub nl_mtu: u32,
}

/// A change to [`IpInterface`] settings: `None` leaves a setting as it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct IpInterfaceChange {
    /// New forwarding setting.
    pub forwarding: Option<bool>,
    /// New network-layer MTU.
    pub nl_mtu: Option<u32>,
}

impl IpInterfaceChange {
    /// `settings` with this change applied.
    pub fn apply(&self, settings: IpInterface) -> IpInterface {
        IpInterface {
            forwarding: self.forwarding.unwrap_or(settings.forwarding),
            nl_mtu: self.nl_mtu.unwrap_or(settings.nl_mtu),
        }
    }
}
