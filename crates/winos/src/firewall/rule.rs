//! What an agent firewall rule says: a name, a direction, the remote prefixes it allows and,
//! for a port rule, the local protocol and port.

use ipnet::IpNet;

/// The rule group (`Grouping`) of every rule the agent writes, so they can be listed together.
pub const ANTREA_RULE_GROUP: &str = "Antrea";

/// Which traffic a rule matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Packets coming into the host (`NET_FW_RULE_DIR_IN`).
    Inbound,
    /// Packets leaving the host (`NET_FW_RULE_DIR_OUT`).
    Outbound,
}

/// The transport protocol of a port rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PortProtocol {
    /// TCP (`NET_FW_IP_PROTOCOL_TCP`, 6).
    Tcp,
    /// UDP (`NET_FW_IP_PROTOCOL_UDP`, 17).
    Udp,
}

impl PortProtocol {
    /// The IP protocol number.
    pub fn number(self) -> i32 {
        match self {
            PortProtocol::Tcp => 6,
            PortProtocol::Udp => 17,
        }
    }
}

/// The local port a port rule allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LocalPort {
    /// TCP or UDP.
    pub protocol: PortProtocol,
    /// The port.
    pub port: u16,
}

/// An allow rule between the host and some remote prefixes: any protocol, or one local port.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FirewallRule {
    /// The unique rule name (by convention `antrea-…`).
    pub name: String,
    /// Which traffic the rule matches.
    pub direction: Direction,
    /// The remote prefixes allowed; empty only in a port rule, where it means any address.
    pub remote_addresses: Vec<IpNet>,
    /// The local protocol and port of a port rule; `None`: any protocol.
    pub local_port: Option<LocalPort>,
}

impl FirewallRule {
    /// Whether the firewall can take the rule: a name, and remote addresses unless it is a port
    /// rule (a rule for any protocol from any address would open the host).
    pub fn is_valid(&self) -> bool {
        !self.name.is_empty() && (!self.remote_addresses.is_empty() || self.local_port.is_some())
    }

    /// Whether `other` allows the same traffic (name aside; prefix order and host bits aside).
    pub fn same_effect(&self, other: &FirewallRule) -> bool {
        fn normal(prefixes: &[IpNet]) -> Vec<IpNet> {
            let mut prefixes: Vec<IpNet> = prefixes.iter().map(IpNet::trunc).collect();
            prefixes.sort();
            prefixes.dedup();
            prefixes
        }
        self.direction == other.direction
            && self.local_port == other.local_port
            && normal(&self.remote_addresses) == normal(&other.remote_addresses)
    }
}

