//! [`NodePorts`]: the OpenFlow port numbers of the Node's fixed ports. The OVS datapath requests
//! them with `ofport_request`; Pods get numbers below [`NodePorts::TUNNEL`].

/// The fixed ports' numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct NodePorts {
    /// `antrea-tun0`.
    pub tunnel: u32,
    /// `antrea-gw0`.
    pub gateway: u32,
    /// The physical NIC.
    pub uplink: u32,
}

impl NodePorts {
    pub const TUNNEL: u32 = 32768;
    pub const GATEWAY: u32 = 32769;
    pub const UPLINK: u32 = 32770;
    /// The bridge's own port (`br-int`), which carries the Node IP and the NIC's MAC.
    pub const LOCAL: u32 = 0xffff_fffe;
}

impl Default for NodePorts {
    fn default() -> NodePorts {
        NodePorts {
            tunnel: NodePorts::TUNNEL,
            gateway: NodePorts::GATEWAY,
            uplink: NodePorts::UPLINK,
        }
    }
}
