//! [`MacAddr`], the project's one Ethernet address type, with its text forms and its serde form.
//!
//! # The text rule
//!
//! Every MAC the project reads from text goes through [`MacAddr::from_str`], which accepts
//! exactly six octets of two hex digits each, in either case, separated all by `:` or all by
//! `-`: `02:00:0a:f4:01:0a`, `02:00:0A:F4:01:0A`, `00-15-5D-01-02-03`. That covers what each
//! source writes: OVS (`external_ids:attached-mac`, `mac_in_use`), `ip link`, CNI results and
//! the `node.antrea.io/mac-address` annotation (lower-case colon form), and HNS and IP Helper
//! (upper-case dash form). It refuses one-digit octets (`2:0:a:f4:1:a`), mixed separators, signs
//! (`+f`) and anything around the address, since no source writes them.
//!
//! # The printed forms
//!
//! [`Display`](fmt::Display) prints the lower-case colon form; [`MacAddr::windows`] prints
//! Windows' upper-case dash form. serde uses the colon form and reads either.

use std::fmt;
use std::str::FromStr;

/// An Ethernet MAC address: six octets, most significant first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MacAddr(pub [u8; 6]);

impl MacAddr {
    /// The six octets.
    pub const fn octets(self) -> [u8; 6] {
        self.0
    }

    /// The address as a 48-bit number (the value of an `eth_src`/`eth_dst` field, a position
    /// in a MAC pool).
    pub fn to_u64(self) -> u64 {
        self.0.iter().fold(0, |acc, b| (acc << 8) | u64::from(*b))
    }

    /// The address of the low 48 bits of `value` (the higher bits are ignored).
    pub fn from_u64(value: u64) -> MacAddr {
        let [_, _, a, b, c, d, e, f] = value.to_be_bytes();
        MacAddr([a, b, c, d, e, f])
    }

    /// The address as Windows writes it (HNS documents, IP Helper, `Get-NetAdapter`):
    /// `00-15-5D-01-02-03`.
    pub fn windows(self) -> WindowsForm {
        WindowsForm(self)
    }
}

/// Prints a [`MacAddr`] in Windows' form, upper-case hex joined by `-` (`00-15-5D-01-02-03`).
/// Made by [`MacAddr::windows`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowsForm(MacAddr);

impl fmt::Display for WindowsForm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [a, b, c, d, e, g] = self.0.0;
        write!(f, "{a:02X}-{b:02X}-{c:02X}-{d:02X}-{e:02X}-{g:02X}")
    }
}

impl fmt::Display for MacAddr {
    /// `02:00:0a:f4:01:0a`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [a, b, c, d, e, g] = self.0;
        write!(f, "{a:02x}:{b:02x}:{c:02x}:{d:02x}:{e:02x}:{g:02x}")
    }
}

/// Text that is not a MAC address under the module's rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MacParseError(String);

impl MacParseError {
    /// The refused text.
    pub fn text(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for MacParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:?} is not a MAC address (expected six two-digit hex octets joined by ':' or '-', \
             like 02:00:0a:f4:01:0a)",
            self.0
        )
    }
}

impl std::error::Error for MacParseError {}

impl FromStr for MacAddr {
    type Err = MacParseError;

    /// Parses the module's one text rule: `02:00:0a:f4:01:0a` or `00-15-5D-01-02-03`.
    fn from_str(s: &str) -> Result<MacAddr, MacParseError> {
        let bad = || MacParseError(s.to_owned());
        let text = s.as_bytes();
        // Six two-digit octets and five separators.
        if text.len() != 17 {
            return Err(bad());
        }
        let separator = text[2];
        if separator != b':' && separator != b'-' {
            return Err(bad());
        }
        let mut octets = [0u8; 6];
        for (i, octet) in octets.iter_mut().enumerate() {
            let at = i * 3;
            if i > 0 && text[at - 1] != separator {
                return Err(bad());
            }
            let high = hex_digit(text[at]).ok_or_else(bad)?;
            let low = hex_digit(text[at + 1]).ok_or_else(bad)?;
            *octet = (high << 4) | low;
        }
        Ok(MacAddr(octets))
    }
}

/// The value of one hex digit, either case.
fn hex_digit(c: u8) -> Option<u8> {
    char::from(c).to_digit(16).map(|d| d as u8)
}

impl serde::Serialize for MacAddr {
    /// The colon form, `"02:00:0a:f4:01:0a"`.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for MacAddr {
    /// Either text form (the module's rule).
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<MacAddr, D::Error> {
        deserializer.deserialize_str(MacText)
    }
}

/// Reads a [`MacAddr`] from a serde string.
struct MacText;

