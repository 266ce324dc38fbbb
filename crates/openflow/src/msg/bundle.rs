//! Bundles (OpenFlow 1.4+): `OFPT_BUNDLE_CONTROL` opens, closes, commits or discards a bundle
//! of messages, and `OFPT_BUNDLE_ADD_MESSAGE` adds one whole message to it. With the atomic
//! flag, the switch applies all of a committed bundle's messages or none.

use bytes::Buf;

use crate::header::{HEADER_LEN, Header, OFP_VERSION_1_5, msg_type};
use crate::message::{MAX_MESSAGE_LEN, Message};
use crate::msg::property::{Property, emit_property, parse_properties};
use crate::{DecodeError, EncodeError};

/// `ofp_bundle_flags` bits.
pub mod bundle_flags {
    /// All messages are applied, or none.
    pub const ATOMIC: u16 = 1 << 0;
    /// Messages are applied in the order they were added.
    pub const ORDERED: u16 = 1 << 1;
    /// The commit is scheduled at a time given by a property.
    pub const TIME: u16 = 1 << 2;
}

/// Length of `ofp_bundle_add_msg` before the inner message, header included.
const BUNDLE_ADD_LEN: usize = HEADER_LEN + 8;
/// The longest message a bundle add can carry: the add message itself must fit in
/// [`MAX_MESSAGE_LEN`].
pub const MAX_BUNDLED_LEN: usize = MAX_MESSAGE_LEN - BUNDLE_ADD_LEN;

/// `ofp_bundle_ctrl_type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BundleCtrlType {
    OpenRequest,
    OpenReply,
    CloseRequest,
    CloseReply,
    CommitRequest,
    CommitReply,
    DiscardRequest,
    DiscardReply,
    /// A value OpenFlow 1.5 does not define.
    Other(u16),
}

impl BundleCtrlType {
    fn from_wire(v: u16) -> BundleCtrlType {
        use BundleCtrlType::*;
        match v {
            0 => OpenRequest,
            1 => OpenReply,
            2 => CloseRequest,
            3 => CloseReply,
            4 => CommitRequest,
            5 => CommitReply,
            6 => DiscardRequest,
            7 => DiscardReply,
            other => Other(other),
        }
    }

    fn to_wire(self) -> u16 {
        use BundleCtrlType::*;
        match self {
            OpenRequest => 0,
            OpenReply => 1,
            CloseRequest => 2,
            CloseReply => 3,
            CommitRequest => 4,
            CommitReply => 5,
            DiscardRequest => 6,
            DiscardReply => 7,
            Other(v) => v,
        }
    }

    /// The reply the switch sends to this request type, if it is a request.
    pub fn reply(self) -> Option<BundleCtrlType> {
        use BundleCtrlType::*;
        match self {
            OpenRequest => Some(OpenReply),
            CloseRequest => Some(CloseReply),
            CommitRequest => Some(CommitReply),
            DiscardRequest => Some(DiscardReply),
            _ => None,
        }
    }
}

/// `OFPT_BUNDLE_CONTROL` (`ofp_bundle_ctrl_msg`), request or reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundleControl {
    pub bundle_id: u32,
    pub ctrl_type: BundleCtrlType,
    /// [`bundle_flags`] bits.
    pub flags: u16,
    pub properties: Vec<Property>,
}

impl BundleControl {
    /// A control message without properties.
    pub fn new(bundle_id: u32, ctrl_type: BundleCtrlType, flags: u16) -> BundleControl {
        BundleControl {
            bundle_id,
            ctrl_type,
            flags,
            properties: Vec::new(),
        }
    }
}

impl Message for BundleControl {
    const TYPE: u8 = msg_type::BUNDLE_CONTROL;

