//! Why the agent API could not be set up.

use std::path::PathBuf;

/// A failure before the API serves its first request.
#[derive(Debug, thiserror::Error)]
pub enum ApiSetupError {
    #[error("{what}: {reason}")]
    Certificate { what: String, reason: String },
    #[error("writing the local access file {}: {source}", path.display())]
    LocalAccess {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the system's random number generator failed")]
    Random,
}
