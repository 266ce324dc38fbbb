//! The desired-flow cache: the flows every owner (the Node, each Pod, each peer Node) wants,
//! the difference an update makes, and the installer that applies that difference to the switch
//! atomically and replays everything after a reconnect.

pub mod diff;
pub mod flow_cache;
pub mod installer;
pub mod key;
pub mod owner;

pub use diff::FlowDiff;
pub use flow_cache::{FlowCache, Update};
pub use installer::{FlowInstaller, SharedCache, replay};
pub use key::FlowKey;
pub use owner::FlowOwner;
