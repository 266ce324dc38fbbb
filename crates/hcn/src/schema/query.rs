//! `HostComputeQuery`: the document `HcnEnumerate*` and `HcnQuery*Properties` take.

use serde::{Deserialize, Serialize};

use super::common::SchemaVersion;
use crate::Guid;

/// A `HostComputeQuery`. `Filter` is a string that itself holds a JSON object, e.g.
/// `"{\"Name\":\"antrea-hnsnetwork\"}"`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct HostComputeQuery {
    /// `SchemaVersion`.
    pub schema_version: SchemaVersion,
    /// `Flags`: 0 = None, 1 = Detailed; 0 is left out.
    #[serde(skip_serializing_if = "super::common::is_zero_u32")]
    pub flags: u32,
    /// `Filter`: JSON text; empty is left out (no filter).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub filter: String,
}

/// What a query selects, turned into the `Filter` text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QueryFilter {
    /// Every object.
    All,
    /// `{"Name": ...}`.
    Name(String),
    /// `{"ID": ...}`.
    Id(Guid),
    /// `{"VirtualNetwork": ...}`: endpoints of a network (the v1 key, which HNS queries understand).
    Network(Guid),
}

impl HostComputeQuery {
    /// A schema 2.0 query selecting `filter`.
    pub fn new(filter: QueryFilter) -> Self {
        let filter = match filter {
            QueryFilter::All => String::new(),
            QueryFilter::Name(name) => serde_json::json!({ "Name": name }).to_string(),
            QueryFilter::Id(id) => serde_json::json!({ "ID": id }).to_string(),
            QueryFilter::Network(id) => serde_json::json!({ "VirtualNetwork": id }).to_string(),
        };
        HostComputeQuery {
            schema_version: SchemaVersion::V2,
            flags: 0,
            filter,
        }
    }

    /// The filter's keys and values; `None` when the filter is empty; an error text when it is
    /// not a JSON object of strings.
    pub fn filter_pairs(&self) -> Result<Option<Vec<(String, String)>>, String> {
        if self.filter.trim().is_empty() {
            return Ok(None);
        }
        let value: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&self.filter)
            .map_err(|e| format!("query filter {:?}: {e}", self.filter))?;
        value
            .into_iter()
            .map(|(k, v)| match v {
                serde_json::Value::String(s) => Ok((k, s)),
                other => Err(format!("query filter key {k:?}: {other} is not a string")),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }
}
