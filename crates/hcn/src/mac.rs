//! [`MacAddress`]: an Ethernet address, written by HNS in dash form (`00-15-5D-01-02-03`).

use std::fmt;
use std::str::FromStr;

/// An Ethernet MAC address. Parses dash or colon form, any case; prints HNS's dash form,
/// upper-case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct MacAddress(pub [u8; 6]);

/// A string that is not a MAC address.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a MAC address (expected 00-15-5D-01-02-03)")]
pub struct MacParseError(pub String);

impl MacAddress {
    /// The address as a 48-bit number (for ranges and sequences).
    pub fn to_u64(self) -> u64 {
        self.0.iter().fold(0, |acc, b| (acc << 8) | u64::from(*b))
    }

    /// The address of the low 48 bits of `value`.
    pub fn from_u64(value: u64) -> MacAddress {
        let b = value.to_be_bytes();
        MacAddress([b[2], b[3], b[4], b[5], b[6], b[7]])
    }
}

impl FromStr for MacAddress {
    type Err = MacParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || MacParseError(s.to_owned());
        let parts: Vec<&str> = s.split(['-', ':']).collect();
        if parts.len() != 6 {
            return Err(bad());
        }
        let mut bytes = [0u8; 6];
        for (byte, part) in bytes.iter_mut().zip(parts) {
            if part.len() != 2 {
                return Err(bad());
            }
            *byte = u8::from_str_radix(part, 16).map_err(|_| bad())?;
        }
        Ok(MacAddress(bytes))
    }
}

impl fmt::Display for MacAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [a, b, c, d, e, g] = self.0;
        write!(f, "{a:02X}-{b:02X}-{c:02X}-{d:02X}-{e:02X}-{g:02X}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_both_forms_prints_dash_form() {
        let mac: MacAddress = "00:15:5d:0a:0b:0c".parse().unwrap();
        assert_eq!(mac.to_string(), "00-15-5D-0A-0B-0C");
        assert_eq!("00-15-5D-0A-0B-0C".parse(), Ok(mac));
        assert_eq!(
            MacAddress::from_u64(mac.to_u64() + 1).to_string(),
            "00-15-5D-0A-0B-0D"
        );
        for bad in [
            "",
            "00-15-5D-0A-0B",
            "00-15-5D-0A-0B-0G",
            "00-15-5D-0A-0B-0C0",
        ] {
            assert!(bad.parse::<MacAddress>().is_err(), "{bad}");
        }
    }
}
