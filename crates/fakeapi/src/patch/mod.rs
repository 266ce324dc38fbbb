//! PATCH bodies: which patch type a `Content-Type` names and how it changes a JSON object.
//!
//! Strategic merge patch merges the lists upstream types give a merge key (see `strategic`) and
//! interprets its directives. Server-side apply (`application/apply-patch+yaml`) is not
//! supported and answered with 415.

mod json_patch;
mod merge;
mod strategic;

use serde_json::Value;

/// Error applying a patch (answered with 422 Invalid or 400 BadRequest).
#[derive(Debug, thiserror::Error)]
pub enum PatchError {
    /// The body is not valid JSON of the expected shape.
    #[error("malformed patch body: {0}")]
    Malformed(String),
    /// A JSON patch operation could not be applied (path missing, test failed...).
    #[error("JSON patch operation {index} failed: {reason}")]
    Operation {
        /// Position of the operation in the patch array.
        index: usize,
        /// What went wrong.
        reason: String,
    },
}

/// The patch formats the fake understands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchType {
    /// `application/merge-patch+json` (RFC 7386).
    Merge,
    /// `application/strategic-merge-patch+json`.
    StrategicMerge,
    /// `application/json-patch+json` (RFC 6902).
    Json,
}

impl PatchType {
    /// The patch type named by a `Content-Type` header value (parameters ignored); `None` for
    /// anything else, including `application/apply-patch+yaml`.
    pub fn from_content_type(content_type: &str) -> Option<Self> {
        match content_type.split(';').next().unwrap_or("").trim() {
            "application/merge-patch+json" => Some(Self::Merge),
            "application/strategic-merge-patch+json" => Some(Self::StrategicMerge),
            "application/json-patch+json" => Some(Self::Json),
            _ => None,
        }
    }

    /// Applies `patch` (the raw body) to `target`.
    pub fn apply(self, target: &mut Value, patch: &[u8]) -> Result<(), PatchError> {
        let patch: Value =
            serde_json::from_slice(patch).map_err(|e| PatchError::Malformed(e.to_string()))?;
        match self {
            Self::Merge | Self::StrategicMerge => {
                let Value::Object(fields) = &patch else {
                    return Err(PatchError::Malformed(
                        "a merge patch must be a JSON object".into(),
                    ));
                };
                if self == Self::Merge {
                    merge::apply(target, &patch);
                } else {
                    strategic::apply(target, fields);
                }
                Ok(())
            }
            Self::Json => json_patch::apply(target, &patch),
        }
    }
}
