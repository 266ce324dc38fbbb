//! Per-interface IPv6 switch (`net.ipv6.conf.<if>.disable_ipv6`) and IPv4 forwarding
//! (`net.ipv4.ip_forward`). `/proc/sys/net` shows the
//! namespace of the thread that opens the file, so callers run this inside the namespace.

use std::io;

/// Disables IPv6 on `ifname`; returns whether it was enabled. A kernel without IPv6 (no such
/// file) counts as already disabled.
pub fn disable_ipv6(ifname: &str) -> io::Result<bool> {
    let path = format!("/proc/sys/net/ipv6/conf/{ifname}/disable_ipv6");
    match std::fs::read_to_string(&path) {
        Ok(value) if value.trim() == "1" => Ok(false),
        Ok(_) => std::fs::write(&path, "1").map(|()| true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

/// The IPv4 forwarding switch.
const IP_FORWARD: &str = "/proc/sys/net/ipv4/ip_forward";

/// Switches IPv4 forwarding on; returns whether it was off.
pub fn enable_ip_forwarding() -> io::Result<bool> {
    if std::fs::read_to_string(IP_FORWARD)?.trim() == "1" {
        return Ok(false);
    }
    std::fs::write(IP_FORWARD, "1").map(|()| true)
}
