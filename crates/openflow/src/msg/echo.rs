//! `OFPT_ECHO_REQUEST` and `OFPT_ECHO_REPLY`: liveness probes carrying an opaque payload that
//! the reply echoes back.

use crate::DecodeError;
use crate::header::msg_type;
use crate::message::Message;

/// `OFPT_ECHO_REQUEST`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EchoRequest {
    pub payload: Vec<u8>,
}

/// `OFPT_ECHO_REPLY`, carrying the request's payload.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EchoReply {
    pub payload: Vec<u8>,
}

impl Message for EchoRequest {
    const TYPE: u8 = msg_type::ECHO_REQUEST;

    fn emit_body(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.payload);
    }

    fn parse_body(body: &[u8]) -> Result<Self, DecodeError> {
        Ok(EchoRequest {
            payload: body.to_vec(),
        })
    }
}

impl Message for EchoReply {
    const TYPE: u8 = msg_type::ECHO_REPLY;

    fn emit_body(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.payload);
    }

    fn parse_body(body: &[u8]) -> Result<Self, DecodeError> {
        Ok(EchoReply {
            payload: body.to_vec(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn bytes() {
        assert_eq!(
            EchoRequest { payload: vec![] }.to_bytes(1).unwrap(),
            [6, 2, 0, 8, 0, 0, 0, 1]
        );
        assert_eq!(
            EchoReply {
                payload: vec![0xab, 0xcd]
            }
            .to_bytes(2)
            .unwrap(),
            [6, 3, 0, 10, 0, 0, 0, 2, 0xab, 0xcd]
        );
    }

    #[test]
    fn type_is_checked() {
        let request = EchoRequest::default().to_bytes(1).unwrap();
        assert!(matches!(
            EchoReply::parse(&request),
            Err(DecodeError::Invalid { .. })
        ));
    }

    proptest! {
        #[test]
        fn round_trip(payload in proptest::collection::vec(any::<u8>(), 0..64), xid: u32) {
            let request = EchoRequest { payload: payload.clone() };
            prop_assert_eq!(EchoRequest::parse(&request.to_bytes(xid).unwrap()), Ok((request, xid)));
            let reply = EchoReply { payload };
            prop_assert_eq!(EchoReply::parse(&reply.to_bytes(xid).unwrap()), Ok((reply, xid)));
        }
    }
}
