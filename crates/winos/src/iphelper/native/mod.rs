//! [`NativeIpHelper`]: the [`IpHelper`] calls over `iphlpapi.dll` (and WMI for the rename).
//!
//! The read calls Wine and every supported Windows export (`GetAdaptersAddresses`,
//! `GetIpForwardTable2`, `GetUnicastIpAddressTable`, `GetIpNetTable2`, `FreeMibTable`) are
//! imported statically. The write calls and `GetIpInterfaceEntry` are resolved at run time
//! ([`crate::native::dynamic`]), so an executable using this crate loads under Wine 8, which
//! lacks them, and a call to one returns [`WinOsError::Unsupported`](crate::WinOsError).
//!
//! Rows are built by hand rather than with the `Initialize*Entry` helpers, which Wine lacks too;
//! the values follow what Windows' helpers and Antrea use (infinite lifetimes, protocol Other).
//! Interfaces in other network compartments are not switched into: the agent configures host
//! adapters, which live in the default compartment.

mod adapters;
mod dns;
mod rename;
mod sockaddr;
mod table;

use std::net::IpAddr;

use ipnet::IpNet;
use model::MacAddr;
use windows::Win32::Foundation::WIN32_ERROR;
use windows::Win32::NetworkManagement::IpHelper::{
    GetIpForwardTable2, GetIpNetTable2, GetUnicastIpAddressTable, IP_ADDRESS_PREFIX,
    MIB_IPFORWARD_ROW2, MIB_IPFORWARD_TABLE2, MIB_IPINTERFACE_ROW, MIB_IPNET_ROW2,
    MIB_IPNET_TABLE2, MIB_UNICASTIPADDRESS_ROW, MIB_UNICASTIPADDRESS_TABLE,
};
use windows::Win32::Networking::WinSock::{
    AF_UNSPEC, IpDadStatePreferred, IpPrefixOriginManual, IpSuffixOriginManual, NL_ROUTE_PROTOCOL,
    NlnsPermanent,
};

use self::sockaddr::{address_family, from_inet, to_inet};
use self::table::MibTable;
use super::IpHelper;
use crate::Result;
use crate::model::{
    Adapter, IpFamily, IpInterface, IpInterfaceChange, Neighbor, NeighborState, Route, RouteKey,
    RouteOrigin, RouteProtocol, UnicastAddress, same_family,
};
use crate::native::dynamic;
use crate::native::errors::check_win32;

/// Lifetime value meaning "forever".
const INFINITE: u32 = u32::MAX;

type RowCall<R> = unsafe extern "system" fn(*const R) -> WIN32_ERROR;
type RowCallMut<R> = unsafe extern "system" fn(*mut R) -> WIN32_ERROR;

/// Calls the `iphlpapi.dll` function `name(row)`, resolved at run time.
fn call_row<R>(
    function: &'static str,
    name: &'static [u8],
    row: &R,
    what: impl FnOnce() -> String,
) -> Result<()> {
    // SAFETY: every function called through here takes one pointer to a row of type `R`.
    let call: RowCall<R> = unsafe { dynamic::iphlpapi(function, name) }?;
    // SAFETY: `row` is a fully initialized row that outlives the call.
    check_win32(function, unsafe { call(row) }, what)
}

/// The host's IP Helper.
#[derive(Debug, Default, Clone, Copy)]
pub struct NativeIpHelper;

impl NativeIpHelper {
    /// The IP Helper of this host.
    pub fn new() -> Self {
        NativeIpHelper
    }
}

fn route_row(key: &RouteKey) -> MIB_IPFORWARD_ROW2 {
    MIB_IPFORWARD_ROW2 {
        InterfaceIndex: key.interface_index,
        DestinationPrefix: IP_ADDRESS_PREFIX {
            Prefix: to_inet(key.destination.addr()),
            PrefixLength: key.destination.prefix_len(),
        },
        NextHop: to_inet(key.next_hop),
        ..Default::default()
    }
}

fn ip_interface_row(interface_index: u32, family: IpFamily) -> Result<MIB_IPINTERFACE_ROW> {
    let function = "GetIpInterfaceEntry";
    let mut row = MIB_IPINTERFACE_ROW {
        Family: address_family(family),
        InterfaceIndex: interface_index,
        ..Default::default()
    };
    // SAFETY: GetIpInterfaceEntry takes one pointer to an in/out MIB_IPINTERFACE_ROW.
    let call: RowCallMut<MIB_IPINTERFACE_ROW> =
        unsafe { dynamic::iphlpapi(function, b"GetIpInterfaceEntry\0") }?;
    // SAFETY: `row` has Family and InterfaceIndex set and is writable.
    check_win32(function, unsafe { call(&mut row) }, || {
        format!("{family:?} interface {interface_index}")
    })?;
    Ok(row)
}

