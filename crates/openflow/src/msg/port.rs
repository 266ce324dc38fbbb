//! Ports: the OpenFlow 1.5 port description (`ofp_port` with its property list), and the
//! messages that carry or change it — `OFPT_PORT_STATUS`, the `OFPMP_PORT_DESC` multipart
//! request and reply, and `OFPT_PORT_MOD`.

use bytes::Buf;

use crate::DecodeError;
use crate::header::msg_type;
use crate::message::Message;
use crate::msg::multipart::{self, mp_type};
use crate::msg::property::{Property, emit_property, parse_properties};

/// Reserved port numbers (`ofp_port_no`).
pub mod port_no {
    /// Highest number of a physical port.
    pub const MAX: u32 = 0xffff_ff00;
    pub const IN_PORT: u32 = 0xffff_fff8;
    pub const TABLE: u32 = 0xffff_fff9;
    pub const NORMAL: u32 = 0xffff_fffa;
    pub const FLOOD: u32 = 0xffff_fffb;
    pub const ALL: u32 = 0xffff_fffc;
    pub const CONTROLLER: u32 = 0xffff_fffd;
    pub const LOCAL: u32 = 0xffff_fffe;
    pub const ANY: u32 = 0xffff_ffff;
}

/// `ofp_port_config` bits.
pub mod port_config {
    pub const PORT_DOWN: u32 = 1 << 0;
    pub const NO_RECV: u32 = 1 << 2;
    /// `OFPPC_NO_FLOOD`, an OpenFlow 1.0 bit. Open vSwitch ignores it in OpenFlow 1.1+ port mods
    /// (it masks the config with the four bits 1.1+ defines), so on a 1.5 connection it has no
    /// effect; [`crate::of10::set_port_no_flood`] sets it with an OpenFlow 1.0 port mod.
    pub const NO_FLOOD: u32 = 1 << 4;
    pub const NO_FWD: u32 = 1 << 5;
    pub const NO_PACKET_IN: u32 = 1 << 6;
}

/// `ofp_port_state` bits.
pub mod port_state {
    pub const LINK_DOWN: u32 = 1 << 0;
    pub const BLOCKED: u32 = 1 << 1;
    pub const LIVE: u32 = 1 << 2;
}

/// `OFPPDPT_ETHERNET` (port description) and `OFPPMPT_ETHERNET` (port mod) property type.
pub const PROP_ETHERNET: u16 = 0;

/// Fixed length of `ofp_port` before its properties.
const PORT_LEN: usize = 40;
/// Length of the Ethernet port description property.
const ETHERNET_PROP_LEN: usize = 32;
/// Length of `OFP_MAX_PORT_NAME_LEN`.
const PORT_NAME_LEN: usize = 16;

/// `OFPPDPT_ETHERNET`: an Ethernet port's features (`ofp_port_features` bits) and speeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EthernetProperty {
    pub curr: u32,
    pub advertised: u32,
    pub supported: u32,
    pub peer: u32,
    /// Current speed in kbps.
    pub curr_speed: u32,
    /// Maximum speed in kbps.
    pub max_speed: u32,
}

/// A port description property.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PortProperty {
    Ethernet(EthernetProperty),
    Other(Property),
}

/// `ofp_port` (OpenFlow 1.5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Port {
    pub port_no: u32,
    pub hw_addr: [u8; 6],
    /// At most 15 bytes; longer names are cut when emitted (decoded ones already are).
    pub name: String,
    /// [`port_config`] bits.
    pub config: u32,
    /// [`port_state`] bits.
    pub state: u32,
    pub properties: Vec<PortProperty>,
}

impl Port {
    /// The Ethernet property, if present.
    pub fn ethernet(&self) -> Option<&EthernetProperty> {
        self.properties.iter().find_map(|p| match p {
            PortProperty::Ethernet(e) => Some(e),
            PortProperty::Other(_) => None,
        })
    }

