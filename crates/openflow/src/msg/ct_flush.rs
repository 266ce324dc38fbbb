//! `NXT_CT_FLUSH` (Nicira experimenter message 32, Open vSwitch 3.1 and later): deletes the
//! conntrack entries of one zone that match a partial original and/or reply tuple.
//!
//! The body after the experimenter header is `nx_ct_flush` (the IP protocol, 7 zero bytes)
//! followed by properties: the original tuple (type 0) and the reply tuple (type 1), each a
//! property whose body is 4 bytes of padding then nested properties (source and destination
//! address as 16-byte IPv6 or IPv4-mapped addresses, source and destination port, ICMP id, type
//! and code), and the zone (type 2, a 16-bit value). A field that is absent matches every entry;
//! Open vSwitch also treats a zero address or a zero port as absent. Without a zone property the
//! switch flushes zone 0. With a protocol and no tuple at all, it flushes the whole zone.
//!
//! Open vSwitch answers nothing when the flush succeeds (an error when it cannot decode the
//! message, or when the switch is older than 3.1: an unknown experimenter subtype). For a
//! partial tuple the switch walks the zone's entries and deletes those whose fields all match,
//! in the userspace and the kernel datapath alike, before it handles the next message.

use std::net::{IpAddr, Ipv6Addr};

use crate::DecodeError;
use crate::header::{experimenter, msg_type};
use crate::message::Message;
use crate::msg::packet_in::nicira_body;
use crate::msg::property::{emit_property, split_properties};

/// `NXT_CT_FLUSH`.
pub const NXT_CT_FLUSH: u32 = 32;

/// `nx_ct_flush_tlv_type` values: the properties after `nx_ct_flush`.
mod prop {
    pub const ORIG_TUPLE: u16 = 0;
    pub const REPLY_TUPLE: u16 = 1;
    pub const ZONE_ID: u16 = 2;
}

/// `nx_ct_flush_tuple_tlv_type` values: the properties nested in a tuple.
mod tuple_prop {
    pub const SRC: u16 = 0;
    pub const DST: u16 = 1;
    pub const SRC_PORT: u16 = 2;
    pub const DST_PORT: u16 = 3;
    pub const ICMP_ID: u16 = 4;
    pub const ICMP_TYPE: u16 = 5;
    pub const ICMP_CODE: u16 = 6;
}

/// One direction of a conntrack entry as a flush matches it: each field that is `Some` must
/// equal the entry's, each `None` matches anything. Open vSwitch also reads a zero port and the
/// address `::` as "anything"; it refuses a flush whose addresses are of two families.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CtTuple {
    pub src: Option<IpAddr>,
    pub dst: Option<IpAddr>,
    pub src_port: Option<u16>,
    pub dst_port: Option<u16>,
    pub icmp_id: Option<u16>,
    pub icmp_type: Option<u8>,
    pub icmp_code: Option<u8>,
}

impl CtTuple {
    fn is_empty(&self) -> bool {
        *self == CtTuple::default()
    }

    /// The nested properties, in the order Open vSwitch writes them.
    fn emit_nested(&self, out: &mut Vec<u8>) {
        for (ty, addr) in [(tuple_prop::SRC, self.src), (tuple_prop::DST, self.dst)] {
            if let Some(addr) = addr {
                emit_property(out, ty, &address_bytes(addr));
            }
        }
        for (ty, value) in [
            (tuple_prop::SRC_PORT, self.src_port),
            (tuple_prop::DST_PORT, self.dst_port),
            (tuple_prop::ICMP_ID, self.icmp_id),
        ] {
            if let Some(value) = value {
                // A 16-bit property is 8 bytes long in OpenFlow: the value, 2 bytes of padding.
                let [hi, lo] = value.to_be_bytes();
                emit_property(out, ty, &[hi, lo, 0, 0]);
            }
        }
        for (ty, value) in [
            (tuple_prop::ICMP_TYPE, self.icmp_type),
            (tuple_prop::ICMP_CODE, self.icmp_code),
        ] {
            if let Some(value) = value {
                emit_property(out, ty, &[value]);
            }
        }
    }

