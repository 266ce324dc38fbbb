//! Address types of the input model: [`MacAddr`] and [`Ipv4Cidr`], with their usual text forms.

use std::fmt;
use std::net::Ipv4Addr;
use std::str::FromStr;

use crate::error::ModelError;

/// An Ethernet MAC address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MacAddr(pub [u8; 6]);

impl MacAddr {
    /// The address as a 48-bit number (the value of an `eth_src`/`eth_dst` field).
    pub fn to_u64(self) -> u64 {
        self.0.iter().fold(0, |acc, b| (acc << 8) | u64::from(*b))
    }
}

impl fmt::Display for MacAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [a, b, c, d, e, g] = self.0;
        write!(f, "{a:02x}:{b:02x}:{c:02x}:{d:02x}:{e:02x}:{g:02x}")
    }
}

impl FromStr for MacAddr {
    type Err = ModelError;

    /// Parses `aa:bb:cc:dd:ee:ff` (hex digits, either case).
    fn from_str(s: &str) -> Result<MacAddr, ModelError> {
        let bad = || ModelError::BadMac(s.to_owned());
        let mut out = [0u8; 6];
        let mut parts = s.split(':');
        for byte in &mut out {
            let part = parts.next().ok_or_else(bad)?;
            if part.is_empty() || part.len() > 2 {
                return Err(bad());
            }
            *byte = u8::from_str_radix(part, 16).map_err(|_| bad())?;
        }
        if parts.next().is_some() {
            return Err(bad());
        }
        Ok(MacAddr(out))
    }
}

/// An IPv4 address with a prefix length: a subnet (`10.244.1.0/24`) or an interface address
/// with its subnet (`10.10.0.11/24`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Ipv4Cidr {
    addr: Ipv4Addr,
    prefix_len: u8,
}

impl Ipv4Cidr {
    /// `addr/prefix_len`; fails for a prefix longer than 32.
    pub fn new(addr: Ipv4Addr, prefix_len: u8) -> Result<Ipv4Cidr, ModelError> {
        if prefix_len > 32 {
            return Err(ModelError::BadPrefix(format!("{addr}/{prefix_len}")));
        }
        Ok(Ipv4Cidr { addr, prefix_len })
    }

    /// The address as given (host bits kept).
    pub fn addr(&self) -> Ipv4Addr {
        self.addr
    }

    pub fn prefix_len(&self) -> u8 {
        self.prefix_len
    }

    /// The netmask as a number (`/24` → `0xffffff00`).
    pub fn mask(&self) -> u32 {
        u32::MAX
            .checked_shl(32 - u32::from(self.prefix_len))
            .unwrap_or(0)
    }

    /// The subnet's first address (host bits cleared).
    pub fn network(&self) -> Ipv4Addr {
        Ipv4Addr::from(u32::from(self.addr) & self.mask())
    }

    /// Whether `ip` lies in the subnet.
    pub fn contains(&self, ip: Ipv4Addr) -> bool {
        u32::from(ip) & self.mask() == u32::from(self.network())
    }
}

impl fmt::Display for Ipv4Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.prefix_len)
    }
}

impl FromStr for Ipv4Cidr {
    type Err = ModelError;

    /// Parses `a.b.c.d/len`.
    fn from_str(s: &str) -> Result<Ipv4Cidr, ModelError> {
        let bad = || ModelError::BadPrefix(s.to_owned());
        let (addr, len) = s.split_once('/').ok_or_else(bad)?;
        let addr: Ipv4Addr = addr.parse().map_err(|_| bad())?;
        let len: u8 = len.parse().map_err(|_| bad())?;
        Ipv4Cidr::new(addr, len)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #[test]
        fn parsers_never_panic(s in "\\PC{0,24}|[0-9a-fA-F:./-]{0,24}") {
            let _ = s.parse::<MacAddr>();
            let _ = s.parse::<Ipv4Cidr>();
            let _ = crate::cookie::Round::parse_external_id(&s);
        }

        #[test]
        fn text_round_trips(bytes in any::<[u8; 6]>(), ip in any::<u32>(), len in 0u8..=32) {
            let mac = MacAddr(bytes);
            prop_assert_eq!(mac.to_string().parse::<MacAddr>(), Ok(mac));
            let cidr = Ipv4Cidr::new(Ipv4Addr::from(ip), len).unwrap();
            prop_assert_eq!(cidr.to_string().parse::<Ipv4Cidr>(), Ok(cidr));
            prop_assert!(cidr.contains(cidr.network()));
        }
    }

    #[test]
    fn mac_text() {
        let mac: MacAddr = "02:00:0A:f4:01:0a".parse().unwrap();
        assert_eq!(mac.0, [2, 0, 0x0a, 0xf4, 1, 0x0a]);
        assert_eq!(mac.to_string(), "02:00:0a:f4:01:0a");
        assert_eq!(mac.to_u64(), 0x0200_0af4_010a);
        for bad in [
            "",
            "02:00:0a:f4:01",
            "02:00:0a:f4:01:0a:00",
            "02:00:0a:f4:01:0g",
            "002:00:0a:f4:01:0a",
        ] {
            assert!(bad.parse::<MacAddr>().is_err(), "{bad}");
        }
    }

    #[test]
    fn cidr_maths() {
        let c: Ipv4Cidr = "10.10.0.11/24".parse().unwrap();
        assert_eq!(c.addr(), Ipv4Addr::new(10, 10, 0, 11));
        assert_eq!(c.network(), Ipv4Addr::new(10, 10, 0, 0));
        assert_eq!(c.mask(), 0xffff_ff00);
        assert!(c.contains(Ipv4Addr::new(10, 10, 0, 200)));
        assert!(!c.contains(Ipv4Addr::new(10, 10, 1, 1)));
        assert_eq!(c.to_string(), "10.10.0.11/24");
        let all: Ipv4Cidr = "0.0.0.0/0".parse().unwrap();
        assert_eq!(all.mask(), 0);
        assert!(all.contains(Ipv4Addr::new(1, 2, 3, 4)));
        let host: Ipv4Cidr = "1.2.3.4/32".parse().unwrap();
        assert_eq!(host.mask(), u32::MAX);
        for bad in ["10.0.0.0", "10.0.0.0/33", "10.0.0/8", "x/8", "10.0.0.0/-1"] {
            assert!(bad.parse::<Ipv4Cidr>().is_err(), "{bad}");
        }
    }
}