/// The firewall API's `RemoteAddresses` text for `prefixes`: comma-separated `addr/len`.
pub fn format_remote_addresses(prefixes: &[IpNet]) -> String {
    prefixes
        .iter()
        .map(|p| p.trunc().to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// Parses the firewall API's `RemoteAddresses` text: `*` (any: empty list) or comma-separated
/// `addr`, `addr/len` or `addr/dotted-mask` (Windows stores IPv4 prefixes with masks). `None`
/// for anything else (ranges, keywords such as `LocalSubnet`).
pub fn parse_remote_addresses(text: &str) -> Option<Vec<IpNet>> {
    if text.trim() == "*" {
        return Some(Vec::new());
    }
    text.split(',')
        .map(|item| parse_prefix(item.trim()))
        .collect()
}

fn parse_prefix(item: &str) -> Option<IpNet> {
    let (address, suffix) = match item.split_once('/') {
        Some((address, suffix)) => (address.parse().ok()?, Some(suffix)),
        None => (item.parse().ok()?, None),
    };
    let length = match (address, suffix) {
        (std::net::IpAddr::V4(_), None) => 32,
        (std::net::IpAddr::V6(_), None) => 128,
        (std::net::IpAddr::V4(_), Some(mask)) if mask.contains('.') => {
            ipnet::ipv4_mask_to_prefix(mask.parse().ok()?).ok()?
        }
        (_, Some(length)) => length.parse().ok()?,
    };
    IpNet::new(address, length).ok().map(|net| net.trunc())
}

/// The two rules that let the host talk to its Pods both ways: `antrea-pod-cidr-in` (from the
/// Pod CIDRs) and `antrea-pod-cidr-out` (to them). `pod_cidrs` holds the Node's IPv4 and/or IPv6
/// Pod CIDR.
pub fn pod_cidr_rules(pod_cidrs: &[IpNet]) -> [FirewallRule; 2] {
    let rule = |name: &str, direction| FirewallRule {
        name: name.to_owned(),
        direction,
        remote_addresses: pod_cidrs.iter().map(IpNet::trunc).collect(),
        local_port: None,
    };
    [
        rule("antrea-pod-cidr-in", Direction::Inbound),
        rule("antrea-pod-cidr-out", Direction::Outbound),
    ]
}

/// The name of the tunnel port rule.
pub const TUNNEL_RULE: &str = "antrea-tunnel-in";

/// The rule that lets peer Nodes' tunnel packets in: inbound UDP to the tunnel's local `port`
/// (6081 Geneve, 4789 VXLAN) from any address.
pub fn tunnel_rule(port: u16) -> FirewallRule {
    FirewallRule {
        name: TUNNEL_RULE.to_owned(),
        direction: Direction::Inbound,
        remote_addresses: Vec::new(),
        local_port: Some(LocalPort {
            protocol: PortProtocol::Udp,
            port,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pod_cidr_rules_cover_both_directions_with_truncated_prefixes() {
        let [inbound, outbound] = pod_cidr_rules(&["10.244.1.9/24".parse().unwrap()]);
        assert_eq!(
            (inbound.name.as_str(), inbound.direction),
            ("antrea-pod-cidr-in", Direction::Inbound)
        );
        assert_eq!(
            (outbound.name.as_str(), outbound.direction),
            ("antrea-pod-cidr-out", Direction::Outbound)
        );
        assert_eq!(
            inbound.remote_addresses,
            vec!["10.244.1.0/24".parse::<IpNet>().unwrap()]
        );
    }

    #[test]
    fn remote_addresses_parse_windows_forms_and_round_trip() {
        let nets = |list: &[&str]| {
            list.iter()
                .map(|s| s.parse::<IpNet>().unwrap())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            parse_remote_addresses("10.244.1.0/255.255.255.0, fd00::/64,10.0.0.5"),
            Some(nets(&["10.244.1.0/24", "fd00::/64", "10.0.0.5/32"]))
        );
        assert_eq!(parse_remote_addresses("*"), Some(Vec::new()));
        assert_eq!(parse_remote_addresses("LocalSubnet"), None);
        assert_eq!(parse_remote_addresses("10.0.0.0/255.0.255.0"), None);
        assert_eq!(parse_remote_addresses("10.0.0.1-10.0.0.9"), None);
        let prefixes = nets(&["10.244.1.0/24", "fd00::/64"]);
        assert_eq!(
            format_remote_addresses(&prefixes),
            "10.244.1.0/24,fd00::/64"
        );
        assert_eq!(
            parse_remote_addresses(&format_remote_addresses(&prefixes)),
            Some(prefixes)
        );
    }

    #[test]
    fn same_effect_ignores_order_and_host_bits_but_not_direction() {
        let a = FirewallRule {
            name: "x".into(),
            direction: Direction::Inbound,
            remote_addresses: vec!["10.0.0.1/24".parse().unwrap(), "fd00::/64".parse().unwrap()],
            local_port: None,
        };
        let b = FirewallRule {
            name: "y".into(),
            direction: Direction::Inbound,
            remote_addresses: vec!["fd00::/64".parse().unwrap(), "10.0.0.0/24".parse().unwrap()],
            local_port: None,
        };
        assert!(a.same_effect(&b));
        assert!(!a.same_effect(&FirewallRule {
            direction: Direction::Outbound,
            ..b.clone()
        }));
        assert!(!a.same_effect(&FirewallRule {
            remote_addresses: vec!["10.0.0.0/24".parse().unwrap()],
            ..b.clone()
        }));
        assert!(!a.same_effect(&FirewallRule {
            local_port: Some(LocalPort {
                protocol: PortProtocol::Tcp,
                port: 80
            }),
            ..b
        }));
    }

    #[test]
    fn the_tunnel_rule_is_a_port_rule_from_anywhere() {
        let geneve = tunnel_rule(6081);
        assert!(geneve.is_valid());
        assert_eq!(geneve.name, "antrea-tunnel-in");
        assert_eq!(geneve.direction, Direction::Inbound);
        assert_eq!(geneve.remote_addresses, []);
        assert_eq!(
            geneve.local_port,
            Some(LocalPort {
                protocol: PortProtocol::Udp,
                port: 6081
            })
        );
        assert!(!geneve.same_effect(&tunnel_rule(4789)));
        let open = FirewallRule {
            local_port: None,
            ..geneve
        };
        assert!(!open.is_valid(), "any protocol from anywhere");
    }
}
