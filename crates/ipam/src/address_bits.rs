//! Addresses as integers, for the range arithmetic host-local does (the next address, ordering,
//! range sizes) on both families alike.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// `addr` as an integer of its family's width.
pub(crate) fn to_bits(addr: IpAddr) -> u128 {
    match addr {
        IpAddr::V4(a) => u128::from(a.to_bits()),
        IpAddr::V6(a) => a.to_bits(),
    }
}

/// The address of `like`'s family whose integer value is `bits`, truncated to the family's width.
pub(crate) fn from_bits(like: IpAddr, bits: u128) -> IpAddr {
    match like {
        IpAddr::V4(_) => IpAddr::V4(Ipv4Addr::from_bits(bits as u32)),
        IpAddr::V6(_) => IpAddr::V6(Ipv6Addr::from_bits(bits)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_truncates_to_the_family() {
        let v4: IpAddr = "10.1.0.255".parse().unwrap();
        assert_eq!(to_bits(v4), 0x0a01_00ff);
        assert_eq!(from_bits(v4, to_bits(v4) + 1).to_string(), "10.1.1.0");
        assert_eq!(from_bits(v4, 1 << 32).to_string(), "0.0.0.0");
        let v6: IpAddr = "fd00::ffff".parse().unwrap();
        assert_eq!(from_bits(v6, to_bits(v6) + 1).to_string(), "fd00::1:0");
    }
}
