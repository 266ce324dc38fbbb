//! Errors of store operations; each maps to one Kubernetes `Status` reason and HTTP code.

/// Why a request or control-hook operation on the fake failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The object does not exist (404 NotFound).
    #[error("{kind} {name:?} not found")]
    NotFound {
        /// Plural resource name.
        kind: String,
        /// Object name.
        name: String,
    },
    /// An object with that name exists already (409 AlreadyExists).
    #[error("{kind} {name:?} already exists")]
    AlreadyExists {
        /// Plural resource name.
        kind: String,
        /// Object name.
        name: String,
    },
    /// A resourceVersion precondition failed (409 Conflict).
    #[error("operation on {kind} {name:?} conflicts: {reason}")]
    Conflict {
        /// Plural resource name.
        kind: String,
        /// Object name.
        name: String,
        /// What the precondition expected.
        reason: String,
    },
    /// The object is not acceptable (422 Invalid).
    #[error("{kind} {name:?} is invalid: {reason}")]
    Invalid {
        /// Plural resource name.
        kind: String,
        /// Object name.
        name: String,
        /// What is wrong.
        reason: String,
    },
    /// The request itself is malformed (400 BadRequest).
    #[error("bad request: {0}")]
    BadRequest(String),
    /// The group/version/resource is not served (404 NotFound).
    #[error("the server could not find the requested resource {0:?}")]
    UnknownResource(String),
    /// A continue token or resourceVersion refers to compacted history (410 Expired).
    #[error("resource version {requested} is too old (oldest retained {oldest})")]
    Expired {
        /// The version asked for.
        requested: u64,
        /// The oldest version the history still covers.
        oldest: u64,
    },
    /// A PATCH body could not be applied (400 BadRequest or 422 Invalid).
    #[error(transparent)]
    Patch(#[from] crate::patch::PatchError),
    /// A JSON value could not be converted to or from a typed object.
    #[error("object does not convert: {0}")]
    Convert(#[from] serde_json::Error),
}
