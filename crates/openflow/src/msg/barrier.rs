//! `OFPT_BARRIER_REQUEST` and `OFPT_BARRIER_REPLY`: the switch answers a barrier only after it
//! has finished every message received before it (and sent their errors).

use crate::DecodeError;
use crate::header::msg_type;
use crate::message::Message;

/// `OFPT_BARRIER_REQUEST` (empty body).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BarrierRequest;

/// `OFPT_BARRIER_REPLY` (empty body).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BarrierReply;

fn expect_empty(what: &'static str, body: &[u8]) -> Result<(), DecodeError> {
    if body.is_empty() {
        Ok(())
    } else {
        Err(DecodeError::BadLength {
            what,
            len: body.len() + 8,
        })
    }
}

impl Message for BarrierRequest {
    const TYPE: u8 = msg_type::BARRIER_REQUEST;

    fn emit_body(&self, _out: &mut Vec<u8>) {}

    fn parse_body(body: &[u8]) -> Result<Self, DecodeError> {
        expect_empty("barrier request", body).map(|()| BarrierRequest)
    }
}

impl Message for BarrierReply {
    const TYPE: u8 = msg_type::BARRIER_REPLY;

    fn emit_body(&self, _out: &mut Vec<u8>) {}

    fn parse_body(body: &[u8]) -> Result<Self, DecodeError> {
        expect_empty("barrier reply", body).map(|()| BarrierReply)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_and_round_trip() {
        assert_eq!(
            BarrierRequest.to_bytes(7).unwrap(),
            [6, 20, 0, 8, 0, 0, 0, 7]
        );
        assert_eq!(BarrierReply.to_bytes(7).unwrap(), [6, 21, 0, 8, 0, 0, 0, 7]);
        assert_eq!(
            BarrierRequest::parse(&BarrierRequest.to_bytes(9).unwrap()),
            Ok((BarrierRequest, 9))
        );
        assert_eq!(
            BarrierReply::parse(&BarrierReply.to_bytes(9).unwrap()),
            Ok((BarrierReply, 9))
        );
    }

    #[test]
    fn rejects_a_body() {
        assert_eq!(
            BarrierReply::parse_body(&[0]),
            Err(DecodeError::BadLength {
                what: "barrier reply",
                len: 9
            })
        );
    }
}
