//! An IP route as `MIB_IPFORWARD_ROW2` carries it, and the key Windows identifies it by.

use std::net::IpAddr;

use ipnet::IpNet;

/// Who installed a route (`NL_ROUTE_PROTOCOL`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RouteProtocol {
    /// `RouteProtocolOther` (1): what the agent writes, like Antrea.
    Other,
    /// `RouteProtocolLocal` (2): routes the stack derives from local addresses.
    Local,
    /// `RouteProtocolNetMgmt` (3): static routes (`New-NetRoute`, `route add`).
    NetMgmt,
    /// Any other protocol code (ICMP redirect, routing protocols…).
    Code(u32),
}

impl RouteProtocol {
    /// The protocol for an `NL_ROUTE_PROTOCOL` code.
    pub fn from_code(code: u32) -> Self {
        match code {
            1 => RouteProtocol::Other,
            2 => RouteProtocol::Local,
            3 => RouteProtocol::NetMgmt,
            other => RouteProtocol::Code(other),
        }
    }

    /// The `NL_ROUTE_PROTOCOL` code.
    pub fn code(self) -> u32 {
        match self {
            RouteProtocol::Other => 1,
            RouteProtocol::Local => 2,
            RouteProtocol::NetMgmt => 3,
            RouteProtocol::Code(code) => code,
        }
    }
}

/// How a route came to be (`NL_ROUTE_ORIGIN`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RouteOrigin {
    /// `NlroManual` (0): configured by a program or user.
    Manual,
    /// `NlroWellKnown` (1): well-known routes such as loopback and multicast.
    WellKnown,
    /// `NlroDHCP` (2).
    Dhcp,
    /// `NlroRouterAdvertisement` (3).
    RouterAdvertisement,
    /// Any other origin code.
    Code(u32),
}

impl RouteOrigin {
    /// The origin for an `NL_ROUTE_ORIGIN` code.
    pub fn from_code(code: u32) -> Self {
        match code {
            0 => RouteOrigin::Manual,
            1 => RouteOrigin::WellKnown,
            2 => RouteOrigin::Dhcp,
            3 => RouteOrigin::RouterAdvertisement,
            other => RouteOrigin::Code(other),
        }
    }
}

/// One row of the IP forwarding table.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Route {
    /// The destination prefix (host bits are zero on Windows).
    pub destination: IpNet,
    /// The gateway; the unspecified address (`0.0.0.0` / `::`) for an on-link route.
    pub next_hop: IpAddr,
    /// The interface index the route leaves through.
    pub interface_index: u32,
    /// The route metric; the effective metric adds the interface metric. Antrea uses 256
    /// (default) and 50 (high).
    pub metric: u32,
    /// Who installed the route. Routes written through [`crate::IpHelper::create_route`] get
    /// [`RouteProtocol::Other`] regardless of this field, as Antrea's do.
    pub protocol: RouteProtocol,
    /// How the route came to be ([`RouteOrigin::Manual`] for written routes).
    pub origin: RouteOrigin,
}

impl Route {
    /// A route the agent would write: protocol `Other`, origin `Manual`.
    pub fn new(destination: IpNet, next_hop: IpAddr, interface_index: u32, metric: u32) -> Self {
        Route {
            destination: destination.trunc(),
            next_hop,
            interface_index,
            metric,
            protocol: RouteProtocol::Other,
            origin: RouteOrigin::Manual,
        }
    }

    /// The key Windows identifies this route by.
    pub fn key(&self) -> RouteKey {
        RouteKey {
            destination: self.destination.trunc(),
            next_hop: self.next_hop,
            interface_index: self.interface_index,
        }
    }
}

/// What identifies a route for `CreateIpForwardEntry2` (duplicates) and `DeleteIpForwardEntry2`:
/// destination prefix, next hop and interface.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RouteKey {
    /// The destination prefix.
    pub destination: IpNet,
    /// The gateway (unspecified for on-link).
    pub next_hop: IpAddr,
    /// The interface index.
    pub interface_index: u32,
}

impl std::fmt::Display for RouteKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "route {} via {} on interface {}",
            self.destination, self.next_hop, self.interface_index
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_route_truncates_host_bits_and_is_written_as_protocol_other() {
        let route = Route::new(
            "10.10.1.7/24".parse().unwrap(),
            "0.0.0.0".parse().unwrap(),
            7,
            256,
        );
        assert_eq!(route.destination, "10.10.1.0/24".parse::<IpNet>().unwrap());
        assert_eq!(route.protocol.code(), 1);
        assert_eq!(
            route.key().to_string(),
            "route 10.10.1.0/24 via 0.0.0.0 on interface 7"
        );
    }

    #[test]
    fn protocol_and_origin_codes_round_trip() {
        for code in 0..20 {
            assert_eq!(RouteProtocol::from_code(code).code(), code);
        }
        assert_eq!(RouteOrigin::from_code(2), RouteOrigin::Dhcp);
        assert_eq!(RouteOrigin::from_code(9), RouteOrigin::Code(9));
    }
}
