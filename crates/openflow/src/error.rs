//! The crate's error types: one for bytes that do not decode, one for a message that cannot be
//! encoded, one for text that does not parse.

/// Malformed OpenFlow bytes. Every decoder returns this instead of panicking.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// Fewer bytes than the structure needs.
    #[error("truncated {what}: need {need} bytes, have {have}")]
    Truncated {
        what: &'static str,
        need: usize,
        have: usize,
    },
    /// A length field that is too small, too large or not aligned.
    #[error("bad length {len} in {what}")]
    BadLength { what: &'static str, len: usize },
    /// A well-formed value this codec does not implement (unknown type, field, action, …).
    #[error("unsupported {what} {value:#x}")]
    Unsupported { what: &'static str, value: u64 },
    /// A value that breaks the protocol's rules.
    #[error("invalid {what}: {reason}")]
    Invalid { what: &'static str, reason: String },
}

impl DecodeError {
    /// Checks that `buf` holds at least `need` bytes for `what`.
    pub fn need(what: &'static str, buf: &[u8], need: usize) -> Result<(), DecodeError> {
        if buf.len() < need {
            Err(DecodeError::Truncated {
                what,
                need,
                have: buf.len(),
            })
        } else {
            Ok(())
        }
    }
}

/// A message that cannot be encoded: OpenFlow's 16-bit length field limits a whole message
/// (header included) to 65535 bytes, which a group with many buckets or a long learn action can
/// exceed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "OpenFlow message of type {msg_type} would be {len} bytes, more than the {max} a message can carry"
)]
pub struct EncodeError {
    /// The `ofp_type` of the message.
    pub msg_type: u8,
    /// Its encoded length, header included.
    pub len: usize,
    /// The largest length allowed.
    pub max: usize,
}

/// Text in `ovs-ofctl` syntax that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot parse {input:?}: {reason}")]
pub struct TextError {
    /// The fragment that failed.
    pub input: String,
    /// What is wrong with it.
    pub reason: String,
}

impl TextError {
    /// An error about `input`.
    pub fn new(input: impl Into<String>, reason: impl Into<String>) -> TextError {
        TextError {
            input: input.into(),
            reason: reason.into(),
        }
    }
}
