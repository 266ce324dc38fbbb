//! Transmit checksum offload of an interface, through the legacy ethtool ioctl
//! (`SIOCETHTOOL` with `ETHTOOL_GTXCSUM`/`ETHTOOL_STXCSUM`, the calls behind `ethtool -k/-K tx`).
//!
//! This is the crate's only FFI module. The ioctl acts on the network namespace of the socket,
//! so callers run it on a thread inside the interface's namespace.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

const ETHTOOL_GTXCSUM: u32 = 0x16;
const ETHTOOL_STXCSUM: u32 = 0x17;

/// `struct ethtool_value` from `<linux/ethtool.h>`.
#[repr(C)]
struct EthtoolValue {
    cmd: u32,
    data: u32,
}

/// Whether transmit checksum offload is on for `ifname`.
pub fn tx_checksum(ifname: &str) -> io::Result<bool> {
    let mut value = EthtoolValue {
        cmd: ETHTOOL_GTXCSUM,
        data: 0,
    };
    ethtool(ifname, &mut value)?;
    Ok(value.data != 0)
}

/// Turns transmit checksum offload on or off for `ifname` (the kernel drops the offloads that
/// depend on it, such as TSO, with it).
pub fn set_tx_checksum(ifname: &str, on: bool) -> io::Result<()> {
    let mut value = EthtoolValue {
        cmd: ETHTOOL_STXCSUM,
        data: u32::from(on),
    };
    ethtool(ifname, &mut value)
}

fn ethtool(ifname: &str, value: &mut EthtoolValue) -> io::Result<()> {
    let name = ifname.as_bytes();
    // SAFETY: `ifreq` is a plain C struct (a byte array and a union of integers and pointers)
    // for which all-zero bytes are a valid value.
    let mut request: libc::ifreq = unsafe { std::mem::zeroed() };
    if name.is_empty() || name.len() >= request.ifr_name.len() || name.contains(&0) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("bad interface name {ifname:?}"),
        ));
    }
    for (slot, byte) in request.ifr_name.iter_mut().zip(name) {
        *slot = *byte as libc::c_char;
    }
    request.ifr_ifru.ifru_data = (value as *mut EthtoolValue).cast::<libc::c_char>();
    // SAFETY: plain socket(2) call; the result is checked before use.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` is a freshly created descriptor that nothing else owns.
    let socket = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: SIOCETHTOOL reads `request` (a NUL-terminated name and a pointer to `value`) and
    // reads/writes the `EthtoolValue` it points to; both outlive the call and have the layouts
    // the kernel expects.
    let rc = unsafe { libc::ioctl(socket.as_raw_fd(), libc::SIOCETHTOOL, &mut request) };
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}
