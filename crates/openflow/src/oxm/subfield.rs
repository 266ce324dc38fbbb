//! [`Subfield`]: a bit range of a field (`NXM_NX_REG0[0..15]`), as `move`, `output`, `ct(zone=…)`
//! and `learn` use it, with the `ofs_nbits` packing of Nicira actions.

use std::fmt;
use std::str::FromStr;

use super::field::Field;
use crate::text::parse_num;
use crate::{DecodeError, TextError};

/// Bits `ofs .. ofs + n_bits` of `field`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Subfield {
    pub field: Field,
    pub ofs: u16,
    pub n_bits: u16,
}

impl Subfield {
    /// The whole field.
    pub fn whole(field: Field) -> Subfield {
        Subfield {
            field,
            ofs: 0,
            n_bits: field.def().bits,
        }
    }

    /// Bits `start..=end` of `field`.
    pub fn bits(field: Field, start: u16, end: u16) -> Subfield {
        Subfield {
            field,
            ofs: start,
            n_bits: end.saturating_sub(start).saturating_add(1),
        }
    }

    /// Checks that the range lies inside the field.
    pub fn check(&self) -> Result<(), String> {
        let width = self.field.def().bits;
        if self.n_bits == 0 || u32::from(self.ofs) + u32::from(self.n_bits) > u32::from(width) {
            return Err(format!(
                "bits {}..{} outside the {width}-bit field {}",
                self.ofs,
                u32::from(self.ofs) + u32::from(self.n_bits),
                self.field.def().nxm_name
            ));
        }
        Ok(())
    }

    /// Nicira `ofs_nbits`: offset in the top 10 bits, `n_bits - 1` in the low 6.
    pub fn ofs_nbits(&self) -> u16 {
        (self.ofs << 6) | (self.n_bits.saturating_sub(1) & 0x3f)
    }

    /// Rebuilds a subfield from a field and `ofs_nbits`, checking its range.
    pub fn from_ofs_nbits(field: Field, ofs_nbits: u16) -> Result<Subfield, DecodeError> {
        let sf = Subfield {
            field,
            ofs: ofs_nbits >> 6,
            n_bits: (ofs_nbits & 0x3f) + 1,
        };
        sf.check().map_err(|reason| DecodeError::Invalid {
            what: "subfield",
            reason,
        })?;
        Ok(sf)
    }

    /// Whether this covers the whole field.
    pub fn is_whole(&self) -> bool {
        self.ofs == 0 && self.n_bits == self.field.def().bits
    }
}

impl fmt::Display for Subfield {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.field.def().nxm_name)?;
        if self.is_whole() {
            f.write_str("[]")
        } else if self.n_bits == 1 {
            write!(f, "[{}]", self.ofs)
        } else {
            write!(
                f,
                "[{}..{}]",
                self.ofs,
                u32::from(self.ofs) + u32::from(self.n_bits) - 1
            )
        }
    }
}

impl FromStr for Subfield {
    type Err = TextError;

    /// Parses `NAME[]`, `NAME[bit]`, `NAME[start..end]` or a bare `NAME` (the whole field), where
    /// NAME is an NXM/OXM name or a field name such as `reg0`.
    fn from_str(s: &str) -> Result<Subfield, TextError> {
        let (name, range) = match s.split_once('[') {
            Some((n, r)) => (
                n,
                Some(
                    r.strip_suffix(']')
                        .ok_or_else(|| TextError::new(s, "missing ']'"))?,
                ),
            ),
            None => (s, None),
        };
        let field =
            Field::from_name(name.trim()).ok_or_else(|| TextError::new(s, "unknown field"))?;
        let sf = match range {
            None | Some("") => Subfield::whole(field),
            Some(r) => match r.split_once("..") {
                Some((a, b)) => {
                    let (a, b): (u16, u16) = (parse_num(a)?, parse_num(b)?);
                    if b < a {
                        return Err(TextError::new(s, "range end before start"));
                    }
                    Subfield::bits(field, a, b)
                }
                None => {
                    let bit = parse_num(r)?;
                    Subfield::bits(field, bit, bit)
                }
            },
        };
        sf.check().map_err(|reason| TextError::new(s, reason))?;
        Ok(sf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_forms() {
        for s in [
            "NXM_NX_REG0[0..15]",
            "NXM_NX_REG0[]",
            "NXM_NX_REG0[19]",
            "NXM_OF_ETH_SRC[]",
            "NXM_NX_XXREG0[64..127]",
            "OXM_OF_METADATA[0..31]",
        ] {
            assert_eq!(s.parse::<Subfield>().unwrap().to_string(), s);
        }
        assert_eq!(
            "reg3".parse::<Subfield>(),
            Ok(Subfield::whole(Field::Reg(3)))
        );
        assert_eq!(
            "reg3[4..7]".parse::<Subfield>(),
            Ok(Subfield::bits(Field::Reg(3), 4, 7))
        );
        assert!("NXM_NX_REG0[0..32]".parse::<Subfield>().is_err());
        assert!("NXM_NX_REG0[5..3]".parse::<Subfield>().is_err());
        assert!("NOPE[]".parse::<Subfield>().is_err());
        assert!("NXM_NX_REG0[0..65535]".parse::<Subfield>().is_err());
    }

    #[test]
    fn ofs_nbits() {
        let sf = Subfield::bits(Field::Reg(2), 16, 31);
        assert_eq!(sf.ofs_nbits(), (16 << 6) | 15);
        assert_eq!(
            Subfield::from_ofs_nbits(Field::Reg(2), sf.ofs_nbits()),
            Ok(sf)
        );
        assert!(Subfield::from_ofs_nbits(Field::Reg(2), (30 << 6) | 15).is_err());
    }
}