impl serde::de::Visitor<'_> for MacText {
    type Value = MacAddr;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a MAC address like \"02:00:0a:f4:01:0a\"")
    }

    fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<MacAddr, E> {
        text.parse().map_err(E::custom)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn prints_both_forms() {
        let mac = MacAddr([0x00, 0x15, 0x5d, 0x0a, 0x0b, 0xff]);
        assert_eq!(mac.to_string(), "00:15:5d:0a:0b:ff");
        assert_eq!(mac.windows().to_string(), "00-15-5D-0A-0B-FF");
    }

    #[test]
    fn parses_either_separator_and_case() {
        let mac = MacAddr([0x02, 0x00, 0x0a, 0xf4, 0x01, 0x0a]);
        for text in [
            "02:00:0a:f4:01:0a",
            "02:00:0A:F4:01:0A",
            "02-00-0a-f4-01-0a",
            "02-00-0A-F4-01-0A",
        ] {
            assert_eq!(text.parse(), Ok(mac), "{text}");
        }
    }

    #[test]
    fn refuses_what_the_rule_does_not_allow() {
        for bad in [
            "",
            "02:00:0a:f4:01",
            "02:00:0a:f4:01:0a:00",
            "02:00:0a:f4:01:0g",
            "002:00:0a:f4:01:0a",
            "2:0:a:f4:1:a",
            "02:00:0a-f4:01:0a",
            "02.00.0a.f4.01.0a",
            "+2:00:0a:f4:01:0a",
            " 02:00:0a:f4:01:0a",
            "02:00:0a:f4:01:0a ",
            "0200.0af4.010a",
            "02:00:0a:f4:01:é",
        ] {
            let error = bad.parse::<MacAddr>().expect_err(bad);
            assert_eq!(error.text(), bad);
        }
    }

    #[test]
    fn numbers() {
        let mac = MacAddr([0x02, 0x00, 0x0a, 0xf4, 0x01, 0x0a]);
        assert_eq!(mac.octets(), [0x02, 0x00, 0x0a, 0xf4, 0x01, 0x0a]);
        assert_eq!(mac.to_u64(), 0x0200_0af4_010a);
        assert_eq!(MacAddr::from_u64(0xffff_0200_0af4_010a), mac);
        assert_eq!(
            MacAddr::from_u64(mac.to_u64() + 0xf6).to_string(),
            "02:00:0a:f4:02:00"
        );
    }

    #[test]
    fn serde_uses_the_colon_form_and_reads_either() {
        let mac = MacAddr([0x00, 0x15, 0x5d, 0x01, 0x02, 0x03]);
        assert_eq!(
            serde_json::to_string(&mac).unwrap(),
            "\"00:15:5d:01:02:03\""
        );
        assert_eq!(
            serde_json::from_str::<MacAddr>("\"00-15-5D-01-02-03\"").unwrap(),
            mac
        );
        let error = serde_json::from_str::<MacAddr>("\"00-15\"").unwrap_err();
        assert!(
            error.to_string().contains("is not a MAC address"),
            "{error}"
        );
        assert!(serde_json::from_str::<MacAddr>("[0,21,93,1,2,3]").is_err());
    }

    #[test]
    fn the_cidr_type_keeps_host_bits_and_serializes_as_text() {
        let net: crate::Ipv4Net = "10.10.0.11/24".parse().unwrap();
        assert_eq!(net.addr().to_string(), "10.10.0.11");
        assert_eq!(net.trunc().to_string(), "10.10.0.0/24");
        assert_eq!(serde_json::to_string(&net).unwrap(), "\"10.10.0.11/24\"");
        assert_eq!(
            serde_json::from_str::<crate::Ipv4Net>("\"10.10.0.11/24\"").unwrap(),
            net
        );
    }

    proptest! {
        #[test]
        fn text_round_trips(octets in any::<[u8; 6]>()) {
            let mac = MacAddr(octets);
            prop_assert_eq!(mac.to_string().parse::<MacAddr>(), Ok(mac));
            prop_assert_eq!(mac.windows().to_string().parse::<MacAddr>(), Ok(mac));
            let json = serde_json::to_string(&mac).unwrap();
            prop_assert_eq!(serde_json::from_str::<MacAddr>(&json).unwrap(), mac);
            prop_assert_eq!(MacAddr::from_u64(mac.to_u64()), mac);
        }

        #[test]
        fn parser_never_panics(text in "\\PC{0,24}|[0-9a-fA-F:-]{15,19}") {
            let _ = text.parse::<MacAddr>();
        }

        #[test]
        fn every_case_and_separator_parses(octets in any::<[u8; 6]>(), upper in any::<bool>(), dash in any::<bool>()) {
            let mac = MacAddr(octets);
            let text = match (upper, dash) {
                (false, false) => mac.to_string(),
                (true, true) => mac.windows().to_string(),
                (false, true) => mac.windows().to_string().to_lowercase(),
                (true, false) => mac.to_string().to_uppercase(),
            };
            prop_assert_eq!(text.parse::<MacAddr>(), Ok(mac));
        }
    }
}
