//! [`AnyMessage`]: decodes any whole OpenFlow 1.5 message by its header type (and multipart or
//! experimenter type) into the typed messages this crate has, and keeps the others as raw
//! bodies. It is the decoding entry point for whatever a switch sends, and the fuzz target for
//! whole messages: it returns a [`DecodeError`] for every malformed input and never panics.
//!
//! Flow, group, meter and packet messages carry matches, actions and meter bands from an
//! open-ended set (a flow installed by another controller may use an action this codec lacks, a
//! meter an experimenter band). A body of those types
//! that does not decode is therefore not an error of the message stream: it comes back as
//! [`AnyMessage::Undecoded`] with the reason, and whoever asked for it decides.

use crate::header::{HEADER_LEN, Header, OFP_VERSION_1_5, msg_type};
use crate::message::Message;
use crate::msg::barrier::{BarrierReply, BarrierRequest};
use crate::msg::bundle::{BundleAdd, BundleControl};
use crate::msg::config::{GetConfigReply, GetConfigRequest, SetConfig};
use crate::msg::ct_flush::{self, CtFlush};
use crate::msg::echo::{EchoReply, EchoRequest};
use crate::msg::error::ErrorMsg;
use crate::msg::features::{FeaturesReply, FeaturesRequest};
use crate::msg::flow_mod::FlowMod;
use crate::msg::flow_stats::{FlowDescReply, FlowDescRequest};
use crate::msg::group_mod::{GroupDescReply, GroupDescRequest, GroupMod};
use crate::msg::hello::Hello;
use crate::msg::meter_features::{MeterFeatures, MeterFeaturesRequest};
use crate::msg::meter_mod::{MeterDescReply, MeterDescRequest, MeterMod};
use crate::msg::multipart::{self, mp_type};
use crate::msg::packet_in::{self, PacketIn, PacketIn2, SetPacketInFormat};
use crate::msg::packet_out::PacketOut;
use crate::msg::port::{PortDescReply, PortDescRequest, PortMod, PortStatus};
use crate::msg::role::{RoleReply, RoleRequest};
use crate::{DecodeError, EncodeError};

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
    FlowMod(FlowMod),
    GroupMod(GroupMod),
    MeterMod(MeterMod),
    PacketIn(PacketIn),
    /// `NXT_PACKET_IN2` (experimenter `0x2320`, subtype 30).
    PacketIn2(PacketIn2),
    /// `NXT_SET_PACKET_IN_FORMAT` (experimenter `0x2320`, subtype 16).
    SetPacketInFormat(SetPacketInFormat),
    /// `NXT_CT_FLUSH` (experimenter `0x2320`, subtype 32).
    CtFlush(CtFlush),
    PacketOut(PacketOut),
    FlowDescRequest(FlowDescRequest),
    FlowDescReply(FlowDescReply),
    GroupDescRequest(GroupDescRequest),
    GroupDescReply(GroupDescReply),
    MeterDescRequest(MeterDescRequest),
    MeterDescReply(MeterDescReply),
    MeterFeaturesRequest(MeterFeaturesRequest),
    MeterFeaturesReply(MeterFeatures),
    /// A flow, group, meter or packet message (see the module doc) whose body this codec cannot
    /// decode: the body after the header, and why.
    Undecoded {
        header: Header,
        body: Vec<u8>,
        error: DecodeError,
    },
    /// A type OpenFlow 1.5 defines but this enum has no variant for (flow removed, other
    /// experimenter messages, other multiparts, …): the body after the header, undecoded.
    Other {
        header: Header,
        body: Vec<u8>,
    },
}