    /// Appends the port with its properties.
    pub fn emit(&self, out: &mut Vec<u8>) {
        let start = out.len();
        out.extend_from_slice(&self.port_no.to_be_bytes());
        out.extend_from_slice(&[0; 4]);
        out.extend_from_slice(&self.hw_addr);
        out.extend_from_slice(&[0; 2]);
        let mut name = [0u8; PORT_NAME_LEN];
        let cut = floor_char_boundary(&self.name, PORT_NAME_LEN - 1);
        name[..cut].copy_from_slice(&self.name.as_bytes()[..cut]);
        out.extend_from_slice(&name);
        out.extend_from_slice(&self.config.to_be_bytes());
        out.extend_from_slice(&self.state.to_be_bytes());
        for prop in &self.properties {
            match prop {
                PortProperty::Ethernet(e) => {
                    let mut data = vec![0; 4];
                    for v in [
                        e.curr,
                        e.advertised,
                        e.supported,
                        e.peer,
                        e.curr_speed,
                        e.max_speed,
                    ] {
                        data.extend_from_slice(&v.to_be_bytes());
                    }
                    emit_property(out, PROP_ETHERNET, &data);
                }
                PortProperty::Other(p) => emit_property(out, p.prop_type, &p.data),
            }
        }
        let len = u16::try_from(out.len() - start).unwrap_or(u16::MAX);
        out[start + 4..start + 6].copy_from_slice(&len.to_be_bytes());
    }

    /// Decodes one port at the start of `buf`; returns it and the bytes it used.
    pub fn parse(buf: &[u8]) -> Result<(Port, usize), DecodeError> {
        DecodeError::need("ofp_port", buf, PORT_LEN)?;
        let mut b = buf;
        let port_no = b.get_u32();
        let len = usize::from(b.get_u16());
        if len < PORT_LEN || len > buf.len() {
            return Err(DecodeError::BadLength {
                what: "ofp_port",
                len,
            });
        }
        b.advance(2);
        let mut hw_addr = [0; 6];
        b.copy_to_slice(&mut hw_addr);
        b.advance(2);
        let raw_name = &b[..PORT_NAME_LEN];
        let name_len = raw_name
            .iter()
            .position(|&c| c == 0)
            .unwrap_or(PORT_NAME_LEN);
        // The name as `emit` sends it back: invalid UTF-8 replaced (U+FFFD, 3 bytes each),
        // then cut to 15 bytes on a char boundary, so decode and encode agree.
        let mut name = String::from_utf8_lossy(&raw_name[..name_len]).into_owned();
        name.truncate(floor_char_boundary(&name, PORT_NAME_LEN - 1));
        b.advance(PORT_NAME_LEN);
        let config = b.get_u32();
        let state = b.get_u32();
        let properties = parse_properties("port property", &buf[PORT_LEN..len])?
            .into_iter()
            .map(|p| match p.prop_type {
                PROP_ETHERNET => parse_ethernet(&p.data).map(PortProperty::Ethernet),
                _ => Ok(PortProperty::Other(p)),
            })
            .collect::<Result<_, _>>()?;
        Ok((
            Port {
                port_no,
                hw_addr,
                name,
                config,
                state,
                properties,
            },
            len,
        ))
    }
}

fn parse_ethernet(data: &[u8]) -> Result<EthernetProperty, DecodeError> {
    if data.len() != ETHERNET_PROP_LEN - 4 {
        return Err(DecodeError::BadLength {
            what: "port ethernet property",
            len: data.len() + 4,
        });
    }
    let mut b = &data[4..];
    Ok(EthernetProperty {
        curr: b.get_u32(),
        advertised: b.get_u32(),
        supported: b.get_u32(),
        peer: b.get_u32(),
        curr_speed: b.get_u32(),
        max_speed: b.get_u32(),
    })
}

/// The largest index `<= max` that is a char boundary of `s`.
fn floor_char_boundary(s: &str, max: usize) -> usize {
    (0..=max.min(s.len()))
        .rev()
        .find(|&i| s.is_char_boundary(i))
        .unwrap_or(0)
}

/// `ofp_port_reason`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PortReason {
    Add,
    Delete,
    Modify,
    /// A reason value OpenFlow 1.5 does not define.
    Other(u8),
}

