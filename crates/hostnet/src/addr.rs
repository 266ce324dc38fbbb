//! Address value types: an IPv4 address with prefix length and an Ethernet MAC address, with
//! their usual text forms (`10.0.0.1/24`, `02:00:0a:0a:00:0b`).

use std::fmt;
use std::net::Ipv4Addr;
use std::str::FromStr;

/// Text that is not a valid address of the named kind.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {kind} {text:?}")]
pub struct AddrParseError {
    kind: &'static str,
    text: String,
}

impl AddrParseError {
    fn new(kind: &'static str, text: &str) -> AddrParseError {
        AddrParseError {
            kind,
            text: text.to_owned(),
        }
    }
}

/// An IPv4 address with a prefix length: an interface address (`10.10.0.11/24`) or, when the
/// host bits are zero, a network (`10.244.1.0/24`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Ipv4Cidr {
    addr: Ipv4Addr,
    prefix_len: u8,
}

impl Ipv4Cidr {
    /// `0.0.0.0/0`, the destination of a default route.
    pub const ANY: Ipv4Cidr = Ipv4Cidr {
        addr: Ipv4Addr::UNSPECIFIED,
        prefix_len: 0,
    };

    /// `addr/prefix_len`; `None` when `prefix_len > 32`.
    pub fn new(addr: Ipv4Addr, prefix_len: u8) -> Option<Ipv4Cidr> {
        (prefix_len <= 32).then_some(Ipv4Cidr { addr, prefix_len })
    }

    /// The address as given (host bits kept).
    pub fn addr(&self) -> Ipv4Addr {
        self.addr
    }

    /// The prefix length, 0 to 32.
    pub fn prefix_len(&self) -> u8 {
        self.prefix_len
    }

    /// The netmask as a number (`/24` → `0xffff_ff00`).
    fn mask(&self) -> u32 {
        u32::MAX
            .checked_shl(32 - u32::from(self.prefix_len))
            .unwrap_or(0)
    }

    /// The network this address belongs to (host bits cleared).
    pub fn network(&self) -> Ipv4Cidr {
        Ipv4Cidr {
            addr: Ipv4Addr::from(u32::from(self.addr) & self.mask()),
            prefix_len: self.prefix_len,
        }
    }

    /// Whether `ip` lies inside this network.
    pub fn contains(&self, ip: Ipv4Addr) -> bool {
        u32::from(ip) & self.mask() == u32::from(self.addr) & self.mask()
    }

    /// The first usable address of the network (`10.244.1.0/24` → `10.244.1.1/24`): Antrea's
    /// gateway address. `None` for /31 and /32, which have no room for it.
    pub fn first_host(&self) -> Option<Ipv4Cidr> {
        if self.prefix_len >= 31 {
            return None;
        }
        let first = u32::from(self.network().addr).checked_add(1)?;
        Some(Ipv4Cidr {
            addr: Ipv4Addr::from(first),
            prefix_len: self.prefix_len,
        })
    }
}

impl From<ipnet::Ipv4Net> for Ipv4Cidr {
    fn from(net: ipnet::Ipv4Net) -> Ipv4Cidr {
        Ipv4Cidr {
            addr: net.addr(),
            prefix_len: net.prefix_len(),
        }
    }
}

impl From<Ipv4Cidr> for ipnet::Ipv4Net {
    fn from(cidr: Ipv4Cidr) -> ipnet::Ipv4Net {
        // An Ipv4Cidr's prefix length is at most 32 by construction.
        ipnet::Ipv4Net::new_assert(cidr.addr, cidr.prefix_len)
    }
}

impl fmt::Display for Ipv4Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.prefix_len)
    }
}

impl FromStr for Ipv4Cidr {
    type Err = AddrParseError;

    fn from_str(s: &str) -> Result<Ipv4Cidr, AddrParseError> {
        let err = || AddrParseError::new("IPv4 CIDR", s);
        let (addr, len) = s.split_once('/').ok_or_else(err)?;
        let addr: Ipv4Addr = addr.parse().map_err(|_| err())?;
        if len.is_empty() || len.len() > 2 || !len.bytes().all(|b| b.is_ascii_digit()) {
            return Err(err());
        }
        let len: u8 = len.parse().map_err(|_| err())?;
        Ipv4Cidr::new(addr, len).ok_or_else(err)
    }
}

/// An Ethernet MAC address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MacAddr(pub [u8; 6]);

impl MacAddr {
    /// The six bytes.
    pub fn octets(&self) -> [u8; 6] {
        self.0
    }

    /// From a link-layer address of any length; `None` unless it has exactly six bytes.
    pub fn from_slice(bytes: &[u8]) -> Option<MacAddr> {
        <[u8; 6]>::try_from(bytes).ok().map(MacAddr)
    }
}

impl fmt::Display for MacAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [a, b, c, d, e, g] = self.0;
        write!(f, "{a:02x}:{b:02x}:{c:02x}:{d:02x}:{e:02x}:{g:02x}")
    }
}

impl FromStr for MacAddr {
    type Err = AddrParseError;

    fn from_str(s: &str) -> Result<MacAddr, AddrParseError> {
        let err = || AddrParseError::new("MAC address", s);
        let mut out = [0u8; 6];
        let mut parts = s.split([':', '-']);
        for byte in &mut out {
            let part = parts.next().ok_or_else(err)?;
            if part.len() != 2 {
                return Err(err());
            }
            *byte = u8::from_str_radix(part, 16).map_err(|_| err())?;
        }
        if parts.next().is_some() {
            return Err(err());
        }
        Ok(MacAddr(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cidr_parse_display_round_trip() {
        for text in ["10.10.0.11/24", "0.0.0.0/0", "10.244.1.10/32"] {
            assert_eq!(text.parse::<Ipv4Cidr>().unwrap().to_string(), text);
        }
    }

    #[test]
    fn cidr_rejects_bad_text() {
        for text in [
            "10.0.0.1",
            "10.0.0.1/33",
            "10.0.0.1/",
            "10.0.0/24",
            "10.0.0.1/+4",
            "10.0.0.1/024",
        ] {
            assert!(text.parse::<Ipv4Cidr>().is_err(), "{text}");
        }
    }

    #[test]
    fn cidr_network_contains_first_host() {
        let c: Ipv4Cidr = "10.244.1.77/24".parse().unwrap();
        assert_eq!(c.network().to_string(), "10.244.1.0/24");
        assert!(c.contains("10.244.1.200".parse().unwrap()));
        assert!(!c.contains("10.244.2.1".parse().unwrap()));
        assert_eq!(c.first_host().unwrap().to_string(), "10.244.1.1/24");
        let all: Ipv4Cidr = "0.0.0.0/0".parse().unwrap();
        assert!(all.contains("1.2.3.4".parse().unwrap()));
        assert_eq!(
            "10.0.0.1/31".parse::<Ipv4Cidr>().unwrap().first_host(),
            None
        );
    }

    #[test]
    fn mac_parse_display() {
        let m: MacAddr = "02:00:0A:0a:00:0b".parse().unwrap();
        assert_eq!(m.to_string(), "02:00:0a:0a:00:0b");
        assert_eq!("02-00-0a-0a-00-0b".parse::<MacAddr>().unwrap(), m);
        for bad in [
            "02:00:0a:0a:00",
            "02:00:0a:0a:00:0b:01",
            "2:00:0a:0a:00:0b",
            "zz:00:0a:0a:00:0b",
        ] {
            assert!(bad.parse::<MacAddr>().is_err(), "{bad}");
        }
        assert_eq!(MacAddr::from_slice(&[1, 2, 3]), None);
    }
}
