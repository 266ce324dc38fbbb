//! The agent–controller protocol's content: what antrea-controller sends a Node so that the
//! Node holds the NetworkPolicies applied to its Pods and the groups they read, and nothing
//! else.
//!
//! - [`NodeUpdate`]: one change to a Node's view, in an order that is part of the contract;
//!   [`Member`]: a group member as a Node needs it.
//! - [`NodeView`]: a Node's view built from its updates, refusing any out of order; it is also
//!   what a snapshot carries and what an agent persists.
//! - [`Delivery`]: what an agent is handed, a snapshot or updates.
//! - [`auth`]: [`Authenticator`], who holds a watcher's token and so which Node it may watch.
//!
//! Every type here is serde-serializable; the wire and the agent's persisted state use the same
//! encoding.

pub mod auth;
mod delivery;
mod update;
mod view;

pub use auth::{AuthError, Authenticator, Watcher};
pub use delivery::Delivery;
pub use update::{Member, NodeUpdate};
pub use view::{NodeView, OutOfOrder};
