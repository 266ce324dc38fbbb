//! The [`Message`] trait every OpenFlow message type implements, and whole-message framing
//! (header + body) built on it.

use crate::header::{HEADER_LEN, Header, OFP_VERSION_1_5};
use crate::{DecodeError, EncodeError};

/// The largest whole message: the header's length field is 16 bits.
pub const MAX_MESSAGE_LEN: usize = u16::MAX as usize;

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

    /// Appends the whole message, header included, with transaction id `xid`. A message longer
    /// than [`MAX_MESSAGE_LEN`] is an [`EncodeError`] and leaves `out` as it was.
    fn emit(&self, xid: u32, out: &mut Vec<u8>) -> Result<(), EncodeError> {
        let start = out.len();
        Header {
            version: OFP_VERSION_1_5,
            msg_type: Self::TYPE,
            length: 0,
            xid,
        }
        .emit(out);
        self.emit_body(out);
        let len = out.len() - start;
        match u16::try_from(len) {
            Ok(len16) => {
                out[start + 2..start + 4].copy_from_slice(&len16.to_be_bytes());
                Ok(())
            }
            Err(_) => {
                out.truncate(start);
                Err(EncodeError {
                    msg_type: Self::TYPE,
                    len,
                    max: MAX_MESSAGE_LEN,
                })
            }
        }
    }

    /// The whole message as a new buffer.
    fn to_bytes(&self, xid: u32) -> Result<Vec<u8>, EncodeError> {
        let mut out = Vec::new();
        self.emit(xid, &mut out)?;
        Ok(out)
    }

    /// Decodes a whole message, checking its type and length; returns it with its xid.
    fn parse(buf: &[u8]) -> Result<(Self, u32), DecodeError> {
        let h = Header::parse(buf)?;
        if h.msg_type != Self::TYPE {
            return Err(DecodeError::Invalid {
                what: "ofp_header",
                reason: format!("type {} where {} was expected", h.msg_type, Self::TYPE),
            });
        }
        let len = h.length as usize;
        DecodeError::need("message", buf, len)?;
        Ok((Self::parse_body(&buf[HEADER_LEN..len])?, h.xid))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::msg::echo::EchoRequest;

    #[test]
    fn emit_refuses_messages_over_65535_bytes() {
        let mut out = vec![1, 2, 3];
        let fits = EchoRequest {
            payload: vec![0; MAX_MESSAGE_LEN - HEADER_LEN],
        };
        fits.emit(7, &mut out).unwrap();
        assert_eq!(out.len(), 3 + MAX_MESSAGE_LEN);
        assert_eq!(&out[3..7], [6, 2, 0xff, 0xff]);
        let mut out = vec![1, 2, 3];
        let too_big = EchoRequest {
            payload: vec![0; MAX_MESSAGE_LEN - HEADER_LEN + 1],
        };
        let err = too_big.emit(7, &mut out).unwrap_err();
        assert_eq!(
            err,
            EncodeError {
                msg_type: 2,
                len: MAX_MESSAGE_LEN + 1,
                max: MAX_MESSAGE_LEN
            }
        );
        assert_eq!(out, [1, 2, 3], "a refused message leaves nothing behind");
        assert!(too_big.to_bytes(1).is_err());
        assert!(err.to_string().contains("65536"), "{err}");
    }
}