    fn emit_body(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.bundle_id.to_be_bytes());
        out.extend_from_slice(&self.ctrl_type.to_wire().to_be_bytes());
        out.extend_from_slice(&self.flags.to_be_bytes());
        for p in &self.properties {
            emit_property(out, p.prop_type, &p.data);
        }
    }

    fn parse_body(body: &[u8]) -> Result<Self, DecodeError> {
        DecodeError::need("bundle control", body, 8)?;
        let mut b = body;
        let bundle_id = b.get_u32();
        let ctrl_type = BundleCtrlType::from_wire(b.get_u16());
        let flags = b.get_u16();
        let properties = parse_properties("bundle property", b)?;
        Ok(BundleControl {
            bundle_id,
            ctrl_type,
            flags,
            properties,
        })
    }
}

/// `OFPT_BUNDLE_ADD_MESSAGE`: one whole message (header included) added to a bundle.
///
/// The switch requires the add message's xid to equal the inner message's xid, so send it with
/// [`BundleAdd::xid`] (the connection does this).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundleAdd {
    pub bundle_id: u32,
    /// The same [`bundle_flags`] the bundle was opened with.
    pub flags: u16,
    message: Vec<u8>,
    pub properties: Vec<Property>,
}

impl BundleAdd {
    /// Wraps `message`, a whole encoded message such as `M::to_bytes(xid)`. Its header must be
    /// valid, its length must match, and it must leave room for the add message's own 16 bytes.
    pub fn new(bundle_id: u32, flags: u16, message: Vec<u8>) -> Result<BundleAdd, DecodeError> {
        let h = Header::parse(&message)?;
        if usize::from(h.length) != message.len()
            || message.len() > usize::from(u16::MAX) - BUNDLE_ADD_LEN
        {
            return Err(DecodeError::BadLength {
                what: "bundled message",
                len: message.len(),
            });
        }
        Ok(BundleAdd {
            bundle_id,
            flags,
            message,
            properties: Vec::new(),
        })
    }

    /// The inner message, header included.
    pub fn message(&self) -> &[u8] {
        &self.message
    }

    /// The inner message's xid: the one this add message must be sent with.
    pub fn xid(&self) -> u32 {
        Header::parse(&self.message).map(|h| h.xid).unwrap_or(0)
    }
}

impl Message for BundleAdd {
    const TYPE: u8 = msg_type::BUNDLE_ADD_MESSAGE;

    fn emit_body(&self, out: &mut Vec<u8>) {
        emit_add_fixed(self.bundle_id, self.flags, out);
        out.extend_from_slice(&self.message);
        if !self.properties.is_empty() {
            let len = self.message.len();
            out.resize(out.len() + len.next_multiple_of(8) - len, 0);
            for p in &self.properties {
                emit_property(out, p.prop_type, &p.data);
            }
        }
    }

    fn parse_body(body: &[u8]) -> Result<Self, DecodeError> {
        DecodeError::need("bundle add", body, 8 + HEADER_LEN)?;
        let mut b = body;
        let bundle_id = b.get_u32();
        b.advance(2);
        let flags = b.get_u16();
        let inner = Header::parse(b)?;
        let len = usize::from(inner.length);
        if len > b.len() {
            return Err(DecodeError::BadLength {
                what: "bundled message",
                len,
            });
        }
        let message = b[..len].to_vec();
        let rest = &b[len..];
        let padding = (len.next_multiple_of(8) - len).min(rest.len());
        let properties = parse_properties("bundle property", &rest[padding..])?;
        Ok(BundleAdd {
            bundle_id,
            flags,
            message,
            properties,
        })
    }
}

/// Appends the part of `ofp_bundle_add_msg` between the header and the inner message.
fn emit_add_fixed(bundle_id: u32, flags: u16, out: &mut Vec<u8>) {
    out.extend_from_slice(&bundle_id.to_be_bytes());
    out.extend_from_slice(&[0; 2]);
    out.extend_from_slice(&flags.to_be_bytes());
}

