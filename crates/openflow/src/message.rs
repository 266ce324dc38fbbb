//! The [`Message`] trait every OpenFlow message type implements, and whole-message framing
//! (header + body) built on it.

use crate::header::{HEADER_LEN, Header, OFP_VERSION_1_5};
use crate::DecodeError;

/// An OpenFlow message body that knows its `ofp_type`.
///
/// Experimenter messages (Nicira, ONF) have `TYPE == msg_type::EXPERIMENTER` and write their
/// experimenter id and subtype at the start of the body themselves. Multipart requests and
/// replies write the multipart header at the start of the body likewise.
pub trait Message: Sized {
    /// The `ofp_type` of this message.
    const TYPE: u8;

    /// Appends the body (everything after the 8-byte header) to `out`.
    fn emit_body(&self, out: &mut Vec<u8>);

    /// Decodes the body (everything after the 8-byte header).
    fn parse_body(body: &[u8]) -> Result<Self, DecodeError>;

    /// Appends the whole message, header included, with transaction id `xid`.
    fn emit(&self, xid: u32, out: &mut Vec<u8>) {
        let start = out.len();
        Header { version: OFP_VERSION_1_5, msg_type: Self::TYPE, length: 0, xid }.emit(out);
        self.emit_body(out);
        let len = u16::try_from(out.len() - start).expect("OpenFlow message longer than 65535 bytes");
        out[start + 2..start + 4].copy_from_slice(&len.to_be_bytes());
    }

    /// The whole message as a new buffer.
    fn to_bytes(&self, xid: u32) -> Vec<u8> {
        let mut out = Vec::new();
        self.emit(xid, &mut out);
        out
    }

    /// Decodes a whole message, checking its type and length; returns it with its xid.
    fn parse(buf: &[u8]) -> Result<(Self, u32), DecodeError> {
        let h = Header::parse(buf)?;
        if h.msg_type != Self::TYPE {
            return Err(DecodeError::Invalid { what: "ofp_header", reason: format!("type {} where {} was expected", h.msg_type, Self::TYPE) });
        }
        let len = h.length as usize;
        DecodeError::need("message", buf, len)?;
        Ok((Self::parse_body(&buf[HEADER_LEN..len])?, h.xid))
    }
}
