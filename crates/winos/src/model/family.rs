//! IPv4 or IPv6: the `Family` of IP Helper rows.

use std::net::IpAddr;

/// An address family of the IP stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum IpFamily {
    /// IPv4 (`AF_INET`).
    V4,
    /// IPv6 (`AF_INET6`).
    V6,
}

impl IpFamily {
    /// The family of `address`.
    pub fn of(address: IpAddr) -> Self {
        match address {
            IpAddr::V4(_) => IpFamily::V4,
            IpAddr::V6(_) => IpFamily::V6,
        }
    }
}

/// `Ok` when `a` and `b` are of one family, else the `InvalidArgument` error of `function`.
/// The native IP Helper and its fake refuse the same inputs with it.
#[cfg(any(windows, feature = "fake"))]
pub(crate) fn same_family(function: &'static str, a: IpAddr, b: IpAddr) -> crate::Result<()> {
    if IpFamily::of(a) == IpFamily::of(b) {
        Ok(())
    } else {
        Err(crate::WinOsError::InvalidArgument {
            function,
            detail: format!("{a} and {b} are of different families"),
        })
    }
}

/// `Ok` when every DNS server is of `family`, else the `InvalidArgument` error of `function`.
#[cfg(any(windows, feature = "fake"))]
pub(crate) fn check_dns_family(
    function: &'static str,
    family: IpFamily,
    servers: &[IpAddr],
) -> crate::Result<()> {
    match servers
        .iter()
        .find(|server| IpFamily::of(**server) != family)
    {
        None => Ok(()),
        Some(server) => Err(crate::WinOsError::InvalidArgument {
            function,
            detail: format!("DNS server {server} is not {family:?}"),
        }),
    }
}
