//! Which objects a list or watch request sees: namespace, `labelSelector` and `fieldSelector`.

mod field;
mod label;

pub use field::FieldSelector;
pub use label::LabelSelector;

use serde_json::Value;

/// Error in a selector string (answered with 400 BadRequest).
#[derive(Debug, thiserror::Error)]
#[error("invalid selector {selector:?}: {reason}")]
pub struct SelectorError {
    /// The selector text as received.
    pub selector: String,
    /// What is wrong with it.
    pub reason: String,
}

impl SelectorError {
    fn new(selector: &str, reason: impl Into<String>) -> Self {
        Self {
            selector: selector.to_owned(),
            reason: reason.into(),
        }
    }
}

/// The full filter of a list or watch: all parts must match.
#[derive(Debug, Clone, Default)]
pub struct ObjectFilter {
    /// Only objects in this namespace (`None`: all namespaces / cluster-scoped).
    pub namespace: Option<String>,
    /// Parsed `labelSelector`.
    pub labels: LabelSelector,
    /// Parsed `fieldSelector`.
    pub fields: FieldSelector,
}

impl ObjectFilter {
    /// Whether `object` passes the filter.
    pub fn matches(&self, object: &Value) -> bool {
        if let Some(ns) = &self.namespace {
            let object_ns = object
                .pointer("/metadata/namespace")
                .and_then(Value::as_str)
                .unwrap_or("");
            if object_ns != ns {
                return false;
            }
        }
        self.labels.matches(object) && self.fields.matches(object)
    }
}
