//! The agent's OpenFlow pipeline.
//!
//! - [`layout`]: tables, register marks, priorities and shared constants.
//! - [`render`]: pure functions from the `model` crate's values (the Node's network, its Pods,
//!   the peer Nodes, NetworkPolicy) to flow mods, per owner.
//! - [`cookie`]: cookie layout and agent rounds (gap-free replacement of all flows on restart).
//! - [`cache`]: the desired flows, groups and meters of every owner (shared keys counted per
//!   owner), the diff of each change, and the installer that sends it to the switch in
//!   dependency order, groups and flows in one atomic bundle.
//! - [`owners`]: the owner kinds of the features above (node, pod, peer, networkpolicy).
//!
//! `docs/pipeline.md` explains the flows and the reasoning behind them.

pub mod cache;
pub mod cookie;
pub mod error;
pub mod layout;
pub mod owners;
pub mod render;

pub use cache::{
    Change, ChangeDiff, DesiredCache, FlowDiff, Installer, Objects, Owner, OwnerKind, Patch,
};
pub use cookie::Round;
pub use error::{ApplyError, CacheError, ModelError};
