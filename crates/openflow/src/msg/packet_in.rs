//! Packets sent to the controller: OpenFlow 1.5 `OFPT_PACKET_IN` and Nicira's property-based
//! `NXT_PACKET_IN2` (which adds the controller action's userdata and the continuation used to
//! resume a paused pipeline), and `NXT_SET_PACKET_IN_FORMAT`, which chooses between them.

use super::flow_mod::NO_BUFFER;
use crate::DecodeError;
use crate::header::{experimenter, msg_type};
use crate::message::Message;
use crate::msg::property::{emit_property, split_properties};
use crate::oxm::Match;

/// `ofp_packet_in_reason` values.
pub mod reason {
    pub const NO_MATCH: u8 = 0;
    pub const ACTION: u8 = 1;
    pub const INVALID_TTL: u8 = 2;
    pub const ACTION_SET: u8 = 3;
    pub const GROUP: u8 = 4;
    pub const PACKET_OUT: u8 = 5;
}

/// `OFPT_PACKET_IN` (OpenFlow 1.5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PacketIn {
    pub buffer_id: u32,
    /// Length of the whole packet (`data` may be truncated).
    pub total_len: u16,
    pub reason: u8,
    pub table_id: u8,
    /// Cookie of the flow that sent the packet.
    pub cookie: u64,
    /// Pipeline fields: `in_port`, registers, metadata, tunnel fields.
    pub flow_match: Match,
    pub data: Vec<u8>,
}

impl PacketIn {
    /// Decodes a whole `OFPT_PACKET_IN` message (header included): the fuzzing entry point.
    pub fn decode(buf: &[u8]) -> Result<(PacketIn, u32), DecodeError> {
        <PacketIn as Message>::parse(buf)
    }
}

impl Message for PacketIn {
    const TYPE: u8 = msg_type::PACKET_IN;

    fn emit_body(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.buffer_id.to_be_bytes());
        out.extend_from_slice(&self.total_len.to_be_bytes());
        out.push(self.reason);
        out.push(self.table_id);
        out.extend_from_slice(&self.cookie.to_be_bytes());
        self.flow_match.emit(out);
        out.extend_from_slice(&[0, 0]);
        out.extend_from_slice(&self.data);
    }

    fn parse_body(body: &[u8]) -> Result<PacketIn, DecodeError> {
        DecodeError::need("ofp_packet_in", body, 16)?;
        let mut cookie = [0u8; 8];
        cookie.copy_from_slice(&body[8..16]);
        let (flow_match, used) = Match::parse(&body[16..])?;
        let rest = &body[16 + used..];
        DecodeError::need("ofp_packet_in padding", rest, 2)?;
        Ok(PacketIn {
            buffer_id: u32::from_be_bytes([body[0], body[1], body[2], body[3]]),
            total_len: u16::from_be_bytes([body[4], body[5]]),
            reason: body[6],
            table_id: body[7],
            cookie: u64::from_be_bytes(cookie),
            flow_match,
            data: rest[2..].to_vec(),
        })
    }
}

/// `NXT_SET_PACKET_IN_FORMAT`.
pub const NXT_SET_PACKET_IN_FORMAT: u32 = 16;
/// `NXT_PACKET_IN2`.
pub const NXT_PACKET_IN2: u32 = 30;

/// The Nicira subtype of an experimenter message body, or `None` if the body is too short or
/// from another experimenter.
pub fn nicira_subtype(body: &[u8]) -> Option<u32> {
    let vendor = u32::from_be_bytes(body.get(0..4)?.try_into().ok()?);
    let subtype = u32::from_be_bytes(body.get(4..8)?.try_into().ok()?);
    (vendor == experimenter::NICIRA).then_some(subtype)
}

/// Checks that `body` is Nicira experimenter message `subtype`; returns the rest.
pub(crate) fn nicira_body<'a>(
    body: &'a [u8],
    subtype: u32,
    name: &'static str,
) -> Result<&'a [u8], DecodeError> {
    DecodeError::need(name, body, 8)?;
    match nicira_subtype(body) {
        Some(s) if s == subtype => Ok(&body[8..]),
        _ => Err(DecodeError::Invalid {
            what: "experimenter message",
            reason: format!("{:02x?} is not {name}", &body[..8]),
        }),
    }
}

/// `nx_packet_in_format` values for [`SetPacketInFormat`].
pub mod packet_in_format {
    /// `OFPT_PACKET_IN` of the connection's OpenFlow version.
    pub const OPENFLOW: u32 = 0;
    /// The old `NXT_PACKET_IN`.
    pub const NXT_PACKET_IN: u32 = 1;
    /// `NXT_PACKET_IN2`: with the controller action's userdata and pause continuation.
    pub const NXT_PACKET_IN2: u32 = 2;
}

