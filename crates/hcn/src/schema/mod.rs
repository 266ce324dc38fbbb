//! HCN schema v2 documents: what we send to `computenetwork.dll` and what it sends back.
//!
//! Keys are the PascalCase names of the public HNS schema (`HostComputeNetwork`,
//! `HostComputeEndpoint`, ...). Decoding is lenient where HNS is: unknown keys are ignored,
//! absent keys take their default (an absent network `Type` is `NAT`, HNS's enum value 0), and
//! `ID` is also read as `Id`/`id` because HNS and its documents disagree on the casing. Only
//! `SchemaVersion` is required: a document without it, or with a major version below 2, is a
//! v1 document and is refused with an error that says so. Encoding leaves out empty optional
//! parts, as Microsoft's own clients do. Documents from HNS are read with [`decode()`], which
//! also treats `null` members as absent.

mod common;
mod decode;
mod endpoint;
mod namespace;
mod network;
mod policy;
mod query;
mod record;

pub use common::{
    Dns, IpConfig, Ipam, MacPool, MacRange, ModifyRequestType, Route, SchemaVersion, Subnet,
};
pub use decode::decode;
pub use endpoint::{EndpointFlags, HostComputeEndpoint};
pub use namespace::{
    HostComputeNamespace, ModifyNamespaceSettingRequest, NamespaceResource, NamespaceResourceData,
    NamespaceResourceType, NamespaceType, ResourceId,
};
pub use network::{
    HostComputeNetwork, ModifyNetworkSettingRequest, NetworkFlags, NetworkResourceType,
    NetworkType, SwitchExtensionState,
};
pub use policy::{EndpointPolicy, NetworkPolicy, OVS_EXTENSION_ID, OutboundNatSettings};
pub use query::{HostComputeQuery, QueryFilter};
pub use record::ErrorRecord;
