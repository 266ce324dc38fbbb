//! How documents from HNS are read.
//!
//! - [`decode`]: HNS and Go-based tools write `null` for an empty list or object; object members
//!   that are `null` are treated as absent, so they take their defaults instead of failing.
//! - Networks, endpoints and namespaces are schema 2 documents: each must carry a
//!   `SchemaVersion` whose major version is 2 or more. A v1 document (what the `HNSCall` API,
//!   `hnsdiag` and a query for schema 1.0 return) has none, or one below 2, and keys that
//!   differ (`Subnets`/`AddressPrefix` instead of `Ipams`, `VirtualNetwork` instead of
//!   `HostComputeNetwork`, `ResourceList` instead of `Resources`, ...). Read as schema 2, it
//!   would come out empty or fail on some unrelated key, so it is refused first, with an error
//!   that says it is a v1 document.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// Reads an HNS document: JSON whose `null` object members count as absent.
pub fn decode<T: DeserializeOwned>(text: &str) -> serde_json::Result<T> {
    let mut value: Value = serde_json::from_str(text)?;
    drop_null_members(&mut value);
    serde_json::from_value(value)
}

fn drop_null_members(value: &mut Value) {
    match value {
        Value::Object(members) => {
            members.retain(|_, member| !member.is_null());
            members.values_mut().for_each(drop_null_members);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_null_members),
        _ => {}
    }
}

/// Why `document` (a network, endpoint or namespace) is not a schema 2 document, if it is not.
/// A `SchemaVersion` that is not an object with a numeric `Major` is left for the field's own
/// decoding to report.
pub(super) fn v1_document_error(document: &Map<String, Value>) -> Option<String> {
    let version = match document.get("SchemaVersion") {
        None | Some(Value::Null) => {
            return Some(
                "no SchemaVersion: this is a v1 HNS document (HNSCall, hnsdiag, or a query for \
                 schema 1.0), not a schema 2 document; its keys differ and would be lost"
                    .to_owned(),
            );
        }
        Some(version) => version,
    };
    let major = version.get("Major")?.as_u64()?;
    (major < 2).then(|| {
        let minor = version.get("Minor").and_then(Value::as_u64).unwrap_or(0);
        format!(
            "SchemaVersion {major}.{minor}: this is a v1 HNS document, not a schema 2 document; \
             its keys differ and would be lost"
        )
    })
}

/// `Serialize` and `Deserialize` for a schema 2 document type whose derived implementations are
/// generated as inherent functions (`#[serde(remote = "Self")]`, serde's way to wrap a derived
/// implementation). Serializing is the derived one; deserializing first reads the object,
/// refuses a v1 document ([`v1_document_error`]), then runs the derived one on it.
macro_rules! schema_2_document_serde {
    ($document:ident) => {
        impl serde::Serialize for $document {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                // The inherent, derived function (inherent functions take precedence).
                $document::serialize(self, serializer)
            }
        }

        impl<'de> serde::Deserialize<'de> for $document {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                use serde::de::Error as _;
                let document =
                    <serde_json::Map<String, serde_json::Value> as serde::Deserialize>::deserialize(
                        deserializer,
                    )?;
                if let Some(problem) = super::decode::v1_document_error(&document) {
                    return Err(D::Error::custom(problem));
                }
                // The inherent, derived function.
                $document::deserialize(serde_json::Value::Object(document))
                    .map_err(D::Error::custom)
            }
        }
    };
}

pub(super) use schema_2_document_serde;