    /// Sets the fields a tuple property's body (padding, then nested properties) names; a
    /// nested property of a type Open vSwitch does not define is skipped, as the switch does.
    fn parse_into(&mut self, body: &[u8]) -> Result<(), DecodeError> {
        let nested = body.get(4..).ok_or(DecodeError::BadLength {
            what: "NXT_CT_FLUSH tuple property",
            len: body.len() + 4,
        })?;
        for (ty, v) in split_properties("NXT_CT_FLUSH tuple field", nested)? {
            match ty {
                tuple_prop::SRC => self.src = Some(parse_address(v)?),
                tuple_prop::DST => self.dst = Some(parse_address(v)?),
                tuple_prop::SRC_PORT => self.src_port = Some(parse_u16("source port", v)?),
                tuple_prop::DST_PORT => self.dst_port = Some(parse_u16("destination port", v)?),
                tuple_prop::ICMP_ID => self.icmp_id = Some(parse_u16("ICMP id", v)?),
                tuple_prop::ICMP_TYPE => self.icmp_type = Some(parse_u8("ICMP type", v)?),
                tuple_prop::ICMP_CODE => self.icmp_code = Some(parse_u8("ICMP code", v)?),
                _ => {}
            }
        }
        Ok(())
    }
}

/// An address as the message carries it: IPv6, or IPv4 mapped into IPv6.
fn address_bytes(addr: IpAddr) -> [u8; 16] {
    match addr {
        IpAddr::V4(v4) => v4.to_ipv6_mapped().octets(),
        IpAddr::V6(v6) => v6.octets(),
    }
}

/// An address property's value; an IPv4-mapped address is IPv4, as Open vSwitch reads it. Like
/// the switch, bytes after the 16 of the address are ignored.
fn parse_address(v: &[u8]) -> Result<IpAddr, DecodeError> {
    let octets: [u8; 16] =
        v.get(..16)
            .and_then(|b| b.try_into().ok())
            .ok_or(DecodeError::Truncated {
                what: "NXT_CT_FLUSH address",
                need: 16,
                have: v.len(),
            })?;
    let v6 = Ipv6Addr::from(octets);
    Ok(v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4))
}

/// A 16-bit property's value (Open vSwitch reads the first two bytes of a body of any length).
fn parse_u16(what: &'static str, v: &[u8]) -> Result<u16, DecodeError> {
    match v {
        [hi, lo, ..] => Ok(u16::from_be_bytes([*hi, *lo])),
        _ => Err(DecodeError::Truncated {
            what,
            need: 2,
            have: v.len(),
        }),
    }
}

/// An 8-bit property's value (the first byte, as Open vSwitch reads it).
fn parse_u8(what: &'static str, v: &[u8]) -> Result<u8, DecodeError> {
    v.first().copied().ok_or(DecodeError::Truncated {
        what,
        need: 1,
        have: 0,
    })
}

/// `NXT_CT_FLUSH`: deletes the entries of `zone` whose protocol is `ip_proto` (0: any) and
/// whose original and reply directions match `orig` and `reply`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CtFlush {
    /// The IP protocol number (`17` for UDP); 0 matches every protocol.
    pub ip_proto: u8,
    /// The direction the connection's first packet took (before NAT: a Service connection's
    /// destination is the Service's address).
    pub orig: CtTuple,
    /// The direction of the replies (after NAT: a Service connection's replies come from the
    /// endpoint).
    pub reply: CtTuple,
    /// The conntrack zone; `None`: the switch's default, zone 0.
    pub zone: Option<u16>,
}

impl CtFlush {
    /// Decodes a whole `NXT_CT_FLUSH` message (header included); returns it with its xid.
    pub fn decode(buf: &[u8]) -> Result<(CtFlush, u32), DecodeError> {
        <CtFlush as Message>::parse(buf)
    }
}

impl Message for CtFlush {
    const TYPE: u8 = msg_type::EXPERIMENTER;

