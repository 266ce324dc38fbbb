//! The agent's OpenFlow pipeline.
//!
//! - [`layout`]: tables, register marks, priorities and shared constants.
//! - [`render`]: pure functions from the `model` crate's values (the Node's network, its Pods,
//!   the peer Nodes, NetworkPolicy) to flow mods, per owner.
//! - [`cookie`]: cookie layout and agent rounds (gap-free replacement of all flows on restart).
//! - [`cache`]: desired flows per owner, the diff of each update, and the installer that sends
//!   diffs to the switch as atomic bundles.
//!
//! `docs/pipeline.md` explains the flows and the reasoning behind them.

pub mod cache;
pub mod cookie;
pub mod error;
pub mod layout;
pub mod render;

pub use cache::{FlowCache, FlowDiff, FlowInstaller, FlowOwner};
pub use cookie::Round;
pub use error::{ApplyError, FlowConflict, ModelError};
