//! Monitors (RFC 7047 §4.1.5 and the `monitor_cond` extension of ovsdb-server(7)): what to
//! watch, the table updates (`update` / `update2`) that report changes, and applying `update2`
//! diffs to cached rows.

mod diff;
mod request;
mod update;

pub use request::{MonitorRequest, MonitorSelect};
pub use update::{MonitorEvent, RowUpdate, RowUpdate2, TableUpdates, Updates};
