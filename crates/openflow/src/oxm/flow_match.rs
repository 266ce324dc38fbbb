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
}
