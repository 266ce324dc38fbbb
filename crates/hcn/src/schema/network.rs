//! `HostComputeNetwork`: the network document (create input, query output).

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::common::{Dns, Ipam, MacPool, ModifyRequestType, SchemaVersion};
use super::policy::NetworkPolicy;
use crate::Guid;

/// A `HostComputeNetwork` document.
///
/// To create one, fill `name`, `kind`, `policies` and `ipams`; leave `id` nil to let HNS pick
/// it. HNS fills `id` (and may add keys this type ignores) in what it returns.
///
/// Every key may be absent except `SchemaVersion`: a document without it (or with a major
/// version below 2) is a v1 document and fails to decode with an error saying so
/// ([`SchemaVersion`]).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "PascalCase", default)]
pub struct HostComputeNetwork {
    /// `ID`; nil is left out.
    #[serde(
        rename = "ID",
        alias = "Id",
        alias = "id",
        skip_serializing_if = "Guid::is_nil_ref"
    )]
    pub id: Guid,
    /// `Name`.
    pub name: String,
    /// `Type`; HNS leaves it out for NAT, so an absent key decodes as [`NetworkType::Nat`].
    #[serde(rename = "Type")]
    pub kind: NetworkType,
    /// `Policies`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub policies: Vec<NetworkPolicy>,
    /// `MacPool`; left out when it has no ranges.
    #[serde(skip_serializing_if = "MacPool::is_empty")]
    pub mac_pool: MacPool,
    /// `Dns`; left out when empty.
    #[serde(skip_serializing_if = "Dns::is_empty")]
    pub dns: Dns,
    /// `Ipams`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ipams: Vec<Ipam>,
    /// `Extensions` (read-only, never sent): the switch extensions HNS lists on the network,
    /// each with its state. HNS's v1 output always carries this list (every installed
    /// extension); see [`HostComputeNetwork::extension_enabled`] and docs/hcn.md.
    #[serde(skip_serializing)]
    pub extensions: Vec<SwitchExtensionState>,
    /// `Flags` ([`NetworkFlags`]); none is left out.
    #[serde(skip_serializing_if = "NetworkFlags::is_empty")]
    pub flags: NetworkFlags,
    /// `SchemaVersion`: required on decode (a v1 document has none).
    pub schema_version: SchemaVersion,
}

impl HostComputeNetwork {
    /// The name of the host adapter the `NetAdapterName` policy binds, if any.
    pub fn adapter_name(&self) -> Option<&str> {
        self.policies.iter().find_map(|p| match p {
            NetworkPolicy::NetAdapterName {
                network_adapter_name,
            } => Some(network_adapter_name.as_str()),
            _ => None,
        })
    }

    /// Whether switch extension `extension_id` is enabled (`Some(true)`) or disabled
    /// (`Some(false)`) on the network; `None` when the document says nothing about it.
    ///
    /// The network's `Extensions` list is read first: it is the state HNS reports. A
    /// `VSwitchExtension` policy naming the extension (what the network was created or
    /// modified with) answers when the list does not name it.
    pub fn extension_enabled(&self, extension_id: Guid) -> Option<bool> {
        let listed = self
            .extensions
            .iter()
            .find(|e| e.id == extension_id)
            .map(|e| e.is_enabled);
        listed.or_else(|| {
            self.policies.iter().find_map(|p| match p {
                NetworkPolicy::VSwitchExtension {
                    extension_id: id,
                    enable,
                } if *id == extension_id => Some(*enable),
                _ => None,
            })
        })
    }
}

/// `Extensions[]` of a network: one switch extension and its state,
/// `{"Id": "583CC151-…", "IsEnabled": true, "Name": "Open vSwitch Extension"}`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct SwitchExtensionState {
    /// `Id`; `ID` is also read.
    #[serde(rename = "Id", alias = "ID")]
    pub id: Guid,
    /// `IsEnabled`.
    #[serde(default)]
    pub is_enabled: bool,
    /// `Name`, e.g. `Microsoft Windows Filtering Platform`.
    #[serde(default)]
    pub name: String,
}

impl MacPool {
    /// Whether no range is set.
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }
}

/// `Type` of a network (the schema's NetworkMode), sent as a string.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum NetworkType {
    /// `NAT` (HNS's enum value 0; the default when `Type` is absent).
    #[default]
    Nat,
    /// `ICS`.
    Ics,
    /// `Transparent`: bridged to a host NIC; what Antrea uses.
    Transparent,
    /// `L2Bridge`.
    L2Bridge,
    /// `L2Tunnel`.
    L2Tunnel,
    /// `Overlay`.
    Overlay,
    /// `Private`.
    Private,
    /// `Internal`.
    Internal,
    /// Any other mode (e.g. `Mirrored`), as received.
    Other(String),
}

