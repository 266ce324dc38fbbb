//! The 128-bit UUID that names every OVSDB row, in its `8-4-4-4-12` hex text form.

use std::fmt;
use std::str::FromStr;

/// A row UUID.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Uuid(pub [u8; 16]);

/// Why a string is not a UUID.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid UUID {input:?}: expected 8-4-4-4-12 hex digits")]
pub struct UuidParseError {
    /// The rejected text.
    pub input: String,
}

/// Positions of the dashes in the text form.
const DASHES: [usize; 4] = [8, 13, 18, 23];
const TEXT_LEN: usize = 36;

impl FromStr for Uuid {
    type Err = UuidParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || UuidParseError {
            input: s.to_owned(),
        };
        let bytes = s.as_bytes();
        if bytes.len() != TEXT_LEN || DASHES.iter().any(|&i| bytes.get(i) != Some(&b'-')) {
            return Err(err());
        }
        let mut digits = bytes
            .iter()
            .enumerate()
            .filter(|(i, _)| !DASHES.contains(i))
            .map(|(_, &b)| b);
        let mut out = [0u8; 16];
        for byte in &mut out {
            let (Some(hi), Some(lo)) = (digits.next(), digits.next()) else {
                return Err(err());
            };
            let (Some(hi), Some(lo)) = (hex_value(hi), hex_value(lo)) else {
                return Err(err());
            };
            *byte = hi << 4 | lo;
        }
        Ok(Uuid(out))
    }
}

fn hex_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

impl fmt::Display for Uuid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, b) in self.0.iter().enumerate() {
            if matches!(i, 4 | 6 | 8 | 10) {
                f.write_str("-")?;
            }
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints_the_text_form() {
        let text = "36bfd2b6-5a2c-4b8f-9f3c-0123456789ab";
        let uuid: Uuid = text.parse().unwrap();
        assert_eq!(uuid.0[0], 0x36);
        assert_eq!(uuid.0[15], 0xab);
        assert_eq!(uuid.to_string(), text);
        assert_eq!(
            "36BFD2B6-5A2C-4B8F-9F3C-0123456789AB"
                .parse::<Uuid>()
                .unwrap(),
            uuid
        );
    }

    #[test]
    fn rejects_malformed_text() {
        for bad in [
            "",
            "36bfd2b6-5a2c-4b8f-9f3c-0123456789a",
            "36bfd2b6-5a2c-4b8f-9f3c-0123456789abc",
            "36bfd2b6x5a2c-4b8f-9f3c-0123456789ab",
            "36bfd2b6-5a2c-4b8f-9f3c-0123456789ag",
            "é6bfd2b6-5a2c-4b8f-9f3c-0123456789a",
        ] {
            assert!(bad.parse::<Uuid>().is_err(), "{bad:?} accepted");
        }
    }
}