/// `NXT_SET_PACKET_IN_FORMAT`: which packet-in message the switch sends on this connection (a
/// [`packet_in_format`] value).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SetPacketInFormat(pub u32);

impl Message for SetPacketInFormat {
    const TYPE: u8 = msg_type::EXPERIMENTER;

    fn emit_body(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&experimenter::NICIRA.to_be_bytes());
        out.extend_from_slice(&NXT_SET_PACKET_IN_FORMAT.to_be_bytes());
        out.extend_from_slice(&self.0.to_be_bytes());
    }

    fn parse_body(body: &[u8]) -> Result<SetPacketInFormat, DecodeError> {
        let rest = nicira_body(body, NXT_SET_PACKET_IN_FORMAT, "NXT_SET_PACKET_IN_FORMAT")?;
        let format: [u8; 4] = rest.try_into().map_err(|_| DecodeError::BadLength {
            what: "NXT_SET_PACKET_IN_FORMAT",
            len: body.len(),
        })?;
        Ok(SetPacketInFormat(u32::from_be_bytes(format)))
    }
}

const PROP_PACKET: u16 = 0;
const PROP_FULL_LEN: u16 = 1;
const PROP_BUFFER_ID: u16 = 2;
const PROP_TABLE_ID: u16 = 3;
const PROP_COOKIE: u16 = 4;
const PROP_REASON: u16 = 5;
const PROP_METADATA: u16 = 6;
const PROP_USERDATA: u16 = 7;
const PROP_CONTINUATION: u16 = 8;

/// `NXT_PACKET_IN2`: a packet-in made of properties.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PacketIn2 {
    pub packet: Vec<u8>,
    /// Length of the whole packet (differs from `packet.len()` when truncated).
    pub full_len: u32,
    pub buffer_id: u32,
    pub table_id: u8,
    pub cookie: u64,
    pub reason: u8,
    /// Pipeline fields (`in_port`, registers, …).
    pub metadata: Match,
    /// The controller action's `userdata`.
    pub userdata: Vec<u8>,
    /// Opaque state for resuming a paused pipeline (`NXT_RESUME`), empty if not paused.
    pub continuation: Vec<u8>,
}

/// The body of a 64-bit property: 4 bytes of padding, then the value at offset 8 of the
/// property, as OVS lays it out.
fn u64_prop(v: u64) -> [u8; 12] {
    let mut body = [0; 12];
    body[4..].copy_from_slice(&v.to_be_bytes());
    body
}

impl PacketIn2 {
    /// Decodes a whole `NXT_PACKET_IN2` message (header included): the fuzzing entry point.
    pub fn decode(buf: &[u8]) -> Result<(PacketIn2, u32), DecodeError> {
        <PacketIn2 as Message>::parse(buf)
    }
}

impl Message for PacketIn2 {
    const TYPE: u8 = msg_type::EXPERIMENTER;

