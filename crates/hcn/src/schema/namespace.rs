//! `HostComputeNamespace` (a network compartment; containerd creates one per Pod sandbox) and
//! `ModifyNamespaceSettingRequest`, which attaches endpoints to it and detaches them.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::common::{ModifyRequestType, SchemaVersion};
use crate::Guid;

/// A `HostComputeNamespace` document. Every key may be absent on decode except
/// `SchemaVersion` ([`SchemaVersion`] tells a v1 document apart).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "PascalCase", default)]
pub struct HostComputeNamespace {
    /// `ID`; nil is left out.
    #[serde(
        rename = "ID",
        alias = "Id",
        alias = "id",
        skip_serializing_if = "Guid::is_nil_ref"
    )]
    pub id: Guid,
    /// `NamespaceId`: the compartment number (read-only).
    #[serde(skip_serializing)]
    pub namespace_id: u32,
    /// `Type`.
    #[serde(rename = "Type")]
    pub kind: NamespaceType,
    /// `ReadyOnCreate`: the compartment is usable right after creation, without a pause
    /// container (HNS >= 15.2); false is left out.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub ready_on_create: bool,
    /// `Resources`: the attached endpoints and containers (read-only).
    #[serde(skip_serializing)]
    pub resources: Vec<NamespaceResource>,
    /// `SchemaVersion`: required on decode (a v1 document has none).
    pub schema_version: SchemaVersion,
}

impl HostComputeNamespace {
    /// The IDs of the endpoints the namespace holds.
    pub fn endpoint_ids(&self) -> Vec<Guid> {
        self.resources
            .iter()
            .filter(|r| r.kind == NamespaceResourceType::Endpoint)
            .filter_map(|r| r.data.id.as_ref().and_then(ResourceId::guid))
            .collect()
    }
}

/// `Type` of a namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum NamespaceType {
    /// `Host`: a new host compartment (what containerd creates for a Pod).
    #[default]
    Host,
    /// `HostDefault`: the host's default compartment.
    HostDefault,
    /// `Guest`.
    Guest,
    /// `GuestDefault`.
    GuestDefault,
    /// A type this crate does not know, as HNS may report; never sent (HNS would refuse it).
    #[serde(other)]
    Unknown,
}

/// `Resources[]` of a namespace: `{"Type": "Endpoint", "Data": {"Id": ...}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct NamespaceResource {
    /// `Type`.
    #[serde(rename = "Type")]
    pub kind: NamespaceResourceType,
    /// `Data`.
    pub data: NamespaceResourceData,
}

/// `Type` of a namespace resource or of a modify request's resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum NamespaceResourceType {
    /// `Endpoint`.
    Endpoint,
    /// `Container`.
    Container,
    /// A resource type this crate does not know, as HNS may report; never sent.
    #[serde(other)]
    Unknown,
}

/// `Data` of a namespace resource. HNS writes `Id`; `ID` is also read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NamespaceResourceData {
    /// `Id`; `None` when HNS leaves it out.
    #[serde(
        rename = "Id",
        alias = "ID",
        alias = "id",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub id: Option<ResourceId>,
}

/// The `Id` of a namespace resource: an endpoint's is a GUID, a container's is the runtime's
/// container ID (64 hex digits for containerd and Docker, 12 in `hnsdiag`'s short form), which
/// is not one. Text that parses as a GUID is [`ResourceId::Guid`]; any other text is kept as
/// received in [`ResourceId::Text`], so no ID can fail the namespace's decode.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ResourceId {
    /// A GUID (every endpoint ID).
    Guid(Guid),
    /// Any other ID, as received (e.g. a container ID).
    Text(String),
}

impl ResourceId {
    /// The GUID, when the ID is one.
    pub fn guid(&self) -> Option<Guid> {
        match self {
            ResourceId::Guid(id) => Some(*id),
            ResourceId::Text(_) => None,
        }
    }
}

impl From<String> for ResourceId {
    fn from(text: String) -> Self {
        match text.parse() {
            Ok(id) => ResourceId::Guid(id),
            Err(_) => ResourceId::Text(text),
        }
    }
}

impl fmt::Display for ResourceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ResourceId::Guid(id) => id.fmt(f),
            ResourceId::Text(text) => f.write_str(text),
        }
    }
}

impl Serialize for ResourceId {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for ResourceId {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(ResourceId::from)
    }
}

/// A `ModifyNamespaceSettingRequest`; `Settings` is an embedded JSON object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ModifyNamespaceSettingRequest {
    /// `ResourceType`.
    pub resource_type: NamespaceResourceType,
    /// `RequestType`.
    pub request_type: ModifyRequestType,
    /// `Settings`, e.g. `{"EndpointId": "..."}`.
    pub settings: Value,
}

impl ModifyNamespaceSettingRequest {
    /// Attach endpoint `endpoint` to the namespace.
    pub fn add_endpoint(endpoint: Guid) -> Self {
        Self::endpoint(ModifyRequestType::Add, endpoint)
    }

    /// Detach endpoint `endpoint` from the namespace.
    pub fn remove_endpoint(endpoint: Guid) -> Self {
        Self::endpoint(ModifyRequestType::Remove, endpoint)
    }

    fn endpoint(request_type: ModifyRequestType, endpoint: Guid) -> Self {
        ModifyNamespaceSettingRequest {
            resource_type: NamespaceResourceType::Endpoint,
            request_type,
            settings: serde_json::json!({ "EndpointId": endpoint.to_string() }),
        }
    }

    /// The `EndpointId` of an endpoint request, if the settings carry a valid one.
    pub fn endpoint_id(&self) -> Option<Guid> {
        let id = self
            .settings
            .get("EndpointId")
            .or_else(|| self.settings.get("EndpointID"))?;
        id.as_str()?.parse().ok()
    }
}

super::decode::schema_2_document_serde!(HostComputeNamespace);
