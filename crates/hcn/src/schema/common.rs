//! Parts shared by network and endpoint documents: schema version, routes, DNS, IPAM subnets,
//! MAC pools, endpoint IP configurations.

use serde::{Deserialize, Serialize};

use crate::Guid;

/// `SchemaVersion`: present on every object and query we send. We speak 2.0.
///
/// A network, endpoint or namespace document from HNS must carry one with a major version of 2
/// or more; anything else is a v1 document and is refused ([`decode`](super::decode())).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct SchemaVersion {
    /// `Major`.
    pub major: u32,
    /// `Minor`.
    pub minor: u32,
}

impl SchemaVersion {
    /// Schema 2.0, the version every document of this crate declares.
    pub const V2: SchemaVersion = SchemaVersion { major: 2, minor: 0 };
}

impl Default for SchemaVersion {
    fn default() -> Self {
        SchemaVersion::V2
    }
}

/// `RequestType` of a modify request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ModifyRequestType {
    /// `Add`.
    Add,
    /// `Remove`.
    Remove,
    /// `Update`.
    Update,
    /// `Refresh`.
    Refresh,
}

/// `Route`: a route of a subnet or an endpoint. Addresses stay text, as HNS writes them.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct Route {
    /// `NextHop`, e.g. `10.10.1.1`.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub next_hop: String,
    /// `DestinationPrefix`, e.g. `0.0.0.0/0`.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub destination_prefix: String,
    /// `Metric`; 0 is left out.
    #[serde(skip_serializing_if = "is_zero_u16")]
    pub metric: u16,
}

impl Route {
    /// The default route `0.0.0.0/0` through `next_hop`.
    pub fn default_via(next_hop: impl Into<String>) -> Route {
        Route {
            next_hop: next_hop.into(),
            destination_prefix: "0.0.0.0/0".into(),
            metric: 0,
        }
    }
}

/// `Dns` of a network or an endpoint.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct Dns {
    /// `Domain`.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub domain: String,
    /// `Search`: the search suffixes, e.g. `svc.cluster.local`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub search: Vec<String>,
    /// `ServerList`: the DNS servers.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub server_list: Vec<String>,
    /// `Options`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<String>,
}

impl Dns {
    /// Whether nothing is set (the document then leaves `Dns` out).
    pub fn is_empty(&self) -> bool {
        self == &Dns::default()
    }
}

/// `Ipams[]` entry: how addresses of the subnets are managed (`Static` or `Dhcp`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct Ipam {
    /// `Type`: `Static` or `Dhcp`.
    #[serde(rename = "Type", skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// `Subnets`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub subnets: Vec<Subnet>,
}

impl Ipam {
    /// A `Static` IPAM holding `subnets`.
    pub fn static_subnets(subnets: Vec<Subnet>) -> Ipam {
        Ipam {
            kind: "Static".into(),
            subnets,
        }
    }
}

/// `Subnet` of an IPAM.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct Subnet {
    /// `IpAddressPrefix`, e.g. `10.10.1.0/24`.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub ip_address_prefix: String,
    /// `Routes`: HNS wants a default route with a `NextHop` when a prefix is set.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub routes: Vec<Route>,
    /// `Flags` (SubnetFlags: 1 = DoNotReserveGatewayAddress); 0 is left out.
    #[serde(skip_serializing_if = "is_zero_u32")]
    pub flags: u32,
}

/// `MacPool`: the ranges endpoint MACs are taken from.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct MacPool {
    /// `Ranges`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ranges: Vec<MacRange>,
}

/// `MacPool.Ranges[]`: an inclusive range, MACs in dash form (`00-15-5D-52-C0-00`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct MacRange {
    /// `StartMacAddress`.
    pub start_mac_address: String,
    /// `EndMacAddress`.
    pub end_mac_address: String,
}

/// `IpConfigurations[]` of an endpoint.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct IpConfig {
    /// `IpAddress`, e.g. `10.10.1.5`.
    pub ip_address: String,
    /// `PrefixLength`; 0 is left out (HNS then uses the subnet's).
    #[serde(skip_serializing_if = "is_zero_u8")]
    pub prefix_length: u8,
    /// `IpSubnetId` (schema 2.3).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ip_subnet_id: Option<Guid>,
}

pub(crate) fn is_zero_u8(v: &u8) -> bool {
    *v == 0
}

pub(crate) fn is_zero_u16(v: &u16) -> bool {
    *v == 0
}

pub(crate) fn is_zero_u32(v: &u32) -> bool {
    *v == 0
}
