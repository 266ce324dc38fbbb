//! [`HnsDocument`]: documents as HNS writes them, the server side of the schema. The schema
//! types encode what a client sends, which leaves out the members only HNS sets (a network's
//! `Extensions`, an endpoint's `HostComputeNamespace`, a namespace's `NamespaceId` and
//! `Resources`). What HNS returns carries them, and the schema's decoders read them back, so a
//! document written here decodes to the same value.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::schema::{HostComputeEndpoint, HostComputeNamespace, HostComputeNetwork};

/// A network, endpoint or namespace document, which HNS writes with its read-only members.
pub trait HnsDocument: Serialize {
    /// The members HNS writes that a client never sends.
    fn read_only_members(&self) -> serde_json::Result<Map<String, Value>>;

    /// The document as HNS returns it from a query: the schema encoding plus
    /// [`read_only_members`](HnsDocument::read_only_members).
    fn to_hns_json(&self) -> serde_json::Result<Value> {
        let mut value = serde_json::to_value(self)?;
        if let Value::Object(members) = &mut value {
            members.extend(self.read_only_members()?);
        }
        Ok(value)
    }
}

impl HnsDocument for HostComputeNetwork {
    fn read_only_members(&self) -> serde_json::Result<Map<String, Value>> {
        Ok(Map::from_iter([(
            "Extensions".to_owned(),
            serde_json::to_value(&self.extensions)?,
        )]))
    }
}

impl HnsDocument for HostComputeEndpoint {
    fn read_only_members(&self) -> serde_json::Result<Map<String, Value>> {
        Ok(self
            .host_compute_namespace
            .map(|namespace| {
                (
                    "HostComputeNamespace".to_owned(),
                    Value::String(namespace.to_string()),
                )
            })
            .into_iter()
            .collect())
    }
}

impl HnsDocument for HostComputeNamespace {
    fn read_only_members(&self) -> serde_json::Result<Map<String, Value>> {
        Ok(Map::from_iter([
            ("NamespaceId".to_owned(), Value::from(self.namespace_id)),
            (
                "Resources".to_owned(),
                serde_json::to_value(&self.resources)?,
            ),
        ]))
    }
}
