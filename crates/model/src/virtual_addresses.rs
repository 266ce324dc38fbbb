//! The link-local addresses the datapath answers for itself (Antrea's values, which operators
//! see in routes and neighbour tables): no Node or Pod has them.

use std::net::Ipv4Addr;

use crate::MacAddr;

/// The MAC the datapath answers with for what is not a real interface: peer gateways (ARP
/// replies, the destination MAC of Pod packets into the tunnel) and [`VIRTUAL_SERVICE_IP`]
/// (Antrea's `GlobalVirtualMAC`).
pub const GLOBAL_VIRTUAL_MAC: MacAddr = MacAddr([0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff]);

/// The next hop of the Node's routes to Services (proxyAll): the host sends its Service traffic
/// to it through the gateway, with a permanent neighbour entry [`GLOBAL_VIRTUAL_MAC`], and the
/// datapath load-balances it (Antrea's `VirtualServiceIPv4`).
pub const VIRTUAL_SERVICE_IP: Ipv4Addr = Ipv4Addr::new(169, 254, 0, 253);

/// Where the host sends NodePort traffic (proxyAll): NodePort connections to the Node's
/// addresses are DNATed to this address, the port kept, and routed to the datapath like Service
/// traffic; the datapath's NodePort frontends are this address and each NodePort (Antrea's
/// `VirtualNodePortDNATIPv4`).
pub const VIRTUAL_NODE_PORT_IP: Ipv4Addr = Ipv4Addr::new(169, 254, 0, 252);
