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

/// The conntrack zone of all Pod traffic (Antrea's `CtZone`).
pub const CT_ZONE: u16 = 0xfff0;

/// The conntrack zone of the Service connections whose source the datapath NATs (Antrea's
/// `SNATCtZone`): today a Pod reaching itself through its Service (hairpin).
pub const SNAT_CT_ZONE: u16 = 0xfff1;

pub use model::GLOBAL_VIRTUAL_MAC;
