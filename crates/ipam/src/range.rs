//! Address ranges and range sets, canonicalized as host-local does: the range defaults to the
//! whole subnet minus the network address (and, for IPv4, the broadcast address), the gateway
//! defaults to the first address, and ranges of one set must not overlap.

use std::fmt;
use std::net::IpAddr;

use ipnet::IpNet;
use serde::Deserialize;

use crate::IpamError;
use crate::address_bits::{from_bits, to_bits};

/// One range of a range set, after canonicalization.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    /// The subnet (host bits clear).
    pub subnet: IpNet,
    /// First allocatable address, inclusive.
    pub start: IpAddr,
    /// Last allocatable address, inclusive.
    pub end: IpAddr,
    /// The gateway, never allocated.
    pub gateway: IpAddr,
}

/// The JSON form of a range.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RangeConf {
    #[serde(default, deserialize_with = "cni::spec::cidr::deserialize_option")]
    pub subnet: Option<IpNet>,
    #[serde(default)]
    pub range_start: Option<IpAddr>,
    #[serde(default)]
    pub range_end: Option<IpAddr>,
    #[serde(default)]
    pub gateway: Option<IpAddr>,
}

/// Ranges allocated as one: each allocation takes one address from the first range with room,
/// in round-robin order. Never empty.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RangeSet(Vec<Range>);

/// An IPv4-mapped IPv6 address is treated as IPv4, as Go's `net.IP` does.
fn canonical(addr: IpAddr) -> IpAddr {
    match addr {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(addr, IpAddr::V4),
        v4 => v4,
    }
}

pub(crate) fn next(addr: IpAddr) -> IpAddr {
    from_bits(addr, to_bits(addr).wrapping_add(1))
}

impl RangeConf {
    fn canonicalize(&self) -> Result<Range, IpamError> {
        let given = self
            .subnet
            .ok_or_else(|| IpamError::config("subnet is required in every range"))?;
        let (addr, len) = (canonical(given.addr()), given.prefix_len());
        let subnet = IpNet::new(addr, len)
            .ok()
            .filter(|s| s.prefix_len() + 2 <= s.max_prefix_len())
            .ok_or_else(|| {
                IpamError::config(format!("Network {addr}/{len} too small to allocate from"))
            })?;
        if subnet.network() != subnet.addr() {
            return Err(IpamError::config(format!(
                "Network has host bits set. For a subnet mask of length {len} the network address is {}",
                subnet.network()
            )));
        }
        let gateway = self
            .gateway
            .map(canonical)
            .unwrap_or_else(|| next(subnet.addr()));
        let start = self.range_start.map(canonical);
        let end = self.range_end.map(canonical);
        let partial = Bounds { subnet, start, end };
        if let Some(s) = start.filter(|&s| !partial.contains(s)) {
            return Err(IpamError::config(format!(
                "RangeStart {s} not in network {subnet}"
            )));
        }
        if let Some(e) = end.filter(|&e| !partial.contains(e)) {
            return Err(IpamError::config(format!(
                "RangeEnd {e} not in network {subnet}"
            )));
        }
        let last = subnet.broadcast();
        let default_end = if last.is_ipv4() {
            from_bits(last, to_bits(last) - 1)
        } else {
            last
        };
        Ok(Range {
            subnet,
            start: start.unwrap_or_else(|| next(subnet.addr())),
            end: end.unwrap_or(default_end),
            gateway,
        })
    }
}

/// A subnet with optional bounds, for checking bounds while they are being defaulted.
struct Bounds {
    subnet: IpNet,
    start: Option<IpAddr>,
    end: Option<IpAddr>,
}

impl Bounds {
    fn contains(&self, addr: IpAddr) -> bool {
        let addr = canonical(addr);
        self.subnet.contains(&addr)
            && self.start.is_none_or(|s| to_bits(addr) >= to_bits(s))
            && self.end.is_none_or(|e| to_bits(addr) <= to_bits(e))
    }
}

