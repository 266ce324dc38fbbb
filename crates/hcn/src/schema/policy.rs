//! Network and endpoint policies: `{"Type": "<kind>", "Settings": {...}}`, where Settings is an
//! embedded JSON object whose shape depends on Type.
//!
//! The kinds this project uses are typed; any other kind HNS reports decodes as `Other` with its
//! settings and every other key kept as JSON, so a policy someone else added never breaks
//! decoding and re-encodes unchanged. A v1-style policy keeps its fields beside `Type`, with no
//! `Settings` (`{"Type": "VLAN", "VLAN": 1}`); one of a typed kind is kept as `Other` too, since
//! its typed form would lose those fields. Type names are matched case-insensitively on decode
//! (HNS accepts `INTERFACECONSTRAINT`) and sent in their canonical casing.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::Guid;

/// The Open vSwitch Hyper-V switch extension (`OVSExt`), as named by OVS's Windows driver.
pub const OVS_EXTENSION_ID: Guid = Guid(0x583CC151_73EC_4A6A_8B47_578297AD7623);

/// A `Policies[]` entry of a `HostComputeNetwork`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawPolicy", into = "RawPolicy")]
pub enum NetworkPolicy {
    /// `NetAdapterName` `{"NetworkAdapterName"}`: the host adapter (alias, e.g. `Ethernet0`) a
    /// Transparent network binds to.
    NetAdapterName {
        /// `NetworkAdapterName`.
        network_adapter_name: String,
    },
    /// `VSwitchExtension` `{"ExtensionID", "Enable"}`: enable or disable a switch extension.
    /// `Enable` is always sent, also when false.
    VSwitchExtension {
        /// `ExtensionID` (exact casing).
        extension_id: Guid,
        /// `Enable`.
        enable: bool,
    },
    /// `SourceMacAddress` `{"SourceMacAddress"}`.
    SourceMacAddress {
        /// `SourceMacAddress`.
        source_mac_address: String,
    },
    /// `HostRoute` `{}`.
    HostRoute,
    /// Any other kind (or a v1-style policy), settings and other keys kept as JSON.
    Other {
        /// `Type`, as received.
        kind: String,
        /// `Settings`, as received.
        settings: Option<Value>,
        /// Every other key beside `Type` and `Settings`, as received (v1-style policies keep
        /// their fields here, e.g. `"VLAN": 1`).
        fields: Map<String, Value>,
    },
}

/// A `Policies[]` entry of a `HostComputeEndpoint`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawPolicy", into = "RawPolicy")]
pub enum EndpointPolicy {
    /// `OutBoundNAT`: source NAT of traffic leaving the endpoint, except to `Exceptions`.
    OutboundNat(OutboundNatSettings),
    /// `PortName` `{"Name"}`: the switch port's name.
    PortName {
        /// `Name`.
        name: String,
    },
    /// `SDNRoute` `{"DestinationPrefix", "NextHop", "NeedEncap"}`.
    SdnRoute {
        /// `DestinationPrefix`.
        destination_prefix: String,
        /// `NextHop` (left out when empty).
        next_hop: String,
        /// `NeedEncap`.
        need_encap: bool,
    },
    /// `InterfaceParameters` `{"Mtu"}`.
    InterfaceParameters {
        /// `Mtu`.
        mtu: u16,
    },
    /// Any other kind (or a v1-style policy), settings and other keys kept as JSON.
    Other {
        /// `Type`, as received.
        kind: String,
        /// `Settings`, as received.
        settings: Option<Value>,
        /// Every other key beside `Type` and `Settings`, as received (v1-style policies keep
        /// their fields here, e.g. `"VLAN": 1`).
        fields: Map<String, Value>,
    },
}

/// Settings of an `OutBoundNAT` endpoint policy.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct OutboundNatSettings {
    /// `VirtualIP`.
    #[serde(rename = "VirtualIP", skip_serializing_if = "String::is_empty")]
    pub virtual_ip: String,
    /// `Exceptions`: destinations (CIDRs) not NATed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub exceptions: Vec<String>,
    /// `Destinations`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub destinations: Vec<String>,
    /// `Flags` (NatFlags); 0 is left out.
    #[serde(skip_serializing_if = "super::common::is_zero_u32")]
    pub flags: u32,
}

/// The wire form every policy shares: `Type`, `Settings`, and any other key.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct RawPolicy {
    #[serde(rename = "Type")]
    kind: String,
    #[serde(rename = "Settings", default, skip_serializing_if = "Option::is_none")]
    settings: Option<Value>,
    #[serde(flatten)]
    fields: Map<String, Value>,
}

impl RawPolicy {
    fn new(kind: &str, settings: Value) -> RawPolicy {
        RawPolicy {
            kind: kind.to_owned(),
            settings: Some(settings),
            fields: Map::new(),
        }
    }

    /// Whether the policy is of `kind`, compared case-insensitively, and in the v2 form its
    /// typed variant holds: a policy without `Settings` but with other keys is v1-style, and
    /// its kind is never matched (it stays `Other`, whole).
    fn is(&self, kind: &str) -> bool {
        let v1_style = self.settings.is_none() && !self.fields.is_empty();
        !v1_style && self.kind.eq_ignore_ascii_case(kind)
    }

    /// The settings decoded as `T`; absent settings decode from `{}`.
    fn settings<T: DeserializeOwned>(&self) -> Result<T, String> {
        let value = self
            .settings
            .clone()
            .unwrap_or_else(|| Value::Object(Map::new()));
        serde_json::from_value(value)
            .map_err(|e| format!("settings of policy {:?}: {e}", self.kind))
    }
}

