//! `GetAdaptersAddresses` to [`Adapter`]s.

use std::net::IpAddr;

use ipnet::Ipv4Net;
use model::MacAddr;
use windows::Win32::Foundation::{ERROR_BUFFER_OVERFLOW, ERROR_NO_DATA, NO_ERROR, WIN32_ERROR};
use windows::Win32::NetworkManagement::IpHelper::{
    GAA_FLAG_INCLUDE_ALL_COMPARTMENTS, GAA_FLAG_INCLUDE_ALL_INTERFACES, GAA_FLAG_INCLUDE_PREFIX,
    GetAdaptersAddresses, IP_ADAPTER_ADDRESSES_LH,
};
use windows::Win32::Networking::WinSock::AF_UNSPEC;

use super::sockaddr::from_socket_address;
use crate::Result;
use crate::model::{Adapter, InterfaceType, Luid, OperStatus};
use crate::native::errors::check_win32;

/// The first buffer size tried, as Microsoft recommends (grown when the call says so).
const INITIAL_BUFFER: u32 = 15_000;
/// How often the buffer is grown before giving up (adapters may appear between calls).
const ATTEMPTS: usize = 4;

/// Every adapter, in all compartments, including down ones.
pub(super) fn adapters() -> Result<Vec<Adapter>> {
    let function = "GetAdaptersAddresses";
    let flags = GAA_FLAG_INCLUDE_PREFIX
        | GAA_FLAG_INCLUDE_ALL_INTERFACES
        | GAA_FLAG_INCLUDE_ALL_COMPARTMENTS;
    let mut size = INITIAL_BUFFER;
    for _ in 0..ATTEMPTS {
        // u64 elements keep the buffer 8-byte aligned for the structures written into it.
        let mut buffer = vec![0u64; (size as usize).div_ceil(8)];
        let first = buffer.as_mut_ptr().cast::<IP_ADAPTER_ADDRESSES_LH>();
        // SAFETY: `first` points to `size` writable, aligned bytes; `size` is updated on overflow.
        let code = WIN32_ERROR(unsafe {
            GetAdaptersAddresses(AF_UNSPEC.0 as u32, flags, None, Some(first), &mut size)
        });
        match code {
            NO_ERROR => {
                let mut adapters = Vec::new();
                let mut next = first.cast_const();
                while !next.is_null() {
                    // SAFETY: the call filled a linked list inside `buffer`, which is alive.
                    let raw = unsafe { &*next };
                    // SAFETY: `raw` is a node of that list; its pointers point into `buffer`.
                    adapters.push(unsafe { adapter(raw) });
                    next = raw.Next;
                }
                return Ok(adapters);
            }
            ERROR_NO_DATA => return Ok(Vec::new()),
            ERROR_BUFFER_OVERFLOW => continue,
            other => {
                return check_win32(function, other, || "adapters".into()).map(|()| Vec::new());
            }
        }
    }
    check_win32(function, ERROR_BUFFER_OVERFLOW, || "adapters".into()).map(|()| Vec::new())
}

/// Reads one adapter node.
///
/// # Safety
/// `raw` is a node filled by `GetAdaptersAddresses` whose buffer is alive.
unsafe fn adapter(raw: &IP_ADAPTER_ADDRESSES_LH) -> Adapter {
    // SAFETY: the strings and lists are null or point into the live buffer.
    unsafe {
        let mut ipv4 = Vec::new();
        let mut unicast = raw.FirstUnicastAddress;
        while let Some(entry) = unicast.as_ref() {
            if let Some(IpAddr::V4(address)) = from_socket_address(&entry.Address)
                && let Ok(net) = Ipv4Net::new(address, entry.OnLinkPrefixLength)
            {
                ipv4.push(net);
            }
            unicast = entry.Next;
        }
        let mut dns_servers = Vec::new();
        let mut dns = raw.FirstDnsServerAddress;
        while let Some(entry) = dns.as_ref() {
            dns_servers.extend(from_socket_address(&entry.Address));
            dns = entry.Next;
        }
        let mac = (raw.PhysicalAddressLength == 6).then(|| {
            let mut octets = [0u8; 6];
            octets.copy_from_slice(&raw.PhysicalAddress[..6]);
            MacAddr(octets)
        });
        Adapter {
            name: if raw.AdapterName.is_null() {
                String::new()
            } else {
                String::from_utf8_lossy(raw.AdapterName.as_bytes()).into_owned()
            },
            alias: wide(raw.FriendlyName),
            description: wide(raw.Description),
            index: raw.Anonymous1.Anonymous.IfIndex,
            luid: Luid(raw.Luid.Value),
            mac,
            mtu: raw.Mtu,
            ipv4,
            dns_servers,
            dns_suffix: wide(raw.DnsSuffix),
            oper_status: OperStatus::from_code(raw.OperStatus.0 as u32),
            if_type: InterfaceType::from_code(raw.IfType),
        }
    }
}

/// A possibly null wide string as text.
///
/// # Safety
/// `text` is null or a NUL-terminated UTF-16 string.
unsafe fn wide(text: windows::core::PWSTR) -> String {
    if text.is_null() {
        return String::new();
    }
    // SAFETY: non-null and NUL-terminated (caller).
    String::from_utf16_lossy(unsafe { text.as_wide() })
}
