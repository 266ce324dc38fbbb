//! What an agent firewall rule says: a name, a direction and the remote prefixes it allows.

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

/// An allow rule for any protocol between the host and some remote prefixes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FirewallRule {
    /// The unique rule name (by convention `antrea-…`).
    pub name: String,
    /// Which traffic the rule matches.
    pub direction: Direction,
    /// The remote prefixes allowed; never empty (an empty list would allow any address).
    pub remote_addresses: Vec<IpNet>,
}

impl FirewallRule {
    /// Whether `other` allows the same traffic (name aside; prefix order and host bits aside).
    pub fn same_effect(&self, other: &FirewallRule) -> bool {
        fn normal(prefixes: &[IpNet]) -> Vec<IpNet> {
            let mut prefixes: Vec<IpNet> = prefixes.iter().map(IpNet::trunc).collect();
            prefixes.sort();
            prefixes.dedup();
            prefixes
        }
        self.direction == other.direction
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
    };
    [
        rule("antrea-pod-cidr-in", Direction::Inbound),
        rule("antrea-pod-cidr-out", Direction::Outbound),
    ]
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
        };
        let b = FirewallRule {
            name: "y".into(),
            direction: Direction::Inbound,
            remote_addresses: vec!["fd00::/64".parse().unwrap(), "10.0.0.0/24".parse().unwrap()],
        };
        assert!(a.same_effect(&b));
        assert!(!a.same_effect(&FirewallRule {
            direction: Direction::Outbound,
            ..b.clone()
        }));
        assert!(!a.same_effect(&FirewallRule {
            remote_addresses: vec!["10.0.0.0/24".parse().unwrap()],
            ..b
        }));
    }
}
