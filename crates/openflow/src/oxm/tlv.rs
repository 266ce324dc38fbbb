//! OXM/NXM type-length-value headers: the 32-bit `class:16 field:7 hasmask:1 length:8` header,
//! and field values packed big-endian into the field's wire width.

use super::field::{Field, class};
use crate::DecodeError;

/// Appends the 32-bit header of `field`, with `hasmask` and the payload length it implies.
pub fn emit_header(out: &mut Vec<u8>, field: Field, hasmask: bool) {
    let d = field.def();
    let len = if hasmask { d.bytes * 2 } else { d.bytes };
    let header = (u32::from(d.class) << 16)
        | (u32::from(d.code) << 9)
        | (u32::from(hasmask) << 8)
        | u32::from(len);
    out.extend_from_slice(&header.to_be_bytes());
}

/// Appends the unmasked header of `field` in its Nicira (NXM) form when it has one, as OVS
/// writes field references in `learn` specs.
pub fn emit_nxm_header(out: &mut Vec<u8>, field: Field) {
    let d = field.def();
    let (class, code) = match d.alt {
        Some(alt) if d.class == class::OPENFLOW_BASIC => alt,
        _ => (d.class, d.code),
    };
    let header = (u32::from(class) << 16) | (u32::from(code) << 9) | u32::from(d.bytes);
    out.extend_from_slice(&header.to_be_bytes());
}

/// Appends the low `bytes` bytes of `value`, big-endian.
pub fn emit_value(out: &mut Vec<u8>, value: u128, bytes: u8) {
    out.extend_from_slice(&value.to_be_bytes()[16 - usize::from(bytes)..]);
}

/// Reads a big-endian value of at most 16 bytes.
pub fn read_value(bytes: &[u8]) -> u128 {
    bytes
        .iter()
        .fold(0u128, |acc, b| (acc << 8) | u128::from(*b))
}

/// Appends one match entry: header, value and, when `mask` is given, the mask.
pub fn emit_entry(out: &mut Vec<u8>, field: Field, value: u128, mask: Option<u128>) {
    let bytes = field.def().bytes;
    emit_header(out, field, mask.is_some());
    emit_value(out, value, bytes);
    if let Some(m) = mask {
        emit_value(out, m, bytes);
    }
}

/// A decoded OXM header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawHeader {
    pub class: u16,
    pub code: u8,
    pub hasmask: bool,
    /// Payload length (value plus mask), excluding the header and any experimenter id.
    pub len: usize,
    /// Length of the header itself: 4, or 8 for the experimenter class.
    pub header_len: usize,
}

impl RawHeader {
    /// Decodes the header at the start of `buf`.
    pub fn parse(buf: &[u8]) -> Result<RawHeader, DecodeError> {
        DecodeError::need("OXM header", buf, 4)?;
        let h = u32::from_be_bytes([buf[0], buf[1], buf[2], buf[3]]);
        let class = (h >> 16) as u16;
        let mut header_len = 4;
        let mut len = (h & 0xff) as usize;
        if class == class::EXPERIMENTER {
            DecodeError::need("OXM experimenter header", buf, 8)?;
            header_len = 8;
            len = len.checked_sub(4).ok_or(DecodeError::BadLength {
                what: "OXM experimenter field",
                len,
            })?;
        }
        Ok(RawHeader {
            class,
            code: ((h >> 9) & 0x7f) as u8,
            hasmask: h & 0x100 != 0,
            len,
            header_len,
        })
    }

    /// The known field this header names, checking that its length fits the field's width.
    pub fn field(&self) -> Result<Field, DecodeError> {
        let raw = (u64::from(self.class) << 16) | (u64::from(self.code) << 9);
        let field = Field::from_header(self.class, self.code).ok_or(DecodeError::Unsupported {
            what: "OXM field",
            value: raw,
        })?;
        let want = usize::from(field.def().bytes) * if self.hasmask { 2 } else { 1 };
        if self.len != want {
            return Err(DecodeError::BadLength {
                what: field.def().name,
                len: self.len,
            });
        }
        Ok(field)
    }
}

/// Decodes a field header used as a subfield reference in actions (no payload follows);
/// returns the field and the header's length.
pub fn parse_field_header(buf: &[u8]) -> Result<(Field, usize), DecodeError> {
    let h = RawHeader::parse(buf)?;
    let raw = (u64::from(h.class) << 16) | (u64::from(h.code) << 9);
    let field = Field::from_header(h.class, h.code).ok_or(DecodeError::Unsupported {
        what: "OXM field",
        value: raw,
    })?;
    Ok((field, h.header_len))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers() {
        let mut b = Vec::new();
        emit_entry(&mut b, Field::Reg(0), 0x1, Some(0xf));
        assert_eq!(b, [0x00, 0x01, 0x01, 0x08, 0, 0, 0, 1, 0, 0, 0, 0xf]);
        let h = RawHeader::parse(&b).unwrap();
        assert_eq!(
            (h.class, h.code, h.hasmask, h.len, h.header_len),
            (1, 0, true, 8, 4)
        );
        assert_eq!(h.field(), Ok(Field::Reg(0)));
        b.clear();
        emit_entry(&mut b, Field::EthType, 0x0800, None);
        assert_eq!(b, [0x80, 0x00, 0x0a, 0x02, 0x08, 0x00]);
        b.clear();
        emit_header(&mut b, Field::InPort, false);
        assert_eq!(b, [0x80, 0, 0, 4]);
        assert_eq!(parse_field_header(&b), Ok((Field::InPort, 4)));
        assert_eq!(read_value(&[1, 2]), 0x102);
    }

    #[test]
    fn rejects_bad_headers() {
        assert!(RawHeader::parse(&[0, 1]).is_err());
        // reg0 with a 3-byte payload.
        assert!(matches!(
            RawHeader::parse(&[0, 1, 0, 3]).unwrap().field(),
            Err(DecodeError::BadLength { .. })
        ));
        // Unknown NXM_1 field 127.
        assert!(matches!(
            RawHeader::parse(&[0, 1, 0xfe, 4]).unwrap().field(),
            Err(DecodeError::Unsupported { .. })
        ));
        // Experimenter header shorter than the experimenter id.
        assert!(RawHeader::parse(&[0xff, 0xff, 0, 2, 0, 0, 0, 0]).is_err());
    }
}