impl IpHelper for NativeIpHelper {
    fn adapters(&self) -> Result<Vec<Adapter>> {
        adapters::adapters()
    }

    fn routes(&self) -> Result<Vec<Route>> {
        let mut raw: *mut MIB_IPFORWARD_TABLE2 = std::ptr::null_mut();
        // SAFETY: `raw` receives a table the MibTable guard frees.
        let code = unsafe { GetIpForwardTable2(AF_UNSPEC, &mut raw) };
        // SAFETY: `raw` is null or the table just returned.
        let table = unsafe { MibTable::new(raw) };
        check_win32("GetIpForwardTable2", code, || "routes".into())?;
        Ok(table
            .rows()
            .iter()
            .filter_map(|row| {
                let destination = IpNet::new(
                    from_inet(&row.DestinationPrefix.Prefix)?,
                    row.DestinationPrefix.PrefixLength,
                )
                .ok()?;
                Some(Route {
                    destination,
                    next_hop: from_inet(&row.NextHop)?,
                    interface_index: row.InterfaceIndex,
                    metric: row.Metric,
                    protocol: RouteProtocol::from_code(row.Protocol.0 as u32),
                    origin: RouteOrigin::from_code(row.Origin.0 as u32),
                })
            })
            .collect())
    }

    fn create_route(&self, route: &Route) -> Result<()> {
        let function = "CreateIpForwardEntry2";
        same_family(function, route.destination.addr(), route.next_hop)?;
        let key = route.key();
        let mut row = route_row(&key);
        row.SitePrefixLength = 255;
        row.ValidLifetime = INFINITE;
        row.PreferredLifetime = INFINITE;
        row.Metric = route.metric;
        row.Protocol = NL_ROUTE_PROTOCOL(RouteProtocol::Other.code() as i32);
        row.Loopback = true;
        row.AutoconfigureAddress = true;
        row.Publish = true;
        row.Immortal = true;
        call_row(function, b"CreateIpForwardEntry2\0", &row, || {
            key.to_string()
        })?;
        tracing::debug!(%key, metric = route.metric, "route created");
        Ok(())
    }

    fn delete_route(&self, key: &RouteKey) -> Result<()> {
        let key = RouteKey {
            destination: key.destination.trunc(),
            ..*key
        };
        call_row(
            "DeleteIpForwardEntry2",
            b"DeleteIpForwardEntry2\0",
            &route_row(&key),
            || key.to_string(),
        )?;
        tracing::debug!(%key, "route deleted");
        Ok(())
    }

    fn unicast_addresses(&self) -> Result<Vec<UnicastAddress>> {
        let mut raw: *mut MIB_UNICASTIPADDRESS_TABLE = std::ptr::null_mut();
        // SAFETY: `raw` receives a table the MibTable guard frees.
        let code = unsafe { GetUnicastIpAddressTable(AF_UNSPEC, &mut raw) };
        // SAFETY: `raw` is null or the table just returned.
        let table = unsafe { MibTable::new(raw) };
        check_win32("GetUnicastIpAddressTable", code, || "addresses".into())?;
        Ok(table
            .rows()
            .iter()
            .filter_map(|row| {
                let address = IpNet::new(from_inet(&row.Address)?, row.OnLinkPrefixLength).ok()?;
                Some(UnicastAddress {
                    interface_index: row.InterfaceIndex,
                    address,
                })
            })
            .collect())
    }

    fn create_unicast_address(&self, address: &UnicastAddress) -> Result<()> {
        let row = MIB_UNICASTIPADDRESS_ROW {
            Address: to_inet(address.address.addr()),
            InterfaceIndex: address.interface_index,
            PrefixOrigin: IpPrefixOriginManual,
            SuffixOrigin: IpSuffixOriginManual,
            ValidLifetime: INFINITE,
            PreferredLifetime: INFINITE,
            OnLinkPrefixLength: address.address.prefix_len(),
            DadState: IpDadStatePreferred,
            ..Default::default()
        };
        call_row(
            "CreateUnicastIpAddressEntry",
            b"CreateUnicastIpAddressEntry\0",
            &row,
            || address.to_string(),
        )?;
        tracing::debug!(%address, "address created");
        Ok(())
    }

    fn delete_unicast_address(&self, address: &UnicastAddress) -> Result<()> {
        let row = MIB_UNICASTIPADDRESS_ROW {
            Address: to_inet(address.address.addr()),
            InterfaceIndex: address.interface_index,
            ..Default::default()
        };
        call_row(
            "DeleteUnicastIpAddressEntry",
            b"DeleteUnicastIpAddressEntry\0",
            &row,
            || address.to_string(),
        )?;
        tracing::debug!(%address, "address deleted");
        Ok(())
    }