impl PortReason {
    fn from_wire(v: u8) -> PortReason {
        match v {
            0 => PortReason::Add,
            1 => PortReason::Delete,
            2 => PortReason::Modify,
            other => PortReason::Other(other),
        }
    }

    fn to_wire(self) -> u8 {
        match self {
            PortReason::Add => 0,
            PortReason::Delete => 1,
            PortReason::Modify => 2,
            PortReason::Other(v) => v,
        }
    }
}

/// `OFPT_PORT_STATUS`: a port was added, deleted or changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortStatus {
    pub reason: PortReason,
    pub port: Port,
}

impl Message for PortStatus {
    const TYPE: u8 = msg_type::PORT_STATUS;

    fn emit_body(&self, out: &mut Vec<u8>) {
        out.push(self.reason.to_wire());
        out.extend_from_slice(&[0; 7]);
        self.port.emit(out);
    }

    fn parse_body(body: &[u8]) -> Result<Self, DecodeError> {
        DecodeError::need("port status", body, 8)?;
        let (port, used) = Port::parse(&body[8..])?;
        if used != body.len() - 8 {
            return Err(DecodeError::BadLength {
                what: "port status",
                len: body.len() + 8,
            });
        }
        Ok(PortStatus {
            reason: PortReason::from_wire(body[0]),
            port,
        })
    }
}

/// A port mod property.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PortModProperty {
    /// `OFPPMPT_ETHERNET`: the features to advertise.
    Ethernet {
        advertise: u32,
    },
    Other(Property),
}

/// `OFPT_PORT_MOD`: changes the `config` bits selected by `mask`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortMod {
    pub port_no: u32,
    /// Must equal the port's address, a sanity check the switch makes.
    pub hw_addr: [u8; 6],
    /// [`port_config`] bits to set…
    pub config: u32,
    /// …among these.
    pub mask: u32,
    pub properties: Vec<PortModProperty>,
}

/// Fixed body length of `ofp_port_mod`.
const PORT_MOD_LEN: usize = 24;

impl Message for PortMod {
    const TYPE: u8 = msg_type::PORT_MOD;

    fn emit_body(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.port_no.to_be_bytes());
        out.extend_from_slice(&[0; 4]);
        out.extend_from_slice(&self.hw_addr);
        out.extend_from_slice(&[0; 2]);
        out.extend_from_slice(&self.config.to_be_bytes());
        out.extend_from_slice(&self.mask.to_be_bytes());
        for prop in &self.properties {
            match prop {
                PortModProperty::Ethernet { advertise } => {
                    emit_property(out, PROP_ETHERNET, &advertise.to_be_bytes())
                }
                PortModProperty::Other(p) => emit_property(out, p.prop_type, &p.data),
            }
        }
    }

    fn parse_body(body: &[u8]) -> Result<Self, DecodeError> {
        DecodeError::need("port mod", body, PORT_MOD_LEN)?;
        let mut b = body;
        let port_no = b.get_u32();
        b.advance(4);
        let mut hw_addr = [0; 6];
        b.copy_to_slice(&mut hw_addr);
        b.advance(2);
        let config = b.get_u32();
        let mask = b.get_u32();
        let properties = parse_properties("port mod property", b)?
            .into_iter()
            .map(|p| match (p.prop_type, p.data.as_slice()) {
                (PROP_ETHERNET, &[a, b, c, d]) => Ok(PortModProperty::Ethernet {
                    advertise: u32::from_be_bytes([a, b, c, d]),
                }),
                (PROP_ETHERNET, data) => Err(DecodeError::BadLength {
                    what: "port mod ethernet property",
                    len: data.len() + 4,
                }),
                _ => Ok(PortModProperty::Other(p)),
            })
            .collect::<Result<_, _>>()?;
        Ok(PortMod {
            port_no,
            hw_addr,
            config,
            mask,
            properties,
        })
    }
}

/// `OFPMP_PORT_DESC` request: describe one port, or all with [`port_no::ANY`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortDescRequest {
    pub port_no: u32,
}

impl Default for PortDescRequest {
    fn default() -> Self {
        PortDescRequest {
            port_no: port_no::ANY,
        }
    }
}