#[derive(Serialize, Deserialize)]
struct NetAdapterNameSettings {
    #[serde(rename = "NetworkAdapterName")]
    network_adapter_name: String,
}

#[derive(Serialize, Deserialize)]
struct VSwitchExtensionSettings {
    #[serde(rename = "ExtensionID", alias = "ExtensionId")]
    extension_id: Guid,
    #[serde(rename = "Enable", default)]
    enable: bool,
}

#[derive(Serialize, Deserialize)]
struct SourceMacSettings {
    #[serde(rename = "SourceMacAddress")]
    source_mac_address: String,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
struct PortNameSettings {
    name: String,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
#[derive(Default)]
struct SdnRouteSettings {
    destination_prefix: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    next_hop: String,
    need_encap: bool,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
struct InterfaceParametersSettings {
    mtu: u16,
}

fn to_value<T: Serialize>(settings: T) -> Value {
    // Serializing these plain structs (strings, numbers, bools, GUIDs) cannot fail.
    serde_json::to_value(settings).unwrap_or(Value::Null)
}

impl TryFrom<RawPolicy> for NetworkPolicy {
    type Error = String;

    fn try_from(raw: RawPolicy) -> Result<Self, String> {
        Ok(if raw.is("NetAdapterName") {
            let s: NetAdapterNameSettings = raw.settings()?;
            NetworkPolicy::NetAdapterName {
                network_adapter_name: s.network_adapter_name,
            }
        } else if raw.is("VSwitchExtension") {
            let s: VSwitchExtensionSettings = raw.settings()?;
            NetworkPolicy::VSwitchExtension {
                extension_id: s.extension_id,
                enable: s.enable,
            }
        } else if raw.is("SourceMacAddress") {
            let s: SourceMacSettings = raw.settings()?;
            NetworkPolicy::SourceMacAddress {
                source_mac_address: s.source_mac_address,
            }
        } else if raw.is("HostRoute") {
            NetworkPolicy::HostRoute
        } else {
            NetworkPolicy::Other {
                kind: raw.kind,
                settings: raw.settings,
                fields: raw.fields,
            }
        })
    }
}

impl From<NetworkPolicy> for RawPolicy {
    fn from(policy: NetworkPolicy) -> RawPolicy {
        match policy {
            NetworkPolicy::NetAdapterName {
                network_adapter_name,
            } => RawPolicy::new(
                "NetAdapterName",
                to_value(NetAdapterNameSettings {
                    network_adapter_name,
                }),
            ),
            NetworkPolicy::VSwitchExtension {
                extension_id,
                enable,
            } => RawPolicy::new(
                "VSwitchExtension",
                to_value(VSwitchExtensionSettings {
                    extension_id,
                    enable,
                }),
            ),
            NetworkPolicy::SourceMacAddress { source_mac_address } => RawPolicy::new(
                "SourceMacAddress",
                to_value(SourceMacSettings { source_mac_address }),
            ),
            NetworkPolicy::HostRoute => RawPolicy::new("HostRoute", Value::Object(Map::new())),
            NetworkPolicy::Other {
                kind,
                settings,
                fields,
            } => RawPolicy {
                kind,
                settings,
                fields,
            },
        }
    }
}

impl TryFrom<RawPolicy> for EndpointPolicy {
    type Error = String;

    fn try_from(raw: RawPolicy) -> Result<Self, String> {
        Ok(if raw.is("OutBoundNAT") {
            EndpointPolicy::OutboundNat(raw.settings()?)
        } else if raw.is("PortName") {
            let s: PortNameSettings = raw.settings()?;
            EndpointPolicy::PortName { name: s.name }
        } else if raw.is("SDNRoute") {
            let s: SdnRouteSettings = raw.settings()?;
            EndpointPolicy::SdnRoute {
                destination_prefix: s.destination_prefix,
                next_hop: s.next_hop,
                need_encap: s.need_encap,
            }
        } else if raw.is("InterfaceParameters") {
            let s: InterfaceParametersSettings = raw.settings()?;
            EndpointPolicy::InterfaceParameters { mtu: s.mtu }
        } else {
            EndpointPolicy::Other {
                kind: raw.kind,
                settings: raw.settings,
                fields: raw.fields,
            }
        })
    }
}

impl From<EndpointPolicy> for RawPolicy {
    fn from(policy: EndpointPolicy) -> RawPolicy {
        match policy {
            EndpointPolicy::OutboundNat(settings) => {
                RawPolicy::new("OutBoundNAT", to_value(settings))
            }
            EndpointPolicy::PortName { name } => {
                RawPolicy::new("PortName", to_value(PortNameSettings { name }))
            }
            EndpointPolicy::SdnRoute {
                destination_prefix,
                next_hop,
                need_encap,
            } => RawPolicy::new(
                "SDNRoute",
                to_value(SdnRouteSettings {
                    destination_prefix,
                    next_hop,
                    need_encap,
                }),
            ),
            EndpointPolicy::InterfaceParameters { mtu } => RawPolicy::new(
                "InterfaceParameters",
                to_value(InterfaceParametersSettings { mtu }),
            ),
            EndpointPolicy::Other {
                kind,
                settings,
                fields,
            } => RawPolicy {
                kind,
                settings,
                fields,
            },
        }
    }
}
