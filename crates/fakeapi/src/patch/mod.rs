//! PATCH bodies: which patch type a `Content-Type` names and how it changes a JSON object.
//!
//! Strategic merge patch is applied as a JSON merge patch (RFC 7386): maps merge, lists are
//! replaced whole and `$patch`/`$retainKeys` directives are not interpreted. Server-side apply
//! (`application/apply-patch+yaml`) is not supported and answered with 415.

mod json_patch;
mod merge;

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
    /// `application/strategic-merge-patch+json`, applied as a merge patch.
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
                if !patch.is_object() {
                    return Err(PatchError::Malformed(
                        "a merge patch must be a JSON object".into(),
                    ));
                }
                merge::apply(target, &patch);
                Ok(())
            }
            Self::Json => json_patch::apply(target, &patch),
        }
    }
}