fn expect_port_desc(what: &'static str, mp: u16) -> Result<(), DecodeError> {
    if mp == mp_type::PORT_DESC {
        Ok(())
    } else {
        Err(DecodeError::Invalid {
            what,
            reason: format!(
                "multipart type {mp} where {} (port desc) was expected",
                mp_type::PORT_DESC
            ),
        })
    }
}

impl Message for PortDescRequest {
    const TYPE: u8 = msg_type::MULTIPART_REQUEST;

    fn emit_body(&self, out: &mut Vec<u8>) {
        multipart::emit_header(out, mp_type::PORT_DESC, 0);
        out.extend_from_slice(&self.port_no.to_be_bytes());
        out.extend_from_slice(&[0; 4]);
    }

    fn parse_body(body: &[u8]) -> Result<Self, DecodeError> {
        let (mp, _flags, rest) = multipart::parse_header(body)?;
        expect_port_desc("port desc request", mp)?;
        DecodeError::need("port desc request", rest, 8)?;
        Ok(PortDescRequest {
            port_no: (&rest[..4]).get_u32(),
        })
    }
}

/// One part of the `OFPMP_PORT_DESC` reply.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PortDescReply {
    /// [`multipart::MORE`] when more parts follow.
    pub flags: u16,
    pub ports: Vec<Port>,
}

impl Message for PortDescReply {
    const TYPE: u8 = msg_type::MULTIPART_REPLY;

    fn emit_body(&self, out: &mut Vec<u8>) {
        multipart::emit_header(out, mp_type::PORT_DESC, self.flags);
        for port in &self.ports {
            port.emit(out);
        }
    }

