//! `HostComputeEndpoint`: the endpoint document (create input, query output).

use serde::{Deserialize, Serialize};

use super::common::{Dns, IpConfig, Route, SchemaVersion};
use super::policy::EndpointPolicy;
use crate::Guid;

/// A `HostComputeEndpoint` document: one per Pod.
///
/// `host_compute_namespace` is read-only: HNS sets it when the endpoint is attached to a
/// namespace (through `ModifyNamespace`), and it is never sent. Every key may be absent on
/// decode except `SchemaVersion` ([`SchemaVersion`] tells a v1 document apart).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "PascalCase", default)]
pub struct HostComputeEndpoint {
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
    /// `HostComputeNetwork`: the network's ID.
    #[serde(skip_serializing_if = "Guid::is_nil_ref")]
    pub host_compute_network: Guid,
    /// `HostComputeNamespace` (read-only, never sent).
    #[serde(skip_serializing)]
    pub host_compute_namespace: Option<Guid>,
    /// `Policies`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub policies: Vec<EndpointPolicy>,
    /// `IpConfigurations`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ip_configurations: Vec<IpConfig>,
    /// `Dns`; left out when empty.
    #[serde(skip_serializing_if = "Dns::is_empty")]
    pub dns: Dns,
    /// `Routes`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub routes: Vec<Route>,
    /// `MacAddress` in dash form (`00-15-5D-01-02-03`); empty lets HNS pick one from the pool.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub mac_address: String,
    /// `Flags` ([`EndpointFlags`]); none is left out.
    #[serde(skip_serializing_if = "EndpointFlags::is_empty")]
    pub flags: EndpointFlags,
    /// `SchemaVersion`: required on decode (a v1 document has none).
    pub schema_version: SchemaVersion,
}

/// `Flags` of an endpoint: the EndpointFlags bitmask, sent as a number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct EndpointFlags(pub u32);

impl EndpointFlags {
    /// RemoteEndpoint.
    pub const REMOTE_ENDPOINT: EndpointFlags = EndpointFlags(1);
    /// DisableInterComputeCommunication.
    pub const DISABLE_ICC: EndpointFlags = EndpointFlags(2);
    /// EnableLowInterfaceMetric.
    pub const ENABLE_LOW_INTERFACE_METRIC: EndpointFlags = EndpointFlags(8);

    /// Whether no flag is set.
    pub fn is_empty(&self) -> bool {
        self.0 == 0
    }
}

super::decode::schema_2_document_serde!(HostComputeEndpoint);