    fn emit_body(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&experimenter::NICIRA.to_be_bytes());
        out.extend_from_slice(&NXT_CT_FLUSH.to_be_bytes());
        out.push(self.ip_proto);
        out.extend_from_slice(&[0; 7]);
        for (ty, tuple) in [
            (prop::ORIG_TUPLE, &self.orig),
            (prop::REPLY_TUPLE, &self.reply),
        ] {
            if !tuple.is_empty() {
                let mut body = vec![0; 4];
                tuple.emit_nested(&mut body);
                emit_property(out, ty, &body);
            }
        }
        if let Some(zone) = self.zone {
            let [hi, lo] = zone.to_be_bytes();
            emit_property(out, prop::ZONE_ID, &[hi, lo, 0, 0]);
        }
    }

    /// Decodes the body. Properties of a type Open vSwitch does not define are skipped, as the
    /// switch skips them; a property given twice sets the fields it names again.
    fn parse_body(body: &[u8]) -> Result<CtFlush, DecodeError> {
        let rest = nicira_body(body, NXT_CT_FLUSH, "NXT_CT_FLUSH")?;
        DecodeError::need("nx_ct_flush", rest, 8)?;
        if rest[1..8] != [0; 7] {
            return Err(DecodeError::Invalid {
                what: "nx_ct_flush",
                reason: format!("padding {:02x?} is not zero", &rest[1..8]),
            });
        }
        let mut flush = CtFlush {
            ip_proto: rest[0],
            ..CtFlush::default()
        };
        for (ty, v) in split_properties("NXT_CT_FLUSH property", &rest[8..])? {
            match ty {
                prop::ORIG_TUPLE => flush.orig.parse_into(v)?,
                prop::REPLY_TUPLE => flush.reply.parse_into(v)?,
                prop::ZONE_ID => flush.zone = Some(parse_u16("NXT_CT_FLUSH zone", v)?),
                _ => {}
            }
        }
        Ok(flush)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::msg::any::AnyMessage;
    use proptest::prelude::*;
    use std::net::Ipv4Addr;

    /// What `ovs-ofctl -O OpenFlow15 ct-flush SWITCH zone=65520
    /// ct_nw_dst=10.96.0.10,ct_nw_proto=17,ct_tp_dst=53 ct_nw_src=10.244.1.11,ct_tp_src=5353`
    /// (Open vSwitch 3.1.0) sent, captured from the socket: the stale entries of a UDP Service
    /// frontend whose replies come from one endpoint.
    const OVS_OFCTL_SERVICE_ENDPOINT: &str = "06040070000000020000232000000020110000000000000000000028000000000001001400000000000000000000ffff0a60000a00000000000300080035000000010028000000000000001400000000000000000000ffff0af4010b000000000002000814e9000000020008fff00000";

    /// `ovs-ofctl ct-flush SWITCH zone=65520`: the whole zone.
    const OVS_OFCTL_ZONE: &str = "06040020000000020000232000000020000000000000000000020008fff00000";

    /// `ovs-ofctl ct-flush SWITCH ct_nw_proto=1,ct_nw_src=1.2.3.4`: for ICMP, ovs-ofctl writes
    /// the ICMP fields of both tuples even when not given (zero), so the reply tuple is present.
    const OVS_OFCTL_ICMP: &str = "06040070000000020000232000000020010000000000000000000038000000000000001400000000000000000000ffff01020304000000000004000800000000000500050000000000060005000000000001002000000000000400080000000000050005000000000006000500000000";

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    fn service_endpoint() -> CtFlush {
        CtFlush {
            ip_proto: 17,
            orig: CtTuple {
                dst: Some(Ipv4Addr::new(10, 96, 0, 10).into()),
                dst_port: Some(53),
                ..CtTuple::default()
            },
            reply: CtTuple {
                src: Some(Ipv4Addr::new(10, 244, 1, 11).into()),
                src_port: Some(5353),
                ..CtTuple::default()
            },
            zone: Some(65520),
        }
    }

    #[test]
    fn bytes_are_what_ovs_ofctl_sends() {
        let golden = hex(OVS_OFCTL_SERVICE_ENDPOINT);
        assert_eq!(service_endpoint().to_bytes(2).unwrap(), golden);
        assert_eq!(CtFlush::decode(&golden), Ok((service_endpoint(), 2)));

        let zone = CtFlush {
            zone: Some(65520),
            ..CtFlush::default()
        };
        assert_eq!(zone.to_bytes(2).unwrap(), hex(OVS_OFCTL_ZONE));
        assert_eq!(CtFlush::decode(&hex(OVS_OFCTL_ZONE)), Ok((zone, 2)));

        let icmp = CtFlush {
            ip_proto: 1,
            orig: CtTuple {
                src: Some(Ipv4Addr::new(1, 2, 3, 4).into()),
                icmp_id: Some(0),
                icmp_type: Some(0),
                icmp_code: Some(0),
                ..CtTuple::default()
            },
            reply: CtTuple {
                icmp_id: Some(0),
                icmp_type: Some(0),
                icmp_code: Some(0),
                ..CtTuple::default()
            },
            zone: None,
        };
        assert_eq!(icmp.to_bytes(2).unwrap(), hex(OVS_OFCTL_ICMP));
        assert_eq!(CtFlush::decode(&hex(OVS_OFCTL_ICMP)), Ok((icmp, 2)));
    }

    #[test]
    fn any_message_decodes_it() {
        let golden = hex(OVS_OFCTL_SERVICE_ENDPOINT);
        let (header, msg) = AnyMessage::parse(&golden).unwrap();
        assert_eq!(msg, AnyMessage::CtFlush(service_endpoint()));
        let mut out = Vec::new();
        msg.emit(header.xid, &mut out).unwrap();
        assert_eq!(out, golden);
    }

    #[test]
    fn ipv6_and_what_ovs_skips() {
        let v6: IpAddr = "fd00::10".parse().unwrap();
        let flush = CtFlush {
            ip_proto: 6,
            orig: CtTuple {
                src: Some(v6),
                ..CtTuple::default()
            },
            ..CtFlush::default()
        };
        let mut bytes = flush.to_bytes(1).unwrap();
        assert_eq!(CtFlush::decode(&bytes), Ok((flush, 1)));
        // An undefined property (type 9) and, nested in a tuple, an undefined field are skipped.
        bytes.extend_from_slice(&[0, 9, 0, 5, 0xaa, 0, 0, 0]);
        bytes.extend_from_slice(&[0, 1, 0, 16, 0, 0, 0, 0, 0, 7, 0, 6, 1, 2, 0, 0]);
        let len = u16::try_from(bytes.len()).unwrap();
        bytes[2..4].copy_from_slice(&len.to_be_bytes());
        assert_eq!(CtFlush::decode(&bytes), Ok((flush, 1)));
    }

    #[test]
    fn malformed_bodies_are_errors() {
        let golden = hex(OVS_OFCTL_SERVICE_ENDPOINT);
        let body = &golden[8..];
        // Every cut short of the whole body fails, except at a property boundary (a shorter
        // property list is a valid flush).
        let boundaries = [16, 56, 96, 104];
        for cut in 0..body.len() {
            let parsed = CtFlush::parse_body(&body[..cut]);
            assert_eq!(
                parsed.is_ok(),
                boundaries.contains(&cut),
                "cut at {cut}: {parsed:?}"
            );
        }
        let mut padded = body.to_vec();
        padded[9] = 1;
        assert!(matches!(
            CtFlush::parse_body(&padded),
            Err(DecodeError::Invalid {
                what: "nx_ct_flush",
                ..
            })
        ));
        let mut other = body.to_vec();
        other[7] = 31;
        assert!(matches!(
            CtFlush::parse_body(&other),
            Err(DecodeError::Invalid {
                what: "experimenter message",
                ..
            })
        ));
        // A tuple property too short for its padding, a short address, a short port.
        let short_tuple = [&body[..16], &[0, 0, 0, 6, 0, 0, 0, 0][..]].concat();
        assert!(matches!(
            CtFlush::parse_body(&short_tuple),
            Err(DecodeError::BadLength { .. })
        ));
        let short_addr = [
            &body[..16],
            &[0, 0, 0, 16, 0, 0, 0, 0, 0, 0, 0, 8, 1, 2, 3, 4][..],
        ]
        .concat();
        assert!(matches!(
            CtFlush::parse_body(&short_addr),
            Err(DecodeError::Truncated {
                what: "NXT_CT_FLUSH address",
                ..
            })
        ));
        let short_port = [
            &body[..16],
            &[0, 0, 0, 16, 0, 0, 0, 0, 0, 2, 0, 5, 1, 0, 0, 0][..],
        ]
        .concat();
        assert!(matches!(
            CtFlush::parse_body(&short_port),
            Err(DecodeError::Truncated {
                what: "source port",
                ..
            })
        ));
    }

    fn address() -> impl Strategy<Value = IpAddr> {
        prop_oneof![
            any::<[u8; 4]>().prop_map(IpAddr::from),
            // IPv4-mapped IPv6 addresses decode as IPv4; other IPv6 addresses stay IPv6.
            any::<[u8; 16]>()
                .prop_filter("not IPv4-mapped", |b| Ipv6Addr::from(*b)
                    .to_ipv4_mapped()
                    .is_none())
                .prop_map(IpAddr::from),
        ]
    }

    fn tuple() -> impl Strategy<Value = CtTuple> {
        (
            proptest::option::of(address()),
            proptest::option::of(address()),
            any::<Option<u16>>(),
            any::<Option<u16>>(),
            any::<Option<u16>>(),
            any::<Option<u8>>(),
            any::<Option<u8>>(),
        )
            .prop_map(
                |(src, dst, src_port, dst_port, icmp_id, icmp_type, icmp_code)| CtTuple {
                    src,
                    dst,
                    src_port,
                    dst_port,
                    icmp_id,
                    icmp_type,
                    icmp_code,
                },
            )
    }

    proptest! {
        #[test]
        fn round_trip(ip_proto: u8, orig in tuple(), reply in tuple(), zone: Option<u16>, xid: u32) {
            let flush = CtFlush { ip_proto, orig, reply, zone };
            prop_assert_eq!(CtFlush::decode(&flush.to_bytes(xid).unwrap()), Ok((flush, xid)));
        }

        #[test]
        fn never_panics(tail in proptest::collection::vec(any::<u8>(), 0..120)) {
            let body = [&[0, 0, 0x23, 0x20, 0, 0, 0, 32][..], &tail].concat();
            let _ = CtFlush::parse_body(&body);
        }
    }
}
