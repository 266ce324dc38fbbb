//! Antrea's feature gates: the names, their defaults, and which ones Windows rejects.

use std::collections::BTreeMap;
use std::fmt;

use super::Platform;

/// A feature gate Antrea defines (`featureGates.<Name>: true|false`); each variant is named
/// exactly as the gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Feature {
    AdminNetworkPolicy,
    AntreaIPAM,
    AntreaNodeConfig,
    AntreaPolicy,
    AntreaProxy,
    BGPPolicy,
    CleanupStaleUDPSvcConntrack,
    ClusterNetworkPolicy,
    Egress,
    EgressSeparateSubnet,
    EgressTrafficShaping,
    EndpointSlice,
    ExternalNode,
    FlowExporter,
    IPsecCertAuth,
    L7NetworkPolicy,
    LoadBalancerModeDSR,
    Multicast,
    Multicluster,
    NetworkPolicyStats,
    NFTablesHostNetworkMode,
    NodeIPAM,
    NodeLatencyMonitor,
    NodeNetworkPolicy,
    NodePortLocal,
    PacketCapture,
    PreferSameTrafficDistribution,
    SecondaryNetwork,
    ServiceExternalIP,
    ServiceTrafficDistribution,
    SupportBundleCollection,
    TopologyAwareHints,
    Traceflow,
    TrafficControl,
}

/// Per gate: its name, Antrea's default on Linux, and whether Windows supports it (unsupported
/// gates default to off on Windows and may not be enabled there).
const GATES: &[(Feature, &str, bool, bool)] = &[
    (
        Feature::AdminNetworkPolicy,
        "AdminNetworkPolicy",
        false,
        true,
    ),
    (Feature::AntreaIPAM, "AntreaIPAM", false, false),
    (Feature::AntreaNodeConfig, "AntreaNodeConfig", true, false),
    (Feature::AntreaPolicy, "AntreaPolicy", true, true),
    (Feature::AntreaProxy, "AntreaProxy", true, true),
    (Feature::BGPPolicy, "BGPPolicy", false, false),
    (
        Feature::CleanupStaleUDPSvcConntrack,
        "CleanupStaleUDPSvcConntrack",
        true,
        false,
    ),
    (
        Feature::ClusterNetworkPolicy,
        "ClusterNetworkPolicy",
        false,
        true,
    ),
    (Feature::Egress, "Egress", true, false),
    (
        Feature::EgressSeparateSubnet,
        "EgressSeparateSubnet",
        true,
        false,
    ),
    (
        Feature::EgressTrafficShaping,
        "EgressTrafficShaping",
        false,
        false,
    ),
    (Feature::EndpointSlice, "EndpointSlice", true, true),
    (Feature::ExternalNode, "ExternalNode", false, true),
    (Feature::FlowExporter, "FlowExporter", false, false),
    (Feature::IPsecCertAuth, "IPsecCertAuth", false, false),
    (Feature::L7NetworkPolicy, "L7NetworkPolicy", false, false),
    (
        Feature::LoadBalancerModeDSR,
        "LoadBalancerModeDSR",
        false,
        false,
    ),
    (Feature::Multicast, "Multicast", true, false),
    (Feature::Multicluster, "Multicluster", false, false),
    (
        Feature::NetworkPolicyStats,
        "NetworkPolicyStats",
        true,
        true,
    ),
    (
        Feature::NFTablesHostNetworkMode,
        "NFTablesHostNetworkMode",
        false,
        false,
    ),
    (Feature::NodeIPAM, "NodeIPAM", true, true),
    (
        Feature::NodeLatencyMonitor,
        "NodeLatencyMonitor",
        false,
        false,
    ),
    (
        Feature::NodeNetworkPolicy,
        "NodeNetworkPolicy",
        false,
        false,
    ),
    (Feature::NodePortLocal, "NodePortLocal", true, true),
    (Feature::PacketCapture, "PacketCapture", false, false),
    (
        Feature::PreferSameTrafficDistribution,
        "PreferSameTrafficDistribution",
        false,
        true,
    ),
    (Feature::SecondaryNetwork, "SecondaryNetwork", false, false),
    (Feature::ServiceExternalIP, "ServiceExternalIP", true, false),
    (
        Feature::ServiceTrafficDistribution,
        "ServiceTrafficDistribution",
        true,
        true,
    ),
    (
        Feature::SupportBundleCollection,
        "SupportBundleCollection",
        false,
        true,
    ),
    (
        Feature::TopologyAwareHints,
        "TopologyAwareHints",
        true,
        true,
    ),
    (Feature::Traceflow, "Traceflow", true, true),
    (Feature::TrafficControl, "TrafficControl", false, true),
];

