//! `SOCKADDR_INET` / `SOCKET_ADDRESS` to and from `std::net` addresses.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use windows::Win32::Networking::WinSock::{
    ADDRESS_FAMILY, AF_INET, AF_INET6, IN_ADDR, IN_ADDR_0, IN6_ADDR, IN6_ADDR_0, SOCKADDR_IN,
    SOCKADDR_IN6, SOCKADDR_INET, SOCKET_ADDRESS,
};

use crate::model::IpFamily;

/// The `AF_*` value of a family.
pub(super) fn address_family(family: IpFamily) -> ADDRESS_FAMILY {
    match family {
        IpFamily::V4 => AF_INET,
        IpFamily::V6 => AF_INET6,
    }
}

/// A `SOCKADDR_INET` holding `address` (port 0).
pub(super) fn to_inet(address: IpAddr) -> SOCKADDR_INET {
    match address {
        IpAddr::V4(v4) => SOCKADDR_INET {
            Ipv4: SOCKADDR_IN {
                sin_family: AF_INET,
                sin_addr: IN_ADDR {
                    S_un: IN_ADDR_0 {
                        S_addr: u32::from_ne_bytes(v4.octets()),
                    },
                },
                ..Default::default()
            },
        },
        IpAddr::V6(v6) => SOCKADDR_INET {
            Ipv6: SOCKADDR_IN6 {
                sin6_family: AF_INET6,
                sin6_addr: IN6_ADDR {
                    u: IN6_ADDR_0 { Byte: v6.octets() },
                },
                ..Default::default()
            },
        },
    }
}

/// The address in a `SOCKADDR_INET`; `None` for a family other than IPv4/IPv6.
pub(super) fn from_inet(address: &SOCKADDR_INET) -> Option<IpAddr> {
    // SAFETY: `si_family` overlays the family field of both members and is always initialized;
    // the member read matches it.
    unsafe {
        match address.si_family {
            AF_INET => Some(IpAddr::V4(Ipv4Addr::from(
                address.Ipv4.sin_addr.S_un.S_addr.to_ne_bytes(),
            ))),
            AF_INET6 => Some(IpAddr::V6(Ipv6Addr::from(address.Ipv6.sin6_addr.u.Byte))),
            _ => None,
        }
    }
}

/// The address a `SOCKET_ADDRESS` points to; `None` for null or another family.
///
/// # Safety
/// `address.lpSockaddr` is null or points to a socket address of `iSockaddrLength` bytes.
pub(super) unsafe fn from_socket_address(address: &SOCKET_ADDRESS) -> Option<IpAddr> {
    let raw = address.lpSockaddr;
    if raw.is_null() {
        return None;
    }
    let length = usize::try_from(address.iSockaddrLength).ok()?;
    // SAFETY: the caller guarantees `raw` points to `length` bytes; the family is read first
    // and the cast type's size is checked against `length`.
    unsafe {
        match (*raw).sa_family {
            AF_INET if length >= size_of::<SOCKADDR_IN>() => {
                let v4 = &*raw.cast::<SOCKADDR_IN>();
                Some(IpAddr::V4(Ipv4Addr::from(
                    v4.sin_addr.S_un.S_addr.to_ne_bytes(),
                )))
            }
            AF_INET6 if length >= size_of::<SOCKADDR_IN6>() => {
                let v6 = &*raw.cast::<SOCKADDR_IN6>();
                Some(IpAddr::V6(Ipv6Addr::from(v6.sin6_addr.u.Byte)))
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inet_round_trips_both_families() {
        for text in ["10.1.2.3", "0.0.0.0", "fd00::1", "::"] {
            let address: IpAddr = text.parse().unwrap();
            assert_eq!(from_inet(&to_inet(address)), Some(address));
        }
    }
}
