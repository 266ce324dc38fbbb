//! [`AnyMessage`]: decodes any whole OpenFlow 1.5 message by its header type (and multipart
//! type) into the typed messages this crate has, and keeps the others as raw bodies. It is the
//! decoding entry point for whatever a switch sends, and the fuzz target for whole messages:
//! it returns a [`DecodeError`] for every malformed input and never panics.

use crate::header::{HEADER_LEN, Header, OFP_VERSION_1_5, msg_type};
use crate::message::Message;
use crate::msg::barrier::{BarrierReply, BarrierRequest};
use crate::msg::bundle::{BundleAdd, BundleControl};
use crate::msg::config::{GetConfigReply, GetConfigRequest, SetConfig};
use crate::msg::echo::{EchoReply, EchoRequest};
use crate::msg::error::ErrorMsg;
use crate::msg::features::{FeaturesReply, FeaturesRequest};
use crate::msg::hello::Hello;
use crate::msg::multipart::{self, mp_type};
use crate::msg::port::{PortDescReply, PortDescRequest, PortMod, PortStatus};
use crate::msg::role::{RoleReply, RoleRequest};
use crate::DecodeError;

/// The highest `ofp_type` OpenFlow 1.5 defines (`OFPT_CONTROLLER_STATUS`).
pub const MAX_MSG_TYPE: u8 = 35;

/// A decoded message of any type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AnyMessage {
    Hello(Hello),
    Error(ErrorMsg),
    EchoRequest(EchoRequest),
    EchoReply(EchoReply),
    FeaturesRequest(FeaturesRequest),
    FeaturesReply(FeaturesReply),
    GetConfigRequest(GetConfigRequest),
    GetConfigReply(GetConfigReply),
    SetConfig(SetConfig),
    PortStatus(PortStatus),
    PortMod(PortMod),
    PortDescRequest(PortDescRequest),
    PortDescReply(PortDescReply),
    BarrierRequest(BarrierRequest),
    BarrierReply(BarrierReply),
    RoleRequest(RoleRequest),
    RoleReply(RoleReply),
    BundleControl(BundleControl),
    BundleAdd(BundleAdd),
    /// A type OpenFlow 1.5 defines but this enum has no variant for (flow mods, packet-ins,
    /// experimenter messages, other multiparts, …): the body after the header, undecoded.
    Other { header: Header, body: Vec<u8> },
}