impl Feature {
    /// Every gate Antrea defines.
    pub fn all() -> impl Iterator<Item = Feature> {
        GATES.iter().map(|g| g.0)
    }

    /// The gate with this exact name (names are case-sensitive, as in Antrea).
    pub fn from_name(name: &str) -> Option<Feature> {
        GATES.iter().find(|g| g.1 == name).map(|g| g.0)
    }

    fn row(self) -> &'static (Feature, &'static str, bool, bool) {
        // The table lists every variant in declaration order, so the discriminant indexes it.
        &GATES[self as usize]
    }

    /// The gate's name in the configuration.
    pub fn name(self) -> &'static str {
        self.row().1
    }

    /// Whether Windows Nodes support the gate.
    pub fn supported_on_windows(self) -> bool {
        self.row().3
    }

    /// Antrea's default for the gate on `platform`.
    pub fn default_on(self, platform: Platform) -> bool {
        let (_, _, default, windows) = *self.row();
        default && (platform == Platform::Linux || windows)
    }
}

impl fmt::Display for Feature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The gates as configured: explicit settings over the platform's defaults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeatureGates {
    platform: Platform,
    explicit: BTreeMap<Feature, bool>,
}

impl FeatureGates {
    /// Antrea's defaults for `platform`, nothing set explicitly.
    pub fn defaults(platform: Platform) -> FeatureGates {
        FeatureGates {
            platform,
            explicit: BTreeMap::new(),
        }
    }

    /// Sets a gate explicitly.
    pub fn set(&mut self, feature: Feature, enabled: bool) {
        self.explicit.insert(feature, enabled);
    }

    /// Whether the gate is on.
    pub fn enabled(&self, feature: Feature) -> bool {
        self.explicit
            .get(&feature)
            .copied()
            .unwrap_or_else(|| feature.default_on(self.platform))
    }

    /// The gates set in the configuration, with their values.
    pub fn explicit(&self) -> impl Iterator<Item = (Feature, bool)> + '_ {
        self.explicit.iter().map(|(f, on)| (*f, *on))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_in_declaration_order() {
        for (i, row) in GATES.iter().enumerate() {
            assert_eq!(row.0 as usize, i, "{} is out of place", row.1);
            assert_eq!(Feature::from_name(row.1), Some(row.0));
            assert_eq!(format!("{:?}", row.0), row.1);
        }
    }

    #[test]
    fn windows_turns_off_unsupported_defaults() {
        assert!(Feature::Egress.default_on(Platform::Linux));
        assert!(!Feature::Egress.default_on(Platform::Windows));
        assert!(Feature::AntreaPolicy.default_on(Platform::Windows));
        assert!(!Feature::FlowExporter.default_on(Platform::Linux));
    }

    #[test]
    fn explicit_settings_win() {
        let mut gates = FeatureGates::defaults(Platform::Linux);
        assert!(gates.enabled(Feature::Traceflow));
        gates.set(Feature::Traceflow, false);
        gates.set(Feature::FlowExporter, true);
        assert!(!gates.enabled(Feature::Traceflow));
        assert!(gates.enabled(Feature::FlowExporter));
        assert_eq!(gates.explicit().count(), 2);
    }

    #[test]
    fn names_are_case_sensitive() {
        assert_eq!(Feature::from_name("traceflow"), None);
        assert_eq!(Feature::from_name("Traceflow"), Some(Feature::Traceflow));
    }
}
