//! The JSON-RPC 1.0 wire format OVSDB speaks: concatenated JSON objects with no delimiter
//! ([`FrameDecoder`]) carrying requests, notifications and responses ([`Message`]).
//!
//! [`decode_messages`] drives both layers over a byte slice; it is the fuzzing entry point.

mod frame;
mod message;

pub use frame::{DEFAULT_MAX_MESSAGE_SIZE, FrameDecoder, FrameError};
pub use message::{Message, MessageError};

/// Why bytes from the peer are not a valid message stream.
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    /// The byte stream is not a sequence of JSON objects.
    #[error(transparent)]
    Frame(#[from] FrameError),
    /// A JSON object is not a JSON-RPC 1.0 message.
    #[error(transparent)]
    Message(#[from] MessageError),
}

/// Decodes every complete message in `bytes` (trailing incomplete bytes are ignored) with a
/// decoder limited to `max_message_size`. Stops at the first error.
pub fn decode_messages(bytes: &[u8], max_message_size: usize) -> Result<Vec<Message>, WireError> {
    let mut decoder = FrameDecoder::new(max_message_size);
    let mut buf = bytes::BytesMut::from(bytes);
    let mut out = Vec::new();
    while let Some(json) = decoder.decode(&mut buf)? {
        out.push(Message::parse(json)?);
    }
    Ok(out)
}