    fn neighbors(&self, family: IpFamily) -> Result<Vec<Neighbor>> {
        let mut raw: *mut MIB_IPNET_TABLE2 = std::ptr::null_mut();
        // SAFETY: `raw` receives a table the MibTable guard frees.
        let code = unsafe { GetIpNetTable2(address_family(family), &mut raw) };
        // SAFETY: `raw` is null or the table just returned.
        let table = unsafe { MibTable::new(raw) };
        check_win32("GetIpNetTable2", code, || format!("{family:?} neighbors"))?;
        Ok(table
            .rows()
            .iter()
            .filter(|row| row.PhysicalAddressLength == 6)
            .filter_map(|row| {
                let mut mac = [0u8; 6];
                mac.copy_from_slice(&row.PhysicalAddress[..6]);
                Some(Neighbor {
                    interface_index: row.InterfaceIndex,
                    address: from_inet(&row.Address)?,
                    mac: MacAddr(mac),
                    state: NeighborState::from_code(row.State.0 as u32),
                })
            })
            .collect())
    }

    fn create_permanent_neighbor(
        &self,
        interface_index: u32,
        address: IpAddr,
        mac: MacAddr,
    ) -> Result<()> {
        let mut row = MIB_IPNET_ROW2 {
            Address: to_inet(address),
            InterfaceIndex: interface_index,
            PhysicalAddressLength: 6,
            State: NlnsPermanent,
            ..Default::default()
        };
        row.PhysicalAddress[..6].copy_from_slice(&mac.0);
        let neighbor = Neighbor {
            interface_index,
            address,
            mac,
            state: NeighborState::Permanent,
        };
        call_row("CreateIpNetEntry2", b"CreateIpNetEntry2\0", &row, || {
            neighbor.to_string()
        })?;
        tracing::debug!(%neighbor, "neighbor created");
        Ok(())
    }

    fn delete_neighbor(&self, interface_index: u32, address: IpAddr) -> Result<()> {
        let row = MIB_IPNET_ROW2 {
            Address: to_inet(address),
            InterfaceIndex: interface_index,
            ..Default::default()
        };
        call_row("DeleteIpNetEntry2", b"DeleteIpNetEntry2\0", &row, || {
            format!("neighbor {address} on interface {interface_index}")
        })?;
        tracing::debug!(%address, interface_index, "neighbor deleted");
        Ok(())
    }

    fn ip_interface(&self, interface_index: u32, family: IpFamily) -> Result<IpInterface> {
        let row = ip_interface_row(interface_index, family)?;
        Ok(IpInterface {
            forwarding: row.ForwardingEnabled,
            nl_mtu: row.NlMtu,
        })
    }

    fn set_ip_interface(
        &self,
        interface_index: u32,
        family: IpFamily,
        change: IpInterfaceChange,
    ) -> Result<()> {
        let function = "SetIpInterfaceEntry";
        // Resolve the setter first: on a system without it, nothing is read for nothing.
        // SAFETY: SetIpInterfaceEntry takes one pointer to an in/out MIB_IPINTERFACE_ROW.
        let set: RowCallMut<MIB_IPINTERFACE_ROW> =
            unsafe { dynamic::iphlpapi(function, b"SetIpInterfaceEntry\0") }?;
        let mut row = ip_interface_row(interface_index, family)?;
        let wanted = change.apply(IpInterface {
            forwarding: row.ForwardingEnabled,
            nl_mtu: row.NlMtu,
        });
        row.ForwardingEnabled = wanted.forwarding;
        row.NlMtu = wanted.nl_mtu;
        // SetIpInterfaceEntry refuses the SitePrefixLength GetIpInterfaceEntry returns for IPv4.
        row.SitePrefixLength = 0;
        // SAFETY: `row` is the complete row just read, with the fields to change updated.
        check_win32(function, unsafe { set(&mut row) }, || {
            format!("{family:?} interface {interface_index}")
        })?;
        tracing::debug!(
            interface_index,
            ?family,
            ?wanted,
            "interface settings changed"
        );
        Ok(())
    }

    fn set_dns_servers(
        &self,
        interface_index: u32,
        family: IpFamily,
        servers: &[IpAddr],
    ) -> Result<()> {
        dns::set_dns_servers(interface_index, family, servers)
    }

    fn rename_adapter(&self, alias: &str, new_alias: &str) -> Result<()> {
        rename::rename(alias, new_alias)
    }
}
