//! The enumerated settings (datapath type, tunnel type, encapsulation mode, policy computation) and how their
//! names are read: accepted names, names Antrea knows that antrea-rs rejects, and why.

use std::fmt;

use super::error::ConfigError;

/// A setting with a fixed set of names.
pub(crate) trait Choice: Sized + Copy + 'static {
    /// Accepted names and the value each one means; the first spelling is the canonical one.
    const NAMES: &'static [(&'static str, Self)];
    /// Names Antrea accepts that antrea-rs does not, with the reason given to the operator.
    const UNSUPPORTED: &'static [(&'static str, &'static str)];
    /// Whether names compare without regard to case (Antrea does so for `trafficEncapMode`).
    const IGNORE_CASE: bool;

    /// The value named `name` in the key `key`.
    fn parse(key: &str, name: &str) -> Result<Self, ConfigError> {
        let same = |a: &str| {
            if Self::IGNORE_CASE {
                a.eq_ignore_ascii_case(name)
            } else {
                a == name
            }
        };
        if let Some((_, value)) = Self::NAMES.iter().find(|(n, _)| same(n)) {
            return Ok(*value);
        }
        if let Some((_, reason)) = Self::UNSUPPORTED.iter().find(|(n, _)| same(n)) {
            return Err(ConfigError::NotSupported {
                key: key.to_owned(),
                value: format!("{name:?}"),
                reason: (*reason).to_owned(),
            });
        }
        Err(ConfigError::InvalidValue {
            key: key.to_owned(),
            value: format!("{name:?}"),
            allowed: format!(
                "one of {}",
                Self::NAMES
                    .iter()
                    .map(|(n, _)| *n)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        })
    }
}

/// The Open vSwitch datapath of the bridge (`ovsDatapathType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DatapathType {
    /// The kernel datapath (Antrea's default; the only one on Windows).
    System,
    /// The userspace datapath (the Linux lab uses it).
    Netdev,
}

impl Choice for DatapathType {
    const NAMES: &'static [(&'static str, Self)] =
        &[("system", Self::System), ("netdev", Self::Netdev)];
    const UNSUPPORTED: &'static [(&'static str, &'static str)] = &[];
    const IGNORE_CASE: bool = false;
}

/// The tunnel protocol for encapsulated traffic between Nodes (`tunnelType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TunnelType {
    /// Geneve (Antrea's default), UDP port 6081.
    Geneve,
    /// VXLAN, UDP port 4789.
    Vxlan,
}

impl Choice for TunnelType {
    const NAMES: &'static [(&'static str, Self)] =
        &[("geneve", Self::Geneve), ("vxlan", Self::Vxlan)];
    const UNSUPPORTED: &'static [(&'static str, &'static str)] = &[
        ("stt", "antrea-rs implements geneve and vxlan tunnels only"),
        ("gre", "antrea-rs implements geneve and vxlan tunnels only"),
    ];
    const IGNORE_CASE: bool = false;
}

/// How traffic between Nodes is carried (`trafficEncapMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TrafficEncapMode {
    /// Always through the tunnel (default).
    Encap,
    /// Routed by the underlay, never encapsulated.
    NoEncap,
    /// Routed when the peer Node is on the same subnet, tunnelled otherwise.
    Hybrid,
}

impl Choice for TrafficEncapMode {
    const NAMES: &'static [(&'static str, Self)] = &[
        ("encap", Self::Encap),
        ("noEncap", Self::NoEncap),
        ("hybrid", Self::Hybrid),
    ];
    const UNSUPPORTED: &'static [(&'static str, &'static str)] = &[(
        "networkPolicyOnly",
        "antrea-rs is the primary CNI and does not run chained behind another one",
    )];
    const IGNORE_CASE: bool = true;
}

impl TrafficEncapMode {
    /// Whether some traffic between Nodes goes through the tunnel (encap and hybrid).
    pub fn uses_tunnel(self) -> bool {
        matches!(self, TrafficEncapMode::Encap | TrafficEncapMode::Hybrid)
    }
}

/// Where NetworkPolicy is computed (`policyComputation`, antrea-rs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PolicyComputation {
    /// The agent watches every Pod, Namespace and NetworkPolicy and computes its policy.
    Local,
    /// antrea-controller computes it and sends this Node its span.
    Controller,
}

impl Choice for PolicyComputation {
    const NAMES: &'static [(&'static str, Self)] =
        &[("local", Self::Local), ("controller", Self::Controller)];
    const UNSUPPORTED: &'static [(&'static str, &'static str)] = &[];
    const IGNORE_CASE: bool = false;
}

/// The canonical name of a choice, as written in the configuration.
fn canonical<T: Choice + PartialEq>(value: T) -> &'static str {
    T::NAMES
        .iter()
        .find(|(_, v)| *v == value)
        .map_or("?", |(n, _)| n)
}

macro_rules! display_by_name {
    ($($t:ty),*) => {$(
        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(canonical(*self))
            }
        }
    )*};
}
display_by_name!(
    DatapathType,
    TunnelType,
    TrafficEncapMode,
    PolicyComputation
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_names_round_trip() {
        for (name, v) in TrafficEncapMode::NAMES {
            assert_eq!(TrafficEncapMode::parse("k", name).unwrap(), *v);
            assert_eq!(v.to_string(), *name);
        }
        assert_eq!(TunnelType::Vxlan.to_string(), "vxlan");
        assert_eq!(DatapathType::Netdev.to_string(), "netdev");
    }

    #[test]
    fn encap_mode_ignores_case_but_tunnel_type_does_not() {
        assert_eq!(
            TrafficEncapMode::parse("k", "NOENCAP").unwrap(),
            TrafficEncapMode::NoEncap
        );
        assert_eq!(
            TunnelType::parse("tunnelType", "Geneve")
                .unwrap_err()
                .to_string(),
            r#"tunnelType: "Geneve" is not one of geneve, vxlan"#
        );
    }
}
