//! `Status` objects: the body of every failed request and of watch ERROR events.

use crate::error::StoreError;
use crate::patch::PatchError;
use crate::selector::SelectorError;
use http::StatusCode;
use serde_json::{Value, json};

/// A failure answered with a `Status` body.
#[derive(Debug)]
pub struct Failure {
    /// HTTP status code (also the Status `code`).
    pub code: StatusCode,
    /// Status `reason` (NotFound, AlreadyExists, Conflict, ...).
    pub reason: &'static str,
    /// Human-readable message.
    pub message: String,
    /// `details.name`, `details.kind` when about one object.
    pub details: Option<(String, String)>,
}

impl Failure {
    /// A failure without object details.
    pub fn new(code: StatusCode, reason: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            reason,
            message: message.into(),
            details: None,
        }
    }

    /// The `Status` object.
    pub fn to_status(&self) -> Value {
        let mut status = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code.as_u16(),
        });
        if let Some((kind, name)) = &self.details {
            status["details"] = json!({"name": name, "kind": kind});
        }
        status
    }
}

impl From<StoreError> for Failure {
    fn from(err: StoreError) -> Self {
        let err = match err {
            StoreError::Patch(patch) => return patch.into(),
            other => other,
        };
        let message = err.to_string();
        let (code, reason, details) = match err {
            StoreError::NotFound { kind, name } => {
                (StatusCode::NOT_FOUND, "NotFound", Some((kind, name)))
            }
            StoreError::AlreadyExists { kind, name } => {
                (StatusCode::CONFLICT, "AlreadyExists", Some((kind, name)))
            }
            StoreError::Conflict { kind, name, .. } => {
                (StatusCode::CONFLICT, "Conflict", Some((kind, name)))
            }
            StoreError::Invalid { kind, name, .. } => (
                StatusCode::UNPROCESSABLE_ENTITY,
                "Invalid",
                Some((kind, name)),
            ),
            StoreError::BadRequest(_) | StoreError::Convert(_) => {
                (StatusCode::BAD_REQUEST, "BadRequest", None)
            }
            StoreError::UnknownResource(_) => (StatusCode::NOT_FOUND, "NotFound", None),
            StoreError::Expired { .. } => (StatusCode::GONE, "Expired", None),
            StoreError::Patch(_) => (StatusCode::UNPROCESSABLE_ENTITY, "Invalid", None),
        };
        Self {
            code,
            reason,
            message,
            details,
        }
    }
}

impl From<SelectorError> for Failure {
    fn from(err: SelectorError) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "BadRequest", err.to_string())
    }
}

impl From<PatchError> for Failure {
    fn from(err: PatchError) -> Self {
        let code = match err {
            PatchError::Malformed(_) => StatusCode::BAD_REQUEST,
            PatchError::Operation { .. } => StatusCode::UNPROCESSABLE_ENTITY,
        };
        let reason = if code == StatusCode::BAD_REQUEST {
            "BadRequest"
        } else {
            "Invalid"
        };
        Self::new(code, reason, err.to_string())
    }
}