    fn emit_body(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&experimenter::NICIRA.to_be_bytes());
        out.extend_from_slice(&NXT_PACKET_IN2.to_be_bytes());
        emit_property(out, PROP_PACKET, &self.packet);
        if self.full_len as usize != self.packet.len() {
            emit_property(out, PROP_FULL_LEN, &self.full_len.to_be_bytes());
        }
        if self.buffer_id != NO_BUFFER {
            emit_property(out, PROP_BUFFER_ID, &self.buffer_id.to_be_bytes());
        }
        emit_property(out, PROP_TABLE_ID, &[self.table_id]);
        emit_property(out, PROP_COOKIE, &u64_prop(self.cookie));
        emit_property(out, PROP_REASON, &[self.reason]);
        let mut oxms = Vec::new();
        self.metadata.emit_oxms(&mut oxms);
        emit_property(out, PROP_METADATA, &oxms);
        if !self.userdata.is_empty() {
            emit_property(out, PROP_USERDATA, &self.userdata);
        }
        if !self.continuation.is_empty() {
            emit_property(out, PROP_CONTINUATION, &self.continuation);
        }
    }

    fn parse_body(body: &[u8]) -> Result<PacketIn2, DecodeError> {
        let props = nicira_body(body, NXT_PACKET_IN2, "NXT_PACKET_IN2")?;
        let mut p = PacketIn2 {
            packet: Vec::new(),
            full_len: 0,
            buffer_id: NO_BUFFER,
            table_id: 0,
            cookie: 0,
            reason: 0,
            metadata: Match::new(),
            userdata: Vec::new(),
            continuation: Vec::new(),
        };
        let mut full_len = None;
        for (ty, v) in split_properties("packet-in2 property", props)? {
            let len = v.len() + 4;
            let fixed = |n: usize| -> Result<&[u8], DecodeError> {
                if v.len() == n {
                    Ok(v)
                } else {
                    Err(DecodeError::BadLength {
                        what: "packet-in2 property",
                        len,
                    })
                }
            };
            let aligned_u64 = || -> Result<u64, DecodeError> {
                let b: [u8; 8] =
                    v.get(4..12)
                        .and_then(|s| s.try_into().ok())
                        .ok_or(DecodeError::BadLength {
                            what: "packet-in2 u64 property",
                            len,
                        })?;
                Ok(u64::from_be_bytes(b))
            };
            match ty {
                PROP_PACKET => p.packet = v.to_vec(),
                PROP_FULL_LEN => {
                    let b = fixed(4)?;
                    full_len = Some(u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
                }
                PROP_BUFFER_ID => {
                    let b = fixed(4)?;
                    p.buffer_id = u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
                }
                PROP_TABLE_ID => p.table_id = fixed(1)?[0],
                PROP_COOKIE => p.cookie = aligned_u64()?,
                PROP_REASON => p.reason = fixed(1)?[0],
                PROP_METADATA => p.metadata = Match::parse_oxms(v)?,
                PROP_USERDATA => p.userdata = v.to_vec(),
                PROP_CONTINUATION => p.continuation = v.to_vec(),
                // Properties this codec does not use are skipped, as OpenFlow allows.
                _ => {}
            }
        }
        p.full_len = full_len.unwrap_or(p.packet.len() as u32);
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oxm::Field;

    #[test]
    fn packet_in_round_trip() {
        let p = PacketIn {
            buffer_id: NO_BUFFER,
            total_len: 4,
            reason: reason::ACTION,
            table_id: 3,
            cookie: 0x5,
            flow_match: Match::new().with(Field::InPort, 1).with(Field::Reg(0), 7),
            data: vec![1, 2, 3, 4],
        };
        let b = p.to_bytes(2).unwrap();
        assert_eq!(
            &b[8..24],
            &[0xff, 0xff, 0xff, 0xff, 0, 4, 1, 3, 0, 0, 0, 0, 0, 0, 0, 5]
        );
        assert_eq!(&b[b.len() - 6..], &[0, 0, 1, 2, 3, 4]);
        assert_eq!(PacketIn::decode(&b), Ok((p, 2)));
        assert!(PacketIn::decode(&b[..20]).is_err());
    }

    #[test]
    fn set_packet_in_format_bytes() {
        let b = SetPacketInFormat(packet_in_format::NXT_PACKET_IN2)
            .to_bytes(3)
            .unwrap();
        assert_eq!(
            b,
            [
                6, 4, 0, 20, 0, 0, 0, 3, 0, 0, 0x23, 0x20, 0, 0, 0, 16, 0, 0, 0, 2
            ]
        );
        assert_eq!(SetPacketInFormat::parse(&b), Ok((SetPacketInFormat(2), 3)));
        assert!(SetPacketInFormat::parse_body(&b[8..19]).is_err());
        assert!(
            SetPacketInFormat::parse_body(&[0, 0, 0x23, 0x20, 0, 0, 0, 30, 0, 0, 0, 2]).is_err()
        );
        assert_eq!(nicira_subtype(&b[8..]), Some(NXT_SET_PACKET_IN_FORMAT));
        assert_eq!(nicira_subtype(&[0, 0, 0x23, 0x21, 0, 0, 0, 16]), None);
        assert_eq!(nicira_subtype(&[0, 0, 0x23]), None);
    }

    #[test]
    fn packet_in2_round_trip() {
        let p = PacketIn2 {
            packet: vec![0xaa; 20],
            full_len: 60,
            buffer_id: NO_BUFFER,
            table_id: 9,
            cookie: 0x1234,
            reason: reason::ACTION,
            metadata: Match::new().with(Field::InPort, 2).with(Field::Reg(3), 5),
            userdata: vec![1, 2, 3],
            continuation: vec![9; 12],
        };
        let b = p.to_bytes(1).unwrap();
        assert_eq!(&b[8..16], &[0, 0, 0x23, 0x20, 0, 0, 0, 30]);
        assert_eq!(&b[16..20], &[0, 0, 0, 24]);
        assert_eq!(PacketIn2::decode(&b), Ok((p, 1)));
    }
}