/// Appends a whole bundle add message (without properties) that wraps `inner`, a whole encoded
/// message, giving both the transaction id `xid`. The same bytes as
/// `BundleAdd::new(bundle_id, flags, inner)` sent with `xid`, without building the value: the
/// connection's bulk path.
pub fn emit_bundle_add(
    bundle_id: u32,
    flags: u16,
    inner: &[u8],
    xid: u32,
    out: &mut Vec<u8>,
) -> Result<(), EncodeError> {
    let len = BUNDLE_ADD_LEN + inner.len();
    let length = u16::try_from(len)
        .ok()
        .filter(|_| inner.len() >= HEADER_LEN)
        .ok_or(EncodeError {
            msg_type: msg_type::BUNDLE_ADD_MESSAGE,
            len,
            max: MAX_MESSAGE_LEN,
        })?;
    Header {
        version: OFP_VERSION_1_5,
        msg_type: msg_type::BUNDLE_ADD_MESSAGE,
        length,
        xid,
    }
    .emit(out);
    emit_add_fixed(bundle_id, flags, out);
    let start = out.len();
    out.extend_from_slice(inner);
    out[start + 4..start + HEADER_LEN].copy_from_slice(&xid.to_be_bytes());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::msg::barrier::BarrierRequest;
    use crate::msg::echo::EchoRequest;
    use proptest::prelude::*;

    #[test]
    fn bulk_bundle_add_matches_the_value() {
        let inner = EchoRequest {
            payload: vec![1, 2, 3],
        }
        .to_bytes(0)
        .unwrap();
        let mut out = vec![9];
        emit_bundle_add(4, bundle_flags::ATOMIC, &inner, 77, &mut out).unwrap();
        let mut with_xid = inner.clone();
        with_xid[4..8].copy_from_slice(&77u32.to_be_bytes());
        let add = BundleAdd::new(4, bundle_flags::ATOMIC, with_xid).unwrap();
        assert_eq!(out[1..], add.to_bytes(77).unwrap());
        let too_long = vec![0u8; MAX_MESSAGE_LEN - BUNDLE_ADD_LEN + 1];
        assert!(emit_bundle_add(4, 0, &too_long, 1, &mut out).is_err());
        assert!(emit_bundle_add(4, 0, &[0; 4], 1, &mut out).is_err());
        assert_eq!(
            out.len(),
            1 + add.to_bytes(77).unwrap().len(),
            "a refused add appends nothing"
        );
    }

    #[test]
    fn control_bytes() {
        let open = BundleControl::new(
            0x0102_0304,
            BundleCtrlType::OpenRequest,
            bundle_flags::ATOMIC | bundle_flags::ORDERED,
        );
        assert_eq!(
            open.to_bytes(9).unwrap(),
            [6, 33, 0, 16, 0, 0, 0, 9, 1, 2, 3, 4, 0, 0, 0, 3]
        );
        let commit = BundleControl::new(1, BundleCtrlType::CommitReply, 0);
        assert_eq!(commit.to_bytes(9).unwrap()[8..], [0, 0, 0, 1, 0, 5, 0, 0]);
        let with_prop = BundleControl {
            properties: vec![Property {
                prop_type: 0xffff,
                data: vec![1, 2, 3, 4],
            }],
            ..open.clone()
        };
        assert_eq!(
            with_prop.to_bytes(1).unwrap()[16..],
            [0xff, 0xff, 0, 8, 1, 2, 3, 4]
        );
        assert_eq!(
            BundleControl::parse(&with_prop.to_bytes(1).unwrap()),
            Ok((with_prop, 1))
        );
        assert!(matches!(
            BundleControl::parse_body(&[0; 7]),
            Err(DecodeError::Truncated { .. })
        ));
    }

    #[test]
    fn ctrl_type_replies() {
        assert_eq!(
            BundleCtrlType::CommitRequest.reply(),
            Some(BundleCtrlType::CommitReply)
        );
        assert_eq!(BundleCtrlType::CommitReply.reply(), None);
    }

    #[test]
    fn add_bytes() {
        let add = BundleAdd::new(
            7,
            bundle_flags::ATOMIC,
            BarrierRequest.to_bytes(0x55).unwrap(),
        )
        .unwrap();
        assert_eq!(add.xid(), 0x55);
        let bytes = add.to_bytes(add.xid()).unwrap();
        assert_eq!(
            bytes,
            [
                6, 34, 0, 24, 0, 0, 0, 0x55, 0, 0, 0, 7, 0, 0, 0, 1, 6, 20, 0, 8, 0, 0, 0, 0x55
            ]
        );
        assert_eq!(BundleAdd::parse(&bytes), Ok((add, 0x55)));
    }

    #[test]
    fn add_with_properties_pads_the_inner_message() {
        let mut add =
            BundleAdd::new(7, 0, EchoRequest { payload: vec![9] }.to_bytes(1).unwrap()).unwrap();
        add.properties.push(Property {
            prop_type: 1,
            data: vec![0xaa; 4],
        });
        let bytes = add.to_bytes(1).unwrap();
        assert_eq!(&bytes[16..25], [6, 2, 0, 9, 0, 0, 0, 1, 9]);
        assert_eq!(&bytes[25..32], [0; 7]);
        assert_eq!(&bytes[32..], [0, 1, 0, 8, 0xaa, 0xaa, 0xaa, 0xaa]);
        assert_eq!(BundleAdd::parse(&bytes), Ok((add, 1)));
    }

    #[test]
    fn add_rejects_bad_inner_messages() {
        assert!(BundleAdd::new(1, 0, vec![6, 20, 0, 8]).is_err());
        assert!(BundleAdd::new(1, 0, vec![6, 20, 0, 9, 0, 0, 0, 0]).is_err());
        let largest = EchoRequest {
            payload: vec![0; 65535 - 16 - 8],
        }
        .to_bytes(1)
        .unwrap();
        assert_eq!(
            BundleAdd::new(1, 0, largest.clone()).map(|a| a.to_bytes(1).unwrap().len()),
            Ok(65535)
        );
        let too_large = EchoRequest {
            payload: vec![0; 65535 - 16 - 7],
        }
        .to_bytes(1)
        .unwrap();
        assert!(matches!(
            BundleAdd::new(1, 0, too_large),
            Err(DecodeError::BadLength { len: 65520, .. })
        ));
        let mut bytes = BundleAdd::new(1, 0, BarrierRequest.to_bytes(2).unwrap())
            .unwrap()
            .to_bytes(2)
            .unwrap();
        bytes[19] = 9;
        assert!(matches!(
            BundleAdd::parse(&bytes),
            Err(DecodeError::BadLength {
                what: "bundled message",
                len: 9
            })
        ));
        bytes[19] = 7;
        assert!(matches!(
            BundleAdd::parse(&bytes),
            Err(DecodeError::BadLength {
                what: "ofp_header",
                ..
            })
        ));
    }

    proptest! {
        #[test]
        fn control_round_trip(bundle_id: u32, t in 0u16..10, flags: u16, xid: u32) {
            let c = BundleControl::new(bundle_id, BundleCtrlType::from_wire(t), flags);
            prop_assert_eq!(BundleControl::parse(&c.to_bytes(xid).unwrap()), Ok((c, xid)));
        }

        #[test]
        fn add_round_trip(bundle_id: u32, flags: u16, payload in proptest::collection::vec(any::<u8>(), 0..40), props in proptest::collection::vec((any::<u16>(), proptest::collection::vec(any::<u8>(), 0..12)), 0..3), xid: u32) {
            let mut add = BundleAdd::new(bundle_id, flags, EchoRequest { payload }.to_bytes(xid).unwrap()).unwrap();
            add.properties = props.into_iter().map(|(prop_type, data)| Property { prop_type, data }).collect();
            prop_assert_eq!(BundleAdd::parse(&add.to_bytes(xid).unwrap()), Ok((add, xid)));
        }

        #[test]
        fn parsers_never_panic(body in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = BundleAdd::parse_body(&body);
            let _ = BundleControl::parse_body(&body);
        }
    }
}
