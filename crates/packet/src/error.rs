//! [`PacketError`]: why bytes are not a packet this crate can read or answer.

use std::fmt;

/// Why a frame could not be read, or cannot be answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PacketError {
    /// Fewer bytes than the header needs.
    Truncated {
        header: &'static str,
        need: usize,
        have: usize,
    },
    /// A header field holds a value the header cannot have.
    Invalid {
        header: &'static str,
        reason: String,
    },
    /// A well-formed packet of a kind this crate does not handle (not IPv4, a fragment, …).
    Unsupported(String),
}

impl fmt::Display for PacketError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PacketError::Truncated { header, need, have } => {
                write!(f, "{header}: {have} bytes where {need} are needed")
            }
            PacketError::Invalid { header, reason } => write!(f, "{header}: {reason}"),
            PacketError::Unsupported(what) => write!(f, "unsupported packet: {what}"),
        }
    }
}

impl std::error::Error for PacketError {}

/// `Ok` when `buf` holds at least `need` bytes for `header`.
pub(crate) fn need(header: &'static str, buf: &[u8], need: usize) -> Result<(), PacketError> {
    if buf.len() < need {
        return Err(PacketError::Truncated {
            header,
            need,
            have: buf.len(),
        });
    }
    Ok(())
}
