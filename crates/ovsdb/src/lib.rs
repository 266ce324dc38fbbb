//! An OVSDB client (RFC 7047 and the `monitor_cond` extension) on tokio and serde_json.
//!
//! - [`wire`]: framing of the delimiter-less JSON stream and JSON-RPC 1.0 messages.
//! - [`data`]: atoms, sets, maps and rows in OVSDB's JSON notation.
//! - [`schema`]: typed database schemas.
//! - [`txn`]: transactions, their operations and typed results.
//! - [`monitor`]: monitor requests and table updates.
//! - [`client`]: the connection (Unix socket, TCP, Windows named pipe via `localipc`) with
//!   request correlation, echo keepalive, reconnection and monitor re-establishment.
//! - [`vswitch`]: typed helpers for the `Open_vSwitch` database (bridges, ports, interfaces).

pub mod client;
pub mod data;
mod error;
pub mod monitor;
pub mod schema;
pub mod txn;
pub mod vswitch;
pub mod wire;

pub use client::{Client, ClientConfig, ConnectionState, LockEvent, Monitor};
pub use error::{DisconnectReason, Error};