/// Decodes a flow, group, meter or packet message body as `M`, or keeps it as
/// [`AnyMessage::Undecoded`].
fn lenient<M: Message>(header: Header, body: &[u8], wrap: fn(M) -> AnyMessage) -> AnyMessage {
    match M::parse_body(body) {
        Ok(m) => wrap(m),
        Err(error) => AnyMessage::Undecoded {
            header,
            body: body.to_vec(),
            error,
        },
    }
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
            return Err(DecodeError::Unsupported {
                what: "OpenFlow version",
                value: header.version.into(),
            });
        }
        let msg = match header.msg_type {
            msg_type::HELLO => AnyMessage::Hello(Hello::parse_body(body)?),
            msg_type::ERROR => AnyMessage::Error(ErrorMsg::parse_body(body)?),
            msg_type::ECHO_REQUEST => AnyMessage::EchoRequest(EchoRequest::parse_body(body)?),
            msg_type::ECHO_REPLY => AnyMessage::EchoReply(EchoReply::parse_body(body)?),
            msg_type::FEATURES_REQUEST => {
                AnyMessage::FeaturesRequest(FeaturesRequest::parse_body(body)?)
            }
            msg_type::FEATURES_REPLY => AnyMessage::FeaturesReply(FeaturesReply::parse_body(body)?),
            msg_type::GET_CONFIG_REQUEST => {
                AnyMessage::GetConfigRequest(GetConfigRequest::parse_body(body)?)
            }
            msg_type::GET_CONFIG_REPLY => {
                AnyMessage::GetConfigReply(GetConfigReply::parse_body(body)?)
            }
            msg_type::SET_CONFIG => AnyMessage::SetConfig(SetConfig::parse_body(body)?),
            msg_type::PORT_STATUS => AnyMessage::PortStatus(PortStatus::parse_body(body)?),
            msg_type::PORT_MOD => AnyMessage::PortMod(PortMod::parse_body(body)?),
            msg_type::BARRIER_REQUEST => {
                AnyMessage::BarrierRequest(BarrierRequest::parse_body(body)?)
            }
            msg_type::BARRIER_REPLY => AnyMessage::BarrierReply(BarrierReply::parse_body(body)?),
            msg_type::ROLE_REQUEST => AnyMessage::RoleRequest(RoleRequest::parse_body(body)?),
            msg_type::ROLE_REPLY => AnyMessage::RoleReply(RoleReply::parse_body(body)?),
            msg_type::BUNDLE_CONTROL => AnyMessage::BundleControl(BundleControl::parse_body(body)?),
            msg_type::BUNDLE_ADD_MESSAGE => {
                let add = BundleAdd::parse_body(body)?;
                if add.xid() != header.xid {
                    return Err(DecodeError::Invalid {
                        what: "bundle add",
                        reason: format!(
                            "inner xid {:#x} differs from the add's xid {:#x}",
                            add.xid(),
                            header.xid
                        ),
                    });
                }
                AnyMessage::BundleAdd(add)
            }
            msg_type::FLOW_MOD => lenient(header, body, AnyMessage::FlowMod),
            msg_type::GROUP_MOD => lenient(header, body, AnyMessage::GroupMod),
            msg_type::METER_MOD => lenient(header, body, AnyMessage::MeterMod),
            msg_type::PACKET_IN => lenient(header, body, AnyMessage::PacketIn),
            msg_type::PACKET_OUT => lenient(header, body, AnyMessage::PacketOut),
            msg_type::EXPERIMENTER => match packet_in::nicira_subtype(body) {
                Some(packet_in::NXT_PACKET_IN2) => lenient(header, body, AnyMessage::PacketIn2),
                Some(packet_in::NXT_SET_PACKET_IN_FORMAT) => {
                    AnyMessage::SetPacketInFormat(SetPacketInFormat::parse_body(body)?)
                }
                Some(ct_flush::NXT_CT_FLUSH) => AnyMessage::CtFlush(CtFlush::parse_body(body)?),
                _ => AnyMessage::Other {
                    header,
                    body: body.to_vec(),
                },
            },
            msg_type::MULTIPART_REQUEST | msg_type::MULTIPART_REPLY => {
                let (mp, _, _) = multipart::parse_header(body)?;
                match (header.msg_type, mp) {
                    (msg_type::MULTIPART_REQUEST, mp_type::PORT_DESC) => {
                        AnyMessage::PortDescRequest(PortDescRequest::parse_body(body)?)
                    }
                    (msg_type::MULTIPART_REPLY, mp_type::PORT_DESC) => {
                        AnyMessage::PortDescReply(PortDescReply::parse_body(body)?)
                    }
                    (msg_type::MULTIPART_REQUEST, mp_type::FLOW_DESC) => {
                        lenient(header, body, AnyMessage::FlowDescRequest)
                    }
                    (msg_type::MULTIPART_REPLY, mp_type::FLOW_DESC) => {
                        lenient(header, body, AnyMessage::FlowDescReply)
                    }
                    (msg_type::MULTIPART_REQUEST, mp_type::GROUP_DESC) => {
                        lenient(header, body, AnyMessage::GroupDescRequest)
                    }
                    (msg_type::MULTIPART_REPLY, mp_type::GROUP_DESC) => {
                        lenient(header, body, AnyMessage::GroupDescReply)
                    }
                    (msg_type::MULTIPART_REQUEST, mp_type::METER_DESC) => {
                        lenient(header, body, AnyMessage::MeterDescRequest)
                    }
                    (msg_type::MULTIPART_REPLY, mp_type::METER_DESC) => {
                        lenient(header, body, AnyMessage::MeterDescReply)
                    }
                    (msg_type::MULTIPART_REQUEST, mp_type::METER_FEATURES) => {
                        AnyMessage::MeterFeaturesRequest(MeterFeaturesRequest::parse_body(body)?)
                    }
                    (msg_type::MULTIPART_REPLY, mp_type::METER_FEATURES) => {
                        AnyMessage::MeterFeaturesReply(MeterFeatures::parse_body(body)?)
                    }
                    _ => AnyMessage::Other {
                        header,
                        body: body.to_vec(),
                    },
                }
            }
            t if t <= MAX_MSG_TYPE => AnyMessage::Other {
                header,
                body: body.to_vec(),
            },
            t => {
                return Err(DecodeError::Unsupported {
                    what: "message type",
                    value: t.into(),
                });
            }
        };
        Ok((header, msg))
    }

    /// Appends the whole message with transaction id `xid`. For [`AnyMessage::Other`] and
    /// [`AnyMessage::Undecoded`] that is the kept header type and body.
    pub fn emit(&self, xid: u32, out: &mut Vec<u8>) -> Result<(), EncodeError> {
        match self {
            AnyMessage::Hello(m) => m.emit(xid, out),
            AnyMessage::Error(m) => m.emit(xid, out),
            AnyMessage::EchoRequest(m) => m.emit(xid, out),
            AnyMessage::EchoReply(m) => m.emit(xid, out),
            AnyMessage::FeaturesRequest(m) => m.emit(xid, out),
            AnyMessage::FeaturesReply(m) => m.emit(xid, out),
            AnyMessage::GetConfigRequest(m) => m.emit(xid, out),
            AnyMessage::GetConfigReply(m) => m.emit(xid, out),
            AnyMessage::SetConfig(m) => m.emit(xid, out),
            AnyMessage::PortStatus(m) => m.emit(xid, out),
            AnyMessage::PortMod(m) => m.emit(xid, out),
            AnyMessage::PortDescRequest(m) => m.emit(xid, out),
            AnyMessage::PortDescReply(m) => m.emit(xid, out),
            AnyMessage::BarrierRequest(m) => m.emit(xid, out),
            AnyMessage::BarrierReply(m) => m.emit(xid, out),
            AnyMessage::RoleRequest(m) => m.emit(xid, out),
            AnyMessage::RoleReply(m) => m.emit(xid, out),
            AnyMessage::BundleControl(m) => m.emit(xid, out),
            AnyMessage::BundleAdd(m) => m.emit(xid, out),
            AnyMessage::FlowMod(m) => m.emit(xid, out),
            AnyMessage::GroupMod(m) => m.emit(xid, out),
            AnyMessage::MeterMod(m) => m.emit(xid, out),
            AnyMessage::PacketIn(m) => m.emit(xid, out),
            AnyMessage::PacketIn2(m) => m.emit(xid, out),
            AnyMessage::SetPacketInFormat(m) => m.emit(xid, out),
            AnyMessage::CtFlush(m) => m.emit(xid, out),
            AnyMessage::PacketOut(m) => m.emit(xid, out),
            AnyMessage::FlowDescRequest(m) => m.emit(xid, out),
            AnyMessage::FlowDescReply(m) => m.emit(xid, out),
            AnyMessage::GroupDescRequest(m) => m.emit(xid, out),
            AnyMessage::GroupDescReply(m) => m.emit(xid, out),
            AnyMessage::MeterDescRequest(m) => m.emit(xid, out),
            AnyMessage::MeterDescReply(m) => m.emit(xid, out),
            AnyMessage::MeterFeaturesRequest(m) => m.emit(xid, out),
            AnyMessage::MeterFeaturesReply(m) => m.emit(xid, out),
            AnyMessage::Undecoded { header, body, .. } | AnyMessage::Other { header, body } => {
                let len = HEADER_LEN + body.len();
                let length = u16::try_from(len).map_err(|_| EncodeError {
                    msg_type: header.msg_type,
                    len,
                    max: usize::from(u16::MAX),
                })?;
                Header {
                    length,
                    xid,
                    ..*header
                }
                .emit(out);
                out.extend_from_slice(body);
                Ok(())
            }
        }
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
        AnyMessage::parse(&m.to_bytes(xid).unwrap())
            .map(|(h, msg)| {
                assert_eq!((h.msg_type, h.xid), (M::TYPE, xid));
                msg
            })
            .unwrap()
    }

    #[test]
    fn decodes_each_owned_type() {
        assert_eq!(decode(&Hello::of15(), 1), AnyMessage::Hello(Hello::of15()));
        assert_eq!(
            decode(&EchoRequest { payload: vec![1] }, 2),
            AnyMessage::EchoRequest(EchoRequest { payload: vec![1] })
        );
        assert_eq!(
            decode(&EchoReply::default(), 2),
            AnyMessage::EchoReply(EchoReply::default())
        );
        assert_eq!(
            decode(&FeaturesRequest, 3),
            AnyMessage::FeaturesRequest(FeaturesRequest)
        );
        assert_eq!(
            decode(&FeaturesReply::default(), 3),
            AnyMessage::FeaturesReply(FeaturesReply::default())
        );
        let config = SwitchConfig {
            flags: 0,
            miss_send_len: 128,
        };
        assert_eq!(
            decode(&GetConfigRequest, 4),
            AnyMessage::GetConfigRequest(GetConfigRequest)
        );
        assert_eq!(
            decode(&GetConfigReply(config), 4),
            AnyMessage::GetConfigReply(GetConfigReply(config))
        );
        assert_eq!(
            decode(&SetConfig(config), 4),
            AnyMessage::SetConfig(SetConfig(config))
        );
        assert_eq!(
            decode(&BarrierRequest, 5),
            AnyMessage::BarrierRequest(BarrierRequest)
        );
        assert_eq!(
            decode(&BarrierReply, 5),
            AnyMessage::BarrierReply(BarrierReply)
        );
        let port = Port {
            port_no: 1,
            hw_addr: [0; 6],
            name: "p".into(),
            config: 0,
            state: 0,
            properties: vec![],
        };
        let status = PortStatus {
            reason: PortReason::Add,
            port: port.clone(),
        };
        assert_eq!(decode(&status, 6), AnyMessage::PortStatus(status));
        let desc = PortDescReply {
            flags: 0,
            ports: vec![port],
        };
        assert_eq!(decode(&desc, 6), AnyMessage::PortDescReply(desc));
        assert_eq!(
            decode(&PortDescRequest::default(), 6),
            AnyMessage::PortDescRequest(PortDescRequest::default())
        );
        let control = BundleControl::new(1, BundleCtrlType::OpenReply, bundle_flags::ATOMIC);
        assert_eq!(decode(&control, 7), AnyMessage::BundleControl(control));
        let add = BundleAdd::new(1, 0, BarrierRequest.to_bytes(8).unwrap()).unwrap();
        assert_eq!(decode(&add, 8), AnyMessage::BundleAdd(add));
    }

    #[test]
    fn keeps_other_types_raw() {
        let flow_removed = [6, 11, 0, 10, 0, 0, 0, 1, 0xaa, 0xbb];
        let (h, msg) = AnyMessage::parse(&flow_removed).unwrap();
        assert_eq!(
            msg,
            AnyMessage::Other {
                header: h,
                body: vec![0xaa, 0xbb]
            }
        );
        let flow_stats = [6, 19, 0, 16, 0, 0, 0, 1, 0, 17, 0, 0, 0, 0, 0, 0];
        assert!(matches!(
            AnyMessage::parse(&flow_stats),
            Ok((_, AnyMessage::Other { .. }))
        ));
        let nx_resume = [6, 4, 0, 16, 0, 0, 0, 1, 0, 0, 0x23, 0x20, 0, 0, 0, 28];
        assert!(matches!(
            AnyMessage::parse(&nx_resume),
            Ok((_, AnyMessage::Other { .. }))
        ));
        let (_, msg) = AnyMessage::parse(&flow_removed).unwrap();
        let mut out = Vec::new();
        msg.emit(1, &mut out).unwrap();
        assert_eq!(out, flow_removed);
    }

    #[test]
    fn decodes_flow_group_and_packet_messages() {
        let flow: FlowMod = "table=3,priority=10,ip actions=output:1".parse().unwrap();
        assert_eq!(decode(&flow, 1), AnyMessage::FlowMod(flow.clone()));
        let group: GroupMod = "group_id=1,type=all,bucket=bucket_id:0,actions=output:1"
            .parse()
            .unwrap();
        assert_eq!(decode(&group, 1), AnyMessage::GroupMod(group.clone()));
        let meter: MeterMod = "meter=3 kbps bands=type=drop rate=100".parse().unwrap();
        assert_eq!(decode(&meter, 1), AnyMessage::MeterMod(meter.clone()));
        let request = MeterDescRequest { meter_id: 3 };
        assert_eq!(decode(&request, 1), AnyMessage::MeterDescRequest(request));
        let reply = MeterDescReply {
            more: false,
            meters: vec![meter.meter],
        };
        assert_eq!(decode(&reply, 1), AnyMessage::MeterDescReply(reply));
        assert_eq!(
            decode(&MeterFeaturesRequest, 1),
            AnyMessage::MeterFeaturesRequest(MeterFeaturesRequest)
        );
        let features = MeterFeatures {
            max_meter: 10,
            band_types: 2,
            capabilities: 15,
            max_bands: 1,
            max_color: 0,
        };
        assert_eq!(
            decode(&features, 1),
            AnyMessage::MeterFeaturesReply(features)
        );
        let packet_in = PacketIn {
            buffer_id: 0,
            total_len: 1,
            reason: 0,
            table_id: 0,
            cookie: 0,
            flow_match: Default::default(),
            data: vec![1],
        };
        assert_eq!(decode(&packet_in, 2), AnyMessage::PacketIn(packet_in));
        let packet_in2 = PacketIn2 {
            packet: vec![1, 2],
            full_len: 2,
            buffer_id: u32::MAX,
            table_id: 1,
            cookie: 2,
            reason: 1,
            metadata: Default::default(),
            userdata: vec![],
            continuation: vec![],
        };
        assert_eq!(decode(&packet_in2, 2), AnyMessage::PacketIn2(packet_in2));
        let format = SetPacketInFormat(packet_in::packet_in_format::NXT_PACKET_IN2);
        assert_eq!(decode(&format, 2), AnyMessage::SetPacketInFormat(format));
        let packet_out = PacketOut {
            buffer_id: u32::MAX,
            flow_match: Default::default(),
            actions: vec![],
            data: vec![1, 2],
        };
        assert_eq!(decode(&packet_out, 3), AnyMessage::PacketOut(packet_out));
        assert_eq!(
            decode(&FlowDescRequest::default(), 4),
            AnyMessage::FlowDescRequest(FlowDescRequest::default())
        );
        assert_eq!(
            decode(&FlowDescReply::default(), 4),
            AnyMessage::FlowDescReply(FlowDescReply::default())
        );
        let request = GroupDescRequest { group_id: 7 };
        assert_eq!(decode(&request, 5), AnyMessage::GroupDescRequest(request));
        let reply = GroupDescReply {
            more: true,
            groups: vec![group.group],
        };
        assert_eq!(decode(&reply, 5), AnyMessage::GroupDescReply(reply));
    }

    #[test]
    fn undecodable_flow_bodies_are_kept_with_the_reason() {
        let mut bytes = "actions=drop"
            .parse::<FlowMod>()
            .unwrap()
            .to_bytes(1)
            .unwrap();
        bytes[HEADER_LEN + 17] = 9; // an undefined flow mod command
        let (header, msg) = AnyMessage::parse(&bytes).unwrap();
        let AnyMessage::Undecoded { body, error, .. } = &msg else {
            panic!("{msg:?}")
        };
        assert_eq!(body[..], bytes[HEADER_LEN..]);
        assert!(
            matches!(
                error,
                DecodeError::Unsupported {
                    what: "flow_mod command",
                    value: 9
                }
            ),
            "{error}"
        );
        let mut out = Vec::new();
        msg.emit(header.xid, &mut out).unwrap();
        assert_eq!(out, bytes);
        // Messages the connection itself relies on stay strict.
        assert!(AnyMessage::parse(&[6, 6, 0, 9, 0, 0, 0, 1, 0]).is_err());
    }

    #[test]
    fn rejects_malformed_messages() {
        assert!(matches!(
            AnyMessage::parse(&[6, 2, 0, 7, 0, 0, 0, 0]),
            Err(DecodeError::BadLength { .. })
        ));
        assert!(matches!(
            AnyMessage::parse(&[6, 2, 0, 9, 0, 0, 0, 0]),
            Err(DecodeError::Truncated { .. })
        ));
        assert!(matches!(
            AnyMessage::parse(&[6, 36, 0, 8, 0, 0, 0, 0]),
            Err(DecodeError::Unsupported {
                what: "message type",
                value: 36
            })
        ));
        assert!(matches!(
            AnyMessage::parse(&[4, 2, 0, 8, 0, 0, 0, 0]),
            Err(DecodeError::Unsupported {
                what: "OpenFlow version",
                value: 4
            })
        ));
        assert!(matches!(
            AnyMessage::parse(&[4, 0, 0, 8, 0, 0, 0, 0]),
            Ok((_, AnyMessage::Hello(_)))
        ));
        assert!(matches!(
            AnyMessage::parse(&[6, 6, 0, 8, 0, 0, 0, 0]),
            Err(DecodeError::Truncated { .. })
        ));
        let add = BundleAdd::new(1, 0, BarrierRequest.to_bytes(8).unwrap()).unwrap();
        assert!(matches!(
            AnyMessage::parse(&add.to_bytes(9).unwrap()),
            Err(DecodeError::Invalid {
                what: "bundle add",
                ..
            })
        ));
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
