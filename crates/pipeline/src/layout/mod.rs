//! The pipeline's layout: its tables (declared per feature, numbered by the table graph), the
//! fixed ports' numbers, what it sends the agent (`packet_in`), the register and conntrack-mark
//! bits the flows share, the priorities, and the constants every flow agrees on (conntrack
//! zones, virtual MAC).

pub mod ct_marks;
pub mod packet_in;
pub mod ports;
pub mod priority;
pub mod regs;
pub mod tables;

pub use ports::NodePorts;
pub use tables::{Stage, Table, TableGraph};

use model::MacAddr;

/// The conntrack zone of all Pod traffic (Antrea's `CtZone`).
pub const CT_ZONE: u16 = 0xfff0;

/// The conntrack zone of the Service connections whose source the datapath NATs (Antrea's
/// `SNATCtZone`): today a Pod reaching itself through its Service (hairpin).
pub const SNAT_CT_ZONE: u16 = 0xfff1;

/// The MAC the ARP responder gives for peer gateways, and the destination MAC of Pod packets
/// sent into the tunnel (Antrea's `GlobalVirtualMAC`).
pub const GLOBAL_VIRTUAL_MAC: MacAddr = MacAddr([0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff]);
