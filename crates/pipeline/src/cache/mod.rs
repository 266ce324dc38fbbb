//! The desired-state cache: the flows, groups and meters every owner (the Node, each Pod, each
//! peer Node, the NetworkPolicy rules, …) wants, shared keys counted per owner, the difference
//! each change makes, and the installer that applies it to the switch atomically, in dependency
//! order, and replays everything after a reconnect.
//!
//! - [`owner`]: open owner kinds and owners.
//! - [`object`], [`key`]: what is cached — flows (by table, priority, match), groups and meters
//!   (by id) — and the groups and meters each one uses.
//! - [`change`]: what callers ask for — whole replacements and patches of several owners.
//! - [`desired`], [`prepare`]: the cache, its checks, and the two-phase update; [`undo`]: what a
//!   commit replaced, to put back when the switch refuses the change.
//! - [`diff`], [`order`]: the mods of a change and the order they are sent in.
//! - [`installer`], [`sync`]: sending changes, rounds and replays to the switch.

pub mod change;
pub mod desired;
pub mod diff;
pub mod installer;
pub mod key;
pub mod object;
pub mod order;
pub mod owner;
pub mod prepare;
pub mod sync;
pub mod undo;

#[cfg(test)]
pub(crate) mod model_switch;
#[cfg(test)]
mod tests;

pub use change::{Change, Objects, Patch, Update};
pub use desired::DesiredCache;
pub use diff::{ChangeDiff, Diff, FlowDiff, GroupDiff, MeterDiff, Steps, SwitchMod};
pub use installer::{Installer, SharedCache, replay};
pub use key::FlowKey;
pub use object::{Object, Target};
pub use owner::{Owner, OwnerKind};
pub use prepare::Prepared;
pub use undo::Undo;
