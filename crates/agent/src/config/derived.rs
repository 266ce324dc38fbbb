//! Values computed from the configuration: the tunnel's destination port, the Pod MTU and the
//! local endpoints of Open vSwitch.

use localipc::{Endpoint, ovs_pipe_name};

use super::{AgentConfig, Platform, TrafficEncapMode, TunnelType};

/// The largest MTU Antrea gives Pods when traffic may be tunnelled: Open vSwitch sets tunnel
/// interfaces to 65000 on Linux (Antrea applies the same bound on Windows).
pub const OVS_TUNNEL_MAX_MTU: u16 = 65000;

impl TunnelType {
    /// The protocol's IANA-assigned UDP port.
    pub fn iana_port(self) -> u16 {
        match self {
            TunnelType::Geneve => 6081,
            TunnelType::Vxlan => 4789,
        }
    }

    /// Bytes the tunnel adds to an IPv4 packet: outer IPv4 (20), UDP (8) and the tunnel
    /// header with the inner Ethernet header. Antrea uses 50 for both Geneve and VXLAN.
    fn ipv4_overhead(self) -> u16 {
        match self {
            TunnelType::Geneve | TunnelType::Vxlan => 50,
        }
    }
}

/// How many bytes the Pod MTU must leave free below the transport interface's MTU: the tunnel
/// overhead when traffic may be tunnelled (20 more over IPv6), nothing in noEncap mode.
pub fn mtu_deduction(mode: TrafficEncapMode, tunnel: TunnelType, transport_is_ipv6: bool) -> u16 {
    if !mode.uses_tunnel() {
        return 0;
    }
    tunnel.ipv4_overhead() + if transport_is_ipv6 { 20 } else { 0 }
}

impl AgentConfig {
    /// The tunnel's UDP destination port: `tunnelPort`, or the protocol's IANA port when 0.
    pub fn tunnel_destination_port(&self) -> u16 {
        if self.tunnel_port == 0 {
            self.tunnel_type.iana_port()
        } else {
            self.tunnel_port
        }
    }

    /// The MTU of the gateway and of every Pod interface: `defaultMTU` when set, otherwise the
    /// transport interface's MTU less [`mtu_deduction`], at most [`OVS_TUNNEL_MAX_MTU`] when
    /// traffic may be tunnelled.
    pub fn pod_mtu(&self, transport_mtu: u16, transport_is_ipv6: bool) -> u16 {
        if self.default_mtu != 0 {
            return self.default_mtu;
        }
        let mode = self.traffic_encap_mode;
        let mtu =
            transport_mtu.saturating_sub(mtu_deduction(mode, self.tunnel_type, transport_is_ipv6));
        if mode.uses_tunnel() {
            mtu.min(OVS_TUNNEL_MAX_MTU)
        } else {
            mtu
        }
    }

    /// Where ovsdb-server listens: `<ovsRunDir>/db.sock`, a named pipe on Windows.
    pub fn ovsdb_endpoint(&self) -> Endpoint {
        self.ovs_socket("db.sock")
    }

    /// The bridge's OpenFlow management socket: `<ovsRunDir>/<ovsBridge>.mgmt`.
    pub fn bridge_mgmt_endpoint(&self) -> Endpoint {
        self.ovs_socket(&format!("{}.mgmt", self.ovs_bridge))
    }

    fn ovs_socket(&self, file: &str) -> Endpoint {
        match self.platform {
            // Joined with `/` whatever the build host, since the platform is an input.
            Platform::Linux => {
                Endpoint::Unix(format!("{}/{file}", self.ovs_run_dir.trim_end_matches('/')).into())
            }
            Platform::Windows => Endpoint::NamedPipe(ovs_pipe_name(&self.ovs_run_dir, file)),
        }
    }
}