impl Range {
    /// Whether `addr` is in the subnet and between `start` and `end`.
    pub fn contains(&self, addr: IpAddr) -> bool {
        Bounds {
            subnet: self.subnet,
            start: Some(self.start),
            end: Some(self.end),
        }
        .contains(addr)
    }

    fn overlaps(&self, other: &Range) -> bool {
        self.start.is_ipv4() == other.start.is_ipv4()
            && (self.contains(other.start)
                || self.contains(other.end)
                || other.contains(self.start)
                || other.contains(self.end))
    }

    /// How many addresses `start..=end` holds (saturating).
    fn size(&self) -> u128 {
        (to_bits(self.end).saturating_sub(to_bits(self.start))).saturating_add(1)
    }
}

impl fmt::Display for Range {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.start, self.end)
    }
}

impl RangeSet {
    pub(crate) fn canonicalize(confs: &[RangeConf]) -> Result<RangeSet, IpamError> {
        if confs.is_empty() {
            return Err(IpamError::config("empty range set"));
        }
        let ranges = confs
            .iter()
            .map(RangeConf::canonicalize)
            .collect::<Result<Vec<_>, _>>()?;
        if ranges
            .iter()
            .any(|r| r.start.is_ipv4() != ranges[0].start.is_ipv4())
        {
            return Err(IpamError::config("mixed address families"));
        }
        for (i, a) in ranges.iter().enumerate() {
            if let Some(b) = ranges[i + 1..].iter().find(|b| a.overlaps(b)) {
                return Err(IpamError::config(format!("subnets {a} and {b} overlap")));
            }
        }
        Ok(RangeSet(ranges))
    }

    /// The ranges, in configuration order.
    pub fn ranges(&self) -> &[Range] {
        &self.0
    }

    /// The range holding `addr`, if any.
    pub fn range_for(&self, addr: IpAddr) -> Option<&Range> {
        self.0.iter().find(|r| r.contains(addr))
    }

    /// Whether the set's first range is IPv4.
    pub fn is_ipv4(&self) -> bool {
        self.0.first().is_some_and(|r| r.start.is_ipv4())
    }

    pub(crate) fn overlaps(&self, other: &RangeSet) -> bool {
        self.0.iter().any(|a| other.0.iter().any(|b| a.overlaps(b)))
    }

    /// The addresses to try, in host-local's order: from the one after `last_reserved` (when it is
    /// in the set) or from the first range's start, through every range in turn, wrapping, ending
    /// with `last_reserved` itself; each range's gateway is skipped.
    pub fn candidates(
        &self,
        last_reserved: Option<IpAddr>,
    ) -> impl Iterator<Item = (&Range, IpAddr)> + '_ {
        let total = self.0.iter().fold(0u128, |n, r| n.saturating_add(r.size()));
        let mut position = match last_reserved
            .and_then(|l| self.0.iter().position(|r| r.contains(l)).map(|i| (i, l)))
        {
            Some((i, last)) => self.step(i, canonical(last)),
            None => (0, self.0[0].start),
        };
        (0..total).filter_map(move |_| {
            let (i, addr) = position;
            position = self.step(i, addr);
            let range = &self.0[i];
            (addr != range.gateway).then_some((range, addr))
        })
    }

    fn step(&self, i: usize, addr: IpAddr) -> (usize, IpAddr) {
        if addr == self.0[i].end {
            let j = (i + 1) % self.0.len();
            (j, self.0[j].start)
        } else {
            (i, next(addr))
        }
    }
}

