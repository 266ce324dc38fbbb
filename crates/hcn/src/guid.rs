//! [`Guid`]: the identifier of every HCN object, in its text form
//! (`xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`) on the wire and its binary `GUID` layout at the FFI.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A GUID such as `583CC151-73EC-4A6A-8B47-578297AD7623`.
///
/// Parsing is case-insensitive and accepts optional braces (`{...}`), as Windows tools print
/// both; formatting is upper-case without braces. The value is kept as the 128-bit number whose
/// big-endian hex digits are the text form, which is also how `GUID::from_u128` reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Guid(pub u128);

impl Guid {
    /// The all-zero GUID. HCN create calls take it to mean "HNS picks the ID".
    pub const NIL: Guid = Guid(0);

    /// Whether this is the all-zero GUID (Antrea treats a nil namespace as "no namespace").
    pub fn is_nil(self) -> bool {
        self.0 == 0
    }

    /// `is_nil` by reference, for `skip_serializing_if`.
    pub(crate) fn is_nil_ref(&self) -> bool {
        self.is_nil()
    }

    /// The four fields of the Windows `GUID` struct (`Data1`, `Data2`, `Data3`, `Data4`).
    pub fn fields(self) -> (u32, u16, u16, [u8; 8]) {
        let v = self.0;
        (
            (v >> 96) as u32,
            (v >> 80) as u16,
            (v >> 64) as u16,
            (v as u64).to_be_bytes(),
        )
    }

    /// The GUID made of the four fields of the Windows `GUID` struct (the inverse of
    /// [`Guid::fields`]).
    pub fn from_fields(data1: u32, data2: u16, data3: u16, data4: [u8; 8]) -> Self {
        Guid(
            u128::from(data1) << 96
                | u128::from(data2) << 80
                | u128::from(data3) << 64
                | u128::from(u64::from_be_bytes(data4)),
        )
    }
}

/// A string that is not a GUID.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a GUID (expected xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)")]
pub struct GuidParseError(pub String);

impl FromStr for Guid {
    type Err = GuidParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || GuidParseError(s.to_owned());
        let inner = match s.strip_prefix('{') {
            Some(rest) => rest.strip_suffix('}').ok_or_else(bad)?,
            None => s,
        };
        let groups: Vec<&str> = inner.split('-').collect();
        let lengths: Vec<usize> = groups.iter().map(|g| g.len()).collect();
        if lengths != [8, 4, 4, 4, 12] {
            return Err(bad());
        }
        let mut value: u128 = 0;
        for c in groups.concat().chars() {
            let digit = c.to_digit(16).ok_or_else(bad)?;
            value = (value << 4) | u128::from(digit);
        }
        Ok(Guid(value))
    }
}

impl fmt::Display for Guid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let hex = format!("{:032X}", self.0);
        write!(
            f,
            "{}-{}-{}-{}-{}",
            &hex[0..8],
            &hex[8..12],
            &hex[12..16],
            &hex[16..20],
            &hex[20..32]
        )
    }
}

impl Serialize for Guid {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Guid {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_round_trip_and_fields() {
        let g: Guid = "{583cc151-73ec-4a6a-8b47-578297ad7623}".parse().unwrap();
        assert_eq!(g.to_string(), "583CC151-73EC-4A6A-8B47-578297AD7623");
        assert_eq!(
            g.fields(),
            (
                0x583CC151,
                0x73EC,
                0x4A6A,
                [0x8B, 0x47, 0x57, 0x82, 0x97, 0xAD, 0x76, 0x23]
            )
        );
        assert!(Guid::NIL.is_nil() && !g.is_nil());
        let (data1, data2, data3, data4) = g.fields();
        assert_eq!(Guid::from_fields(data1, data2, data3, data4), g);
    }

    #[test]
    fn rejects_malformed_text() {
        for bad in [
            "",
            "583CC151",
            "583CC151-73EC-4A6A-8B47-578297AD762",
            "583CC151-73EC-4A6A-8B47-578297AD762G",
            "{583CC151-73EC-4A6A-8B47-578297AD7623",
        ] {
            assert_eq!(
                bad.parse::<Guid>(),
                Err(GuidParseError(bad.to_owned())),
                "{bad}"
            );
        }
    }
}
