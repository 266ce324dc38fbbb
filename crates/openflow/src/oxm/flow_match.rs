//! [`Match`]: a set of match fields with optional masks, and its wire form `ofp_match`
//! (OXM type 1: a list of OXM TLVs, padded to 8 bytes).

use super::field::{Field, Prereq};
use super::tlv::{self, RawHeader};
use crate::DecodeError;

/// `OFPMT_OXM`.
pub const OFPMT_OXM: u16 = 1;

/// One matched field. `mask` equals the field's full mask for an exact match; `value` never has
/// bits outside `mask`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MatchEntry {
    pub field: Field,
    pub value: u128,
    pub mask: u128,
}

impl MatchEntry {
    /// Whether every bit of the field is matched.
    pub fn is_exact(&self) -> bool {
        self.mask == self.field.full_mask()
    }
}

/// A flow match: fields kept sorted in `ovs-ofctl`'s print order, each at most once.
/// Registers wider than 32 bits (`xreg`, `xxreg`) are stored as their 32-bit halves, the way OVS
/// stores and prints them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Match {
    entries: Vec<MatchEntry>,
}

impl Match {
    /// The empty match (matches every packet).
    pub fn new() -> Match {
        Match::default()
    }

    /// Matches `field` exactly.
    pub fn set(&mut self, field: Field, value: u128) -> &mut Match {
        self.set_masked(field, value, field.full_mask())
    }

    /// Matches the bits of `field` set in `mask`. A zero mask removes the field.
    pub fn set_masked(&mut self, field: Field, value: u128, mask: u128) -> &mut Match {
        if let Some((first, count)) = field.reg_parts() {
            for i in 0..count {
                let shift = 32 * u32::from(count - 1 - i);
                let part = |v: u128| (v >> shift) & 0xffff_ffff;
                self.set_masked(Field::Reg(first + i), part(value), part(mask));
            }
            return self;
        }
        let mask = mask & field.full_mask();
        let at = self.entries.binary_search_by(|e| e.field.cmp(&field));
        match (at, mask) {
            (Ok(i), 0) => {
                self.entries.remove(i);
            }
            (Err(_), 0) => {}
            (Ok(i), _) => {
                self.entries[i] = MatchEntry {
                    field,
                    value: value & mask,
                    mask,
                }
            }
            (Err(i), _) => self.entries.insert(
                i,
                MatchEntry {
                    field,
                    value: value & mask,
                    mask,
                },
            ),
        }
        self
    }

    /// Builder form of [`Match::set`].
    pub fn with(mut self, field: Field, value: u128) -> Match {
        self.set(field, value);
        self
    }

    /// Builder form of [`Match::set_masked`].
    pub fn with_masked(mut self, field: Field, value: u128, mask: u128) -> Match {
        self.set_masked(field, value, mask);
        self
    }

    /// Stops matching `field`.
    pub fn remove(&mut self, field: Field) {
        self.set_masked(field, 0, 0);
    }

    /// The entry for `field`, if matched.
    pub fn get(&self, field: Field) -> Option<&MatchEntry> {
        self.entries
            .binary_search_by(|e| e.field.cmp(&field))
            .ok()
            .map(|i| &self.entries[i])
    }

    /// The exact value of `field`, if it is matched exactly.
    pub fn exact(&self, field: Field) -> Option<u128> {
        self.get(field).filter(|e| e.is_exact()).map(|e| e.value)
    }

    /// All entries in print order.
    pub fn entries(&self) -> &[MatchEntry] {
        &self.entries
    }

