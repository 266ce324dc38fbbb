//! Static DNS servers of an interface: `SetInterfaceDnsSettings` (Windows 10 2004 and later,
//! resolved at run time; Wine 8 lacks it), addressed by the interface GUID that
//! `ConvertInterfaceIndexToLuid` + `ConvertInterfaceLuidToGuid` give.

use std::net::IpAddr;

use windows::Win32::Foundation::WIN32_ERROR;
use windows::Win32::NetworkManagement::IpHelper::{
    ConvertInterfaceIndexToLuid, ConvertInterfaceLuidToGuid, DNS_INTERFACE_SETTINGS,
    DNS_INTERFACE_SETTINGS_VERSION1, DNS_SETTING_IPV6, DNS_SETTING_NAMESERVER,
};
use windows::Win32::NetworkManagement::Ndis::NET_LUID_LH;
use windows::core::{GUID, PWSTR};

use crate::Result;
use crate::model::{IpFamily, check_dns_family};
use crate::native::dynamic;
use crate::native::errors::check_win32;

type SetInterfaceDnsSettings =
    unsafe extern "system" fn(GUID, *const DNS_INTERFACE_SETTINGS) -> WIN32_ERROR;

/// The GUID of the interface with index `interface_index`.
fn interface_guid(interface_index: u32) -> Result<GUID> {
    let what = || format!("interface {interface_index}");
    let mut luid = NET_LUID_LH::default();
    // SAFETY: `luid` is a writable NET_LUID.
    let code = unsafe { ConvertInterfaceIndexToLuid(interface_index, &mut luid) };
    check_win32("ConvertInterfaceIndexToLuid", code, what)?;
    let mut guid = GUID::zeroed();
    // SAFETY: `luid` was just filled; `guid` is writable.
    let code = unsafe { ConvertInterfaceLuidToGuid(&luid, &mut guid) };
    check_win32("ConvertInterfaceLuidToGuid", code, what)?;
    Ok(guid)
}

/// Replaces the `family` name servers of the interface by `servers`.
pub(super) fn set_dns_servers(
    interface_index: u32,
    family: IpFamily,
    servers: &[IpAddr],
) -> Result<()> {
    let function = "SetInterfaceDnsSettings";
    check_dns_family(function, family, servers)?;
    // SAFETY: the type is SetInterfaceDnsSettings' signature.
    let set: SetInterfaceDnsSettings =
        unsafe { dynamic::iphlpapi(function, b"SetInterfaceDnsSettings\0") }?;
    let guid = interface_guid(interface_index)?;
    let list = servers
        .iter()
        .map(IpAddr::to_string)
        .collect::<Vec<_>>()
        .join(",");
    let mut wide: Vec<u16> = list.encode_utf16().chain(std::iter::once(0)).collect();
    let family_flag = match family {
        IpFamily::V4 => 0,
        IpFamily::V6 => DNS_SETTING_IPV6,
    };
    let settings = DNS_INTERFACE_SETTINGS {
        Version: DNS_INTERFACE_SETTINGS_VERSION1,
        Flags: u64::from(DNS_SETTING_NAMESERVER | family_flag),
        NameServer: PWSTR(wide.as_mut_ptr()),
        ..Default::default()
    };
    // SAFETY: `settings` and the NUL-terminated `wide` it points to outlive the call.
    check_win32(function, unsafe { set(guid, &settings) }, || {
        format!("interface {interface_index}")
    })?;
    tracing::debug!(interface_index, ?family, servers = list, "DNS servers set");
    Ok(())
}
