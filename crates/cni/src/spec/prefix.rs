//! An IP address with a prefix length (`10.1.0.5/24`), the CNI form of addresses and routes.

use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// An address and a prefix length; host bits may be set (`10.1.0.5/24` is a Pod address).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct IpPrefix {
    /// The address.
    pub addr: IpAddr,
    /// The prefix length, at most 32 for IPv4 and 128 for IPv6.
    pub len: u8,
}

/// Why a prefix string was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid CIDR address {input:?}: {reason}")]
pub struct IpPrefixParseError {
    /// The text parsed.
    pub input: String,
    /// What is wrong.
    pub reason: &'static str,
}

impl IpPrefix {
    /// `addr/len`, or `None` when `len` is too long for the family.
    pub fn new(addr: IpAddr, len: u8) -> Option<IpPrefix> {
        (len <= max_len(addr)).then_some(IpPrefix { addr, len })
    }

    /// The network address: host bits cleared.
    pub fn network(self) -> IpAddr {
        ip_from_bits(self.addr, ip_to_bits(self.addr) & self.mask_bits())
    }

    /// The last address of the network (all host bits set).
    pub fn last(self) -> IpAddr {
        ip_from_bits(
            self.addr,
            ip_to_bits(self.addr) | !self.mask_bits() & family_bits(self.addr),
        )
    }

    /// Whether `addr` is of the same family and inside the network.
    pub fn contains(self, addr: IpAddr) -> bool {
        addr.is_ipv4() == self.addr.is_ipv4()
            && ip_to_bits(addr) & self.mask_bits() == ip_to_bits(self.network())
    }

    fn mask_bits(self) -> u128 {
        let host = u32::from(max_len(self.addr) - self.len);
        family_bits(self.addr).checked_shl(host).unwrap_or(0) & family_bits(self.addr)
    }
}

fn max_len(addr: IpAddr) -> u8 {
    if addr.is_ipv4() { 32 } else { 128 }
}

fn family_bits(addr: IpAddr) -> u128 {
    if addr.is_ipv4() {
        u128::from(u32::MAX)
    } else {
        u128::MAX
    }
}

/// An address as an integer of its family's width.
pub fn ip_to_bits(addr: IpAddr) -> u128 {
    match addr {
        IpAddr::V4(a) => u128::from(a.to_bits()),
        IpAddr::V6(a) => a.to_bits(),
    }
}

/// The address of `like`'s family whose integer value is `bits` (truncated to the family).
pub fn ip_from_bits(like: IpAddr, bits: u128) -> IpAddr {
    match like {
        IpAddr::V4(_) => IpAddr::V4(std::net::Ipv4Addr::from_bits(bits as u32)),
        IpAddr::V6(_) => IpAddr::V6(std::net::Ipv6Addr::from_bits(bits)),
    }
}

impl fmt::Display for IpPrefix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.len)
    }
}

impl FromStr for IpPrefix {
    type Err = IpPrefixParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = |reason| IpPrefixParseError {
            input: s.to_owned(),
            reason,
        };
        let (addr, len) = s
            .split_once('/')
            .ok_or_else(|| err("missing /prefix length"))?;
        let addr: IpAddr = addr.parse().map_err(|_| err("bad address"))?;
        if len.is_empty() || len.len() > 3 || !len.bytes().all(|b| b.is_ascii_digit()) {
            return Err(err("bad prefix length"));
        }
        let len: u8 = len.parse().map_err(|_| err("bad prefix length"))?;
        IpPrefix::new(addr, len).ok_or_else(|| err("prefix length too long for the address family"))
    }
}

impl Serialize for IpPrefix {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for IpPrefix {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_displays() {
        let p: IpPrefix = "10.1.0.5/24".parse().unwrap();
        assert_eq!(p.to_string(), "10.1.0.5/24");
        assert_eq!(p.network().to_string(), "10.1.0.0");
        assert_eq!(p.last().to_string(), "10.1.0.255");
        assert!(p.contains("10.1.0.200".parse().unwrap()));
        assert!(!p.contains("10.1.1.0".parse().unwrap()));
        assert!(!p.contains("::1".parse().unwrap()));
        let v6: IpPrefix = "fd00::5/64".parse().unwrap();
        assert_eq!(v6.network().to_string(), "fd00::");
        assert_eq!(v6.last().to_string(), "fd00::ffff:ffff:ffff:ffff");
        let all: IpPrefix = "0.0.0.0/0".parse().unwrap();
        assert!(all.contains("8.8.8.8".parse().unwrap()));
        assert_eq!(all.last().to_string(), "255.255.255.255");
        let host: IpPrefix = "10.0.0.1/32".parse().unwrap();
        assert_eq!(host.network(), host.last());
    }

    #[test]
    fn rejects_malformed() {
        for bad in [
            "10.1.0.5",
            "10.1.0.5/33",
            "::/129",
            "x/8",
            "10.0.0.0/",
            "10.0.0.0/+8",
            "10.0.0.0/0008",
        ] {
            assert!(bad.parse::<IpPrefix>().is_err(), "{bad}");
        }
    }
}