impl AnyMessage {
    /// Decodes the whole message at the start of `buf` (trailing bytes after the header's
    /// length are ignored) and returns it with its header.
    ///
    /// Fails for a short or inconsistent header, a version other than 1.5 (except for hello,
    /// which any version may send), a type OpenFlow 1.5 does not define, or a malformed body.
    pub fn parse(buf: &[u8]) -> Result<(Header, AnyMessage), DecodeError> {
        let header = Header::parse(buf)?;
        let len = usize::from(header.length);
        DecodeError::need("message", buf, len)?;
        let body = &buf[HEADER_LEN..len];
        if header.version != OFP_VERSION_1_5 && header.msg_type != msg_type::HELLO {
            return Err(DecodeError::Unsupported { what: "OpenFlow version", value: header.version.into() });
        }
        let msg = match header.msg_type {
            msg_type::HELLO => AnyMessage::Hello(Hello::parse_body(body)?),
            msg_type::ERROR => AnyMessage::Error(ErrorMsg::parse_body(body)?),
            msg_type::ECHO_REQUEST => AnyMessage::EchoRequest(EchoRequest::parse_body(body)?),
            msg_type::ECHO_REPLY => AnyMessage::EchoReply(EchoReply::parse_body(body)?),
            msg_type::FEATURES_REQUEST => AnyMessage::FeaturesRequest(FeaturesRequest::parse_body(body)?),
            msg_type::FEATURES_REPLY => AnyMessage::FeaturesReply(FeaturesReply::parse_body(body)?),
            msg_type::GET_CONFIG_REQUEST => AnyMessage::GetConfigRequest(GetConfigRequest::parse_body(body)?),
            msg_type::GET_CONFIG_REPLY => AnyMessage::GetConfigReply(GetConfigReply::parse_body(body)?),
            msg_type::SET_CONFIG => AnyMessage::SetConfig(SetConfig::parse_body(body)?),
            msg_type::PORT_STATUS => AnyMessage::PortStatus(PortStatus::parse_body(body)?),
            msg_type::PORT_MOD => AnyMessage::PortMod(PortMod::parse_body(body)?),
            msg_type::BARRIER_REQUEST => AnyMessage::BarrierRequest(BarrierRequest::parse_body(body)?),
            msg_type::BARRIER_REPLY => AnyMessage::BarrierReply(BarrierReply::parse_body(body)?),
            msg_type::ROLE_REQUEST => AnyMessage::RoleRequest(RoleRequest::parse_body(body)?),
            msg_type::ROLE_REPLY => AnyMessage::RoleReply(RoleReply::parse_body(body)?),
            msg_type::BUNDLE_CONTROL => AnyMessage::BundleControl(BundleControl::parse_body(body)?),
            msg_type::BUNDLE_ADD_MESSAGE => {
                let add = BundleAdd::parse_body(body)?;
                if add.xid() != header.xid {
                    return Err(DecodeError::Invalid {
                        what: "bundle add",
                        reason: format!("inner xid {:#x} differs from the add's xid {:#x}", add.xid(), header.xid),
                    });
                }
                AnyMessage::BundleAdd(add)
            }
            msg_type::MULTIPART_REQUEST | msg_type::MULTIPART_REPLY => {
                let (mp, _, _) = multipart::parse_header(body)?;
                match (header.msg_type, mp) {
                    (msg_type::MULTIPART_REQUEST, mp_type::PORT_DESC) => AnyMessage::PortDescRequest(PortDescRequest::parse_body(body)?),
                    (msg_type::MULTIPART_REPLY, mp_type::PORT_DESC) => AnyMessage::PortDescReply(PortDescReply::parse_body(body)?),
                    _ => AnyMessage::Other { header, body: body.to_vec() },
                }
            }
            t if t <= MAX_MSG_TYPE => AnyMessage::Other { header, body: body.to_vec() },
            t => return Err(DecodeError::Unsupported { what: "message type", value: t.into() }),
        };
        Ok((header, msg))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::msg::bundle::{BundleCtrlType, bundle_flags};
    use crate::msg::config::SwitchConfig;
    use crate::msg::port::{Port, PortReason};
    use proptest::prelude::*;

    fn decode<M: Message>(m: &M, xid: u32) -> AnyMessage {
        AnyMessage::parse(&m.to_bytes(xid)).map(|(h, msg)| {
            assert_eq!((h.msg_type, h.xid), (M::TYPE, xid));
            msg
        }).unwrap()
    }

    #[test]
    fn decodes_each_owned_type() {
        assert_eq!(decode(&Hello::of15(), 1), AnyMessage::Hello(Hello::of15()));
        assert_eq!(decode(&EchoRequest { payload: vec![1] }, 2), AnyMessage::EchoRequest(EchoRequest { payload: vec![1] }));
        assert_eq!(decode(&EchoReply::default(), 2), AnyMessage::EchoReply(EchoReply::default()));
        assert_eq!(decode(&FeaturesRequest, 3), AnyMessage::FeaturesRequest(FeaturesRequest));
        assert_eq!(decode(&FeaturesReply::default(), 3), AnyMessage::FeaturesReply(FeaturesReply::default()));
        let config = SwitchConfig { flags: 0, miss_send_len: 128 };
        assert_eq!(decode(&GetConfigRequest, 4), AnyMessage::GetConfigRequest(GetConfigRequest));
        assert_eq!(decode(&GetConfigReply(config), 4), AnyMessage::GetConfigReply(GetConfigReply(config)));
        assert_eq!(decode(&SetConfig(config), 4), AnyMessage::SetConfig(SetConfig(config)));
        assert_eq!(decode(&BarrierRequest, 5), AnyMessage::BarrierRequest(BarrierRequest));
        assert_eq!(decode(&BarrierReply, 5), AnyMessage::BarrierReply(BarrierReply));
        let port = Port { port_no: 1, hw_addr: [0; 6], name: "p".into(), config: 0, state: 0, properties: vec![] };
        let status = PortStatus { reason: PortReason::Add, port: port.clone() };
        assert_eq!(decode(&status, 6), AnyMessage::PortStatus(status));
        let desc = PortDescReply { flags: 0, ports: vec![port] };
        assert_eq!(decode(&desc, 6), AnyMessage::PortDescReply(desc));
        assert_eq!(decode(&PortDescRequest::default(), 6), AnyMessage::PortDescRequest(PortDescRequest::default()));
        let control = BundleControl::new(1, BundleCtrlType::OpenReply, bundle_flags::ATOMIC);
        assert_eq!(decode(&control, 7), AnyMessage::BundleControl(control));
        let add = BundleAdd::new(1, 0, BarrierRequest.to_bytes(8)).unwrap();
        assert_eq!(decode(&add, 8), AnyMessage::BundleAdd(add));
    }

    #[test]
    fn keeps_other_types_raw() {
        let flow_removed = [6, 11, 0, 10, 0, 0, 0, 1, 0xaa, 0xbb];
        let (h, msg) = AnyMessage::parse(&flow_removed).unwrap();
        assert_eq!(msg, AnyMessage::Other { header: h, body: vec![0xaa, 0xbb] });
        let flow_stats = [6, 19, 0, 16, 0, 0, 0, 1, 0, 17, 0, 0, 0, 0, 0, 0];
        assert!(matches!(AnyMessage::parse(&flow_stats), Ok((_, AnyMessage::Other { .. }))));
    }

    #[test]
    fn rejects_malformed_messages() {
        assert!(matches!(AnyMessage::parse(&[6, 2, 0, 7, 0, 0, 0, 0]), Err(DecodeError::BadLength { .. })));
        assert!(matches!(AnyMessage::parse(&[6, 2, 0, 9, 0, 0, 0, 0]), Err(DecodeError::Truncated { .. })));
        assert!(matches!(AnyMessage::parse(&[6, 36, 0, 8, 0, 0, 0, 0]), Err(DecodeError::Unsupported { what: "message type", value: 36 })));
        assert!(matches!(AnyMessage::parse(&[4, 2, 0, 8, 0, 0, 0, 0]), Err(DecodeError::Unsupported { what: "OpenFlow version", value: 4 })));
        assert!(matches!(AnyMessage::parse(&[4, 0, 0, 8, 0, 0, 0, 0]), Ok((_, AnyMessage::Hello(_)))));
        assert!(matches!(AnyMessage::parse(&[6, 6, 0, 8, 0, 0, 0, 0]), Err(DecodeError::Truncated { .. })));
        let add = BundleAdd::new(1, 0, BarrierRequest.to_bytes(8)).unwrap();
        assert!(matches!(AnyMessage::parse(&add.to_bytes(9)), Err(DecodeError::Invalid { what: "bundle add", .. })));
    }

    proptest! {
        #[test]
        fn never_panics(mut buf in proptest::collection::vec(any::<u8>(), 0..200), msg_type in 0u8..40) {
            if buf.len() >= 8 {
                buf[0] = 6;
                buf[1] = msg_type;
                let len = buf.len() as u16;
                buf[2..4].copy_from_slice(&len.to_be_bytes());
            }
            let _ = AnyMessage::parse(&buf);
        }
    }
}