    /// Whether nothing is matched.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Checks that every field's prerequisites (for example `ip` for `nw_src`) are matched too.
    pub fn check_prerequisites(&self) -> Result<(), String> {
        let eth = self.exact(Field::EthType);
        let proto = self.exact(Field::IpProto);
        let ipv4 = eth == Some(0x0800);
        let ipv6 = eth == Some(0x86dd);
        let ct_valid = self
            .get(Field::CtState)
            .is_some_and(|e| e.mask & 0x30 == 0x30 && e.value & 0x30 == 0x20);
        for e in &self.entries {
            let ok = match e.field.def().prereq {
                Prereq::None => true,
                Prereq::Ipv4 => ipv4,
                Prereq::Ipv6 => ipv6,
                Prereq::Ip => ipv4 || ipv6,
                Prereq::Arp => eth == Some(0x0806) || eth == Some(0x8035),
                Prereq::Tcp => (ipv4 || ipv6) && proto == Some(6),
                Prereq::Udp => (ipv4 || ipv6) && proto == Some(17),
                Prereq::Sctp => (ipv4 || ipv6) && proto == Some(132),
                Prereq::Icmpv4 => ipv4 && proto == Some(1),
                Prereq::Icmpv6 => ipv6 && proto == Some(58),
                Prereq::Ct => ct_valid,
            };
            if !ok {
                return Err(format!(
                    "{} requires {:?} in the match",
                    e.field.def().match_name,
                    e.field.def().prereq
                ));
            }
        }
        Ok(())
    }

    /// Appends the OXM TLVs alone (no `ofp_match` header, no padding).
    pub fn emit_oxms(&self, out: &mut Vec<u8>) {
        for e in &self.entries {
            let mask = if e.is_exact() { None } else { Some(e.mask) };
            tlv::emit_entry(out, e.field, e.value, mask);
        }
    }

    /// Decodes a sequence of OXM TLVs that fills `buf` exactly.
    pub fn parse_oxms(mut buf: &[u8]) -> Result<Match, DecodeError> {
        let mut m = Match::new();
        let mut seen = Vec::new();
        while !buf.is_empty() {
            let h = RawHeader::parse(buf)?;
            let total = h.header_len + h.len;
            DecodeError::need("OXM field", buf, total)?;
            let field = h.field()?;
            let bytes = usize::from(field.def().bytes);
            let payload = &buf[h.header_len..total];
            let value = tlv::read_value(&payload[..bytes]);
            let mask = if h.hasmask {
                if !field.def().maskable {
                    return Err(DecodeError::Invalid {
                        what: "OXM field",
                        reason: format!("{} is not maskable", field.def().name),
                    });
                }
                tlv::read_value(&payload[bytes..])
            } else {
                field.full_mask()
            };
            let full = field.full_mask();
            if value & !full != 0 || mask & !full != 0 || value & !mask != 0 {
                return Err(DecodeError::Invalid {
                    what: "OXM field",
                    reason: format!(
                        "{} value {value:#x}/{mask:#x} has bits outside its mask or width",
                        field.def().name
                    ),
                });
            }
            if seen.contains(&field) {
                return Err(DecodeError::Invalid {
                    what: "OXM field",
                    reason: format!("{} appears twice", field.def().name),
                });
            }
            seen.push(field);
            m.set_masked(field, value, mask);
            buf = &buf[total..];
        }
        // Decoded matches are kept (a cache's flows, a dump): no room for more entries.
        m.entries.shrink_to_fit();
        Ok(m)
    }

    /// Appends `ofp_match` (type OXM, length, TLVs, zero padding to a multiple of 8).
    pub fn emit(&self, out: &mut Vec<u8>) {
        let start = out.len();
        out.extend_from_slice(&OFPMT_OXM.to_be_bytes());
        out.extend_from_slice(&[0, 0]);
        self.emit_oxms(out);
        let len = out.len() - start;
        out[start + 2..start + 4].copy_from_slice(&(len as u16).to_be_bytes());
        out.resize(start + len.next_multiple_of(8), 0);
    }

