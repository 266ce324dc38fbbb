//! [`IcmpEchoProbe`] (Windows only): ICMP echo through IP Helper's `IcmpSendEcho`, the FFI of
//! the watchdog. `iphlpapi.dll` exports `IcmpCreateFile`, `IcmpSendEcho` and `IcmpCloseHandle`
//! on every Windows version the agent supports, and Wine exports them too.

use std::io;
use std::net::Ipv4Addr;
use std::time::Duration;

use windows_sys::Win32::Foundation::{HANDLE, INVALID_HANDLE_VALUE};
use windows_sys::Win32::NetworkManagement::IpHelper::{
    ICMP_ECHO_REPLY, IP_REQ_TIMED_OUT, IP_SUCCESS, IcmpCloseHandle, IcmpCreateFile, IcmpSendEcho,
};

use super::probe::{ProbeError, Reachability};

/// The data each echo request carries.
const PAYLOAD: &[u8] = b"antrea-rs watchdog";

/// Sends one ICMP echo request to an IPv4 address (the default gateway) and waits for the reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IcmpEchoProbe {
    address: Ipv4Addr,
}

impl IcmpEchoProbe {
    /// A probe of `address`.
    pub fn new(address: Ipv4Addr) -> Self {
        IcmpEchoProbe { address }
    }
}

impl Reachability for IcmpEchoProbe {
    fn target(&self) -> String {
        format!("icmp {}", self.address)
    }

    async fn probe(&self, timeout: Duration) -> Result<(), ProbeError> {
        let address = self.address;
        tokio::task::spawn_blocking(move || echo(address, timeout))
            .await
            .map_err(|e| ProbeError::Io {
                target: address.to_string(),
                source: io::Error::other(e),
            })?
    }
}

/// An ICMP handle, closed on drop.
struct IcmpHandle(HANDLE);

impl Drop for IcmpHandle {
    fn drop(&mut self) {
        // SAFETY: the handle came from IcmpCreateFile and is closed exactly once, here.
        unsafe { IcmpCloseHandle(self.0) };
    }
}

/// One blocking echo: success when the first reply has status `IP_SUCCESS`.
fn echo(address: Ipv4Addr, timeout: Duration) -> Result<(), ProbeError> {
    let target = address.to_string();
    // SAFETY: no arguments; the result is checked against INVALID_HANDLE_VALUE.
    let raw = unsafe { IcmpCreateFile() };
    if raw == INVALID_HANDLE_VALUE {
        return Err(ProbeError::Io {
            target,
            source: io::Error::last_os_error(),
        });
    }
    let handle = IcmpHandle(raw);
    // Room for one reply, its echoed data and an ICMP error message (8 bytes), as
    // IcmpSendEcho requires; u64 words keep the reply structure aligned.
    let reply_bytes = size_of::<ICMP_ECHO_REPLY>() + PAYLOAD.len() + 8;
    let mut reply = vec![0u64; reply_bytes.div_ceil(8)];
    let timeout_ms = u32::try_from(timeout.as_millis())
        .unwrap_or(u32::MAX)
        .max(1);
    // IPAddr is the address in network byte order, i.e. the octets as they lie in memory.
    let destination = u32::from_ne_bytes(address.octets());
    // SAFETY: the handle is open; the request data and the reply buffer are valid for the
    // lengths given (the reply buffer holds `reply.len() * 8` bytes); no IP options.
    let replies = unsafe {
        IcmpSendEcho(
            handle.0,
            destination,
            PAYLOAD.as_ptr().cast(),
            PAYLOAD.len() as u16,
            std::ptr::null(),
            reply.as_mut_ptr().cast(),
            (reply.len() * 8) as u32,
            timeout_ms,
        )
    };
    if replies == 0 {
        let error = io::Error::last_os_error();
        return Err(match error.raw_os_error() {
            Some(code) if code as u32 == IP_REQ_TIMED_OUT => ProbeError::TimedOut(timeout),
            _ => ProbeError::Io {
                target,
                source: error,
            },
        });
    }
    // SAFETY: a non-zero count means IcmpSendEcho wrote at least one ICMP_ECHO_REPLY at the
    // start of the buffer, which is 8-byte aligned and large enough for it.
    let status = unsafe { reply.as_ptr().cast::<ICMP_ECHO_REPLY>().read() }.Status;
    if status == IP_SUCCESS {
        Ok(())
    } else {
        Err(ProbeError::IcmpStatus { target, status })
    }
}