const NETWORK_TYPES: &[(NetworkType, &str)] = &[
    (NetworkType::Nat, "NAT"),
    (NetworkType::Ics, "ICS"),
    (NetworkType::Transparent, "Transparent"),
    (NetworkType::L2Bridge, "L2Bridge"),
    (NetworkType::L2Tunnel, "L2Tunnel"),
    (NetworkType::Overlay, "Overlay"),
    (NetworkType::Private, "Private"),
    (NetworkType::Internal, "Internal"),
];

impl NetworkType {
    /// The wire name, e.g. `Transparent`.
    pub fn as_str(&self) -> &str {
        match self {
            NetworkType::Other(name) => name,
            known => NETWORK_TYPES
                .iter()
                .find(|(t, _)| t == known)
                .map_or("", |(_, name)| name),
        }
    }
}

impl From<String> for NetworkType {
    fn from(name: String) -> Self {
        NETWORK_TYPES
            .iter()
            .find(|(_, known)| known.eq_ignore_ascii_case(&name))
            .map_or(NetworkType::Other(name), |(t, _)| t.clone())
    }
}

impl From<NetworkType> for String {
    fn from(kind: NetworkType) -> Self {
        kind.as_str().to_owned()
    }
}

impl fmt::Display for NetworkType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `Flags` of a network: the NetworkFlags bitmask, sent as a number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct NetworkFlags(pub u32);

impl NetworkFlags {
    /// EnableDns (EnableDnsProxy).
    pub const ENABLE_DNS: NetworkFlags = NetworkFlags(1);
    /// EnableDhcp (EnableDhcpServer).
    pub const ENABLE_DHCP: NetworkFlags = NetworkFlags(2);
    /// EnableNonPersistent: the network does not survive an HNS restart.
    pub const ENABLE_NON_PERSISTENT: NetworkFlags = NetworkFlags(8);
    /// EnablePersistent.
    pub const ENABLE_PERSISTENT: NetworkFlags = NetworkFlags(16);
    /// DisableHostPort (HNS >= 15.1).
    pub const DISABLE_HOST_PORT: NetworkFlags = NetworkFlags(1024);
    /// EnableIov.
    pub const ENABLE_IOV: NetworkFlags = NetworkFlags(8192);

    /// Whether no flag is set.
    pub fn is_empty(&self) -> bool {
        self.0 == 0
    }

    /// Whether every bit of `other` is set.
    pub fn contains(self, other: NetworkFlags) -> bool {
        self.0 & other.0 == other.0
    }
}

impl std::ops::BitOr for NetworkFlags {
    type Output = NetworkFlags;

    fn bitor(self, rhs: NetworkFlags) -> NetworkFlags {
        NetworkFlags(self.0 | rhs.0)
    }
}

/// `ResourceType` of a network modify request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum NetworkResourceType {
    /// `Policy`: add or remove network policies, `Settings: {"Policies": [...]}`.
    Policy,
    /// `DNS`.
    #[serde(rename = "DNS")]
    Dns,
    /// `Extension`: switch extension state, `Settings: {"Id", "IsEnabled"}`.
    Extension,
    /// A resource type this crate does not know; never sent.
    #[serde(other)]
    Unknown,
}

/// A `ModifyNetworkSettingRequest` (`HcnModifyNetwork`); `Settings` is an embedded JSON object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ModifyNetworkSettingRequest {
    /// `ResourceType`.
    pub resource_type: NetworkResourceType,
    /// `RequestType`.
    pub request_type: ModifyRequestType,
    /// `Settings`.
    pub settings: Value,
}

impl ModifyNetworkSettingRequest {
    /// Enable or disable switch extension `extension_id` on the network: the documented v2 way
    /// (`{"ResourceType":"Extension","RequestType":"Update","Settings":{"Id","IsEnabled"}}`).
    /// Antrea enables the OVS extension only after the NIC's address has moved to the vNIC.
    pub fn set_extension(extension_id: Guid, enabled: bool) -> Self {
        ModifyNetworkSettingRequest {
            resource_type: NetworkResourceType::Extension,
            request_type: ModifyRequestType::Update,
            settings: serde_json::json!({ "Id": extension_id.to_string(), "IsEnabled": enabled }),
        }
    }

    /// Add `policies` to the network.
    pub fn add_policies(policies: Vec<NetworkPolicy>) -> Self {
        ModifyNetworkSettingRequest {
            resource_type: NetworkResourceType::Policy,
            request_type: ModifyRequestType::Add,
            settings: serde_json::json!({ "Policies": policies }),
        }
    }

    /// The `(Id, IsEnabled)` of an extension request whose settings carry both.
    pub fn extension_setting(&self) -> Option<(Guid, bool)> {
        let id = self
            .settings
            .get("Id")
            .or_else(|| self.settings.get("ID"))?
            .as_str()?
            .parse()
            .ok()?;
        Some((id, self.settings.get("IsEnabled")?.as_bool()?))
    }

    /// The policies of a policy request, if its settings carry a readable list.
    pub fn policies(&self) -> Option<Vec<NetworkPolicy>> {
        serde_json::from_value(self.settings.get("Policies")?.clone()).ok()
    }
}

super::decode::schema_2_document_serde!(HostComputeNetwork);
