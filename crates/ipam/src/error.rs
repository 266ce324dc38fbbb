//! Errors of configuration, allocation and the disk store; messages follow host-local's.

use std::io;
use std::path::PathBuf;

/// Why an IPAM operation failed.
#[derive(Debug, thiserror::Error)]
pub enum IpamError {
    /// The IPAM configuration is invalid (message as host-local words it).
    #[error("{0}")]
    Config(String),
    /// Every address of a range set is taken.
    #[error(
        "failed to allocate for range {index}: no IP addresses available in range set: {ranges}"
    )]
    Exhausted {
        /// The range set's index in `ranges`.
        index: usize,
        /// The range set, `start-end[,start-end…]`.
        ranges: String,
    },
    /// A store file or directory could not be used.
    #[error("{action} {path}: {source}")]
    Io {
        /// What was being done.
        action: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The failure.
        source: io::Error,
    },
}

impl IpamError {
    pub(crate) fn config(message: impl Into<String>) -> IpamError {
        IpamError::Config(message.into())
    }

    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(io::Error) -> IpamError {
        let path = path.into();
        move |source| IpamError::Io {
            action,
            path,
            source,
        }
    }
}