    fn parse_body(body: &[u8]) -> Result<Self, DecodeError> {
        let (mp, flags, mut rest) = multipart::parse_header(body)?;
        expect_port_desc("port desc reply", mp)?;
        let mut ports = Vec::new();
        while !rest.is_empty() {
            let (port, used) = Port::parse(rest)?;
            ports.push(port);
            rest = &rest[used..];
        }
        Ok(PortDescReply { flags, ports })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sample_port() -> Port {
        Port {
            port_no: 1,
            hw_addr: [2, 0, 0, 0, 0, 1],
            name: "p1".into(),
            config: port_config::NO_PACKET_IN,
            state: port_state::LIVE,
            properties: vec![PortProperty::Ethernet(EthernetProperty {
                curr: 0x2840,
                advertised: 0,
                supported: 0,
                peer: 0,
                curr_speed: 10_000_000,
                max_speed: 0,
            })],
        }
    }

    #[test]
    fn port_fields() {
        let mut b = Vec::new();
        sample_port().emit(&mut b);
        assert_eq!(b.len(), 72);
        assert_eq!(&b[0..4], [0, 0, 0, 1]);
        assert_eq!(&b[4..8], [0, 72, 0, 0]);
        assert_eq!(&b[8..16], [2, 0, 0, 0, 0, 1, 0, 0]);
        assert_eq!(&b[16..32], b"p1\0\0\0\0\0\0\0\0\0\0\0\0\0\0");
        assert_eq!(&b[32..36], [0, 0, 0, 0x40]);
        assert_eq!(&b[36..40], [0, 0, 0, 4]);
        assert_eq!(&b[40..48], [0, 0, 0, 32, 0, 0, 0, 0]);
        assert_eq!(&b[48..52], [0, 0, 0x28, 0x40]);
        assert_eq!(&b[64..68], 10_000_000u32.to_be_bytes());
        assert_eq!(Port::parse(&b), Ok((sample_port(), 72)));
    }

    #[test]
    fn a_name_of_16_bytes_or_invalid_utf8_decodes_to_what_emit_sends_back() {
        let mut b = Vec::new();
        sample_port().emit(&mut b);
        for raw in [
            &b"abcdefghijklmnop"[..],
            &[0xd4, 0x41, 0xd4, 0xd4, 0xd4, 0xd4, 0, 0],
        ] {
            let mut wire = b.clone();
            wire[16..32].fill(0);
            wire[16..16 + raw.len()].copy_from_slice(raw);
            let (port, _) = Port::parse(&wire).unwrap();
            assert!(port.name.len() < PORT_NAME_LEN, "{:?}", port.name);
            let mut again = Vec::new();
            port.emit(&mut again);
            assert_eq!(Port::parse(&again).map(|(p, _)| p.name), Ok(port.name));
        }
    }

    #[test]
    fn long_names_are_cut_on_a_char_boundary() {
        let port = Port {
            name: "abcdefghijklmn\u{e9}x".into(),
            properties: vec![],
            ..sample_port()
        };
        let mut b = Vec::new();
        port.emit(&mut b);
        assert_eq!(
            Port::parse(&b).map(|(p, _)| p.name),
            Ok("abcdefghijklmn".into())
        );
    }

    #[test]
    fn port_bad_lengths() {
        let mut b = Vec::new();
        sample_port().emit(&mut b);
        assert!(matches!(
            Port::parse(&b[..39]),
            Err(DecodeError::Truncated { .. })
        ));
        assert!(matches!(
            Port::parse(&b[..71]),
            Err(DecodeError::BadLength {
                what: "ofp_port",
                len: 72
            })
        ));
        let mut short = b.clone();
        short[4..6].copy_from_slice(&39u16.to_be_bytes());
        assert!(matches!(
            Port::parse(&short),
            Err(DecodeError::BadLength { .. })
        ));
        let mut bad_prop = b.clone();
        bad_prop[42..44].copy_from_slice(&12u16.to_be_bytes());
        assert!(matches!(
            Port::parse(&bad_prop),
            Err(DecodeError::BadLength { .. })
        ));
    }

    #[test]
    fn properties_padding_and_errors() {
        let mut b = Vec::new();
        emit_property(&mut b, 7, &[1, 2, 3]);
        assert_eq!(b, [0, 7, 0, 7, 1, 2, 3, 0]);
        assert_eq!(
            parse_properties("p", &b),
            Ok(vec![Property {
                prop_type: 7,
                data: vec![1, 2, 3]
            }])
        );
        assert_eq!(
            parse_properties("p", &b[..7]),
            Ok(vec![Property {
                prop_type: 7,
                data: vec![1, 2, 3]
            }])
        );
        assert!(matches!(
            parse_properties("p", &[0, 7, 0, 3]),
            Err(DecodeError::BadLength { len: 3, .. })
        ));
        assert!(matches!(
            parse_properties("p", &[0, 7, 0, 9, 0, 0, 0, 0]),
            Err(DecodeError::BadLength { len: 9, .. })
        ));
        assert!(matches!(
            parse_properties("p", &[0, 7]),
            Err(DecodeError::Truncated { .. })
        ));
    }

    #[test]
    fn port_status_bytes() {
        let status = PortStatus {
            reason: PortReason::Delete,
            port: sample_port(),
        };
        let bytes = status.to_bytes(0).unwrap();
        assert_eq!(
            &bytes[..16],
            [6, 12, 0, 88, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0]
        );
        assert_eq!(PortStatus::parse(&bytes), Ok((status, 0)));
        let mut trailing = bytes.clone();
        trailing.extend_from_slice(&[0; 8]);
        trailing[3] += 8;
        assert!(matches!(
            PortStatus::parse(&trailing),
            Err(DecodeError::BadLength { .. })
        ));
    }

    #[test]
    fn port_mod_bytes() {
        let pm = PortMod {
            port_no: 3,
            hw_addr: [0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff],
            config: port_config::PORT_DOWN,
            mask: port_config::PORT_DOWN | port_config::NO_FLOOD,
            properties: vec![PortModProperty::Ethernet { advertise: 0x20 }],
        };
        let bytes = pm.to_bytes(5).unwrap();
        assert_eq!(
            bytes,
            [
                6, 16, 0, 40, 0, 0, 0, 5, 0, 0, 0, 3, 0, 0, 0, 0, 0xaa, 0xbb, 0xcc, 0xdd, 0xee,
                0xff, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0x11, 0, 0, 0, 8, 0, 0, 0, 0x20
            ]
        );
        assert_eq!(PortMod::parse(&bytes), Ok((pm, 5)));
        assert!(matches!(
            PortMod::parse_body(&bytes[8..][..23]),
            Err(DecodeError::Truncated { .. })
        ));
        assert!(matches!(
            PortMod::parse_body(&[&bytes[8..32], &[0, 0, 0, 6, 1, 2, 0, 0][..]].concat()),
            Err(DecodeError::BadLength { .. })
        ));
    }

    #[test]
    fn port_desc_bytes() {
        assert_eq!(
            PortDescRequest::default().to_bytes(5).unwrap(),
            [
                6, 18, 0, 24, 0, 0, 0, 5, 0, 13, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0, 0, 0,
                0
            ]
        );
        let reply = PortDescReply {
            flags: multipart::MORE,
            ports: vec![
                sample_port(),
                Port {
                    port_no: 2,
                    ..sample_port()
                },
            ],
        };
        let bytes = reply.to_bytes(5).unwrap();
        assert_eq!(&bytes[8..16], [0, 13, 0, 1, 0, 0, 0, 0]);
        assert_eq!(bytes.len(), 16 + 2 * 72);
        assert_eq!(PortDescReply::parse(&bytes), Ok((reply, 5)));
        let mut flow = bytes.clone();
        flow[9] = 17;
        assert!(matches!(
            PortDescReply::parse(&flow),
            Err(DecodeError::Invalid { .. })
        ));
    }

    fn property() -> impl Strategy<Value = Property> {
        (1u16.., proptest::collection::vec(any::<u8>(), 0..20))
            .prop_map(|(prop_type, data)| Property { prop_type, data })
    }

    fn port() -> impl Strategy<Value = Port> {
        let eth = any::<[u32; 6]>().prop_map(|v| {
            PortProperty::Ethernet(EthernetProperty {
                curr: v[0],
                advertised: v[1],
                supported: v[2],
                peer: v[3],
                curr_speed: v[4],
                max_speed: v[5],
            })
        });
        let prop = prop_oneof![eth, property().prop_map(PortProperty::Other)];
        (
            any::<u32>(),
            any::<[u8; 6]>(),
            "[a-z0-9-]{0,15}",
            any::<u32>(),
            any::<u32>(),
            proptest::collection::vec(prop, 0..3),
        )
            .prop_map(|(port_no, hw_addr, name, config, state, properties)| Port {
                port_no,
                hw_addr,
                name,
                config,
                state,
                properties,
            })
    }

    proptest! {
        #[test]
        fn port_status_round_trip(reason in 0u8..5, port in port(), xid: u32) {
            let status = PortStatus { reason: PortReason::from_wire(reason), port };
            prop_assert_eq!(PortStatus::parse(&status.to_bytes(xid).unwrap()), Ok((status, xid)));
        }

        #[test]
        fn port_desc_round_trip(flags: u16, ports in proptest::collection::vec(port(), 0..3), port_no: u32, xid: u32) {
            let reply = PortDescReply { flags, ports };
            prop_assert_eq!(PortDescReply::parse(&reply.to_bytes(xid).unwrap()), Ok((reply, xid)));
            let request = PortDescRequest { port_no };
            prop_assert_eq!(PortDescRequest::parse(&request.to_bytes(xid).unwrap()), Ok((request, xid)));
        }

        #[test]
        fn port_mod_round_trip(port_no: u32, hw_addr: [u8; 6], config: u32, mask: u32, advertise: Option<u32>, other in proptest::collection::vec(property(), 0..2), xid: u32) {
            let mut properties: Vec<_> = advertise.map(|advertise| PortModProperty::Ethernet { advertise }).into_iter().collect();
            properties.extend(other.into_iter().map(PortModProperty::Other));
            let pm = PortMod { port_no, hw_addr, config, mask, properties };
            prop_assert_eq!(PortMod::parse(&pm.to_bytes(xid).unwrap()), Ok((pm, xid)));
        }

        #[test]
        fn parsers_never_panic(body in proptest::collection::vec(any::<u8>(), 0..160)) {
            let _ = PortStatus::parse_body(&body);
            let _ = PortMod::parse_body(&body);
            let _ = PortDescReply::parse_body(&body);
            let _ = PortDescRequest::parse_body(&body);
        }
    }
}
