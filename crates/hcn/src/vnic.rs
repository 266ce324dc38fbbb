//! The names HNS gives the host virtual adapters (vNICs) it creates for networks and endpoints.

/// The name HNS gives the host virtual adapter of a network or endpoint named `name`.
pub fn vnic_name(name: &str) -> String {
    format!("vEthernet ({name})")
}
