//! Ethernet MAC addresses as adapters and neighbor entries carry them.

use std::fmt;
use std::str::FromStr;

/// A 48-bit Ethernet address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct MacAddr(pub [u8; 6]);

impl fmt::Display for MacAddr {
    /// Formats as Windows shows it: `00-15-5D-01-02-03`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [a, b, c, d, e, g] = self.0;
        write!(f, "{a:02X}-{b:02X}-{c:02X}-{d:02X}-{e:02X}-{g:02X}")
    }
}

/// A string that is not six hex octets separated by `-` or `:`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a MAC address: {0:?}")]
pub struct MacParseError(pub String);

impl FromStr for MacAddr {
    type Err = MacParseError;

    /// Parses `00-15-5d-01-02-03` or `00:15:5d:01:02:03`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let error = || MacParseError(s.to_owned());
        let mut octets = [0u8; 6];
        let mut parts = s.split(['-', ':']);
        for octet in &mut octets {
            let part = parts.next().ok_or_else(error)?;
            if part.len() != 2 {
                return Err(error());
            }
            *octet = u8::from_str_radix(part, 16).map_err(|_| error())?;
        }
        match parts.next() {
            Some(_) => Err(error()),
            None => Ok(MacAddr(octets)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_both_separators_and_prints_windows_style() {
        let mac: MacAddr = "00:15:5d:0a:0B:ff".parse().unwrap();
        assert_eq!(mac, MacAddr([0x00, 0x15, 0x5d, 0x0a, 0x0b, 0xff]));
        assert_eq!(mac.to_string(), "00-15-5D-0A-0B-FF");
        assert_eq!("00-15-5D-0A-0B-FF".parse::<MacAddr>().unwrap(), mac);
    }

    #[test]
    fn refuses_malformed_text() {
        for bad in [
            "",
            "00-15-5d-0a-0b",
            "00-15-5d-0a-0b-ff-01",
            "0-15-5d-0a-0b-ff",
            "zz-15-5d-0a-0b-ff",
        ] {
            assert!(bad.parse::<MacAddr>().is_err(), "{bad:?}");
        }
    }
}
