//! Typed helpers for the `Open_vSwitch` database (vswitch.ovsschema): bridges, ports and
//! interfaces, built on [`crate::Client`] transactions and monitors.

mod client;
mod rows;
mod spec;

pub use client::VswitchClient;
pub use rows::{BridgeRow, InterfaceRow, PortRow};
pub use spec::{BridgeSpec, CreatedPort, FailMode, PortSpec};

/// The database name.
pub const DATABASE: &str = "Open_vSwitch";