impl fmt::Display for RangeSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self.0.iter().map(Range::to_string).collect();
        f.write_str(&parts.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conf(subnet: &str, start: Option<&str>, end: Option<&str>, gw: Option<&str>) -> RangeConf {
        RangeConf {
            subnet: Some(cni::spec::parse_cidr(subnet).unwrap()),
            range_start: start.map(|s| s.parse().unwrap()),
            range_end: end.map(|s| s.parse().unwrap()),
            gateway: gw.map(|s| s.parse().unwrap()),
        }
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn defaults_follow_host_local() {
        let r = conf("10.1.0.0/24", None, None, None)
            .canonicalize()
            .unwrap();
        assert_eq!(
            (r.start, r.end, r.gateway),
            (ip("10.1.0.1"), ip("10.1.0.254"), ip("10.1.0.1"))
        );
        let r6 = conf("fd00::/120", None, None, None).canonicalize().unwrap();
        assert_eq!((r6.start, r6.end), (ip("fd00::1"), ip("fd00::ff")));
        let explicit = conf(
            "10.1.0.0/24",
            Some("10.1.0.10"),
            Some("10.1.0.20"),
            Some("10.1.0.254"),
        )
        .canonicalize()
        .unwrap();
        assert_eq!(explicit.to_string(), "10.1.0.10-10.1.0.20");
        assert!(explicit.contains(ip("10.1.0.20")) && !explicit.contains(ip("10.1.0.21")));
    }

    #[test]
    fn invalid_ranges_give_host_local_messages() {
        let msg = |c: RangeConf| c.canonicalize().unwrap_err().to_string();
        assert_eq!(
            msg(conf("10.1.0.0/31", None, None, None)),
            "Network 10.1.0.0/31 too small to allocate from"
        );
        assert_eq!(
            msg(conf("10.1.0.5/24", None, None, None)),
            "Network has host bits set. For a subnet mask of length 24 the network address is 10.1.0.0"
        );
        assert_eq!(
            msg(conf("10.1.0.0/24", Some("10.2.0.1"), None, None)),
            "RangeStart 10.2.0.1 not in network 10.1.0.0/24"
        );
        assert_eq!(
            msg(conf(
                "10.1.0.0/24",
                Some("10.1.0.9"),
                Some("10.1.0.5"),
                None
            )),
            "RangeStart 10.1.0.9 not in network 10.1.0.0/24"
        );
        assert_eq!(
            msg(conf("10.1.0.0/24", None, Some("10.1.1.5"), None)),
            "RangeEnd 10.1.1.5 not in network 10.1.0.0/24"
        );
        let set = |cs: &[RangeConf]| RangeSet::canonicalize(cs).unwrap_err().to_string();
        assert_eq!(set(&[]), "empty range set");
        assert_eq!(
            set(&[
                conf("10.1.0.0/24", None, None, None),
                conf("fd00::/64", None, None, None)
            ]),
            "mixed address families"
        );
        assert_eq!(
            set(&[
                conf("10.1.0.0/24", None, None, None),
                conf("10.1.0.0/25", None, None, None)
            ]),
            "subnets 10.1.0.1-10.1.0.254 and 10.1.0.1-10.1.0.126 overlap"
        );
    }

    #[test]
    fn candidates_wrap_across_ranges_and_skip_gateways() {
        let set = RangeSet::canonicalize(&[
            conf("10.1.0.0/29", None, None, None),
            conf("10.2.0.0/30", None, None, None),
        ])
        .unwrap();
        let all: Vec<String> = set.candidates(None).map(|(_, a)| a.to_string()).collect();
        assert_eq!(
            all,
            [
                "10.1.0.2", "10.1.0.3", "10.1.0.4", "10.1.0.5", "10.1.0.6", "10.2.0.2"
            ]
        );
        let after: Vec<String> = set
            .candidates(Some(ip("10.1.0.6")))
            .map(|(_, a)| a.to_string())
            .collect();
        assert_eq!(
            after,
            [
                "10.2.0.2", "10.1.0.2", "10.1.0.3", "10.1.0.4", "10.1.0.5", "10.1.0.6"
            ]
        );
        let outside: Vec<String> = set
            .candidates(Some(ip("192.168.0.1")))
            .map(|(_, a)| a.to_string())
            .collect();
        assert_eq!(outside, all);
        let big = RangeSet::canonicalize(&[conf("fd00::/64", None, None, None)]).unwrap();
        assert_eq!(
            big.candidates(None).next().map(|(_, a)| a),
            Some(ip("fd00::2"))
        );
    }
}