    /// Decodes `ofp_match` at the start of `buf`; returns it and the bytes it occupies, padding
    /// included.
    pub fn parse(buf: &[u8]) -> Result<(Match, usize), DecodeError> {
        DecodeError::need("ofp_match", buf, 4)?;
        let ty = u16::from_be_bytes([buf[0], buf[1]]);
        if ty != OFPMT_OXM {
            return Err(DecodeError::Unsupported {
                what: "ofp_match type",
                value: u64::from(ty),
            });
        }
        let len = usize::from(u16::from_be_bytes([buf[2], buf[3]]));
        if len < 4 {
            return Err(DecodeError::BadLength {
                what: "ofp_match",
                len,
            });
        }
        let padded = len.next_multiple_of(8);
        DecodeError::need("ofp_match", buf, padded)?;
        Ok((Match::parse_oxms(&buf[4..len])?, padded))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_match_is_eight_bytes() {
        let mut b = Vec::new();
        Match::new().emit(&mut b);
        assert_eq!(b, [0, 1, 0, 4, 0, 0, 0, 0]);
        assert_eq!(Match::parse(&b), Ok((Match::new(), 8)));
    }

    #[test]
    fn exact_and_masked_fields() {
        let m = Match::new().with(Field::EthType, 0x0800).with_masked(
            Field::Ipv4Src,
            0x0a000001,
            0xffffff00,
        );
        let mut b = Vec::new();
        m.emit(&mut b);
        assert_eq!(
            b,
            [
                0, 1, 0, 22, //
                0x80, 0x00, 0x0a, 0x02, 0x08, 0x00, //
                0x80, 0x00, 0x17, 0x08, 10, 0, 0, 0, 0xff, 0xff, 0xff, 0, //
                0, 0
            ]
        );
        let (back, used) = Match::parse(&b).unwrap();
        assert_eq!(used, 24);
        // The value was normalised under its mask.
        assert_eq!(back.get(Field::Ipv4Src).unwrap().value, 0x0a000000);
        assert_eq!(back, m);
    }

    #[test]
    fn wide_registers_split_into_halves() {
        let m = Match::new().with(Field::Xreg(0), 0x1_0000_0002);
        assert_eq!(m.exact(Field::Reg(0)), Some(1));
        assert_eq!(m.exact(Field::Reg(1)), Some(2));
        let m = Match::new().with_masked(Field::Xxreg(1), 5, 0xffff_ffff);
        assert_eq!(m.entries().len(), 1);
        assert_eq!(m.exact(Field::Reg(7)), Some(5));
        // OVS's OF1.5 encoding of registers: OXM_OF_PKT_REG0 with value and mask.
        let raw = [
            0x80, 0x01, 0x01, 0x10, 0, 0, 0, 1, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0,
        ];
        let m = Match::parse_oxms(&raw).unwrap();
        assert_eq!(m.exact(Field::Reg(0)), Some(1));
        assert_eq!(m.get(Field::Reg(1)), None);
    }

    #[test]
    fn rejects_malformed() {
        assert!(Match::parse(&[0, 0, 0, 4, 0, 0, 0, 0]).is_err()); // standard match type
        assert!(Match::parse(&[0, 1, 0, 3, 0, 0, 0, 0]).is_err()); // length < 4
        assert!(Match::parse(&[0, 1, 0, 12, 0x80, 0, 0x0a, 2, 8, 0, 0]).is_err()); // truncated padding
        // Value bits outside the mask.
        let raw = [0, 1, 1, 8, 0, 0, 0, 3, 0, 0, 0, 1];
        assert!(matches!(
            Match::parse_oxms(&raw),
            Err(DecodeError::Invalid { .. })
        ));
        // Masked non-maskable field (eth_type).
        let raw = [0x80, 0, 0x0b, 4, 8, 0, 0xff, 0xff];
        assert!(matches!(
            Match::parse_oxms(&raw),
            Err(DecodeError::Invalid { .. })
        ));
        // Duplicate.
        let raw = [0x80, 0, 0x0a, 2, 8, 0, 0x80, 0, 0x0a, 2, 8, 0];
        assert!(matches!(
            Match::parse_oxms(&raw),
            Err(DecodeError::Invalid { .. })
        ));
        // Truncated TLV.
        assert!(Match::parse_oxms(&[0x80, 0, 0x0a, 2, 8]).is_err());
    }

    #[test]
    fn prerequisites() {
        assert!(
            Match::new()
                .with(Field::Ipv4Src, 1)
                .check_prerequisites()
                .is_err()
        );
        assert!(
            Match::new()
                .with(Field::EthType, 0x800)
                .with(Field::Ipv4Src, 1)
                .check_prerequisites()
                .is_ok()
        );
        let tcp = Match::new()
            .with(Field::EthType, 0x800)
            .with(Field::IpProto, 6)
            .with(Field::TcpDst, 80);
        assert!(tcp.check_prerequisites().is_ok());
        assert!(tcp.with(Field::IpProto, 17).check_prerequisites().is_err());
    }

    /// Match text and the OXM fields Open vSwitch 3.1 itself sent for it in an OpenFlow 1.5
    /// flow-desc reply (captured from a real `ovs-vswitchd`; OVS writes registers as
    /// `OXM_OF_PKT_REG` pairs).
    #[rustfmt::skip]
    const OVS_VECTORS: &[(&str, &str)] = &[
        ("in_port=1,dl_src=00:00:00:00:00:01,dl_dst=01:00:00:00:00:00/01:00:00:00:00:00",
         "8000000400000001800008060000000000018000070c010000000000010000000000"),
        ("tcp,reg0=0x1/0xf,reg3=0x5,nw_src=10.0.0.0/24,tp_dst=80,tcp_flags=+syn-ack",
         "80000a020800800017080a000000ffffff00800014010680001c02005080005504000200128001011000000001000000000000000f0000000080010310000000000000000500000000ffffffff"),
        ("ct_state=-new+trk,ct_zone=65520,ct_mark=0x2/0x2,ct_label=0x1/0x1,ip",
         "80000a0208000001d30800000020000000210001d402fff00001d70800000002000000020001d9200000000000000000000000000000000100000000000000000000000000000001"),
        ("arp,arp_spa=10.0.0.1,arp_op=1,arp_sha=00:00:00:00:00:01",
         "80000a02080680002a02000180002c040a00000180003006000000000001"),
        ("icmp6,ipv6_src=fe80::/64,icmp_type=135,nd_target=fe80::1",
         "80000a0286dd80003520fe800000000000000000000000000000ffffffffffffffff0000000000000000800014013a80003a018780003e10fe800000000000000000000000000001"),
        ("tun_id=0x5,tun_src=1.1.1.1,tun_dst=2.2.2.2,metadata=0x7,dl_vlan=5,dl_vlan_pcp=3",
         "80000c02100580000e010380004c08000000000000000500013e04010101010001400402020202800004080000000000000007"),
        ("pkt_mark=0x10,conj_id=7,udp,nw_tos=8,nw_ecn=1,tp_src=53",
         "00014a040000000780000a02080080001001028000120101800014011180001e0200350001420400000010"),
    ];

    #[test]
    fn decodes_open_vswitch_matches() {
        for (text, hex) in OVS_VECTORS {
            let bytes: Vec<u8> = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
                .collect();
            let expected: Match = text.parse().unwrap();
            assert_eq!(Match::parse_oxms(&bytes), Ok(expected), "{text}");
        }
    }

    #[test]
    fn every_field_round_trips_with_its_header() {
        for d in crate::oxm::FIELDS {
            let f = d.field;
            let value = 0x0123_4567_89ab_cdef_0123_4567_89ab_cdef & f.full_mask();
            let mut m = Match::new();
            m.set(f, value);
            let mut b = Vec::new();
            m.emit_oxms(&mut b);
            let header = (u32::from(d.class) << 16) | (u32::from(d.code) << 9) | u32::from(d.bytes);
            if f.reg_parts().is_some() {
                // Wide registers are stored and sent as their 32-bit halves.
                assert_eq!(b.len(), m.entries().len() * 8, "{}", d.name);
            } else {
                assert_eq!(b[..4], header.to_be_bytes(), "{}", d.name);
                assert_eq!(b.len(), 4 + usize::from(d.bytes), "{}", d.name);
            }
            assert_eq!(Match::parse_oxms(&b), Ok(m.clone()), "{}", d.name);
            if d.maskable {
                let mask = 0x00ff_00ff_00ff_00ff_00ff_00ff_00ff_00ff & f.full_mask();
                let masked = Match::new().with_masked(f, value, mask);
                let mut b = Vec::new();
                masked.emit_oxms(&mut b);
                assert_eq!(Match::parse_oxms(&b), Ok(masked), "{} masked", d.name);
            }
        }
    }
}
